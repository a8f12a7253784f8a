"""The values the words label with a parameter's name: "The title should be 'Breakthrough in AI'", "with
'admin_user' as username", "connecting to the 'main' database".

A user filling in a tool's fields says each field's name beside its value, and puts the value in quotes. A tiny
model copies the quoted values into the wrong fields: the 0.5B model wrote ``Title='Productivity and Sleep
Patterns'`` for "a news article titled 'Julian is Testing' … the meta title to be 'Productivity and Sleep
Patterns'", ``Content=`` the meta description, and ``port=12341234`` where "a password '12341234'" was said. A
quoted value (:class:`Quoted`) is labelled with the parameter whose name the words next to it say:

- after it, a label word and the parameter's words ("'admin_user' as username", "'192.168.0.5' as the host");
- before it, the parameter's words and nothing but words that may stand between a field and its value ("The title
  should be", "the meta title as", "titled", "the database name is", "the password I think is");
- after it, the parameter's words, which give no value of their own ("the 'main' database"; not "the 'Orion' version
  2.1.3").

Of the parameters named there, the one with the most of its name's words said wins, then the one with the largest
share of them said ("the title": ``Title``, not ``MetaTitle``; "the meta title": ``MetaTitle``); a tie labels none.
Only a plain string parameter takes a label: an identifier has its own rule (:mod:`voxcall.llm.local.kinds`), and
a date or a time in a prescribed form is written in that form (:mod:`voxcall.tools.forms`). The words are the
lexicon's (:data:`~voxcall.llm.local.lexicon.LABEL_LINKS`, :data:`~voxcall.llm.local.lexicon.LABEL_AFTER`,
:func:`~voxcall.llm.local.lexicon.inflected`).

What the calls grammar makes of them (:class:`Labels`): a labelled parameter is one of its values or a quoted value
labelled with none, passed even when optional; every other argument of the call is anything but a value labelled
for another (nor a number such a value holds).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from voxcall.llm.local.kinds import Kind, kind_of
from voxcall.llm.local.lexicon import (
    ARTICLES,
    LABEL_AFTER,
    LABEL_LINKS,
    SPAN_EDGE,
    inflected,
    said_numbers,
    singular,
)
from voxcall.llm.local.relevance import same_stem, words
from voxcall.tools.forms import forms_of

LABEL_REACH = 5
"""How many words before a quoted value may hold the name of the parameter it is labelled with."""
_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)?")
_CLAUSE_END = re.compile(r"[.;!?\n]")
_MARK = re.compile(r"[^\w\s]")


@dataclass(frozen=True, slots=True)
class Quoted:
    """A value the user put in quotes: where its quotes begin and end in the words, and the value inside."""

    start: int
    end: int
    value: str


@dataclass(frozen=True, slots=True)
class Labels:
    """The quoted values of one call (or one object in it): ``given``, the parameters labelled and their values in
    the order said; ``free``, the quoted values labelled with none."""

    given: Mapping[str, Sequence[str]]
    free: Sequence[str] = ()

    def values(self, name: str) -> list[str]:
        """What labelled parameter ``name`` may be: its values, or a value labelled with none ("the signatures of
        'setCellValue' and 'getCellValue' methods" labels the second only)."""
        return [*self.given[name], *self.free]

    def untaken(self, values: Sequence[Any], *, keep: bool = True) -> list[Any]:
        """``values`` but those labelled with a parameter (a string, or a number one holds: "a password
        '12341234'" gives no port); with ``keep``, all of them when that leaves none."""
        taken = {_bare(value) for found in self.given.values() for value in found}
        taken |= {str(number) for value in taken for number in said_numbers(value)}
        left = [value for value in values if _bare(str(value)) not in taken]
        return left or list(values) if keep else left


NO_LABELS = Labels({})
"""What words with no quoted value label."""


def labelled(text: str, quoted: Sequence[Quoted], properties: Mapping[str, Any]) -> Labels:
    """The plain string parameters of ``properties`` that the words ``text`` label a value of ``quoted`` with (see
    the module's docstring)."""
    found: dict[str, list[str]] = {}
    last = 0
    for quote in quoted:
        before = _CLAUSE_END.split(text[last:quote.start])[-1]
        after = _lowered(_MARK.split(text[quote.end:])[0])
        last = quote.end
        name = None
        if after[:1] and after[0] in LABEL_AFTER:
            name = _named_after([word for word in after[1:] if word not in ARTICLES], properties)
        if name is None:
            name = _named_before(_lowered(before)[-LABEL_REACH:], properties)
        if name is None and not (len(after) > 1 and after[1][:1].isdigit()):
            name = _named_after(after, properties)
        if name is not None and _takes_label(name, properties[name]):
            found.setdefault(name, []).append(quote.value)
    given = {value for values in found.values() for value in values}
    return Labels(found, tuple(dict.fromkeys(q.value for q in quoted if q.value not in given)))


def _takes_label(name: str, schema: Any) -> bool:
    """Whether parameter ``name`` (of ``schema``) is a plain string: no choice, identifier or prescribed form."""
    return (isinstance(schema, Mapping) and schema.get("type") == "string" and not {"enum", "const"} & schema.keys()
            and kind_of(name, schema) is not Kind.CODE and not forms_of(schema))


def _named_before(window: list[str], properties: Mapping[str, Any]) -> str | None:
    """The parameter whose name's words ``window`` (the words before a quoted value) says, with only label links
    after the last of them."""
    found = {}
    for name in properties:
        said = [i for i, word in enumerate(window) if any(_says(word, part) for part in _parts(name))]
        if said and all(word in LABEL_LINKS for word in window[max(said) + 1:]):
            found[name] = _weight(window, name)
    return _best(found)


def _named_after(window: list[str], properties: Mapping[str, Any]) -> str | None:
    """The parameter whose name's words the first two words of ``window`` say, the first of them among them."""
    window = window[:2]
    found = {name: _weight(window, name) for name in properties
             if window and any(_says(window[0], part) for part in _parts(name))}
    return _best(found)


def _weight(window: list[str], name: str) -> tuple[int, float]:
    """How many of the words of parameter ``name`` ``window`` says, and what share of them."""
    parts = _parts(name)
    said = sum(any(_says(word, part) for word in window) for part in parts)
    return said, said / len(parts)


def _best(found: Mapping[str, tuple[int, float]]) -> str | None:
    """The parameter of ``found`` with the greatest weight, or None when none or a tie."""
    ranked = sorted(found.items(), key=lambda item: item[1], reverse=True)
    if not ranked or (len(ranked) > 1 and ranked[0][1] == ranked[1][1]):
        return None
    return ranked[0][0]


def _parts(name: str) -> list[str]:
    """The content words of a parameter's name, numbers aside (``MetaTitle``: meta, title)."""
    return [word for word in words(name, hints=False) if not word.isdigit()]


def _says(word: str, part: str) -> bool:
    """Whether ``word`` says a parameter's name word ``part``, in any form: "titled" says ``title``."""
    return same_stem(word, part) or inflected(word, part)


def _bare(text: str) -> str:
    """``text`` without the marks at its ends, as a span of the words is written ("Happy Birthday!": "Happy
    Birthday")."""
    return text.strip(SPAN_EDGE)


def _lowered(text: str) -> list[str]:
    """The words of ``text``, lowercased and singular."""
    return [singular(word.lower()) for word in _WORD.findall(text)]
