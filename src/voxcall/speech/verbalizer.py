"""Written text as a voice should say it: "12 * 8 = 96" → "12 times 8 equals 96", "-5°C" → "minus 5 degrees Celsius".

A :class:`Verbalizer` applies one language's :class:`~voxcall.language.rules.SpokenForms` to a clause just
before it is synthesised; the transcript keeps the model's words. Clauses are whole (cut by
:class:`~voxcall.speech.clauses.ClauseSplitter`, which never cuts between a number and what follows it), so an
operator or a unit that arrived in another delta than its number is still read with it. The passes, in order:

1. **arithmetic**: the operators of a run of numbers (``12*8=96``, ``(2 + 3) × 4``, ``$5 + $3``). A run whose
   only operators are ``-``, ``/`` or ``x`` written without spaces is left alone: ``2026-01-05``, ``1/2``,
   ``1920x1080`` and ``10-20`` are dates, fractions, sizes and ranges more often than sums;
2. **money**: ``$5`` → "5 dollars", ``$3.50`` → "3 dollars 50 cents", ``$2.5bn`` → "2.5 billion dollars", ``5 €``;
3. **units**: what may follow a number, ``30%``, ``-5°C``, ``90 km/h``, ``3 kg`` (singular for 1);
4. **negative numbers** left: ``-3`` → "minus 3" (never a hyphen inside a word or range: ``COVID-19``, ``10-20``);
5. **words**: abbreviations, ``e.g.`` → "for example".

Word boundaries are ASCII: Chinese writes no spaces, so 气温-5°C is read 气温负5摄氏度.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable

from voxcall.language import SPOKEN_FORMS
from voxcall.language.rules import SpokenForms

__all__ = ["Verbalizer", "verbalizer_for"]

_NUMBER = r"\d+(?:[.,]\d+)*"
"""A number as written: ``96``, ``3.5``, ``1,000``, ``1,234.56``."""
_SIGN = "[-−]"
_BEFORE = r"(?<![0-9A-Za-z_.,])"
"""Nothing that would make the next character part of a longer word or number (``COVID-19``, ``v1.5``)."""
_AFTER = r"(?![0-9A-Za-z_])"
_CLEAR_OPERATORS = frozenset("*×÷+=−")
"""Operators that are arithmetic however they are spaced; ``-``, ``/`` and ``x`` are only when spaced."""


def _alternatives(keys: Iterable[str]) -> str:
    """A regex alternation of ``keys``, longest first (``km/h`` before ``km``); never matches when empty."""
    ordered = sorted(keys, key=len, reverse=True)
    return "|".join(re.escape(key) for key in ordered) or "(?!)"


class Verbalizer:
    """The rules of one :class:`SpokenForms` table, compiled; calling it reads a clause aloud."""

    def __init__(self, forms: SpokenForms) -> None:
        self.forms = forms
        currency, units = _alternatives(forms.currencies), _alternatives(forms.units)
        operators, scales = _alternatives(forms.operators), _alternatives(forms.scales)
        operand = rf"[(\[]*{_SIGN}?(?:{currency})?{_NUMBER}(?:\s?(?:{units})(?![0-9A-Za-z_/]))?[)\]]*"
        self._operand = re.compile(operand)
        self._step = re.compile(rf"(\s*)({operators})(\s*)({operand})")
        self._arithmetic = re.compile(rf"{_BEFORE}{operand}(?:\s*(?:{operators})\s*{operand})+")
        self._money = re.compile(
            rf"{_BEFORE}(?P<sign>{_SIGN}?)(?:(?P<symbol>{currency})\s?(?P<amount>{_NUMBER})"
            rf"(?:\s?(?P<scale>{scales}){_AFTER})?|(?P<number>{_NUMBER})\s?(?P<after>{currency}))")
        self._unit = re.compile(rf"{_BEFORE}(?P<sign>{_SIGN}?)(?P<number>{_NUMBER})\s?(?P<unit>{units})"
                                rf"(?![0-9A-Za-z_/])")
        self._negative = re.compile(rf"(?<![0-9A-Za-z_.,)\]]){_SIGN}(?P<number>{_NUMBER})")
        self._words = re.compile(rf"(?<![0-9A-Za-z_])(?:{_alternatives(forms.words)}){_AFTER}", re.IGNORECASE)
        self._word_of = {word.casefold(): spoken for word, spoken in forms.words.items()}

    def __call__(self, text: str) -> str:
        """``text`` (one clause) as the voice should say it."""
        text = self._arithmetic.sub(self._say_arithmetic, text)
        text = self._money.sub(self._say_money, text)
        text = self._unit.sub(self._say_unit, text)
        text = self._negative.sub(lambda m: self._signed("-", m["number"]), text)
        return self._words.sub(lambda m: self._word_of[m[0].casefold()], text)

    def _signed(self, sign: str, spoken: str) -> str:
        """``spoken`` (a number, perhaps with words) with its ``sign`` said."""
        return self.forms.negative.format(n=spoken) if sign else spoken

    def _say_arithmetic(self, match: re.Match[str]) -> str:
        """A run of numbers with its operators said, when one of them is clearly arithmetic (else as written)."""
        expression = match[0]
        first = self._operand.match(expression)
        assert first is not None  # the run starts with an operand
        pieces, clear, pos = [first[0]], False, first.end()
        while (step := self._step.match(expression, pos)) is not None:
            before, operator, after, operand = step.groups()
            clear = clear or operator in _CLEAR_OPERATORS or bool(before and after)
            word = self.forms.operators[operator]
            pieces += [self.forms.space, word, self.forms.space, operand]
            pos = step.end()
        return "".join(pieces) if clear else expression

    def _say_money(self, match: re.Match[str]) -> str:
        """An amount of money as it is said, its sign included."""
        symbol = match["symbol"] or match["after"]
        amount = match["amount"] or match["number"]
        money = self.forms.currencies[symbol]
        if match["scale"]:
            spoken = f"{amount}{self.forms.space}{self.forms.scales[match['scale']]}"
            return self._signed(match["sign"], money.major.say(spoken, spoken))
        whole, _, cents = amount.rpartition(".") if "." in amount else (amount, "", "")
        if money.minor is None or len(cents) != 2:
            return self._signed(match["sign"], money.major.say(amount, amount))
        cents = cents.lstrip("0")
        parts = [money.major.say(whole, whole)] if whole.strip("0,") else []
        parts += [money.minor.say(cents, cents)] if cents else []
        return self._signed(match["sign"], " ".join(parts) or money.major.say(whole, whole))

    def _say_unit(self, match: re.Match[str]) -> str:
        """A number and its unit as they are said, its sign included."""
        number = match["number"]
        return self.forms.units[match["unit"]].say(number, self._signed(match["sign"], number))


@functools.cache
def verbalizer_for(language: str | None) -> Verbalizer | None:
    """The shared :class:`Verbalizer` of ``language`` (ISO 639-1), or None when no table reads it (the text is then
    spoken as written)."""
    forms = SPOKEN_FORMS.get(language or "")
    return Verbalizer(forms) if forms is not None else None
