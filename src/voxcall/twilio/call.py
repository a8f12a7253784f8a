"""One phone call: a Twilio Media Stream's frames as a hosted session's commands, its events as Twilio's frames.

- the agent profile sets the call's settings: µ-law at 8 kHz in and out, the profile's instructions, voice and
  turn detection (:func:`profile_settings`);
- the caller's audio (``media``) is decoded from µ-law and heard; the agent's audio is encoded to µ-law and sent
  as ``media``, each chunk followed by a ``mark`` (:class:`~voxcall.twilio.playout.MarkPlayout`, the call's
  playout); when the caller speaks over the agent, the session clears it (the call sends ``clear``) and cuts the
  message to what the caller heard;
- keys pressed (``dtmf``) are gathered (:class:`~voxcall.twilio.keypad.Keypad`): they stop the agent as speech does,
  and the model reads them as a user message, answered at once;
- ``stop`` (the caller hung up) or the socket closing ends the session, which cancels its response and tools.

Everything the call gives its session goes through the session's inbox (:meth:`Hosted.submit`), so commands are
applied one at a time and in order whether they come from Twilio's frames, the keypad or the session's own events.
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
import logging
from collections.abc import Awaitable, Callable

import numpy as np

from voxcall.audio.formats import PCMU
from voxcall.audio.g711 import ulaw_decode, ulaw_encode
from voxcall.config import AgentProfile
from voxcall.core.commands import AddItem, AppendAudio, Cancel, ClearOutputAudio, Respond, UpdateSettings
from voxcall.core.conversation.items import MessageItem
from voxcall.core.errors import SessionError
from voxcall.core.events import Event, OutputAudio, ResponseDone
from voxcall.core.hearing.turn_detection import parse_turn_detection
from voxcall.core.settings import SessionSettings
from voxcall.core.tools.toolbox import Toolbox
from voxcall.serving.host import CloseConnection, Hosted, SessionHost
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
from voxcall.twilio.playout import MarkPlayout

log = logging.getLogger(__name__)

KEYS_MESSAGE = "(The caller pressed {keys} on the phone keypad.)"
"""What the model reads when the caller presses keys."""

Frames = tuple[str, ...]
"""The frames (JSON text) one event of the session becomes."""


def profile_settings(profile: AgentProfile, base: SessionSettings) -> SessionSettings:
    """The settings a call of ``profile`` starts with: ``base`` (the server's) spoken in µ-law both ways, with the
    profile's instructions, voice and turn detection where it sets them."""
    settings = dataclasses.replace(base, output_modalities=("audio",), input_format=PCMU, output_format=PCMU)
    if profile.instructions is not None:
        settings = dataclasses.replace(settings, instructions=profile.instructions)
    if profile.voice is not None:
        settings = dataclasses.replace(settings, voice=profile.voice)
    if profile.turn_detection is not None:
        turns = parse_turn_detection(profile.turn_detection, where="profile.turn_detection")
        settings = dataclasses.replace(settings, turn_detection=turns)
    return settings


class TwilioCall:
    """One Media Stream and its session; :meth:`receive` each frame, :meth:`close` at the end."""

    def __init__(self, host: SessionHost, send_text: Callable[[str], Awaitable[None]], profile: AgentProfile, *,
                 toolbox: Toolbox | bool | None = True, keys_pause: float,
                 close: CloseConnection | None = None) -> None:
        """``send_text`` writes a frame to Twilio; ``toolbox``: the server tools of the profile's calls (True: all);
        ``keys_pause``: seconds after the last key that end an entry (``twilio.dtmf_pause_ms``)."""
        self._send_text = send_text
        self._profile = profile
        self._max_frame_bytes = host.shared.settings.session.max_frame_bytes
        self._playout = MarkPlayout(self._send_clear)
        self.hosted: Hosted[Frames] = host.open(self, protocol="twilio", close=close, toolbox=toolbox,
                                                playout=self._playout)
        self.session = self.hosted.session
        self._keypad = Keypad(keys_pause, self._keys_entered)
        self._stream_sid: str | None = None

    async def start(self) -> None:
        """Start the session with the profile's settings, and feed it."""
        await self.hosted.start()
        self.hosted.submit(UpdateSettings(profile_settings(self._profile, self.session.settings)))

    async def receive(self, data: str | bytes) -> bool:
        """Handle one frame from Twilio; False when the stream is over (``stop``, or audio voxcall cannot take).
        A frame that cannot be read is logged and skipped: the call goes on."""
        try:
            if len(data) > self._max_frame_bytes:
                raise FrameError(f"{len(data)} bytes, over session.max_frame_bytes ({self._max_frame_bytes})")
            frame = parse_frame(data)
            if isinstance(frame, Media) and self._stream_sid is not None and frame.track == "inbound":
                self.hosted.submit(AppendAudio(_ulaw_pcm(frame.payload), MULAW_RATE))
        except FrameError as exc:
            log.warning("twilio call %s: skipped a frame: %s", self.session.id, exc)
            return True
        if isinstance(frame, Start):
            return self._started(frame)
        if isinstance(frame, Mark):
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
        await self.hosted.close()

    def _started(self, start: Start) -> bool:
        if (start.encoding, start.sample_rate, start.channels) != (MULAW, MULAW_RATE, 1):
            log.warning("twilio call %s: the stream carries %s at %d Hz, %d channel(s); voxcall takes %s at %d Hz, "
                        "mono", self.session.id, start.encoding, start.sample_rate, start.channels, MULAW,
                        MULAW_RATE)
            return False
        self._stream_sid = start.stream_sid
        log.info("twilio call %s: call %s, stream %s", self.session.id, start.call_sid, start.stream_sid)
        return True

    # -- the session's way out (the host's codec) ---------------------------------------------------------------

    def encode(self, ev: Event) -> Frames | None:
        """What the caller must hear or stop hearing, as Twilio's frames."""
        if isinstance(ev, OutputAudio) and self._stream_sid is not None:
            name = self._playout.mark(ev)
            if name is None:
                return None
            payload = base64.b64encode(ulaw_encode(ev.pcm).tobytes()).decode("ascii")
            return media_frame(self._stream_sid, payload), mark_frame(self._stream_sid, name)
        if isinstance(ev, ResponseDone):
            self._playout.flush(ev.response.id)
        return None

    async def write(self, message: Frames) -> None:
        """Write the frames of one event to Twilio."""
        for frame in message:
            await self._send_text(frame)

    async def refused(self, error: SessionError) -> None:
        """A command failed: there is no one to tell on a phone line but the log."""
        log.warning("twilio call %s: %s", self.session.id, error.message)

    async def _send_clear(self) -> None:
        """Tell Twilio to drop the audio it has not played."""
        if self._stream_sid is not None:
            await self.hosted.send((clear_frame(self._stream_sid),))

    async def _keys_entered(self, keys: str) -> None:
        """The caller entered ``keys``: they interrupt the agent, and the model answers them."""
        self.hosted.submit(ClearOutputAudio())
        self.hosted.submit(self._cancel_response)
        self.hosted.submit(AddItem(MessageItem.of_text("user", KEYS_MESSAGE.format(keys=" ".join(keys)))))
        self.hosted.submit(Respond())

    async def _cancel_response(self) -> None:
        if self.session.responses.visible is not None:
            await self.session.apply(Cancel())


def _ulaw_pcm(payload: str) -> np.ndarray:
    """A ``media`` payload's µ-law as PCM samples (:class:`FrameError` for one that is no base64)."""
    try:
        return ulaw_decode(np.frombuffer(base64.b64decode(payload, validate=True), np.uint8))
    except (binascii.Error, ValueError) as exc:
        raise FrameError(f"media.payload is not base64: {exc}") from None
