"""The ``voxcall`` command line: ``serve`` runs the realtime server, ``config`` prints the settings it would run
with, ``talk`` talks to a server (WAV file, typed text or microphone), ``chat`` asks one question of an in-process
pipeline, ``voices`` and ``models`` list what sessions can speak with and think with (``models install NAME``
installs a local model), ``eval`` runs scenarios against a server and reports what passed.

This package maps arguments to settings and prints (:mod:`~voxcall.cli.base` what every command shares,
:mod:`~voxcall.cli.serve`, :mod:`~voxcall.cli.talk`, :mod:`~voxcall.cli.models` the commands); building and running
the server is :mod:`voxcall.server`'s job. Heavy modules are imported inside the commands that need them, so
``voxcall --help`` answers at once.
"""

from __future__ import annotations

from voxcall.cli.base import EXIT_CLIENT_ERROR, EXIT_CONFIG_ERROR, EXIT_INTERRUPTED, SETTING_OF_FLAG, app, fail
from voxcall.cli.models import models_app
from voxcall.cli.serve import serve, show_config, voices
from voxcall.cli.talk import chat, talk
from voxcall.evaluation.command import evaluate

app.add_typer(models_app, name="models")
app.command("eval")(evaluate)

__all__ = ["EXIT_CLIENT_ERROR", "EXIT_CONFIG_ERROR", "EXIT_INTERRUPTED", "SETTING_OF_FLAG", "app", "chat", "fail",
           "serve", "show_config", "talk", "voices"]
