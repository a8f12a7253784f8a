"""One WebRTC call: a browser's peer connection bridged into a core :class:`~voxcall.core.session.Session`.

What travels where, as on OpenAI's WebRTC service:

- the ``oai-events`` data channel carries the Realtime client and server events, as text frames, the same events
  as on ``/v1/realtime``, except the audio: ``response.output_audio.delta`` is played on the call's audio track
  instead (:class:`~voxcall.webrtc.media.SpeechTrack`), and the microphone's track becomes the session's
  ``input_audio_buffer.append`` (the audio formats of a ``session.update`` are ignored: the media are Opus);
- ``output_audio_buffer.started`` / ``.stopped`` tell the client when a response's audio begins and ends playing;
- barge-in: when the user speaks over the agent (``input_audio_buffer.speech_started``) or the client says so
  (``output_audio_buffer.clear``, which the JS Agents SDK sends with ``response.cancel`` on every interruption),
  the speech stops at once, ``output_audio_buffer.cleared`` is sent, and each message is truncated to what the
  user heard, so the model's record of the conversation holds only the words the user got.

The session starts when the data channel opens (its first event is ``session.created``), with the session
configuration of the client secret and of the offer, in that order, applied before the client's own events.
Client events reach the session through one queue that a single task drains, so they are handled one at a time
and in order, the microphone's audio included. The call ends when the peer connection fails or closes, when the
client hangs up, or when the session closes it (idle, drained).
"""

from __future__ import annotations

import asyncio
import base64
import json
import logging
from collections.abc import Callable
from typing import Any

import numpy as np
from aiortc import RTCConfiguration, RTCDataChannel, RTCPeerConnection, RTCSessionDescription
from aiortc.mediastreams import MediaStreamError, MediaStreamTrack
from av import AudioFrame

from voxcall.core.protocol import Event, ProtocolError, error_event, event, wire_text
from voxcall.core.responses.outbox import Send
from voxcall.core.session import Session
from voxcall.webrtc.media import Microphone, SpeechTrack

log = logging.getLogger(__name__)

EVENTS_CHANNEL = "oai-events"
"""The data channel's label, as the OpenAI clients name it."""

CONNECT_TIMEOUT = 30.0
"""Seconds an answered call may take to open its data channel before it is given up."""

_FORMAT_FIELDS = ("format",)


class WebRTCCall:
    """Bridges one peer connection and its session: :meth:`answer` the offer, then the call runs by itself until
    :attr:`ended`; :meth:`close` ends it from outside."""

    def __init__(self, call_id: str, make_session: Callable[[Send], Session], configuration: RTCConfiguration,
                 *, initial: list[dict[str, Any]], max_frame_bytes: int) -> None:
        """``make_session`` builds the session that writes its events to the call; ``initial``: the session
        configurations to apply before the client's events (``session.update`` ``session`` objects)."""
        self.id = call_id
        self.session = make_session(self._on_event)
        self.ended = asyncio.Event()
        self._pc = RTCPeerConnection(configuration)
        self._speech = SpeechTrack(self._audio_started, self._audio_stopped)
        self._microphone = Microphone()
        self._inbox: asyncio.Queue[str] = asyncio.Queue()
        for session in initial:
            self._inbox.put_nowait(json.dumps({"type": "session.update", "session": session}))
        self._channel: RTCDataChannel | None = None
        self._max_frame_bytes = max_frame_bytes
        self._tasks: set[asyncio.Task[None]] = set()
        self._closing = False
        self._closer: asyncio.Task[None] | None = None
        self._silenced: set[str] = set()  # responses cut short: audio still on its way from them is dropped
        self._pc.on("datachannel", self._on_channel)
        self._pc.on("track", self._on_track)
        self._pc.on("connectionstatechange", self._on_state)

    async def answer(self, offer: str) -> str:
        """The SDP answer to ``offer``, with every local candidate in it (gathered before it returns: no trickle
        ICE). Raises ``ValueError`` for an offer aiortc cannot take."""
        self._pc.addTrack(self._speech)
        await self._pc.setRemoteDescription(RTCSessionDescription(offer, "offer"))
        await self._pc.setLocalDescription(await self._pc.createAnswer())
        self._spawn(self._expire_unconnected(), "connect")
        return str(self._pc.localDescription.sdp)

    async def close(self, code: int = 1000, reason: str | None = None) -> None:
        """End the call (again: nothing): the session stops with everything it runs, then the peer connection.
        ``code`` and ``reason`` are a WebSocket's, for the log (a peer connection has no close reason)."""
        if self._closing:
            return
        self._closing = True
        log.info("webrtc call %s: closing (%s%s)", self.id, code, f": {reason}" if reason else "")
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        await self.session.close()
        self._speech.stop()
        await self._pc.close()
        self.ended.set()

    async def hang_up(self, code: int = 1000, reason: str | None = None) -> None:
        """End the call soon, from one of its own tasks (the session's): :meth:`close` waits for them."""
        if self._closer is None:
            self._closer = asyncio.create_task(self.close(code, reason), name=f"voxcall-webrtc-close-{self.id}")

    def _spawn(self, work: Any, name: str) -> None:
        task = asyncio.create_task(work, name=f"voxcall-webrtc-{name}-{self.id}")
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _expire_unconnected(self) -> None:
        await asyncio.sleep(CONNECT_TIMEOUT)
        if self._channel is None:
            log.info("webrtc call %s: no data channel after %g s", self.id, CONNECT_TIMEOUT)
            await self.hang_up(1000, "never connected")

    def _on_state(self) -> None:
        if self._pc.connectionState in ("failed", "closed") and not self._closing:
            log.info("webrtc call %s: the peer connection is %s", self.id, self._pc.connectionState)
            self._spawn(self.hang_up(1000, f"peer connection {self._pc.connectionState}"), "state")

    def _on_channel(self, channel: RTCDataChannel) -> None:
        if channel.label != EVENTS_CHANNEL or self._channel is not None:
            log.warning("webrtc call %s: ignored a data channel named %r", self.id, channel.label)
            return
        self._channel = channel
        channel.on("message", self._on_message)
        channel.on("close", lambda: self._spawn(self.hang_up(1000, "data channel closed"), "closed"))
        self._spawn(self._feed(), "feed")

    def _on_track(self, track: MediaStreamTrack) -> None:
        if track.kind == "audio":
            self._spawn(self._listen(track), "microphone")

    async def _feed(self) -> None:
        """Start the session, then hand it its client events, one at a time."""
        await self.session.start()
        while True:
            await self.session.handle_frame(await self._inbox.get())

    async def _listen(self, track: MediaStreamTrack) -> None:
        """The microphone's frames, as the session's input audio."""
        while True:
            try:
                frame = await track.recv()
            except MediaStreamError:
                return
            assert isinstance(frame, AudioFrame)
            pcm = self._microphone.pcm(frame)
            if pcm.size:
                audio = base64.b64encode(pcm.tobytes()).decode("ascii")
                self._inbox.put_nowait(json.dumps({"type": "input_audio_buffer.append", "audio": audio}))

    def _on_message(self, data: str | bytes) -> None:
        """A client event from the data channel: queued for the session as it came, but for what only the call
        can do (stop the speech it plays) and what does not apply to it (audio formats)."""
        if len(data) > self._max_frame_bytes:
            self._inbox.put_nowait(data if isinstance(data, str) else data.decode("utf-8", "replace"))
            return  # the session refuses it with its own error
        try:
            ev = json.loads(data)
        except (ValueError, UnicodeDecodeError):
            ev = None
        if isinstance(ev, dict) and ev.get("type") == "output_audio_buffer.clear":
            self._cut_short()
        elif isinstance(ev, dict) and ev.get("type") == "session.update" and isinstance(ev.get("session"), dict):
            data = json.dumps({**ev, "session": _without_formats(ev["session"])})
        self._inbox.put_nowait(data if isinstance(data, str) else data.decode("utf-8", "replace"))

    async def _on_event(self, ev: Event) -> None:
        """A server event of the session: audio to the track, everything else to the data channel."""
        kind = ev["type"]
        if kind == "response.output_audio.delta":
            if ev["response_id"] not in self._silenced:
                pcm = np.frombuffer(base64.b64decode(ev["delta"]), np.int16)
                self._speech.play(ev["item_id"], ev["response_id"], pcm)
            return
        if kind == "input_audio_buffer.speech_started" and self._speech.speaking is not None:
            response_id = self._speech.speaking
            self._cut_short()
            self._send(event("output_audio_buffer.cleared", response_id=response_id))
        elif kind == "response.done":
            self._speech.done(ev["response"]["id"])
            self._silenced.discard(ev["response"]["id"])
        self._send(ev)

    def _cut_short(self) -> None:
        """Stop the speech where the user is, truncate its messages to what was heard, and drop the rest of the
        audio of the response cut short (its deltas may still be on their way)."""
        if self._speech.speaking is not None:
            self._silenced.add(self._speech.speaking)
        for heard in self._speech.interrupt():
            self._silenced.add(heard.response_id)
            self._inbox.put_nowait(json.dumps({"type": "conversation.item.truncate", "item_id": heard.item_id,
                                               "content_index": 0, "audio_end_ms": heard.heard_ms}))

    def _audio_started(self, response_id: str) -> None:
        self._send(event("output_audio_buffer.started", response_id=response_id))

    def _audio_stopped(self, response_id: str) -> None:
        self._send(event("output_audio_buffer.stopped", response_id=response_id))

    def _send(self, ev: Event) -> None:
        channel = self._channel
        if channel is None or channel.readyState != "open":
            return
        text = wire_text(ev)
        try:
            channel.send(text)
        except ValueError as exc:  # over the peer's largest message
            log.warning("webrtc call %s: could not send %s: %s", self.id, ev["type"], exc)
            channel.send(wire_text(error_event(ProtocolError(
                f"a {ev['type']} event of {len(text)} bytes is larger than the data channel takes",
                code="event_too_large", kind="server_error"), None)))


def _without_formats(session: dict[str, Any]) -> dict[str, Any]:
    """``session`` without audio formats (and the beta names for them): a call's media are Opus, decoded to the
    session's PCM16 at 24 kHz by the call itself."""
    session = {k: v for k, v in session.items() if k not in ("input_audio_format", "output_audio_format")}
    audio = session.get("audio")
    if isinstance(audio, dict):
        session["audio"] = {side: ({k: v for k, v in part.items() if k not in _FORMAT_FIELDS}
                                   if isinstance(part, dict) else part) for side, part in audio.items()}
    return session
