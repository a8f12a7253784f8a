"""One phone call: a Twilio Media Stream bridged into a core :class:`~voxcall.core.session.Session`.

Twilio's frames become Realtime client events and the session's server events become Twilio's frames:

- the agent profile becomes the ``session.update`` the call starts with: µ-law at 8 kHz in and out (the caller's
  audio goes into ``input_audio_buffer.append`` as Twilio sent it, the agent's ``response.output_audio.delta``
  goes back as it is: no transcoding at the edge), the profile's instructions, voice and turn detection;
- each audio chunk sent is followed by a ``mark`` (:class:`~voxcall.twilio.playout.Playout`); when the caller
  speaks over the agent (``input_audio_buffer.speech_started``, after which the session cancels its response)
  the call sends ``clear`` and truncates the message to what the caller heard;
- keys pressed (``dtmf``) are gathered (:class:`~voxcall.twilio.keypad.Keypad`) and read by the model as a user
  message, answered at once;
- ``stop`` (the caller hung up) or the socket closing ends the session, which cancels its response and tools.

Client events reach the session through one queue that a single task drains, so they are handled one at a time
and in order whether they come from Twilio's frames or from the session's own events (a truncate at barge-in).
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from voxcall.config import AgentProfile
from voxcall.core.protocol import Event
from voxcall.core.responses.outbox import Send
from voxcall.core.session import Session
from voxcall.twilio.frames import (
    MULAW,
    MULAW_RATE,
    Dtmf,
    FrameError,
    Mark,
    Media,
    Start,
    Stop,
    clear_frame,
    mark_frame,
    media_frame,
    parse_frame,
)
from voxcall.twilio.keypad import Keypad
from voxcall.twilio.playout import Playout

log = logging.getLogger(__name__)

KEYS_MESSAGE = "(The caller pressed {keys} on the phone keypad.)"
"""What the model reads when the caller presses keys."""

PCMU = {"type": "audio/pcmu"}


def profile_session(profile: AgentProfile) -> dict[str, Any]:
    """The ``session`` of the ``session.update`` a call of ``profile`` starts with."""
    audio_in: dict[str, Any] = {"format": PCMU}
    audio_out: dict[str, Any] = {"format": PCMU}
    if profile.turn_detection is not None:
        audio_in["turn_detection"] = profile.turn_detection
    if profile.voice is not None:
        audio_out["voice"] = profile.voice
    session: dict[str, Any] = {"type": "realtime", "output_modalities": ["audio"],
                               "audio": {"input": audio_in, "output": audio_out}}
    if profile.instructions is not None:
        session["instructions"] = profile.instructions
    return session


class TwilioCall:
    """Bridges one Media Stream and its session; :meth:`receive` each frame, :meth:`close` at the end."""

    def __init__(self, send_text: Callable[[str], Awaitable[None]], profile: AgentProfile,
                 make_session: Callable[[Send], Session], *, keys_pause: float, max_frame_bytes: int) -> None:
        """``send_text`` writes a frame to Twilio; ``make_session`` builds the session that writes its events to
        the call; ``keys_pause``: seconds after the last key that end an entry (``twilio.dtmf_pause_ms``)."""
        self._send_text = send_text
        self._profile = profile
        self._max_frame_bytes = max_frame_bytes
        self.session = make_session(self._on_event)
        self._inbox: asyncio.Queue[Event] = asyncio.Queue()
        self._playout = Playout()
        self._keypad = Keypad(keys_pause, self._keys_entered)
        self._stream_sid: str | None = None
        self._responding = False
        self._feeding: asyncio.Task[None] | None = None

    async def start(self) -> None:
        """Start the session with the profile's settings."""
        await self.session.start()
        self._feeding = asyncio.create_task(self._feed(), name=f"voxcall-twilio-{self.session.id}")
        self._inbox.put_nowait({"type": "session.update", "session": profile_session(self._profile)})

    async def receive(self, data: str | bytes) -> bool:
        """Handle one frame from Twilio; False when the stream is over (``stop``, or audio voxcall cannot take).
        A frame that cannot be read is logged and skipped: the call goes on."""
        try:
            if len(data) > self._max_frame_bytes:
                raise FrameError(f"{len(data)} bytes, over session.max_frame_bytes ({self._max_frame_bytes})")
            frame = parse_frame(data)
        except FrameError as exc:
            log.warning("twilio call %s: skipped a frame: %s", self.session.id, exc)
            return True
        if isinstance(frame, Start):
            return self._started(frame)
        if isinstance(frame, Media):
            if self._stream_sid is not None and frame.track == "inbound":
                self._inbox.put_nowait({"type": "input_audio_buffer.append", "audio": frame.payload})
        elif isinstance(frame, Mark):
            self._playout.played(frame.name)
        elif isinstance(frame, Dtmf):
            await self._keypad.press(frame.digit)
        elif isinstance(frame, Stop):
            log.info("twilio call %s: the stream stopped", self.session.id)
            return False
        return True

    async def close(self) -> None:
        """The call is over: stop the session and everything it runs."""
        self._keypad.close()
        if self._feeding is not None:
            self._feeding.cancel()
            await asyncio.wait([self._feeding])
        await self.session.close()

    def _started(self, start: Start) -> bool:
        if (start.encoding, start.sample_rate, start.channels) != (MULAW, MULAW_RATE, 1):
            log.warning("twilio call %s: the stream carries %s at %d Hz, %d channel(s); voxcall takes %s at %d Hz, "
                        "mono", self.session.id, start.encoding, start.sample_rate, start.channels, MULAW,
                        MULAW_RATE)
            return False
        self._stream_sid = start.stream_sid
        log.info("twilio call %s: call %s, stream %s", self.session.id, start.call_sid, start.stream_sid)
        return True

    async def _feed(self) -> None:
        """Hand the session its client events, one at a time."""
        while True:
            ev = await self._inbox.get()
            await self.session.handle_frame(json.dumps(ev))

    async def _on_event(self, ev: Event) -> None:
        """A server event of the session: what the caller must hear or stop hearing goes to Twilio."""
        kind = ev["type"]
        if kind == "response.output_audio.delta" and self._stream_sid is not None:
            await self._play(ev["item_id"], ev["delta"])
        elif kind == "input_audio_buffer.speech_started":
            await self._interrupt()
        elif kind == "response.created":
            self._responding = True
        elif kind == "response.done":
            self._responding = False
        elif kind == "error":
            log.warning("twilio call %s: %s", self.session.id, ev["error"].get("message"))

    async def _play(self, item_id: str, payload: str) -> None:
        assert self._stream_sid is not None
        size = len(payload) * 3 // 4 - payload[-2:].count("=")  # µ-law bytes: one per sample
        await self._send_text(media_frame(self._stream_sid, payload))
        await self._send_text(mark_frame(self._stream_sid, self._playout.sent(item_id, size)))

    async def _interrupt(self) -> None:
        """Stop the agent's audio where the caller is, and cut its messages to what was heard."""
        if self._stream_sid is None or not self._playout.playing:
            return
        await self._send_text(clear_frame(self._stream_sid))
        for cut in self._playout.interrupt():
            self._inbox.put_nowait({"type": "conversation.item.truncate", "item_id": cut.item_id,
                                    "content_index": 0, "audio_end_ms": cut.heard_ms})

    async def _keys_entered(self, keys: str) -> None:
        """The caller entered ``keys``: they interrupt the agent and the model answers them."""
        await self._interrupt()
        if self._responding:
            self._inbox.put_nowait({"type": "response.cancel"})
        text = KEYS_MESSAGE.format(keys=" ".join(keys))
        self._inbox.put_nowait({"type": "conversation.item.create", "item": {
            "type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}})
        self._inbox.put_nowait({"type": "response.create"})
