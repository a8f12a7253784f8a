"""A repeated item of a list in a call: where a small model has begun to copy one item over and over.

Why: writing a list under a calls grammar, the 0.5B thinker may write one item again and again until the reply's
tokens run out (``sizes=['Shopee', 'Shopee', 'Shopee', …]``, about 250 tokens of it, for "I saw this product on the
Shopee page"): the call is cut, rejected, and a voice user hears nothing. A grammar cannot forbid a repeat (it would
have to spell out every order of the items). So the reply driver (:mod:`voxcall.llm.local.driver`) holds a list's
text back while a list is open, reads the lists (:func:`read_lists`) after each token, and where an item repeats an
earlier one of its list, drops the repeat and closes the list there, when the grammar allows it.

A repeated number is no loop: ``[1, 1, 2]`` is a list of numbers as meant, so numbers are never taken for
repeats. The text read is Python call syntax as voxcall's grammars write it: strings in ``'`` or ``"`` with
backslash escapes, lists, tuples, dicts.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_NUMBER = re.compile(r"[-+]?\d+(\.\d*)?([eE][-+]?\d+)?")
_OPENERS = {"[": "]", "(": ")", "{": "}"}


@dataclass(slots=True)
class _Open:
    """A bracket still open in the text: its closer; for a list, the items complete so far, where the current
    item starts and the index of the separator (or the bracket) before it."""

    closer: str
    start: int
    before: int
    items: list[str] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class Lists:
    """The lists of a call's text: whether the text ends inside one (``open``), and the index of the separator
    before the first item that repeats an earlier item of its list (``repeat``: an item is complete once a
    separator or the list's ``]`` follows it; None when none repeats)."""

    open: bool
    repeat: int | None


def read_lists(text: str) -> Lists:
    """The lists of ``text``, a call's text from its start."""
    opened, repeat = _scan(text)
    return Lists(any(bracket.closer == "]" for bracket in opened), repeat)


def _scan(text: str) -> tuple[list[_Open], int | None]:
    """The brackets still open at the end of ``text``, innermost last, and the first repeat's index."""
    opened: list[_Open] = []
    repeat: int | None = None
    quote = ""
    escaped = False
    for at, char in enumerate(text):
        if quote:
            escaped, quote = (False, quote) if escaped else (char == "\\", "" if char == quote else quote)
            continue
        if char in "'\"":
            quote = char
        elif char in _OPENERS:
            opened.append(_Open(_OPENERS[char], at + 1, at))
        elif opened and (char == "," or char == opened[-1].closer):
            top = opened[-1]
            if top.closer == "]":
                item = text[top.start:at].strip()
                if repeat is None and item and not _NUMBER.fullmatch(item) and item in top.items:
                    repeat = top.before
                top.items.append(item)
            if char == ",":
                top.start, top.before = at + 1, at
            else:
                opened.pop()
    return opened, repeat
