"""Portuguese: the rules of :class:`~voxcall.language.rules.Language` it has so far (the acknowledgements and
what is said on giving up)."""

from __future__ import annotations

from voxcall.language.rules import Language

__all__ = ["LANGUAGE"]

LANGUAGE = Language(code="pt", acknowledgements=("Um momento, estou verificando.",),
                    giving_up="Desculpe, não consegui resolver isso.",
                    thinking=("Um momento.", "Deixe-me ver."),
                    asking="Pode me dizer o valor de {value}?")
