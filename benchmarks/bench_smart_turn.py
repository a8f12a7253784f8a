"""Smart Turn v3.2 (pipecat's semantic end-of-turn ONNX model) as an end-of-turn signal: is it worth wiring in?

The question for voxcall's eager turns: at a short pause, can the model tell a finished request ("What time is
it?") from one the user will go on with ("Set a timer for …")? If it can, a turn could be confirmed at the pause
instead of after ``silence_duration_ms`` of silence. This prints, for the spoken requests of the voice benchmark
(complete) and the first halves of its paused sentences plus cut-off requests (incomplete), said by piper and
espeak-ng: the model's accuracy on each side at its 0.5 threshold, and its inference time on this CPU.

The model file ships inside the ``pipecat-ai`` wheel (``pipecat/audio/turn/smart_turn/data/``); install that wheel
with ``--no-deps`` just for the file (it is not a voxcall dependency). The features are Whisper's 80-bin log-mel
of the last 8 s (zero-mean unit-variance waveform, as transformers' ``do_normalize``), computed with
faster-whisper's feature extractor.

    pip install --no-deps pipecat-ai==1.14.0 && python benchmarks/bench_smart_turn.py
"""

from __future__ import annotations

import importlib.util
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import numpy.typing as npt

from voice_set import PAUSED, REQUESTS
from voxcall.audio.codec import resample
from voxcall.speech import get_piper

RATE = 16_000
WINDOW = 8 * RATE


def model_path() -> Path:
    """The ONNX file inside the installed pipecat-ai package (located without importing it)."""
    spec = importlib.util.find_spec("pipecat")
    if spec is None or not spec.submodule_search_locations:
        sys.exit("pipecat-ai is not installed: pip install --no-deps pipecat-ai==1.14.0 (for its model file only)")
    return Path(next(iter(spec.submodule_search_locations))) / "audio/turn/smart_turn/data/smart-turn-v3.2-cpu.onnx"


def features(pcm: npt.NDArray[np.int16]) -> npt.NDArray[np.float32]:
    """Whisper log-mel features (80 × 800) of the last 8 s, the audio at the end of the window."""
    from faster_whisper.feature_extractor import FeatureExtractor  # type: ignore[import-untyped]

    audio = pcm.astype(np.float32)[-WINDOW:] / 32768.0
    audio = np.pad(audio, (WINDOW - len(audio), 0))
    audio = (audio - audio.mean()) / np.sqrt(audio.var() + 1e-7)
    mel = FeatureExtractor(feature_size=80)(audio, padding=0)[:, :800]
    return np.asarray(mel, np.float32)


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
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    session = ort.InferenceSession(str(model_path()), sess_options=options, providers=["CPUExecutionProvider"])
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
                logits = session.run(None, {"input_features": features(pcm)[None]})[0]
                times.append(time.perf_counter() - started)
                results[finished].append((float(np.ravel(logits)[0]) > 0.5) == finished)
    for finished, label in ((True, "complete requests judged complete"), (False, "cut-off requests judged incomplete")):
        right = results[finished]
        print(f"{label:38s} {sum(right):3d}/{len(right)} = {100 * sum(right) / len(right):.0f}%")
    print(f"features + inference: median {statistics.median(times) * 1000:.0f} ms, "
          f"max {max(times) * 1000:.0f} ms (1 thread)")


if __name__ == "__main__":
    main()
