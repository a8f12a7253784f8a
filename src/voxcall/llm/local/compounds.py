"""A name its kind's word completes: "the laundry room", "Mexico City", "Baker Street", where the word that says
what kind of place it is belongs to the name.

A plain string argument is a span of the user's words (:mod:`voxcall.llm.local.grammar`); the thinker chooses
which, and for "Switch the laundry room lights on." it closed the quote after "laundry" (``room='laundry'``), as
after "kids" for "the kids' room". Where a parameter is named for such a kind (``room``, ``city``), a span the
kind's word follows in the words is cut short of the name: the span with that word is admitted instead. Kinds
whose word classifies a name rather than completing it ("the Yesterday song", "the Plus type") keep every span,
as do parameters named otherwise.
"""

from __future__ import annotations

from collections.abc import Sequence

COMPLETING_KINDS = frozenset({"room", "city", "street", "road", "avenue", "square"})
"""Parameter names whose word, said after a name, is part of it ("guest room", "Quebec City", "Abbey Road")."""


def whole_names(name: str, strings: Sequence[str]) -> list[str]:
    """``strings``, the spans a plain string parameter ``name`` may be, but those cut short of the parameter's kind
    word when that is a :data:`COMPLETING_KINDS` one: "laundry" when "laundry room" is a span too (in either case,
    with or without an apostrophe, the word singular or plural)."""
    kind = name.casefold()
    if kind not in COMPLETING_KINDS:
        return list(strings)
    admitted = {_plain(span) for span in strings}
    return [span for span in strings if not any(f"{_plain(span)} {word}" in admitted for word in (kind, f"{kind}s"))]


def _plain(span: str) -> str:
    """``span`` casefolded, without apostrophes: "the kids' room" and "kids" compare as "kids room" and "kids"."""
    return span.casefold().replace("'", "").replace("’", "")
