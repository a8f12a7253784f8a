"""Japanese: the rules of :class:`~voxcall.language.rules.Language` it has so far (the acknowledgements)."""

from __future__ import annotations

from voxcall.language.rules import Language

__all__ = ["LANGUAGE"]

LANGUAGE = Language(code="ja", acknowledgements=("少々お待ちください、確認します。",))
