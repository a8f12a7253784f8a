"""One WebRTC call: a browser's peer connection bridged into a hosted session, over the Realtime protocol.

What travels where, as on OpenAI's WebRTC service:

- the ``oai-events`` data channel carries the Realtime client and server events, as text frames, the same events as on
  ``/v1/realtime``, except the audio: ``response.output_audio.delta`` is played on the call's audio track instead
  (:class:`~voxcall.webrtc.media.SpeechTrack`), and the microphone's track becomes the session's
  ``input_audio_buffer.append`` (the audio formats of a ``session.update`` are ignored: the media are Opus);
- ``output_audio_buffer.started`` / ``.stopped`` tell the client when a response's audio begins and ends playing;
- barge-in: when the user speaks over the agent (``input_audio_buffer.speech_started``) or the client says so
  (``output_audio_buffer.clear``, which the JS Agents SDK sends with ``response.cancel`` on every interruption), the
  session clears the track (its :class:`~voxcall.core.playout.Playout`): the speech stops at once,
  ``output_audio_buffer.cleared`` is sent, and each message is truncated to what the user heard, so the model's record
  of the conversation holds only the words the user got.

The session starts when the data channel opens (its first event is ``session.created``), with the session configuration
of the client secret and of the offer, in that order, applied before the client's own events. The client's events are
the Realtime protocol's (:class:`~voxcall.realtime.connection.RealtimeConnection` reads them); they reach the session
through its inbox, so they are handled one at a time and in order, the microphone's audio included. The call ends when
the peer connection fails or closes, when the client hangs up, or when the session closes it (idle, drained).
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from aiortc import RTCConfiguration, RTCDataChannel, RTCPeerConnection, RTCSessionDescription
from aiortc.mediastreams import MediaStreamError, MediaStreamTrack
from av import AudioFrame

from voxcall.core.commands import AppendAudio
from voxcall.core.errors import SessionError
from voxcall.realtime.connection import RealtimeConnection, error_event
from voxcall.serving.frames import Message, event, json_text
from voxcall.serving.host import SessionHost
from voxcall.webrtc.media import RATE, Microphone, SpeechTrack

log = logging.getLogger(__name__)

EVENTS_CHANNEL = "oai-events"
"""The data channel's label, as the OpenAI clients name it."""

CONNECT_TIMEOUT = 30.0
"""Seconds an answered call may take to open its data channel before it is given up."""


class WebRTCCall:
    """One peer connection and its session: :meth:`answer` the offer, then the call runs by itself until
    :attr:`ended`; :meth:`close` ends it from outside."""

    def __init__(self, call_id: str, host: SessionHost, configuration: RTCConfiguration, *,
                 initial: list[dict[str, Any]]) -> None:
        """``initial``: the session configurations to apply before the client's events (``session.update``
        ``session`` objects)."""
        self.id = call_id
        self._speech = SpeechTrack(self._audio_started, self._audio_stopped)
        self.connection = RealtimeConnection(host, self._send, close=self.hang_up, playout=self._speech,
                                             protocol="webrtc")
        self.hosted = self.connection.hosted
        self.session = self.hosted.session
        self.ended = asyncio.Event()
        self._initial = initial
        self._pc = RTCPeerConnection(configuration)
        self._microphone = Microphone()
        self._channel: RTCDataChannel | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._closing = False
        self._closer: asyncio.Task[None] | None = None
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
        await self.connection.close()
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
        """Start the session with the call's configurations, then feed it."""
        await self.connection.start()
        for session in self._initial:
            await self.connection.handle({"type": "session.update", "session": session})
        await self.hosted.feed()

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
                self.hosted.submit(AppendAudio(pcm, RATE))

    def _on_message(self, data: str | bytes) -> None:
        """A client event from the data channel, for the session in turn."""

        async def handle() -> None:
            await self.connection.handle_frame(data)

        self.hosted.submit(handle)

    # -- the session's way out ----------------------------------------------------------------------------------

    def _audio_started(self, response_id: str) -> None:
        self._send_now(event("output_audio_buffer.started", response_id=response_id))

    def _audio_stopped(self, response_id: str) -> None:
        self._send_now(event("output_audio_buffer.stopped", response_id=response_id))

    async def _send(self, message: Message) -> None:
        self._send_now(message)

    def _send_now(self, message: Message) -> None:
        channel = self._channel
        if channel is None or channel.readyState != "open":
            return
        text = json_text(message)
        try:
            channel.send(text)
        except ValueError as exc:  # over the peer's largest message
            log.warning("webrtc call %s: could not send %s: %s", self.id, message["type"], exc)
            channel.send(json_text(error_event(SessionError(
                f"a {message['type']} event of {len(text)} bytes is larger than the data channel takes",
                code="event_too_large", kind="server_error"), None)))
