"""The form a tool's description prescribes for a date or a time (``'YYYY-MM-DD'``): its grammar, and its repair;
and the shape a sample of numbers shows (``'36.2522, -105.3437'``): the spans of the user's words in it.

A string parameter described as "the date, in the format 'YYYY-MM-DD'" or "formatted as 'YYYY-MM-DD to
YYYY-MM-DD'" takes a value of that form. The user says "October 1st" or "2023.10.1", not the form, so a model
writes it, and writes it loosely: the 0.5B model wrote ``'2023-10-1 to 2023-10-7'`` for "from 2023.10.1 to
2023.10.7", which a checker (and many an API) refuses; held to two digits a field, it wrote ``'2023-10-10'``. So a
local model's grammar admits the form's separators with one or two digits a field (:func:`form_rule`), and the
arguments of every tool path are given the form's width (:func:`padded`, a lossless repair of
:func:`~voxcall.tools.validation.validate_arguments`): ``'2023-10-1'`` → ``'2023-10-01'``.

A form is made of the usual placeholders (``YYYY``, ``MM``, ``DD``, ``HH``, ``mm``, ``ss``, either case; ``MM``
after an hour is minutes) between separators (``-``, ``/``, ``:``, ``.``, a comma, a space, ``T``, ``Z``, " to "),
quoted in the description; a quoted text with anything else (``'DD MMM'``, a month's name) prescribes no form here.

A quoted sample made of numbers alone (``'36.2522, -105.3437'``, ``'192.168.1.1'``, ``'18:30'``) shows a value's
*shape*: a span of the user's words of that shape is the value (:func:`shaped_spans`). The 0.5B model, told "in the
format of 'Latitude, Longitude', such as '36.2522, -105.3437'" and given "located at 34.0522, -118.2437", wrote
``geolocation='text'``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

_QUOTED = re.compile(r"'([^'\n]{2,40})'|\"([^\"\n]{2,40})\"")
"""A quoted text of a description: where a form is written."""

_PIECE = re.compile(r"(YYYY|yyyy|YY|yy|MM|DD|dd|HH|hh|mm|SS|ss)|( to | - |[-/:., TZ])")
"""A placeholder of a date or a time, or what may separate two of them."""

_SAMPLE = re.compile(r"[-+\d.,:/ ]+")
"""A sample of a value's shape: numbers, signs and separators alone."""

Form = tuple[str | int, ...]
"""A form's pieces: a separator's text, or a field's width in digits (4: a year; 2: the rest)."""


def forms_of(schema: Any) -> list[Form]:
    """The date or time forms the description of string ``schema`` quotes, in order, each once (none for a choice
    of values, ``enum`` or ``const``: those are the values)."""
    return list(dict.fromkeys(form for text in _quoted(schema) if (form := _form(text))))


def form_rule(schema: Any, empty: str, literal: Callable[[str], str]) -> str | None:
    """The GBNF of a string of ``schema`` in one of the forms its description prescribes (None: it prescribes
    none), with the quotes of ``empty`` (how the grammar's dialect writes an empty string: ``''``) and separators
    written by ``literal``: a year's four digits, one or two for any other field (:func:`padded` widens them)."""
    forms = forms_of(schema)
    if not forms:
        return None
    half = len(empty) // 2
    shapes = [" ".join(literal(piece) if isinstance(piece, str) else
                       "[0-9] [0-9] [0-9] [0-9]" if piece == 4 else "[0-9] [0-9]?" for piece in form)
              for form in forms]
    inside = " | ".join(f"({shape})" for shape in shapes)
    return f"{literal(empty[:half])} ({inside}) {literal(empty[half:])}"


def shaped_spans(schema: Any, text: str) -> list[str]:
    """The spans of ``text`` shaped as a sample the description of string ``schema`` quotes (see the module's
    docstring), in the order said, each once: a field's digits as many as the sample's, but for a field before a
    point (one to three) or after one (any); a sign where the sample may have one. Empty for a sample with letters
    or fewer than two numbers, and for a choice of values."""
    shapes = dict.fromkeys(shape for sample in _quoted(schema) if (shape := _shape(sample)))
    return list(dict.fromkeys(match.group() for shape in shapes for match in shape.finditer(text)))


def _quoted(schema: Any) -> list[str]:
    """The texts the description of string ``schema`` quotes, in order (none for a choice of values, ``enum`` or
    ``const``: those are the values)."""
    if not isinstance(schema, Mapping) or schema.get("type") != "string" or {"enum", "const"} & schema.keys():
        return []
    description = schema.get("description")
    if not isinstance(description, str):
        return []
    return [match.group(1) or match.group(2) for match in _QUOTED.finditer(description)]


def _shape(sample: str) -> re.Pattern[str] | None:
    """The pattern of the values shaped as ``sample`` (:func:`shaped_spans`), or None when it shows no shape."""
    if _SAMPLE.fullmatch(sample) is None or len(re.findall(r"\d+", sample)) < 2:
        return None
    pattern = []
    for match in re.finditer(r"\d+|\s+|.", sample):
        piece, at, end = match.group(), match.start(), match.end()
        if piece.isdigit():
            after_point, before_point = sample[at - 1:at] == ".", sample[end:end + 1] == "."
            pattern.append(r"\d+" if after_point else r"\d{1,3}" if before_point else rf"\d{{{len(piece)}}}")
        elif piece.isspace():
            pattern.append(r"\s*")
        elif piece in "-+" and sample[end:end + 1].isdigit() and (at == 0 or sample[at - 1] in " ,;(["):
            pattern.append("[-+]?")
        else:
            pattern.append(re.escape(piece))
    return re.compile(r"(?<![\w.])" + "".join(pattern) + r"(?![\w]|\.\d)")


def padded(value: str, schema: Any) -> str:
    """``value`` with each field as wide as the first form of ``schema`` it is written in ("2023-10-1" for
    'YYYY-MM-DD': "2023-10-01"); ``value`` itself when it is in none of them, or already as wide."""
    for form in forms_of(schema):
        pattern = "".join(re.escape(piece) if isinstance(piece, str) else rf"(\d{{1,{piece}}})" for piece in form)
        match = re.fullmatch(pattern, value)
        if match is not None:
            fields = iter(match.groups())
            return "".join(piece if isinstance(piece, str) else next(fields).zfill(piece) for piece in form)
    return value


def _form(text: str) -> Form | None:
    """The pieces of ``text`` ("YYYY-MM-DD"), or None when it is not made of placeholders and separators alone or
    holds neither a year, a month and a day, nor an hour and minutes, nor a year alone."""
    pieces: list[str | int] = []
    fields: list[str] = []
    at = 0
    while at < len(text):
        match = _PIECE.match(text, at)
        if match is None:
            return None
        placeholder, separator = match.groups()
        if placeholder:
            minutes = placeholder.upper() == "MM" and fields[-1:] == ["HH"]
            fields.append("MINUTES" if minutes else placeholder.upper())
            pieces.append(4 if fields[-1] == "YYYY" else 2)
        else:
            pieces.append(separator)
        at = match.end()
    named = set(fields)
    if {"YYYY", "MM", "DD"} <= named or {"HH", "MINUTES"} <= named or fields == ["YYYY"]:
        return tuple(pieces)
    return None
