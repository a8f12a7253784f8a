"""The speech models a server shares between all its sessions.

:class:`Voice` holds one loaded speech-to-text model, one text-to-speech voice and the voice-activity model;
each session gets cheap per-stream state from it (a turn detector), never a model copy. Blocking inference runs
in worker threads.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np
import numpy.typing as npt

from voxcall.speech.stt import WhisperSTT
from voxcall.speech.tts import TTS
from voxcall.speech.vad import VAD, SileroVAD, WebRtcVAD

PCM = npt.NDArray[np.int16]
RATE = 16_000
"""The sample rate the speech models hear (Hz)."""


@dataclass
class Voice:
    """Shared speech models: ``stt`` (16 kHz in, text out), ``tts`` and a factory of per-stream VAD state."""

    stt: WhisperSTT
    tts: TTS
    vad: Callable[[], VAD]

    async def transcribe(self, pcm: PCM) -> str:
        """Speech to text in a worker thread (the model serialises concurrent calls)."""
        return (await asyncio.to_thread(self.stt.transcribe, pcm)).strip()


def load_voice(*, vad: Literal["silero", "webrtc"] = "silero", stt_model: Path | None = None,
               tts_voice: Path | None = None) -> Voice:
    """Load (once per process) the embedded speech models: Silero or WebRTC VAD, Whisper, piper.

    Raises :class:`~voxcall.speech.errors.SpeechModelError` when a model package is missing.
    """
    from voxcall.speech.models import get_piper, get_silero, get_whisper

    if vad == "silero":
        model = get_silero()
        factory: Callable[[], VAD] = lambda: SileroVAD(model)  # noqa: E731
    else:
        factory = WebRtcVAD
    return Voice(stt=get_whisper(stt_model), tts=get_piper(tts_voice), vad=factory)
