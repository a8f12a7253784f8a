"""A session's ``input_audio_buffer``: 16 kHz PCM since the last commit, cut into user turns by server VAD or
committed by the client (push-to-talk).

Positions are counted on a stream clock in samples that never goes back, so the turn detector's milliseconds and
the buffer's samples always agree, across clears and commits. Silence is never hoarded: while nobody speaks, only
the last two seconds are kept (enough for any prefix padding); speech is bounded by the detector's longest turn.

One chunk of audio may hold several turn boundaries (a turn that ends and the next one that starts); the buffer
keeps the start of every turn not yet taken, so each is taken whole, in order.
"""

from __future__ import annotations

from collections import deque

import numpy as np

from voxcall.audio.codec import PCM
from voxcall.speech.stt import SAMPLE_RATE
from voxcall.speech.turns import SpeechStarted, TurnDetector, TurnEvent

MAX_BUFFER_MS = 5 * 60 * 1000
"""Push-to-talk audio kept before a commit; more is an error (and the buffer is cleared)."""

_IDLE_KEEP = 2 * SAMPLE_RATE  # with server VAD, samples kept while nobody speaks (enough for any prefix padding)


class AudioBufferFull(Exception):
    """Push-to-talk audio exceeded the buffer limit without a commit."""


class InputAudio:
    """A session's input audio since the last commit, at 16 kHz, on a stream clock counted in samples."""

    def __init__(self) -> None:
        self._chunks: list[PCM] = []
        self._held = 0  # samples held
        self._base = 0  # stream position (samples) of the first sample held
        self._detector: TurnDetector | None = None
        self._turn_starts: deque[int] = deque()  # stream positions where the turns not yet taken start

    @property
    def duration_ms(self) -> int:
        """Milliseconds of audio held."""
        return self._held * 1000 // SAMPLE_RATE

    @property
    def position_ms(self) -> int:
        """The stream clock now: milliseconds of audio appended since the session began."""
        return (self._base + self._held) * 1000 // SAMPLE_RATE

    @property
    def in_turn(self) -> bool:
        """Whether the turn detector hears a user turn in progress."""
        return bool(self._turn_starts)

    @property
    def silence_ms(self) -> int:
        """Milliseconds the speaker of the turn in progress has been silent (0 when speaking or outside a turn)."""
        return self._detector.silence_ms if self._detector is not None else 0

    def use_detector(self, detector: TurnDetector | None) -> None:
        """Switch turn detection on (a fresh detector) or off (push-to-talk)."""
        self._detector = detector
        self._turn_starts.clear()

    def append(self, pcm: PCM) -> list[TurnEvent]:
        """Add audio; with a detector, return the turn boundaries it found."""
        self._chunks.append(pcm)
        self._held += len(pcm)
        if self._detector is None:
            if self.duration_ms > MAX_BUFFER_MS:
                self.clear()
                raise AudioBufferFull(f"more than {MAX_BUFFER_MS // 60000} minutes of audio without a commit")
            return []
        events = self._detector.feed(pcm)
        self._turn_starts.extend(ev.audio_start_ms * SAMPLE_RATE // 1000 for ev in events
                                 if isinstance(ev, SpeechStarted))
        if not self._turn_starts and not self._detector.in_speech and self._held > 2 * _IDLE_KEEP:
            self._drop_before(self._base + self._held - _IDLE_KEEP)  # silence costs nothing: it is never hoarded
        return events

    def peek_turn(self, end_ms: int) -> PCM:
        """The audio of the turn in progress up to ``end_ms``, leaving it held (an eager turn's copy)."""
        start = self._turn_starts[0] if self._turn_starts else self._base
        return self._slice(start, end_ms * SAMPLE_RATE // 1000)

    def take_turn(self, end_ms: int) -> PCM:
        """The audio of the oldest turn not yet taken, which ended at ``end_ms`` (from its start, padding
        included)."""
        start = self._turn_starts.popleft() if self._turn_starts else self._base
        end = end_ms * SAMPLE_RATE // 1000
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
        self._turn_starts.clear()  # the detector keeps its clock: it has seen every sample, as this buffer has

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
