"""What every ``voxcall`` command shares: the typer app, exit codes, the settings a command's flags and the config
file give, a flag's help read from the setting it sets, and failures reported on one line."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Coroutine, Mapping
from pathlib import Path
from typing import Any, NoReturn

import typer
from rich.console import Console
from rich.text import Text

from voxcall.config import ServerSettings, default_of, description_of

DEFAULT_CONFIG = Path("voxcall.yaml")
"""The config file ``serve`` reads when ``--config`` is not given, if it exists in the working directory."""

EXIT_CONFIG_ERROR = 2
"""Exit status for a configuration the server refuses to start with (the same as click's usage errors)."""

EXIT_CLIENT_ERROR = 1
"""Exit status of ``talk`` and ``chat`` when the conversation fails (no server, an error, no answer …)."""

EXIT_INTERRUPTED = 130
"""Exit status of ``talk`` and ``chat`` stopped with Ctrl-C (128 + SIGINT, as shells report it)."""

SETTING_OF_FLAG: dict[str, str] = {
    "host": "host", "port": "port", "llm": "llm", "model": "model", "thinker": "thinker.model",
    "base_url": "base_url", "api_key": "api_key",
    "tool_format": "tool_format", "script": "script", "api_key_file": "api_key_file",
    "insecure_no_auth": "insecure_no_auth", "allow_origin": "allowed_origins", "log_level": "log_level",
    "max_sessions": "max_sessions", "max_sessions_per_key": "max_sessions_per_key",
    "shutdown_grace": "shutdown_grace", "shutdown_close_code": "shutdown_close_code",
    "instructions": "session.instructions", "prefetch": "session.prefetch",
    "max_speculative": "session.max_speculative", "llm_timeout": "session.llm_timeout",
    "max_frame_bytes": "session.max_frame_bytes", "max_history_items": "session.max_history_items",
    "max_hidden_events": "session.max_hidden_events", "eager_turn_ms": "session.eager_turn_ms",
    "max_tools": "session.max_tools",
    "speech": "speech.enabled", "vad": "speech.vad", "stt_model": "speech.stt_model", "tts_voice": "speech.tts_voice",
}
"""The setting (a dotted path into :class:`~voxcall.config.ServerSettings`) each flag of ``serve`` sets."""

_MARKUP = re.compile(r":\w+:`~?(?:[\w.]+\.)?([^`]+)`|``([^`]+)``")

app = typer.Typer(
    name="voxcall",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_show_locals=False,  # locals may hold API keys
    rich_markup_mode=None,  # plain help: rich's tables cut long option names (--max-history-ite…) at 80 columns
    context_settings={"max_content_width": 200},  # help as wide as the terminal (click's own cap is 80 columns)
)


@app.callback()
def main() -> None:
    """voxcall: a realtime voice-agent server, OpenAI Realtime compatible, whose heart is tool calling."""


def setting_option(flag: str, *declarations: str, show_default: str | bool | None = None) -> Any:
    """The option of ``serve``'s ``flag``: its help is the first sentence of the description of the setting it sets,
    as the settings tree says it (so it is never written twice), and it shows the setting's default (the flag itself
    defaults to None: not given)."""
    path = SETTING_OF_FLAG[flag]
    shown = str(default_of(path)) if show_default is None else show_default
    return typer.Option(*declarations, help=plain(description_of(path)), show_default=shown)


def plain(text: str) -> str:
    """A docstring's first sentence as a terminal shows it: reStructuredText roles and literals as their plain
    words."""
    words = " ".join(_MARKUP.sub(lambda m: m.group(1) or m.group(2), text).split())
    depth = 0
    for n, char in enumerate(words):
        depth += (char == "(") - (char == ")")
        if char == "." and depth == 0 and words[n + 1:n + 3].startswith(" ") and words[n + 2:n + 3].isupper():
            return words[:n + 1]
    return words


def load_settings(flags: Mapping[str, Any]) -> ServerSettings:
    """The settings from ``flags`` (``serve``'s parameters; None or False: not given) and the config file."""
    overrides: dict[str, Any] = {}
    for flag, value in flags.items():
        if flag == "config" or value is None or value == [] or (flag == "insecure_no_auth" and value is False):
            continue  # not given: --insecure-no-auth is a plain switch, off unless given; a repeatable flag, empty
        *sections, name = SETTING_OF_FLAG[flag].split(".")
        target = overrides
        for section in sections:
            target = target.setdefault(section, {})
        target[name] = value
    return ServerSettings.load(config_path(flags.get("config")), **overrides)


def config_path(given: Path | None) -> Path | None:
    """The config file to read: ``--config``, else ``./voxcall.yaml`` when it exists, else none."""
    if given is not None:
        return given
    return DEFAULT_CONFIG if DEFAULT_CONFIG.is_file() else None


def run_client(conversation: Coroutine[Any, Any, None]) -> None:
    """Run a client conversation; a failure is one red line and :data:`EXIT_CLIENT_ERROR`, Ctrl-C a quiet exit
    with :data:`EXIT_INTERRUPTED`."""
    from voxcall.client.transport import ClientError
    from voxcall.client.wavfile import WavError

    try:
        asyncio.run(conversation)
    except KeyboardInterrupt:
        raise typer.Exit(EXIT_INTERRUPTED) from None
    except (ClientError, WavError) as exc:
        Console(stderr=True).print(Text.assemble(("error: ", "bold red"), str(exc)), soft_wrap=True)
        raise typer.Exit(EXIT_CLIENT_ERROR) from None


def fail(message: str) -> NoReturn:
    """Print ``message`` as a one-line red error on stderr and exit with :data:`EXIT_CONFIG_ERROR`."""
    Console(stderr=True).print(Text.assemble(("error: ", "bold red"), message), soft_wrap=True)
    raise typer.Exit(EXIT_CONFIG_ERROR)
