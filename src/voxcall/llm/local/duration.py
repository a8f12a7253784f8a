"""Lengths of time the user said, and the unit a tool's number parameter counts time in.

A call copies its numbers from the user's words (:mod:`voxcall.llm.local.grammar`), but a length of time is said
in whatever unit the user likes: "Set a timer for two hours" holds the number 2, and ``set_timer(minutes=2)`` is a
timer that rings an hour and 58 minutes early; "half an hour" and "an hour" hold no number at all. So the words'
**durations** are read (:func:`durations`: a count, a number or "an", "half an", 半, then a unit of the lexicon's
tables, with "and a half" or 半 and further parts joined: "an hour and 15 minutes", 一个半小时), and a number
parameter whose name or description counts in a unit of time (:func:`unit_of`: ``minutes``, "Duration in seconds")
takes them converted to its unit: 120 minutes for "two hours". Nothing here is written for a particular tool.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from voxcall.llm.local.lexicon import LATIN_WORD, LEXICONS, Lexicon, alternatives, number_spans, singular


@dataclass(frozen=True, slots=True)
class Duration:
    """A length of time said: ``seconds`` long, said between ``start`` and ``end`` of the words, its smallest
    part counted in ``unit`` seconds."""

    seconds: float
    start: int
    end: int
    unit: float

    def counted_in(self, unit: float) -> int | float:
        """The length in ``unit`` seconds: a whole number where it is one (120 minutes), else to a thousandth."""
        value = round(self.seconds / unit, 3)
        return int(value) if value.is_integer() else value


_UNITS = [(lexicon, re.compile(alternatives(lexicon, lexicon.units), re.IGNORECASE),
           sorted(lexicon.unit_counts.items(), key=lambda item: -len(item[0])))  # the longest count words first
          for lexicon in LEXICONS if lexicon.units]
_PARAMETER_UNITS = {singular(word): seconds for lexicon in LEXICONS if lexicon.spaced
                    for word, seconds in lexicon.units.items() if word not in lexicon.unit_abbreviations}
"""The units a parameter's name or description may count in: whole words ("minutes"), not abbreviations ("min"
is as often a minimum)."""


def durations(said: str) -> list[Duration]:
    """The lengths of time in ``said``, in order; the parts of one length ("1 hour 30 minutes", "an hour and 15
    minutes", 一小时零五分钟: a larger unit, then a smaller one) are one."""
    numbers = number_spans(said)
    found = sorted((part for lexicon, units, counts in _UNITS for match in units.finditer(said)
                    if (part := _part(lexicon, counts, said, match, numbers)) is not None),
                   key=lambda part: part.start)
    merged: list[Duration] = []
    for part in found:
        last = merged[-1] if merged else None
        if last is not None and part.unit < last.unit and _joins(said[last.end:part.start]):
            merged[-1] = Duration(last.seconds + part.seconds, last.start, part.end, part.unit)
        else:
            merged.append(part)
    return merged


def outside(said: str, lengths: list[Duration]) -> list[int | float]:
    """The numbers of ``said`` that are no part of any of ``lengths``, each once, in order."""
    return list(dict.fromkeys(value for start, end, value in number_spans(said)
                              if not any(d.start <= start and end <= d.end for d in lengths)))


def unit_of(name: str, schema: Mapping[str, Any] | None) -> float | None:
    """The seconds of the unit of time the number parameter ``name`` counts in: the first unit its name says
    (``minutes``, ``delay_seconds``), else its description ("The duration, in seconds."); None for neither."""
    described = schema.get("description") if isinstance(schema, Mapping) else None
    for text in (name, described if isinstance(described, str) else ""):
        for word in LATIN_WORD.findall(text):
            unit = _PARAMETER_UNITS.get(singular(word.lower()))
            if unit is not None:
                return unit
    return None


def _part(lexicon: Lexicon, counts: list[tuple[str, float]], said: str, unit: re.Match[str],
          numbers: list[tuple[int, int, int | float]]) -> Duration | None:
    """The length the unit word ``unit`` ends: the count before it (a number, with a half more where one is said
    after the number or the unit; or one of the count words ``counts``: "an", "half an", 半), times the unit; None
    without a count."""
    seconds = lexicon.units[unit.group().lower()]
    before = _trimmed(said[:unit.start()], lexicon.unit_links)
    end = unit.end()
    half = 0.0
    after = re.match(rf"\s*{re.escape(lexicon.unit_half)}", said[end:], re.IGNORECASE) if lexicon.unit_half else None
    if after is not None:
        half, end = 0.5, end + after.end()
    elif lexicon.unit_half and before.lower().endswith(lexicon.unit_half) and _bounded(lexicon, before,
                                                                                         lexicon.unit_half):
        said_half = len(before) - len(lexicon.unit_half)
        before = _trimmed(before[:said_half], lexicon.unit_links)
        half = 0.5
        if not any(stop == len(before) for _, stop, _ in numbers):
            return Duration(half * seconds, said_half, end, seconds)  # 半小时: a half, no number before it
    counted = [(start, value) for start, stop, value in numbers if stop == len(before)]
    if counted:
        start, value = counted[-1]
        return Duration((value + half) * seconds, start, end, seconds)
    for phrase, count in counts:
        if before.lower().endswith(phrase) and _bounded(lexicon, before, phrase):
            return Duration((count + half) * seconds, len(before) - len(phrase), end, seconds)
    return None


def _trimmed(text: str, links: tuple[str, ...]) -> str:
    """``text`` without the spaces and one of ``links`` it ends with."""
    text = text.rstrip()
    for link in links:
        if text.endswith(link):
            return text[:-len(link)].rstrip()
    return text


def _bounded(lexicon: Lexicon, text: str, phrase: str) -> bool:
    """Whether ``phrase``, which ``text`` ends with, is a whole word of it (always, in an unspaced language)."""
    head = text[:len(text) - len(phrase)]
    return not lexicon.spaced or not head or not head[-1].isalnum()


_JOINERS = re.compile(r"\s*(?:" + "|".join(re.escape(joiner) for lexicon in LEXICONS
                                            for joiner in lexicon.unit_joiners) + r")?\s*", re.IGNORECASE)


def _joins(between: str) -> bool:
    """Whether ``between`` joins two parts of one length: nothing but spaces, or a joiner ("and", ",", 零)."""
    return _JOINERS.fullmatch(between) is not None
