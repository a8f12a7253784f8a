"""Spanish: the rules of :class:`~voxcall.language.rules.Language` it has so far (the acknowledgements and
what is said on giving up)."""

from __future__ import annotations

from voxcall.language.rules import Language

__all__ = ["LANGUAGE"]

LANGUAGE = Language(code="es", acknowledgements=("Un momento, lo estoy comprobando.", "Un segundo, ya lo miro."),
                    giving_up="Lo siento, no he podido resolverlo.",
                    thinking=("Un momento.", "Déjame pensar."),
                    asking="¿Me dices el valor de {value}?")
