"""Events about what the session hears: the input audio buffer, user turns, and their transcripts."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class SpeechStarted:
    """The turn detector heard a user turn begin at ``audio_start_ms`` (the stream clock); its item will be
    ``item_id``."""

    audio_start_ms: int
    item_id: str


@dataclass(frozen=True, slots=True)
class SpeechStopped:
    """The user turn ``item_id`` ended at ``audio_end_ms``."""

    audio_end_ms: int
    item_id: str


@dataclass(frozen=True, slots=True)
class TurnCapped:
    """The user turn ``item_id`` reached the longest a turn may last (``max_turn_ms``, the session's
    ``max_turn_seconds``) at ``audio_end_ms`` and was ended there, with no pause; what the user says next is a new
    turn. Sent just before that turn's :class:`SpeechStopped`."""

    audio_end_ms: int
    item_id: str
    max_turn_ms: int


@dataclass(frozen=True, slots=True)
class AudioCommitted:
    """The held audio became the user item ``item_id`` (after ``previous_item_id``)."""

    previous_item_id: str | None
    item_id: str


@dataclass(frozen=True, slots=True)
class AudioCleared:
    """The held audio was dropped (the client asked)."""



@dataclass(frozen=True, slots=True)
class IdleTimedOut:
    """``idle_timeout_ms`` of silence passed: it was committed as the user item ``item_id`` and is answered."""

    audio_start_ms: int
    audio_end_ms: int
    item_id: str


@dataclass(slots=True)  # not frozen: one per streamed delta, and a frozen __init__ costs 1 µs more
class TranscriptDelta:
    """More of the user turn ``item_id``'s transcript (appended text)."""

    item_id: str
    delta: str


@dataclass(frozen=True, slots=True)
class TranscriptCompleted:
    """The user turn ``item_id``'s transcript, in ``language``, of ``seconds`` of audio."""

    item_id: str
    transcript: str
    language: str
    seconds: float


@dataclass(frozen=True, slots=True)
class TranscriptFailed:
    """The user turn ``item_id`` could not be transcribed (``code``: the failure's kind, never its details)."""

    item_id: str
    code: str
