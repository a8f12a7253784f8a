"""Server-side turn detection: where the user starts and stops speaking in a live 16 kHz stream.

:class:`TurnDetector` runs a :class:`~voxcall.speech.vad.VAD` over the stream frame by frame and reports
:class:`SpeechStarted` / :class:`SpeechStopped`, with times in milliseconds from the start of the stream as the
Realtime ``input_audio_buffer.speech_started`` / ``speech_stopped`` events carry them.

- A turn starts after ``min_speech_ms`` of consecutive speech frames (a click or a cough is shorter), and its start
  reaches back ``prefix_padding_ms`` before the first speech frame so the first syllable is not cut (never before
  the end of the previous turn: no audio belongs to two turns).
- It stops once ``silence_duration_ms`` of non-speech follow; the stop time is the end of that silence (the
  end of the audio the turn consumed), as the Realtime API reports it.
- Once in speech, frames count as speech down to a lower threshold (``threshold - 0.15``, as Silero's own streaming
  iterator does), so a quiet word inside a sentence does not count as silence.
- With ``pause_ms`` set, a silence inside a turn reports :class:`SpeechPaused` once it is ``pause_ms`` long (the
  turn may be over: a caller can start preparing an answer) and :class:`SpeechResumed` if speech comes back before
  the turn stopped (it was not over: drop what was prepared). :meth:`TurnDetector.end_after` lets a caller that
  judged the pause (``semantic_vad``) set the silence that ends this one turn, shorter or longer.
- With ``max_turn_ms`` set, a turn that has lasted that long (from its start, padding included) stops there as if
  the user had paused (:class:`SpeechStopped` with ``cut``); if they speak on, a new turn starts. A user who never
  pauses, or a silence setting longer than their pauses, cannot make a turn of unbounded length.
- Frames of (near) digital silence skip the VAD entirely and count as non-speech: a muted client sending megabytes
  of zeros costs a numpy pass, not thousands of model calls.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from dataclasses import dataclass
from typing import Protocol

import numpy as np
import numpy.typing as npt

from voxcall.speech.vad import VAD

_HYSTERESIS = 0.15


class TurnVerdict(Protocol):
    """A judge's verdict on whether a user has finished speaking: finished, unfinished, or neither (unsure)."""

    @property
    def finished(self) -> bool: ...

    @property
    def unfinished(self) -> bool: ...


class TurnJudge(Protocol):
    """Judges, at a pause, whether the user has finished (``semantic_vad``): on the words heard so far and on the
    sound of the turn (listened to beside the transcription)."""

    def listen(self, pcm16k: npt.NDArray[np.int16]) -> asyncio.Future[float] | None:
        """Start hearing how the turn so far sounds (None: the judge reads the words only)."""
        ...

    async def judge(self, text: str, sound: Awaitable[float] | None = None) -> TurnVerdict:
        """The verdict on ``text`` (and the sound, when listened to)."""
        ...


@dataclass(frozen=True)
class SpeechStarted:
    """The user began a turn; ``audio_start_ms`` includes the prefix padding (never below 0)."""

    audio_start_ms: int


@dataclass(frozen=True)
class SpeechStopped:
    """The user ended a turn; ``audio_end_ms`` is where the trailing silence that ended it was complete, or, when
    ``cut``, where the turn reached its longest allowed length (no silence was waited for)."""

    audio_end_ms: int
    cut: bool = False


@dataclass(frozen=True)
class SpeechPaused:
    """The user has been silent for ``pause_ms`` inside a turn; ``audio_end_ms`` is where that silence is complete,
    ``speech_end_ms`` where the speech before it ended."""

    audio_end_ms: int
    speech_end_ms: int


@dataclass(frozen=True)
class SpeechResumed:
    """The user spoke again after a :class:`SpeechPaused`, before the turn stopped."""

    audio_ms: int


TurnEvent = SpeechStarted | SpeechPaused | SpeechResumed | SpeechStopped
"""What :meth:`TurnDetector.feed` reports."""


class TurnDetector:
    """Turn detection for one stream of 16 kHz int16 audio fed in chunks of any size."""

    def __init__(self, vad: VAD, *, threshold: float, prefix_padding_ms: int, silence_duration_ms: int,
                 min_speech_ms: int = 60, silence_floor: int = 8, pause_ms: int | None = None,
                 max_turn_ms: int | None = None) -> None:
        """``threshold``, ``prefix_padding_ms`` and ``silence_duration_ms`` are the session's (their defaults are
        :class:`~voxcall.core.hearing.turn_detection.TurnDetection`'s). ``silence_floor``: frames whose peak
        magnitude is at most this (int16 units; 8 ≈ -72 dBFS) are silence without asking the VAD. ``pause_ms``:
        report pauses of that length (shorter than ``silence_duration_ms``; None: no pause events). ``max_turn_ms``:
        the longest turn (None: no limit)."""
        if not 0.0 < threshold < 1.0:
            raise ValueError(f"threshold must be between 0 and 1, not {threshold!r}")
        self.vad = vad
        self.threshold = threshold
        self.prefix_padding_ms = prefix_padding_ms
        self.silence_duration_ms = silence_duration_ms
        self.silence_floor = silence_floor
        self._frame = vad.frame_samples
        self._rate = vad.sample_rate
        self._min_speech_frames = max(1, -(-min_speech_ms * self._rate // (1000 * self._frame)))
        self._silence_samples_needed = silence_duration_ms * self._rate // 1000
        self._pause_samples = (None if pause_ms is None or pause_ms >= silence_duration_ms
                               else max(self._frame, pause_ms * self._rate // 1000))
        self._max_turn_samples = None if max_turn_ms is None else max(self._frame, max_turn_ms * self._rate // 1000)
        self._paused = False  # a SpeechPaused was reported for the current silence
        self._needed_now: int | None = None  # samples of silence that end the current pause (end_after), if set
        self._pending = np.zeros(0, dtype=np.int16)
        self._position = 0  # samples of the stream consumed into frames
        self._vad_fresh = True  # the VAD has seen nothing since its last reset
        self._in_speech = False
        self._speech_run = 0  # consecutive speech frames while not yet in a turn
        self._onset = 0  # sample where that run began
        self._silence = 0  # samples of non-speech since the last speech frame, while in a turn
        self._turn_start = 0  # sample where the current turn starts (prefix padding included)
        self._stopped_at = 0  # sample where the last turn stopped (the next one's padding never reaches before it)

    @property
    def in_speech(self) -> bool:
        """Whether a turn has started and not yet stopped."""
        return self._in_speech

    @property
    def silence_ms(self) -> int:
        """Milliseconds of non-speech since the last speech frame of the turn in progress (0 outside a turn)."""
        return self._silence * 1000 // self._rate if self._in_speech else 0

    @property
    def position_ms(self) -> int:
        """How much of the stream has been fed, in milliseconds."""
        return (self._position + len(self._pending)) * 1000 // self._rate

    def end_after(self, silence_ms: int) -> None:
        """End the turn in progress once its current silence is ``silence_ms`` long (at the next frame when it is
        already), instead of ``silence_duration_ms``; forgotten when speech resumes or the turn ends. Does nothing
        outside a silence inside a turn."""
        if self._in_speech and self._silence > 0:
            self._needed_now = max(self._frame, silence_ms * self._rate // 1000)

    def feed(self, pcm16k: npt.NDArray[np.int16]) -> list[TurnEvent]:
        """Consume the next chunk of the stream; returns the turn events it completed, in order."""
        if pcm16k.dtype != np.int16:
            raise TypeError(f"TurnDetector.feed expects int16 samples, got {pcm16k.dtype}")
        audio = np.concatenate((self._pending, pcm16k)) if len(self._pending) else pcm16k
        count = len(audio) // self._frame
        frames = audio[:count * self._frame].reshape(count, self._frame)
        self._pending = audio[count * self._frame:].copy()
        # Peak per frame, vectorised; int32 so that |-32768| does not overflow.
        loud = np.abs(frames.astype(np.int32)).max(axis=1, initial=0) > self.silence_floor
        events: list[TurnEvent] = []
        for frame, is_loud in zip(frames, loud, strict=True):
            event = self._step(frame if is_loud else None)
            if event is not None:
                events.append(event)
            self._position += self._frame
        return events

    def reset(self) -> None:
        """Forget any turn in progress and the VAD's state; the stream clock keeps running (``position_ms``)."""
        self._position += len(self._pending)
        self._pending = np.zeros(0, dtype=np.int16)
        self.vad.reset()
        self._vad_fresh = True
        self._in_speech = False
        self._paused = False
        self._needed_now = None
        self._speech_run = 0
        self._silence = 0

    def _is_speech(self, frame: npt.NDArray[np.int16] | None) -> bool:
        """Ask the VAD about a loud frame; a silent one (``None``) is non-speech and restarts the VAD once."""
        if frame is None:
            if not self._vad_fresh:
                self.vad.reset()
                self._vad_fresh = True
            return False
        self._vad_fresh = False
        cutoff = self.threshold - _HYSTERESIS if self._in_speech else self.threshold
        return self.vad.probability(frame) >= cutoff

    def _step(self, frame: npt.NDArray[np.int16] | None) -> TurnEvent | None:
        """Advance the state machine by the frame starting at ``self._position``."""
        speech = self._is_speech(frame)
        if not self._in_speech:
            if not speech:
                self._speech_run = 0
                return None
            if self._speech_run == 0:
                self._onset = self._position
            self._speech_run += 1
            if self._speech_run < self._min_speech_frames:
                return None
            self._in_speech, self._speech_run, self._silence = True, 0, 0
            padded = self._onset * 1000 // self._rate - self.prefix_padding_ms
            start_ms = max(self._stopped_at * 1000 // self._rate, padded)
            self._turn_start = start_ms * self._rate // 1000
            return SpeechStarted(audio_start_ms=start_ms)
        end = self._position + self._frame
        if self._max_turn_samples is not None and end - self._turn_start >= self._max_turn_samples:
            self._in_speech, self._paused, self._stopped_at, self._needed_now = False, False, end, None
            return SpeechStopped(audio_end_ms=end * 1000 // self._rate, cut=True)
        if speech:
            self._silence, self._needed_now = 0, None
            if self._paused:
                self._paused = False
                return SpeechResumed(audio_ms=self._position * 1000 // self._rate)
            return None
        self._silence += self._frame
        if self._silence >= (self._needed_now or self._silence_samples_needed):
            self._in_speech, self._paused, self._stopped_at, self._needed_now = False, False, end, None
            return SpeechStopped(audio_end_ms=end * 1000 // self._rate)
        if self._pause_samples is not None and not self._paused and self._silence >= self._pause_samples:
            self._paused = True
            return SpeechPaused(audio_end_ms=end * 1000 // self._rate,
                                speech_end_ms=(end - self._silence) * 1000 // self._rate)
        return None
