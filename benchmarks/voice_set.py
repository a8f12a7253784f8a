"""The spoken request sets of ``bench_voice.py``: what is said, by which voice, and how a transcript is scored.

Three sets:

- :data:`REQUESTS`: everyday requests, one per fresh session (with tools and without);
- :data:`PAUSED`: sentences said in two halves with a 300–450 ms silence between ("set a timer for … ten minutes");
- :data:`ARITHMETIC`: questions the built-in ``calculator`` answers (the server-tool set).

Voices: the packaged Piper voice (``voxcall.speech.get_piper()``) and, when the ``espeak-ng`` program exists, a few
espeak-ng voices for variety. Every clip is resampled to the session's 24 kHz PCM16. Transcripts are scored by word
error rate after :func:`normalise` (lower case, no punctuation, digits spelled out as words).
"""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
import wave
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from voxcall.audio.codec import resample
from voxcall.audio.formats import PCM24K

RATE = PCM24K.rate
SPEECH_LEVEL = 500
"""``|sample|`` above this counts as speech when finding where an utterance ends."""

REQUESTS = [
    "What is the capital of France?",
    "How many days are there in a week?",
    "Tell me a fun fact about the moon.",
    "What color is the sky?",
    "Can you recommend a good book?",
    "How do I boil an egg?",
    "What is your name?",
    "Why do cats purr?",
    "What should I cook for dinner tonight?",
    "How far away is the sun?",
    "What is a good name for a dog?",
    "Where do penguins live?",
    "Is it going to rain tomorrow?",
    "Play some relaxing music please.",
    "How tall is Mount Everest?",
    "What time does the bakery open?",
    "Give me a word that rhymes with orange.",
    "Why is the ocean salty?",
    "How do plants make their food?",
    "What is the best way to learn to swim?",
    "Remind me to call my sister this evening.",
    "Which planet is closest to the sun?",
    "How many legs does a spider have?",
    "What is the tallest animal in the world?",
]
"""Everyday requests; each is said in a fresh session."""

TOOL_REQUESTS = {
    "lookup_order": "What is the status of order 4512?",
    "set_reminder": "Remind me to call my mother in ten minutes.",
    "check_stock": "Is the blue kettle in stock at the Main Street store?",
    "book_table": "Book a table for four people at Luigi's.",
    "convert_currency": "Convert fifty dollars to euros.",
    "find_recipe": "Find me a recipe with chicken and rice.",
    "send_message": "Send a text to Anna saying I'm running late.",
}
"""A spoken request for each client tool ``bench_voice.TOOL_TEMPLATES`` declares, by the tool's base name."""

PAUSED = [
    ("Set a timer for", "ten minutes."),
    ("Remind me to buy", "milk and bread."),
    ("What is the weather like", "in London today?"),
    ("Please turn the volume", "down a little."),
    ("Tell me a short story", "about a brave knight."),
    ("How long should I boil", "a soft egg?"),
]
"""Sentences said in two halves, with a 300–450 ms silence between them."""

ARITHMETIC = [
    "What is 12 times 8?",
    "What is 45 plus 17?",
    "What is 100 minus 37?",
    "What is 81 divided by 9?",
    "What is 7 times 6?",
    "What is 250 plus 125?",
]
"""Questions the built-in ``calculator`` answers (the scripted demo calls it for ``a op b``)."""

ESPEAK_VOICES = ["en-us", "en-gb+f3", "en-us+m4"]
"""espeak-ng voices used besides Piper when the program exists."""


@dataclass
class Clip:
    """Speech at 24 kHz: ``pcm``, who said it, what was said, and where the speech in it ends.

    ``speech_ends`` holds the index of the last speech sample of each spoken part (one part, or two for a sentence
    with a pause inside); the last of them is the end of the utterance.
    """

    text: str
    voice: str
    pcm: npt.NDArray[np.int16]
    speech_ends: list[int]

    @property
    def speech_end(self) -> int:
        """Index of the utterance's last speech sample."""
        return self.speech_ends[-1]


Synthesizer = Callable[[str], npt.NDArray[np.int16]]
"""Text → 24 kHz PCM16."""


def last_speech_sample(pcm: npt.NDArray[np.int16]) -> int:
    """Index of the last sample above :data:`SPEECH_LEVEL` (the last sample when none is)."""
    loud = np.flatnonzero(np.abs(pcm.astype(np.int32)) > SPEECH_LEVEL)
    return int(loud[-1]) if loud.size else len(pcm) - 1


def piper_voice() -> tuple[str, Synthesizer]:
    """The packaged Piper voice, as a synthesizer at the wire rate."""
    from voxcall.speech import get_piper

    piper = get_piper()

    def say(text: str) -> npt.NDArray[np.int16]:
        return resample(np.concatenate(list(piper.synthesize(text))), piper.sample_rate, RATE)

    return "piper", say


def espeak_voice(name: str) -> tuple[str, Synthesizer]:
    """The espeak-ng voice ``name`` (e.g. ``en-gb+f3``), as a synthesizer at the wire rate."""

    def say(text: str) -> npt.NDArray[np.int16]:
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / "say.wav"
            subprocess.run(["espeak-ng", "-v", name, "-s", "165", "-w", str(path), text], check=True,
                           capture_output=True)
            with wave.open(str(path)) as clip:
                rate = clip.getframerate()
                pcm = np.frombuffer(clip.readframes(clip.getnframes()), np.int16)
        return resample(pcm, rate, RATE)

    return f"espeak-ng {name}", say


def voices(espeak: bool = True) -> list[tuple[str, Synthesizer]]:
    """Piper first, then the espeak-ng voices when the program exists and ``espeak`` is set."""
    found = [piper_voice()]
    if espeak and shutil.which("espeak-ng"):
        found += [espeak_voice(name) for name in ESPEAK_VOICES]
    return found


def speak(text: str, voice: tuple[str, Synthesizer]) -> Clip:
    """``text`` said by ``voice``."""
    name, say = voice
    pcm = say(text)
    return Clip(text, name, pcm, [last_speech_sample(pcm)])


def speak_paused(first: str, second: str, pause_ms: int, voice: tuple[str, Synthesizer]) -> Clip:
    """``first``, ``pause_ms`` of silence after its last speech sample, then ``second``, all said by ``voice``."""
    name, say = voice
    head, tail = say(first), say(second)
    head = head[:last_speech_sample(head) + 1]
    gap = np.zeros(RATE * pause_ms // 1000, np.int16)
    tail_start = _first_speech_sample(tail)
    pcm = np.concatenate([head, gap, tail[tail_start:]])
    return Clip(f"{first} {second}", name, pcm, [len(head) - 1, last_speech_sample(pcm)])


def _first_speech_sample(pcm: npt.NDArray[np.int16]) -> int:
    loud = np.flatnonzero(np.abs(pcm.astype(np.int32)) > SPEECH_LEVEL)
    return int(loud[0]) if loud.size else 0


def spread(texts: Sequence[str], count: int, all_voices: list[tuple[str, Synthesizer]]) -> list[Clip]:
    """``count`` clips cycling through ``texts``, the voices taking turns."""
    return [speak(texts[n % len(texts)], all_voices[n % len(all_voices)]) for n in range(count)]


# --- scoring -----------------------------------------------------------------------------------------------------

_ONES = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve",
         "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen"]
_TENS = ["", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]
_SCALES = [(1_000_000_000, "billion"), (1_000_000, "million"), (1000, "thousand"), (100, "hundred")]


def number_words(n: int) -> str:
    """``n`` (≥ 0) in words, without "and": 125 → "one hundred twenty five"."""
    if n < 20:
        return _ONES[n]
    if n < 100:
        return _TENS[n // 10] + ("" if n % 10 == 0 else " " + _ONES[n % 10])
    for scale, word in _SCALES:
        if n >= scale:
            rest = n % scale
            return f"{number_words(n // scale)} {word}" + ("" if rest == 0 else " " + number_words(rest))
    raise AssertionError("unreachable")


def _spell(match: re.Match[str]) -> str:
    whole, _, fraction = match.group(0).partition(".")
    words = number_words(int(whole))
    if fraction:
        words += " point " + " ".join(_ONES[int(digit)] for digit in fraction)
    return f" {words} "


def normalise(text: str) -> list[str]:
    """The words of ``text``: lower case, digits spelled out (12 → "twelve"), hyphens as spaces, no punctuation."""
    text = re.sub(r"(?<=\d),(?=\d{3})", "", text.lower())  # 1,000 → 1000
    text = re.sub(r"\d+(?:\.\d+)?", _spell, text)
    text = text.replace("-", " ").replace("'", "")
    return re.sub(r"[^a-z ]+", " ", text).split()


def word_errors(reference: str, hypothesis: str) -> tuple[int, int]:
    """(word edits, reference words) between the normalised texts: the numerator and denominator of the WER."""
    ref, hyp = normalise(reference), normalise(hypothesis)
    row = list(range(len(hyp) + 1))
    for i, word in enumerate(ref, 1):
        previous, row[0] = row[0], i
        for j, heard in enumerate(hyp, 1):
            previous, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, previous + (word != heard))
    return row[-1], len(ref)
