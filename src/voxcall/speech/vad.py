"""Voice activity detection: how likely one short frame of 16 kHz audio is speech.

Two detectors share the small :class:`VAD` protocol:

- :class:`SileroVAD` (the Silero v6 ONNX model bundled with ``faster-whisper``): accurate, ~0.1 ms per 32 ms frame.
  The weights live in one :class:`SileroModel` per process; each audio stream gets its own cheap
  :class:`SileroVAD` holding only that stream's recurrent state.
- :class:`WebRtcVAD` (``webrtcvad-wheels``): tiny and fast, but only says yes or no.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from voxcall.speech.errors import SpeechModelError
from voxcall.speech.loading import INSTALL_HINT, onnx_session, package_file
from voxcall.speech.models import get_silero


class VAD(Protocol):
    """Scores fixed-size frames of one mono 16 kHz stream, in order; stateful, so one instance per stream."""

    @property
    def sample_rate(self) -> int:
        """Sample rate the frames must have (16000)."""
        ...

    @property
    def frame_samples(self) -> int:
        """Exact number of samples :meth:`probability` takes."""
        ...

    def probability(self, frame: npt.NDArray[np.int16]) -> float:
        """Probability in [0, 1] that ``frame`` (the next ``frame_samples`` samples of the stream) is speech."""
        ...

    def reset(self) -> None:
        """Forget the stream so far, as if a new one started."""
        ...


def _check_frame(frame: npt.NDArray[np.int16], size: int) -> None:
    if frame.shape != (size,):
        raise ValueError(f"a VAD frame must be {size} mono samples, got shape {frame.shape}")


_SILERO_STATE = (1, 1, 128)  # LSTM h and c: (layers, batch, hidden)


class SileroModel:
    """The Silero VAD v6 network, loaded once and shared by every stream.

    The ONNX graph takes a batch of windows ``input[n, 576]`` (64 samples of context from the previous frame, then
    the 512-sample frame, as float32 in [-1, 1]) and the LSTM state ``h``, ``c`` of shape (1, 1, 128); it returns
    one speech probability per window and the next state. The model itself is stateless between calls, so
    :meth:`infer` is safe to call from many threads.
    """

    sample_rate = 16000
    frame_samples = 512
    context_samples = 64

    def __init__(self, model_path: str | Path | None = None) -> None:
        """Load ``model_path``, by default the ``silero_vad_v6.onnx`` that ships in faster-whisper's assets."""
        path = Path(model_path) if model_path is not None else package_file(
            "faster_whisper", "assets", "silero_vad_v6.onnx")
        self.path = path
        self._session = onnx_session(path, threads=1)  # one frame is too small to split across threads

    def infer(self, window: npt.NDArray[np.float32], h: npt.NDArray[np.float32], c: npt.NDArray[np.float32],
              ) -> tuple[float, npt.NDArray[np.float32], npt.NDArray[np.float32]]:
        """Score one ``(1, 576)`` window given the stream's state; returns the probability and the next state."""
        prob, h_next, c_next = self._session.run(None, {"input": window, "h": h, "c": c})
        return float(prob[0]), h_next, c_next


class SileroVAD:
    """One stream's Silero VAD: 512-sample (32 ms) frames at 16 kHz, state carried from frame to frame.

    Costs two 512-byte state arrays and a 64-sample context, so thousands of sessions can share one
    :class:`SileroModel`.
    """

    sample_rate = SileroModel.sample_rate
    frame_samples = SileroModel.frame_samples

    def __init__(self, model: SileroModel | None = None) -> None:
        """Start a stream on ``model``; by default the process-wide one from :func:`voxcall.speech.get_silero`."""
        self.model = model if model is not None else get_silero()
        self._window = np.zeros((1, SileroModel.context_samples + SileroModel.frame_samples), dtype=np.float32)
        self._h = np.zeros(_SILERO_STATE, dtype=np.float32)
        self._c = np.zeros(_SILERO_STATE, dtype=np.float32)

    def probability(self, frame: npt.NDArray[np.int16]) -> float:
        """Speech probability of the next 32 ms frame of the stream."""
        _check_frame(frame, self.frame_samples)
        context = SileroModel.context_samples
        window = self._window
        window[0, :context] = window[0, -context:]  # the previous frame's tail is this frame's context
        window[0, context:] = frame
        window[0, context:] /= 32768.0
        prob, self._h, self._c = self.model.infer(window, self._h, self._c)
        return prob

    def reset(self) -> None:
        """Clear the context and the recurrent state."""
        self._window.fill(0.0)
        self._h = np.zeros(_SILERO_STATE, dtype=np.float32)
        self._c = np.zeros(_SILERO_STATE, dtype=np.float32)


class WebRtcVAD:
    """The WebRTC VAD on 30 ms (480-sample) frames at 16 kHz; its probability is 0.0 or 1.0.

    ``aggressiveness`` 0..3: higher rejects more non-speech (and some quiet speech).
    """

    sample_rate = 16000
    frame_samples = 480

    def __init__(self, aggressiveness: int = 2) -> None:
        if aggressiveness not in (0, 1, 2, 3):
            raise ValueError(f"aggressiveness must be 0, 1, 2 or 3, not {aggressiveness!r}")
        try:
            import webrtcvad  # type: ignore[import-untyped]  # optional: the [local] extra
        except ImportError as exc:
            raise SpeechModelError(f"webrtcvad is not installed; {INSTALL_HINT}") from exc
        self.aggressiveness = aggressiveness
        self._new_vad: Any = webrtcvad.Vad
        self._vad: Any = self._new_vad(aggressiveness)

    def probability(self, frame: npt.NDArray[np.int16]) -> float:
        """1.0 if WebRTC calls the next 30 ms frame speech, else 0.0."""
        _check_frame(frame, self.frame_samples)
        return 1.0 if self._vad.is_speech(frame.astype("<i2", copy=False).tobytes(), self.sample_rate) else 0.0

    def reset(self) -> None:
        """Restart the detector: its noise estimates adapt to each stream."""
        self._vad = self._new_vad(self.aggressiveness)
