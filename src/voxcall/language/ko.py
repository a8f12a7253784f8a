"""Korean: the rules of :class:`~voxcall.language.rules.Language` it has so far (the acknowledgements and
what is said on giving up)."""

from __future__ import annotations

from voxcall.language.rules import Language

__all__ = ["LANGUAGE"]

LANGUAGE = Language(code="ko", acknowledgements=("잠시만요, 확인해 볼게요.",),
                    giving_up="죄송해요, 답을 찾지 못했어요.",
                    thinking=("잠시만요.", "음, 생각해 볼게요."),
                    asking="{value}을(를) 알려 주시겠어요?")
