"""How each language reads what is written in symbols: one table per language, one row per rule.

A voice reads words, not notation: Piper's phonemiser drops ``*`` and reads ``km/h`` letter by letter, so "12 * 8 = 96"
and "90 km/h" would not be heard as meant. A :class:`SpokenForms` table says, for one language, how to say the
operators between numbers, a negative number, what may follow a number (``%``, ``°C``, units), currencies, scale
words (``$5 million``) and a few abbreviations; :class:`~voxcall.speech.verbalizer.Verbalizer` applies it. A new rule is
a row of a table; a new language is a new table in :data:`SPOKEN_FORMS`. Numbers stay digits (``3.5``, ``1,000``):
every voice reads those in its own language.

Templates hold ``{n}``, the number as it is said (its sign included: "minus 5", 负5), so a language puts the words on
either side (``{n} percent``, 百分之{n}).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

__all__ = ["CHINESE", "ENGLISH", "SPOKEN_FORMS", "Form", "Money", "SpokenForms"]


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
    """One language's rules for reading symbols aloud (see the module docstring).

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


def _units(rows: Mapping[tuple[str, ...], Form]) -> Mapping[str, Form]:
    """A unit table from rows that spell one unit several ways (``°C``, ``ºC``, ``℃``)."""
    return MappingProxyType({spelling: form for spellings, form in rows.items() for spelling in spellings})


ENGLISH = SpokenForms(
    language="en",
    operators=MappingProxyType({
        "*": "times", "×": "times", "x": "times", "/": "divided by", "÷": "divided by", "+": "plus", "-": "minus",
        "−": "minus", "=": "equals",
    }),
    negative="minus {n}",
    units=_units({
        ("%",): Form("{n} percent"),
        ("°C", "ºC", "℃"): Form("{n} degree Celsius", "{n} degrees Celsius"),
        ("°F", "ºF", "℉"): Form("{n} degree Fahrenheit", "{n} degrees Fahrenheit"),
        ("°", "º"): Form("{n} degree", "{n} degrees"),
        ("km/h", "kph"): Form("{n} kilometer per hour", "{n} kilometers per hour"),
        ("mph",): Form("{n} mile per hour", "{n} miles per hour"),
        ("m/s",): Form("{n} meter per second", "{n} meters per second"),
        ("km",): Form("{n} kilometer", "{n} kilometers"),
        ("m",): Form("{n} meter", "{n} meters"),
        ("cm",): Form("{n} centimeter", "{n} centimeters"),
        ("mm",): Form("{n} millimeter", "{n} millimeters"),
        ("mi",): Form("{n} mile", "{n} miles"),
        ("ft",): Form("{n} foot", "{n} feet"),
        ("kg",): Form("{n} kilogram", "{n} kilograms"),
        ("g",): Form("{n} gram", "{n} grams"),
        ("mg",): Form("{n} milligram", "{n} milligrams"),
        ("lb", "lbs"): Form("{n} pound", "{n} pounds"),
        ("oz",): Form("{n} ounce", "{n} ounces"),
        ("L",): Form("{n} liter", "{n} liters"),
        ("ml", "mL"): Form("{n} milliliter", "{n} milliliters"),
        ("h", "hr", "hrs"): Form("{n} hour", "{n} hours"),
        ("min", "mins"): Form("{n} minute", "{n} minutes"),
        ("sec", "secs"): Form("{n} second", "{n} seconds"),
        ("ms",): Form("{n} millisecond", "{n} milliseconds"),
        ("KB", "kB"): Form("{n} kilobyte", "{n} kilobytes"),
        ("MB",): Form("{n} megabyte", "{n} megabytes"),
        ("GB",): Form("{n} gigabyte", "{n} gigabytes"),
        ("TB",): Form("{n} terabyte", "{n} terabytes"),
        ("Hz",): Form("{n} hertz"),
        ("kHz",): Form("{n} kilohertz"),
        ("MHz",): Form("{n} megahertz"),
        ("GHz",): Form("{n} gigahertz"),
        ("kW",): Form("{n} kilowatt", "{n} kilowatts"),
        ("kWh",): Form("{n} kilowatt hour", "{n} kilowatt hours"),
    }),
    currencies=MappingProxyType({
        "$": Money(Form("{n} dollar", "{n} dollars"), Form("{n} cent", "{n} cents")),
        "€": Money(Form("{n} euro", "{n} euros"), Form("{n} cent", "{n} cents")),
        "£": Money(Form("{n} pound", "{n} pounds"), Form("{n} penny", "{n} pence")),
        "¥": Money(Form("{n} yen")),
        "₹": Money(Form("{n} rupee", "{n} rupees")),
    }),
    scales=MappingProxyType({
        "thousand": "thousand", "million": "million", "billion": "billion", "trillion": "trillion",
        "k": "thousand", "K": "thousand", "m": "million", "M": "million", "bn": "billion", "B": "billion",
    }),
    words=MappingProxyType({
        "e.g.": "for example", "i.e.": "that is", "etc.": "et cetera", "vs.": "versus", "vs": "versus",
        "approx.": "approximately", "&": "and",
    }),
)
"""English, for the packaged en_US voice (US spellings)."""

CHINESE = SpokenForms(
    language="zh",
    operators=MappingProxyType({
        "*": "乘以", "×": "乘以", "x": "乘以", "/": "除以", "÷": "除以", "+": "加", "-": "减", "−": "减",
        "=": "等于",
    }),
    negative="负{n}",
    space="",
    units=_units({
        ("%",): Form("百分之{n}"),
        ("°C", "ºC", "℃"): Form("{n}摄氏度"),
        ("°F", "ºF", "℉"): Form("华氏{n}度"),
        ("°", "º"): Form("{n}度"),
        ("km/h", "kph"): Form("每小时{n}公里"),
        ("mph",): Form("每小时{n}英里"),
        ("m/s",): Form("每秒{n}米"),
        ("km",): Form("{n}公里"),
        ("m",): Form("{n}米"),
        ("cm",): Form("{n}厘米"),
        ("mm",): Form("{n}毫米"),
        ("kg",): Form("{n}公斤"),
        ("g",): Form("{n}克"),
        ("mg",): Form("{n}毫克"),
        ("L",): Form("{n}升"),
        ("ml", "mL"): Form("{n}毫升"),
        ("h", "hr", "hrs"): Form("{n}小时"),
        ("min", "mins"): Form("{n}分钟"),
        ("sec", "secs"): Form("{n}秒"),
    }),
    currencies=MappingProxyType({
        "$": Money(Form("{n}美元")),
        "€": Money(Form("{n}欧元")),
        "£": Money(Form("{n}英镑")),
        "¥": Money(Form("{n}元")),
        "￥": Money(Form("{n}元")),
    }),
    scales=MappingProxyType({"万": "万", "亿": "亿"}),
    words=MappingProxyType({"e.g.": "例如", "etc.": "等等", "&": "和"}),
)
"""Chinese (Mandarin), for a Chinese voice such as espeak-ng's ``cmn-latn-pinyin``: 12 × 8 = 96 is 12乘以8等于96."""

SPOKEN_FORMS: Mapping[str, SpokenForms] = MappingProxyType({forms.language: forms for forms in (ENGLISH, CHINESE)})
"""The tables by language (ISO 639-1, as :meth:`~voxcall.speech.voices.VoiceCatalog.language` names them)."""
