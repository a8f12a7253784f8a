"""German: the rules of :class:`~voxcall.language.rules.Language` it has so far (the acknowledgements and
what is said on giving up)."""

from __future__ import annotations

from voxcall.language.rules import Language

__all__ = ["LANGUAGE"]

LANGUAGE = Language(code="de", acknowledgements=("Einen Moment, ich sehe nach.", "Eine Sekunde, ich prüfe das."),
                    giving_up="Entschuldigung, das habe ich nicht herausgefunden.",
                    thinking=("Einen Moment.", "Lass mich überlegen."),
                    asking="Können Sie mir den Wert für {value} nennen?")
