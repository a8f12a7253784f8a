"""Spanish: the rules of :class:`~voxcall.language.rules.Language` it has so far (the acknowledgements)."""

from __future__ import annotations

from voxcall.language.rules import Language

__all__ = ["LANGUAGE"]

LANGUAGE = Language(code="es", acknowledgements=("Un momento, lo estoy comprobando.", "Un segundo, ya lo miro."))
