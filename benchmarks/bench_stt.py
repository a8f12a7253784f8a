"""Speech to text: the utterance-sized window against faster-whisper's 30 s window, side by side.

A fixed set of short voice-assistant requests (questions and commands, many with numbers) is spoken by the packaged
Piper voice and, when the ``espeak-ng`` program is installed, by two espeak-ng voices for variety. Each utterance
is transcribed by two :class:`~voxcall.speech.WhisperSTT` instances on the same model, one with the default sized
window and one with ``pad_to_window=True`` (the old path), in alternating order so that load on the machine hits
both alike. Printed: word error rate of each path (lower case, punctuation stripped, numbers as said), median and
p90 seconds per utterance, the speed ratio, how often the sized window fell back to the padded path, and every
utterance whose two transcripts differ.

    python benchmarks/bench_stt.py [--repeats 1]
"""

from __future__ import annotations

import argparse
import re
import statistics
import time
from collections.abc import Iterator

import numpy as np
import numpy.typing as npt

from _server import percentile
from voxcall.audio.codec import resample
from voxcall.speech import TTS, EspeakTTS, WhisperSTT, get_piper

REQUESTS = [
    "What is the weather in Paris?",
    "Set a timer for ten minutes.",
    "What is twelve times eight?",
    "Turn off the lights in the living room.",
    "What's 345 plus 17?",
    "Remind me to call mom at 5 pm tomorrow.",
    "How far is it from London to Berlin?",
    "Play some jazz music in the kitchen.",
    "Set an alarm for 6:30 in the morning.",
    "What is the square root of 144?",
    "Convert 100 dollars to euros.",
    "How many days are there in a week?",
    "Add milk and eggs to my shopping list.",
    "What time is it in Tokyo?",
    "Call John on his mobile.",
    "Turn the volume up to 7.",
    "How tall is Mount Everest?",
    "What is 15 percent of 80?",
    "Send a message to Sarah saying I will be late.",
    "Who wrote Pride and Prejudice?",
    "Set the thermostat to 21 degrees.",
    "What is the capital of Australia?",
    "Pause the music.",
    "How do I boil an egg?",
    "Divide 1,000 by 25.",
    "What's on my calendar for Friday?",
    "Read me the latest news.",
    "Book a table for 4 at 8 o'clock.",
    "How many ounces are in a pound?",
    "Skip to the next song.",
    "What year did the Second World War end?",
    "Translate good morning into Spanish.",
    "Open the garage door.",
    "What is 9 squared?",
    "Tell me a joke about penguins.",
    "Count down from 5.",
]
ESPEAK_VOICES = ["en-us", "en-gb"]

_ONES = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve",
         "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen"]
_TENS = ["", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]
_SCALES = [(1_000_000_000, "billion"), (1_000_000, "million"), (1000, "thousand"), (100, "hundred")]


def number_words(n: int) -> str:
    """``n`` (≥ 0) as said in US English, without "and": 345 → "three hundred forty five"."""
    for value, name in _SCALES:
        if n >= value:
            head, rest = divmod(n, value)
            return f"{number_words(head)} {name}" + (f" {number_words(rest)}" if rest else "")
    if n < 20:
        return _ONES[n]
    tens, ones = divmod(n, 10)
    return _TENS[tens] + (f" {_ONES[ones]}" if ones else "")


def normalise(text: str) -> list[str]:
    """Words of ``text`` for scoring: lower case, numbers as said, punctuation stripped."""
    text = text.lower().replace("%", " percent ")
    text = re.sub(r"(\d),(?=\d{3})", r"\1", text)  # 1,000 → 1000
    text = re.sub(r"(\d+):(\d\d)", lambda m: f"{m[1]} " + ("" if m[2] == "00" else m[2]), text)  # 6:30 → 6 30
    text = re.sub(r"(\d+)\.(\d+)", lambda m: f"{m[1]} point {' '.join(m[2])}", text)
    text = re.sub(r"(\d+)(st|nd|rd|th)\b", r"\1", text)
    text = re.sub(r"\d+", lambda m: f" {number_words(int(m[0]))} ", text)
    text = text.replace("o'clock", "oclock").replace("'", "")
    return re.sub(r"[^a-z ]+", " ", text).split()


def edit_distance(ref: list[str], hyp: list[str]) -> int:
    """Word-level Levenshtein distance."""
    row = list(range(len(hyp) + 1))
    for i, word in enumerate(ref, 1):
        prev, row[0] = row[0], i
        for j, other in enumerate(hyp, 1):
            prev, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, prev + (word != other))
    return row[-1]


def voices() -> Iterator[tuple[str, TTS]]:
    """The packaged Piper voice, then espeak-ng voices when the program is installed."""
    yield "piper", get_piper()
    if EspeakTTS.available():
        for voice in ESPEAK_VOICES:
            yield f"espeak-ng {voice}", EspeakTTS(voice)
    else:
        print("espeak-ng is not installed: Piper only")


def spoken(tts: TTS, text: str) -> npt.NDArray[np.int16]:
    """``text`` spoken by ``tts`` at 16 kHz."""
    return resample(np.concatenate(list(tts.synthesize(text))), tts.sample_rate, 16000)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=1, help="transcriptions per utterance and path (timing)")
    args = parser.parse_args()

    paths = {"sized window": WhisperSTT(), "30 s window": WhisperSTT(pad_to_window=True)}
    utterances = [(name, text, spoken(tts, text)) for name, tts in voices() for text in REQUESTS]
    for stt in paths.values():  # warm-up
        stt.transcribe(utterances[0][2])
    paths["sized window"].fallbacks = 0
    times: dict[str, list[float]] = {label: [] for label in paths}
    errors = dict.fromkeys(paths, 0)
    ref_words = 0
    differ: list[str] = []
    for index, (voice, text, audio) in enumerate(utterances):
        ref = normalise(text)
        ref_words += len(ref)
        order = list(paths.items()) if index % 2 == 0 else list(reversed(paths.items()))
        heard: dict[str, str] = {}
        for label, stt in order:
            for _ in range(args.repeats):
                start = time.perf_counter()
                heard[label] = stt.transcribe(audio)
                times[label].append(time.perf_counter() - start)
            errors[label] += edit_distance(ref, normalise(heard[label]))
        if len(set(heard.values())) > 1:
            differ.append(f"  [{voice}] {text!r}: " + " | ".join(f"{k}: {v!r}" for k, v in heard.items()))

    seconds = [len(audio) / 16000 for _, _, audio in utterances]
    print(f"{len(utterances)} utterances ({len(REQUESTS)} requests), {ref_words} words, "
          f"{statistics.median(seconds):.2f} s median length")
    for label in paths:
        print(f"{label:>13}: WER {100 * errors[label] / ref_words:5.2f} %   "
              f"median {statistics.median(times[label]):.3f} s   p90 {percentile(times[label], 90):.3f} s")
    ratio = statistics.median(times["30 s window"]) / statistics.median(times["sized window"])
    print(f"speed ratio (median 30 s / median sized): {ratio:.1f}x; "
          f"sized window fell back to 30 s: {paths['sized window'].fallbacks} of {len(utterances) * args.repeats}")
    print(f"transcripts differing: {len(differ)}", *differ, sep="\n")


if __name__ == "__main__":
    main()
