"""Smart Turn v3.2 (pipecat's semantic end-of-turn ONNX model) as an end-of-turn signal: is it worth wiring in?

The question for voxcall's eager turns: at a short pause, can the model tell a finished request ("What time is
it?") from one the user will go on with ("Set a timer for …")? If it can, a turn could be confirmed at the pause
instead of after ``silence_duration_ms`` of silence. This prints, for the spoken requests of the voice benchmark
(complete) and the first halves of its paused sentences plus cut-off requests (incomplete), said by piper and
espeak-ng: the model's accuracy on each side at its 0.5 threshold, and its inference time on this CPU.

The model is :mod:`voxcall.speech.smart_turn` (the file inside the ``pipecat-ai`` wheel, read out of it, checked):

    voxcall models install smart-turn-v3.2 && python benchmarks/bench_smart_turn.py

``bench_turns.py`` measures it on the labelled turn set, beside the words and with them, as the server judges.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time

import numpy as np
import numpy.typing as npt

from voice_set import PAUSED, REQUESTS
from voxcall.audio.codec import resample
from voxcall.speech import get_piper, smart_turn

RATE = 16_000


def spoken(text: str, voice: str) -> npt.NDArray[np.int16]:
    """``text`` said by ``voice`` (piper, or an espeak-ng voice name) at 16 kHz, trailing silence trimmed."""
    if voice == "piper":
        tts = get_piper()
        pcm = np.concatenate([np.asarray(c, np.int16) for c in tts.synthesize(text)])
        pcm = resample(pcm, tts.sample_rate, RATE)
    else:
        raw = subprocess.run(["espeak-ng", "-v", voice, "--stdout", text], capture_output=True, check=True).stdout
        pcm = resample(np.frombuffer(raw[44:], np.int16), 22_050, RATE)
    loud = np.nonzero(np.abs(pcm.astype(np.int32)) > 300)[0]
    return pcm[: loud[-1] + 1] if len(loud) else pcm


def main() -> None:
    model = smart_turn.load()
    if model is None:
        sys.exit(f"Smart Turn is not installed: voxcall models install {smart_turn.NAME}")
    complete = list(REQUESTS)
    incomplete = [first for first, _ in PAUSED] + [" ".join(t.split()[: max(2, len(t.split()) // 2)])
                                                   for t in complete]
    voices = ["piper", "en-us", "en-gb+f3"]
    times: list[float] = []
    results: dict[bool, list[bool]] = {True: [], False: []}
    for finished, texts in ((True, complete), (False, incomplete)):
        for text in texts:
            for voice in voices:
                pcm = np.concatenate([np.zeros(RATE // 2, np.int16), spoken(text, voice),
                                      np.zeros(RATE // 10, np.int16)])  # 100 ms into the pause
                started = time.perf_counter()
                probability = model.probability(pcm)
                times.append(time.perf_counter() - started)
                results[finished].append((probability > 0.5) == finished)
    for finished, label in ((True, "complete requests judged complete"), (False, "cut-off requests judged incomplete")):
        right = results[finished]
        print(f"{label:38s} {sum(right):3d}/{len(right)} = {100 * sum(right) / len(right):.0f}%")
    print(f"features + inference: median {statistics.median(times) * 1000:.0f} ms, "
          f"max {max(times) * 1000:.0f} ms (1 thread)")


if __name__ == "__main__":
    main()
