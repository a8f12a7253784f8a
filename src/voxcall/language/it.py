"""Italian: the rules of :class:`~voxcall.language.rules.Language` it has so far (the acknowledgements)."""

from __future__ import annotations

from voxcall.language.rules import Language

__all__ = ["LANGUAGE"]

LANGUAGE = Language(code="it", acknowledgements=("Un momento, controllo subito.",))
