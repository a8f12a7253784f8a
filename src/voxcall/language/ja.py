"""Japanese: the rules of :class:`~voxcall.language.rules.Language` it has so far (the acknowledgements and
what is said on giving up)."""

from __future__ import annotations

from voxcall.language.rules import Language

__all__ = ["LANGUAGE"]

LANGUAGE = Language(code="ja", acknowledgements=("少々お待ちください、確認します。",),
                    giving_up="すみません、答えられませんでした。",
                    thinking=("ええと。", "少々お待ちください。"),
                    asking="{value}を教えていただけますか？")
