"""The speech models a server shares between all its sessions, and the per-session input audio buffer.

:class:`Voice` holds one loaded speech-to-text model, one text-to-speech voice and the voice-activity model;
each session gets cheap per-stream state from it (a turn detector), never a model copy. Blocking inference runs
in worker threads. :class:`InputAudio` is a session's ``input_audio_buffer``: 16 kHz PCM, cut into user turns by
server VAD, or committed by the client (push-to-talk).
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
from voxcall.speech.turns import SpeechStarted, SpeechStopped, TurnDetector
from voxcall.speech.vad import VAD, SileroVAD, WebRtcVAD

PCM = npt.NDArray[np.int16]
RATE = 16_000
_MAX_BUFFER_MS = 5 * 60 * 1000  # push-to-talk audio kept before a commit
_IDLE_KEEP = 2 * RATE  # with server VAD, samples kept while nobody speaks (enough for any prefix padding)


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


class AudioBufferFull(Exception):
    """Push-to-talk audio exceeded the buffer limit without a commit."""


class InputAudio:
    """A session's input audio since the last commit, at 16 kHz, on a stream clock counted in samples."""

    def __init__(self) -> None:
        self._chunks: list[PCM] = []
        self._held = 0  # samples held
        self._base = 0  # stream position (samples) of the first sample held
        self._detector: TurnDetector | None = None
        self._turn_start: int | None = None  # stream position where the current turn starts

    @property
    def duration_ms(self) -> int:
        """Milliseconds of audio held."""
        return self._held * 1000 // RATE

    def use_detector(self, detector: TurnDetector | None) -> None:
        """Switch turn detection on (a fresh detector) or off (push-to-talk)."""
        self._detector = detector
        self._turn_start = None

    def append(self, pcm: PCM) -> list[SpeechStarted | SpeechStopped]:
        """Add audio; with a detector, return the turn boundaries it found."""
        self._chunks.append(pcm)
        self._held += len(pcm)
        if self._detector is None:
            if self.duration_ms > _MAX_BUFFER_MS:
                self.clear()
                raise AudioBufferFull(f"more than {_MAX_BUFFER_MS // 60000} minutes of audio without a commit")
            return []
        events = self._detector.feed(pcm)
        for ev in events:
            if isinstance(ev, SpeechStarted):
                self._turn_start = ev.audio_start_ms * RATE // 1000
        if self._turn_start is None and not self._detector.in_speech and self._held > 2 * _IDLE_KEEP:
            self._drop_before(self._base + self._held - _IDLE_KEEP)  # silence costs nothing: it is never hoarded
        return events

    def take_turn(self, end_ms: int) -> PCM:
        """The audio of the turn that just ended at ``end_ms`` (from its start, padding included)."""
        start = self._turn_start if self._turn_start is not None else self._base
        end = end_ms * RATE // 1000
        self._turn_start = None
        audio = self._slice(start, end)
        self._drop_before(end)
        return audio

    def take_all(self) -> PCM:
        """Everything held (a manual commit), leaving the buffer empty."""
        audio = self._slice(self._base, self._base + self._held)
        self.clear()
        return audio

    def clear(self) -> None:
        """Forget the held audio (the stream clock keeps running)."""
        self._base += self._held
        self._chunks, self._held = [], 0
        self._turn_start = None  # the detector keeps its clock: it has seen every sample, as this buffer has

    def _joined(self) -> PCM:
        if len(self._chunks) != 1:
            self._chunks = [np.concatenate(self._chunks) if self._chunks else np.zeros(0, np.int16)]
        return self._chunks[0]

    def _slice(self, start: int, end: int) -> PCM:
        pcm = self._joined()
        a = max(0, start - self._base)
        b = max(a, min(len(pcm), end - self._base))
        return pcm[a:b].copy()

    def _drop_before(self, position: int) -> None:
        pcm = self._joined()
        cut = max(0, min(len(pcm), position - self._base))
        self._chunks = [pcm[cut:]]
        self._held -= cut
        self._base += cut
