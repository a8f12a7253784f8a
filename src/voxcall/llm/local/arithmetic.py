"""``computed``: arithmetic the user asked for, worked out here rather than by a small model.

A 135M model asked "What is twelve times eight?" with no calculator among its tools answered "12 times 8 is 8*8 =
64": it cannot compute. A request that says exactly two numbers and one operation (in words or digits, in any
language of :mod:`voxcall.llm.local.lexicon`: "twelve times eight", "7 minus 10", "the sum of 4 and 5", "9 lots of
7", "十二乘以八"), or one number and a word that says the operation and the other ("double 37", "half of 90"), is
answered with the result, in the request's language; a subtraction said from its second number on ("subtract 9
from 30") is the second minus the first. Anything else (a third number, a second operation) is left to the model.
"""

from __future__ import annotations

import operator
from collections.abc import Callable

from voxcall.language import language_of
from voxcall.llm.local.lexicon import CHINESE, ENGLISH, Lexicon, number_spans
from voxcall.llm.local.meanings import REVERSING, glosses, implied

OPERATIONS: dict[str, Callable[[float, float], float]] = {
    "add": operator.add, "sub": operator.sub, "mul": operator.mul, "div": operator.truediv}
"""The operations a request may name, by the gloss the lexicon gives their words."""
DIGITS = 6
"""Decimals a result is rounded to."""


def computed(said: str) -> str | None:
    """The answer to the arithmetic ``said`` asks for (see the module's docstring), or None when it asks for no
    single operation on two numbers (or divides by zero)."""
    named = {gloss for gloss in glosses(said) if gloss in OPERATIONS}
    spans = number_spans(said)
    values = [value for _, _, value in spans] + [value for _, value in implied(said)]
    if len(named) != 1 or len(values) != 2:
        return None
    name = named.pop()
    a, b = values
    if name == "sub" and len(spans) == 2 and REVERSING.search(said[spans[0][1]:spans[1][0]]):
        a, b = b, a  # "subtract 9 from 30"
    if name == "div" and b == 0:
        return None
    lexicon = _language(said)
    return lexicon.result.format(a=_number(a), op=lexicon.operations[name], b=_number(b),
                                 result=_number(OPERATIONS[name](a, b)))


def _language(said: str) -> Lexicon:
    """The table to answer in: Chinese when ``said``'s script is (:func:`~voxcall.language.language_of`), else
    English."""
    return CHINESE if language_of(said) == "zh" else ENGLISH


def _number(value: float) -> str:
    """``value`` in digits: whole numbers without a decimal point, others rounded to :data:`DIGITS` places."""
    rounded = round(value, DIGITS)
    return str(int(rounded)) if float(rounded).is_integer() else f"{rounded:.{DIGITS}f}".rstrip("0")
