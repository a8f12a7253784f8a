"""Volume levels as people say them, and the ``voice_volume`` built-in: the assistant's own voice volume.

:func:`parse_volume` reads a level from what a model passes on from the user: a fraction (``0.8``), a percentage
as a number above 1 (``50`` is 50 %) or a string (``"80%"``, ``"0.8"``, ``"50"``), a relative change (``"+10%"``,
``"-0.2"``) when the current level is known, or a word in English or Chinese (below); Chinese numbers are read
too (百分之三十, 八成, 三十: :func:`~voxcall.language.zh.arabic`), inside the words a request wraps a
level in (把音量调到百分之三十, 调高百分之十). Levels run from 0.0
(silent) to 1.0 (full); values outside are clamped and the note says so. The music tools share these helpers.

"min" means the quietest level that is still heard (:data:`MIN_LEVEL`, 10 %), not silence: a user who asks for
"minimum volume" still wants to hear something; "mute" (静音) is silence.
"""

from __future__ import annotations

import math
import re
import reprlib
import unicodedata
from types import MappingProxyType

from voxcall.language import LANGUAGES, in_digits
from voxcall.tools.context import ToolContext, VoiceControl
from voxcall.tools.registry import ToolError, ToolRegistry

__all__ = ["MIN_LEVEL", "VOLUME_WORDS", "parse_volume", "percent", "register", "set_volume_text", "step_volume_text",
           "voice_set_volume", "voice_volume_down", "voice_volume_up"]

MIN_LEVEL = 0.1
"""The level "min"/"minimum"/最小 stands for: the quietest that is still audible."""

_LEVELS = {"max": 1.0, "half": 0.5, "min": MIN_LEVEL, "mute": 0.0}
"""What each level a language names in words (:data:`~voxcall.language.rules.VOLUME_LEVELS`) is: "min" is
:data:`MIN_LEVEL`, "mute" silence."""
VOLUME_WORDS = MappingProxyType({word: _LEVELS[level] for language in LANGUAGES.values()
                                 for level, words in language.volume_words.items() for word in words})
"""The words :func:`parse_volume` understands, with the level each stands for."""

_FILLER = re.compile("|".join([r"\s+", *(language.volume_filler for language in LANGUAGES.values()
                                          if language.volume_filler)]))
"""What a level is wrapped in, in any language: "max volume" and 最大音量 mean "max" and 最大, 把音量调到百分之三十
means 百分之三十 (in simplified or traditional characters)."""
_CHANGES = {word: sign for language in LANGUAGES.values() for word, sign in language.volume_changes.items()}
_CHANGE = re.compile("^(?:" + "|".join(_CHANGES) + ")")
"""A change at the start of a level, read as its sign: 调高百分之十 is "+10%"."""
_NUMBER = re.compile(r"([+-]?)(\d+(?:\.\d*)?|\.\d+)(%?)")
_ACCEPTED = ('a number (0.8, or 50 for 50%), a percentage ("80%"), a change ("+10%", "-10%") or a word: '
             "max, min, half, mute, 最大, 最小, 一半, 静音; Chinese numbers such as 百分之三十 or 八成 are read too")


def percent(level: float) -> str:
    """A level as people say it: ``0.8`` → ``"80%"``, ``0.125`` → ``"12.5%"``."""
    return f"{level * 100:.1f}".rstrip("0").rstrip(".") + "%"


def _clamp(level: float) -> tuple[float, str]:
    """``level`` limited to 0..1, with a note when it had to be."""
    clamped = min(max(level, 0.0), 1.0)
    note = f"clamped {percent(level)} to {percent(clamped)}" if clamped != level else ""
    return round(clamped, 4), note


def _fraction(number: float) -> float:
    """A plain number as a level: up to 1 it is a fraction, above 1 a percentage (50 → 0.5)."""
    return number / 100 if abs(number) > 1 else number


def parse_volume(value: float | str, current: float | None = None) -> tuple[float, str]:
    """Read a volume level from ``value`` and return ``(level, note)``: ``level`` within 0..1, ``note`` empty or
    saying what was adjusted ("clamped 150% to 100%").

    Numbers up to 1 are fractions and numbers above 1 percentages (so ``1`` is full volume, ``1.5`` is 1.5 %).
    A string with a leading sign is a change from ``current``. Raises :class:`ToolError`, naming what is accepted,
    for anything else (a relative change without ``current`` included).
    """
    if isinstance(value, bool):  # a JSON true/false is not a level
        raise ToolError(f"not a volume: {reprlib.repr(value)}; use {_ACCEPTED}")
    if isinstance(value, int | float):
        if not math.isfinite(value):
            raise ToolError(f"not a volume: {reprlib.repr(value)}; use {_ACCEPTED}")
        return _clamp(_fraction(float(value)))
    text = _FILLER.sub("", unicodedata.normalize("NFKC", value).casefold())  # NFKC: "８０％" → "80%"
    if text in VOLUME_WORDS:
        return VOLUME_WORDS[text], ""
    match = _NUMBER.fullmatch(in_digits(_CHANGE.sub(lambda change: _CHANGES[change[0]], text)))
    if match is None:
        raise ToolError(f"not a volume: {reprlib.repr(value)}; use {_ACCEPTED}")
    sign, digits, percent_sign = match.groups()
    amount = float(digits) / 100 if percent_sign else _fraction(float(digits))
    if not sign:
        return _clamp(amount)
    if current is None:
        raise ToolError(f"{reprlib.repr(value)} is a change, but the current volume is unknown; give a level instead")
    return _clamp(current + amount if sign == "+" else current - amount)


def set_volume_text(what: str, current: float, value: float | str) -> tuple[float, str]:
    """The new level for a "set volume" request and the sentence that reports it ("Music volume set to 80%.")."""
    level, note = parse_volume(value, current)
    return level, f"{what} set to {percent(level)}{f' ({note})' if note else ''}."


def step_volume_text(what: str, current: float, step: float, *, up: bool) -> tuple[float, str]:
    """The new level after a step up or down (``step`` as in :func:`parse_volume`: 0.1 or 10 is 10 %) and the
    sentence that reports it ("Voice volume up to 90%." or "… is already at 100%.")."""
    if isinstance(step, bool) or not math.isfinite(step) or step <= 0:
        raise ToolError(f"the step must be a positive number (0.1 or 10 for 10%), got {step!r}")
    amount = _fraction(step)
    level, _ = _clamp(current + amount if up else current - amount)
    if level == round(current, 4):
        return level, f"{what} is already at {percent(level)}."
    return level, f"{what} {'up' if up else 'down'} to {percent(level)}."


# -- the voice_volume built-in -------------------------------------------------------------------------------


def _voice(context: ToolContext) -> VoiceControl:
    """The calling session's voice, or a :class:`ToolError` for the model when the call comes from no session."""
    if context.voice is None:
        raise ToolError("the assistant's voice volume can only be changed during a voice session")
    return context.voice


async def voice_set_volume(context: ToolContext, value: float | str) -> str:
    """Set the volume of your own voice (the assistant's speech), not the music's.

    Args:
        value: The level: a number (0.8, or 50 for 50%), a percentage such as "80%", a change such as "+10%",
            or a word: "max", "min", "half", "mute" (also 最大, 最小, 一半, 静音).
    """
    voice = _voice(context)
    voice.voice_gain, text = set_volume_text("Voice volume", voice.voice_gain, value)
    return text


async def voice_volume_up(context: ToolContext, step: float = 0.1) -> str:
    """Make your own voice (the assistant's speech) louder.

    Args:
        step: How much louder: 0.1 or 10 means 10 percentage points.
    """
    voice = _voice(context)
    voice.voice_gain, text = step_volume_text("Voice volume", voice.voice_gain, step, up=True)
    return text


async def voice_volume_down(context: ToolContext, step: float = 0.1) -> str:
    """Make your own voice (the assistant's speech) quieter.

    Args:
        step: How much quieter: 0.1 or 10 means 10 percentage points.
    """
    voice = _voice(context)
    voice.voice_gain, text = step_volume_text("Voice volume", voice.voice_gain, step, up=False)
    return text


def register(registry: ToolRegistry) -> None:
    """Register the voice volume tools on ``registry``."""
    for tool in (voice_set_volume, voice_volume_up, voice_volume_down):
        registry.register(tool)
