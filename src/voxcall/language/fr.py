"""French: the rules of :class:`~voxcall.language.rules.Language` it has so far (the acknowledgements and
what is said on giving up)."""

from __future__ import annotations

from voxcall.language.rules import Language

__all__ = ["LANGUAGE"]

LANGUAGE = Language(code="fr", acknowledgements=("Un instant, je vérifie.", "Une seconde, je regarde."),
                    giving_up="Désolé, je n'ai pas trouvé la réponse.",
                    thinking=("Un instant.", "Voyons voir."),
                    asking="Pouvez-vous me donner la valeur de {value} ?")
