"""English: the rules of :class:`~voxcall.language.rules.Language` for US English."""

from __future__ import annotations

from types import MappingProxyType

from voxcall.language.rules import Form, Language, Money, SpokenForms, units

__all__ = ["LANGUAGE", "SPOKEN_FORMS"]

SPOKEN_FORMS = SpokenForms(
    language="en",
    operators=MappingProxyType({
        "*": "times", "×": "times", "x": "times", "/": "divided by", "÷": "divided by", "+": "plus", "-": "minus",
        "−": "minus", "=": "equals",
    }),
    negative="minus {n}",
    units=units({
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

LANGUAGE = Language(
    code="en",
    acknowledgements=("One moment, I'm checking.", "Just a second, I'm on it.", "Let me look that up, one moment."),
    giving_up="Sorry, I couldn't work that out.",
    thinking=("Let me see.", "One moment.", "Let me think."),
    asking="Could you tell me the {value}?",
    spoken_forms=SPOKEN_FORMS,
    volume_words=MappingProxyType({
        "max": ("max", "maximum", "full", "loudest", "highest"),
        "half": ("half", "medium"),
        "min": ("min", "minimum", "lowest", "quietest"),
        "mute": ("mute", "muted", "silent", "off", "zero"),
    }),
    volume_filler="volume",
)
