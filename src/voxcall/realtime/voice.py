"""The speech models a server shares between all its sessions.

:class:`Voice` holds one loaded speech-to-text model, one text-to-speech voice and the voice-activity model;
each session gets cheap per-stream state from it (a turn detector), never a model copy. Blocking inference runs
in worker threads.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from voxcall.speech.stt import WhisperSTT
from voxcall.speech.tts import TTS
from voxcall.speech.vad import VAD

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
