"""Whoever plays a session's speech: one contract for every edge, and what the core does with it.

The shape is LiveKit Agents' ``AudioOutput``, in voxcall's terms. An edge's codec hands its :class:`Playout` each chunk
of the session's speech as it encodes the session's events (``capture``), and says when a response's speech is all
there (``flush``); the playout plays it (a track, a phone line, a paced socket) or reckons when the client will have
played it, and tells its :class:`PlaybackListener` when a response's speech starts to be heard and when it has
finished (played out, or cut off at a position). At a barge-in (the user speaks over the assistant, with
``interrupt_response``) and when a client asks for it (``output_audio_buffer.clear``), the core calls ``clear``: the
speech stops now, the chunks not yet played are dropped, and so is any chunk of that response still on its way; it
answers what of each message was heard, and the core cuts each message to those words
(:meth:`~voxcall.core.session.Session.clear_speech`), so that the conversation, and every later request to the model,
holds only what the user heard. A client that plays the audio itself (a Realtime WebSocket client) truncates its
messages itself, as its protocol says: its playout's ``clear`` answers None.

Four playouts implement it: reckoned for WebSocket clients (:mod:`voxcall.realtime.playout`), marks for Twilio
(:mod:`voxcall.twilio.playout`), the track for WebRTC (:mod:`voxcall.webrtc.media`), paced for GPT-Live
(:mod:`voxcall.live.playout`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from voxcall.audio.output import AudioOutput
from voxcall.core.events import OutputAudio


@dataclass(frozen=True)
class Heard:
    """How much of assistant message ``item_id`` (of response ``response_id``) the user heard: ``audio_end_ms`` of
    its audio."""

    item_id: str
    response_id: str
    audio_end_ms: int


@dataclass(frozen=True)
class Cleared:
    """The speech that a :meth:`Playout.clear` stopped: its response, and what of each of its messages was heard."""

    response_id: str
    heard: tuple[Heard, ...]


class PlaybackListener(Protocol):
    """Told when a response's speech starts to be heard, and when it has finished."""

    def playback_started(self, response_id: str) -> None:
        """The speech of ``response_id`` begins to be heard."""
        ...

    def playback_finished(self, response_id: str, position_ms: int, interrupted: bool) -> None:
        """The speech of ``response_id`` is over: ``position_ms`` of it was heard; ``interrupted``: cut off."""
        ...


class Playout(Protocol):
    """Plays a session's speech, and says what of it was heard."""

    def capture(self, audio: OutputAudio) -> None:
        """Play one chunk of the session's speech (after those captured before it)."""
        ...

    def flush(self, response_id: str) -> None:
        """The speech of ``response_id`` is all captured: it finishes once played."""
        ...

    async def clear(self) -> Cleared | None:
        """Stop the speech now; what was heard of the response that was playing (None: nothing was playing, or the
        client plays the audio and says itself what it heard)."""
        ...

    def watch(self, listener: PlaybackListener) -> None:
        """Tell ``listener`` from now on when speech starts and finishes."""
        ...


class Ducking:
    """A session's speech as one speaker on the host's audio output (:class:`~voxcall.audio.output.AudioOutput`):
    the music stays paused or ducked from the moment the session's speech is heard until it has finished, and
    until every other session sharing the output is silent too."""

    def __init__(self, host: AudioOutput) -> None:
        self._host = host
        self._talking = False

    def playback_started(self, response_id: str) -> None:
        if not self._talking:
            self._talking = True
            self._host.speech_started()

    def playback_finished(self, response_id: str, position_ms: int, interrupted: bool) -> None:
        self.stop()

    def stop(self) -> None:
        """The session's speech is over (finished, or its session ended). Idempotent."""
        if self._talking:
            self._talking = False
            self._host.speech_finished()
