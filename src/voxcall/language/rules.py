"""The shape of one language's rules: what a language module (:mod:`~voxcall.language.en`,
:mod:`~voxcall.language.zh` …) fills in, as data.

A :class:`Language` holds what the server says or reads in that language: the phrases said while a slow tool runs
(or a thinker decides) and when a thinker gives up, how symbols are read aloud (:class:`SpokenForms`, for a voice:
Piper's phonemiser drops ``*`` and reads ``km/h`` letter by letter, so "12 * 8 = 96" and "90 km/h" would not be
heard as meant), and the words a volume is said in.
Templates hold ``{n}``, the number as it is said (its sign included: "minus 5", 负5), so a language puts the words on
either side (``{n} percent``, 百分之{n}). Numbers stay digits (``3.5``, ``1,000``): every voice reads those in its own
language.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

__all__ = ["VOLUME_LEVELS", "Form", "Language", "Money", "SpokenForms", "units"]

VOLUME_LEVELS = ("max", "half", "min", "mute")
"""The volume levels a language names in words (:attr:`Language.volume_words`); the volume tools say what each
level is."""


@dataclass(frozen=True)
class Form:
    """How a number with something after it is said: ``one`` for exactly 1 (or -1), ``many`` (default: ``one``)
    for every other number."""

    one: str
    many: str = ""

    def say(self, number: str, spoken: str) -> str:
        """The template for ``number`` (as written, without its sign) filled with ``spoken`` (as it is said)."""
        template = self.one if number == "1" or not self.many else self.many
        return template.format(n=spoken)


@dataclass(frozen=True)
class Money:
    """A currency: how its whole units are said and, when it has them, its hundredths (cents, pence); without
    ``minor``, an amount is said as its number (``3.50``) in ``major``."""

    major: Form
    minor: Form | None = None


@dataclass(frozen=True)
class SpokenForms:
    """One language's rules for reading symbols aloud (:class:`~voxcall.speech.verbalizer.Verbalizer` applies them).

    ``space`` joins a number to an operator or scale word ("12 times 8", "5 million"; Chinese writes none: 12乘以8,
    5万). ``units`` maps what
    may follow a number (``%``, ``°C``, ``km/h``) to how the two are said; ``currencies`` maps a currency symbol,
    written before or after the amount; ``scales`` maps a scale word or suffix after an amount of money (``$5m``,
    ``$2 billion``) to how it is said; ``words`` maps abbreviations (matched whole, case-insensitively) to words.
    """

    language: str
    operators: Mapping[str, str]
    negative: str
    space: str = " "
    units: Mapping[str, Form] = field(default_factory=dict)
    currencies: Mapping[str, Money] = field(default_factory=dict)
    scales: Mapping[str, str] = field(default_factory=dict)
    words: Mapping[str, str] = field(default_factory=dict)


def units(rows: Mapping[tuple[str, ...], Form]) -> Mapping[str, Form]:
    """A unit table from rows that spell one unit several ways (``°C``, ``ºC``, ``℃``)."""
    return MappingProxyType({spelling: form for spellings, form in rows.items() for spelling in spellings})


@dataclass(frozen=True)
class Language:
    """One language's rules (see the module docstring). ``code`` is its ISO 639-1 code.

    ``acknowledgements`` are said, in turn, while a slow tool runs or a thinker decides; ``giving_up`` is said when a
    thinker did not answer in time, or a reply answered nothing (:mod:`voxcall.llm.local.duet`); ``thinking`` phrases
    (short: they come before the answer) are said, in turn, while the local model reads a prompt it was not ready for
    (:mod:`voxcall.llm.local.backend`); ``asking`` asks for a value a request left out ("What's the weather?"), its
    ``{value}`` the parameter's name (:mod:`voxcall.llm.local.plan`); ``spoken_forms`` reads symbols aloud for a voice
    in the language (None: symbols are left to the voice). ``volume_words`` names levels in words (keys from
    :data:`VOLUME_LEVELS`), ``volume_filler`` is a regular expression for the words a request wraps a level in ("max
    volume", 把音量调到…), ``volume_changes`` maps words that start a relative change to its sign (调高 → ``+``), and
    ``digits`` rewrites the language's spoken numbers in Arabic digits (百分之三十 → ``30%``).
    """

    code: str
    acknowledgements: tuple[str, ...]
    giving_up: str
    thinking: tuple[str, ...]
    asking: str
    spoken_forms: SpokenForms | None = None
    volume_words: Mapping[str, tuple[str, ...]] = field(default_factory=lambda: MappingProxyType({}))
    volume_filler: str = ""
    volume_changes: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    digits: Callable[[str], str] | None = None
