"""Chinese speech both ways: each Chinese voice read back by each recogniser, as character error rate, and speed.

The forty device requests of ``zh_request_set.py`` (two halves of twenty: ``DEV``, on which settings were chosen,
and ``HELD_OUT``, only measured) are spoken by each voice, resampled to 16 kHz and transcribed in Chinese
(``language="zh"``) by each recogniser. Voices: ``baker`` (:mod:`voxcall.speech.baker`, with and without third-tone
sandhi) and espeak-ng's Mandarin (the voice voxcall picks for ``zh`` when no other speaks it; the baseline).
Recognisers: the multilingual Whisper base (``voxcall[multilingual]``) as voxcall ran it before (greedy, sized
window, its own script), as it runs it now (Chinese converted to simplified characters by OpenCC,
:data:`voxcall.speech.stt.SCRIPTS`), and with beam search. The Paraformer and SenseVoice packages of the package
index hold no weights (they download them from model hubs at run time), so no recogniser of their own is measured.

Printed: one row per voice × recogniser with the CER of each half (and how many requests were heard exactly),
the voice's real-time factor (synthesis seconds per second of speech) and the recogniser's, on this machine's cores
(two threads each). ``--show dev`` (or ``held-out``) prints every transcript of that half.

    python benchmarks/bench_chinese_speech.py [--show dev]
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from voxcall.audio.codec import resample
from voxcall.speech import TTS, EspeakTTS, WhisperSTT
from voxcall.speech.baker import BakerVoice
from voxcall.speech.voices import espeak_voice_for
from zh_request_set import DEV, HELD_OUT, edits, normalise

RATE = 16_000
HALVES = {"dev": DEV, "held-out": HELD_OUT}


@dataclass
class Score:
    """Edits, reference characters, exact transcripts and seconds spent, over one half."""

    edits: int = 0
    characters: int = 0
    exact: int = 0
    requests: int = 0
    heard: list[tuple[str, str]] = field(default_factory=list)

    @property
    def cer(self) -> float:
        """Character error rate."""
        return self.edits / self.characters if self.characters else 0.0


@dataclass
class Clip:
    """A request as spoken: 16 kHz audio, its length and how long the voice took."""

    text: str
    pcm: npt.NDArray[np.int16]
    seconds: float
    synthesis_s: float


def speak(voice: TTS, texts: list[str]) -> Iterator[Clip]:
    """Each text spoken by ``voice``, at 16 kHz."""
    for text in texts:
        start = time.perf_counter()
        chunks = list(voice.synthesize(text))
        took = time.perf_counter() - start
        pcm = resample(np.concatenate(chunks), voice.sample_rate, RATE)
        yield Clip(text, pcm, len(pcm) / RATE, took)


Hear = Callable[[npt.NDArray[np.int16]], str]


def recognisers() -> dict[str, Hear]:
    """The recognisers measured, by label: Whisper base as before, as now, and with beam search."""
    before = WhisperSTT("base", scripts=False)
    now = WhisperSTT("base")
    beam = WhisperSTT("base", beam_size=5)
    return {
        "whisper base (before)": lambda pcm: before.transcribe(pcm, language="zh"),
        "whisper base, simplified": lambda pcm: now.transcribe(pcm, language="zh"),
        "whisper base, simplified, beam 5": lambda pcm: beam.transcribe(pcm, language="zh"),
    }


def voices() -> dict[str, TTS]:
    """The voices measured, by label."""
    found: dict[str, TTS] = {"baker": BakerVoice(), "baker, no tone sandhi": BakerVoice(tone_sandhi=False)}
    espeak = espeak_voice_for("zh")
    if espeak is not None:
        found[f"espeak-ng {espeak}"] = EspeakTTS(espeak)
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--show", choices=sorted(HALVES), help="print every transcript of this half")
    args = parser.parse_args()
    ears = recognisers()
    rows = []
    for voice_name, voice in voices().items():
        clips = {half: list(speak(voice, texts)) for half, texts in HALVES.items()}
        spoken = sum(clip.seconds for half in clips.values() for clip in half)
        voice_rtf = sum(clip.synthesis_s for half in clips.values() for clip in half) / spoken
        for ear_name, hear in ears.items():
            scores = {half: Score() for half in HALVES}
            listening = 0.0
            for half, half_clips in clips.items():
                for clip in half_clips:
                    start = time.perf_counter()
                    heard = hear(clip.pcm)
                    listening += time.perf_counter() - start
                    score, reference, got = scores[half], normalise(clip.text), normalise(heard)
                    score.edits += edits(reference, got)
                    score.characters += len(reference)
                    score.exact += reference == got
                    score.requests += 1
                    score.heard.append((clip.text, heard))
            rows.append((voice_name, ear_name, scores, voice_rtf, listening / spoken))
            if args.show:
                print(f"\n{voice_name} → {ear_name} ({args.show}):")
                for text, heard in scores[args.show].heard:
                    print(f"  {text}  →  {heard}")
    print(f"\n{'voice':<28} {'recogniser':<33} {'CER dev':>8} {'exact':>6} {'CER held-out':>13} {'exact':>6} "
          f"{'TTS RTF':>8} {'STT RTF':>8}")
    for voice_name, ear_name, scores, voice_rtf, ear_rtf in rows:
        dev, held = scores["dev"], scores["held-out"]
        print(f"{voice_name:<28} {ear_name:<33} {dev.cer:>8.1%} {dev.exact:>3}/{dev.requests:<2} {held.cer:>13.1%} "
              f"{held.exact:>3}/{held.requests:<2} {voice_rtf:>8.3f} {ear_rtf:>8.3f}")


if __name__ == "__main__":
    main()
