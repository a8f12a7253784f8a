"""Italian: the rules of :class:`~voxcall.language.rules.Language` it has so far (the acknowledgements and
what is said on giving up)."""

from __future__ import annotations

from voxcall.language.rules import Language

__all__ = ["LANGUAGE"]

LANGUAGE = Language(code="it", acknowledgements=("Un momento, controllo subito.",),
                    giving_up="Mi dispiace, non ci sono riuscito.",
                    thinking=("Un attimo.", "Vediamo."),
                    asking="Puoi dirmi il valore di {value}?")
