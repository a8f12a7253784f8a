"""One client of the OpenAI Realtime protocol: its frames become the session's commands, the session's events
become its server events.

A :class:`RealtimeConnection` is the protocol's codec over a hosted session (:mod:`voxcall.serving.host`). It owns
everything of the wire:

- frames in: the client event rate (:class:`~voxcall.serving.rate.EventRate`), the frame's JSON read strictly
  (:func:`~voxcall.serving.frames.read_json`), beta spellings rewritten and the SDK's models checked
  (:mod:`voxcall.realtime.client_events`), settings, items and audio read into the session's values, the
  ``response.create`` rate (``rate_limits.updated``); every bad frame is an ``error`` naming its event;
- events out: the GA server events (:mod:`voxcall.realtime.encode`), checked against the SDK's models in tests,
  under their beta names for a beta client; ``session.created`` first, ``voxcall.session.warning`` for settings
  accepted but not acted on.

Its transport writes each server event (``send``): a WebSocket (:mod:`voxcall.realtime.endpoint`), whose client plays
the speech itself (the connection reckons when it will have played it:
:class:`~voxcall.realtime.playout.ReckonedPlayout`), or a WebRTC call's data channel, whose call plays the speech on its
track (its ``playout``) and takes no audio formats.
"""

from __future__ import annotations

import logging
import time
from collections.abc import AsyncIterable, AsyncIterator, Awaitable, Callable
from typing import Any

from voxcall.audio.codec import AudioDecodeError, decode_audio
from voxcall.core.commands import (
    AddItem,
    AppendAudio,
    Cancel,
    ClearAudio,
    ClearOutputAudio,
    Command,
    CommitAudio,
    DeleteItem,
    Respond,
    RetrieveItem,
    TruncateItem,
    UpdateSettings,
)
from voxcall.core.conversation.items import Item
from voxcall.core.errors import SessionError
from voxcall.core.events import Event, OutputAudio, ResponseDone
from voxcall.core.playout import Playout
from voxcall.core.session import Session
from voxcall.realtime.beta import to_beta
from voxcall.realtime.client_events import ItemReference, event_id_of, parse_client_event
from voxcall.realtime.encode import RealtimeEncoder
from voxcall.realtime.items import item_from_client
from voxcall.realtime.playout import ReckonedPlayout
from voxcall.realtime.rate_limits import ResponseRate
from voxcall.realtime.server_events import check_server_event, validation_enabled
from voxcall.realtime.settings import ServerSpeech, parse_metadata, read_settings, response_settings
from voxcall.serving.frames import Message, Send, event, read_json
from voxcall.serving.host import CloseConnection, Hosted, SessionHost, Work
from voxcall.serving.rate import EventFate, EventRate

log = logging.getLogger(__name__)





def error_event(err: SessionError, client_event_id: str | None) -> Message:
    """The ``error`` event for ``err``; ``error.event_id`` names the client event at fault."""
    return event("error", error={"type": err.kind, "code": err.code, "message": err.message,
                                 "param": err.param, "event_id": client_event_id})


class RealtimeConnection:
    """The Realtime protocol between one client and its session."""

    def __init__(self, host: SessionHost, send: Send, *, model: str | None = None, beta: bool = False,
                 close: CloseConnection | None = None, playout: Playout | None = None, validate: bool | None = None,
                 clock: Callable[[], float] = time.monotonic, protocol: str = "realtime") -> None:
        """``model``: the name the client asked for (``?model=``); ``beta``: the beta protocol's event names;
        ``protocol``: the edge that carries the connection, as its trace names it (a WebRTC call's: ``webrtc``);
        ``close`` ends the connection (an idle session's); ``playout``: the transport plays the speech itself (and
        its audio formats do not apply); ``validate`` checks each server event against the SDK's models (None: as
        ``VOXCALL_VALIDATE_EVENTS`` says); the rate limits count time on ``clock``."""
        self._plays = playout is not None
        self._reckoned: ReckonedPlayout | None = None  # the client plays the speech: when will it have heard it
        if playout is None:
            playout = self._reckoned = ReckonedPlayout()
        self._playout = playout
        self.hosted: Hosted[Message] = host.open(self, protocol=protocol, model=model, close=close,
                                                 playout=self._playout)
        self.session: Session = self.hosted.session
        options = host.shared.settings.session
        self._options = options
        self._send = send
        self._beta = beta
        self._validate = validation_enabled() if validate is None else validate
        self._wire = RealtimeEncoder(self.session.id, host.model(model))
        self._event_rate = EventRate(options.events_per_second, clock)
        self._response_rate = ResponseRate(options.responses_per_minute, clock)
        voice = host.shared.voice
        self._speech = (ServerSpeech(speaks=True, voices=voice.voices, models=voice.models, stt_model=voice.stt.name)
                        if voice else ServerSpeech())
        self._handlers: dict[str, Callable[[Any, Message], Awaitable[None]]] = {
            "session.update": self._session_update,
            "conversation.item.create": self._item_create,
            "conversation.item.delete": lambda model, ev: self._apply(DeleteItem(model.item_id)),
            "conversation.item.retrieve": lambda model, ev: self._apply(RetrieveItem(model.item_id)),
            "conversation.item.truncate": self._item_truncate,
            "response.create": self._response_create,
            "response.cancel": lambda model, ev: self._apply(Cancel(model.response_id)),
            "input_audio_buffer.append": self._audio_append,
            "input_audio_buffer.commit": lambda model, ev: self._apply(CommitAudio()),
            "input_audio_buffer.clear": lambda model, ev: self._apply(ClearAudio()),
            "output_audio_buffer.clear": lambda model, ev: self._apply(ClearOutputAudio()),
        }

    # -- the session's way out (the host's codec) ---------------------------------------------------------------

    def encode(self, ev: Event) -> Message | None:
        """The server event for ``ev`` (None: the transport plays it, or a beta client has no such event)."""
        if isinstance(ev, OutputAudio):
            self._playout.capture(ev)
            if self._plays:
                return None
        elif isinstance(ev, ResponseDone):
            self._playout.flush(ev.response.id)
        wire = self._wire(ev)
        return None if wire is None else self._checked(wire)

    def _checked(self, wire: Message) -> Message | None:
        if self._validate:
            check_server_event(wire)
        return to_beta(wire) if self._beta else wire

    async def write(self, message: Message) -> None:
        """Write one server event."""
        await self._send(message)

    async def refused(self, error: SessionError) -> None:
        """A command the transport submitted failed: the client gets the error."""
        await self.send(error_event(error, None))

    async def send(self, message: Message) -> None:
        """Send a server event of the connection's own, in order with the session's."""
        checked = self._checked(message)
        if checked is not None:
            await self.hosted.send(checked)

    # -- the connection -----------------------------------------------------------------------------------------

    async def start(self) -> None:
        """Start the session and greet the client with ``session.created``."""
        await self.hosted.start()
        await self.send(event("session.created", session=self.session_object()))

    def session_object(self) -> Message:
        """The GA session object as it stands."""
        return self._wire.session(self.session.settings)

    async def close(self) -> None:
        """The transport is gone: stop the session."""
        await self.hosted.close()

    async def serve(self, source: AsyncIterable[str | bytes]) -> None:
        """Handle every frame of ``source``, in order, until it ends."""
        await self.hosted.run(self.work(source))

    async def work(self, source: AsyncIterable[str | bytes]) -> AsyncIterator[Work]:
        """The steps that handle each frame of ``source``, for the host to run in turn."""
        async for data in source:
            yield self._step(data)

    def _step(self, data: str | bytes) -> Work:
        async def handle() -> None:
            await self.handle_frame(data)
        return handle

    async def handle_frame(self, data: str | bytes) -> None:
        """Handle one client frame; a bad one is answered with an ``error`` event, one over the rate limit is
        dropped (see :class:`~voxcall.serving.rate.EventRate`)."""
        fate = self._event_rate.admit()
        if fate is not EventFate.ACCEPTED:
            if fate is EventFate.REFUSED:
                await self.send(error_event(self._event_rate.error(), self._event_id(data)))
            return
        try:
            ev = read_json(data, self._options.max_frame_bytes)
        except SessionError as err:
            await self.send(error_event(err, None))
            return
        await self.handle(ev)

    async def handle(self, ev: Message) -> None:
        """Handle one decoded client event; a bad one is answered with an ``error`` event naming it."""
        try:
            parsed = parse_client_event(ev)
            await self._handlers[parsed.kind](parsed.model, parsed.data)
        except SessionError as err:
            await self.send(error_event(err, event_id_of(ev)))
        except Exception:  # a bug must not end the session: the client learns that its event failed, not why
            log.exception("session %s: handling a client event failed", self.session.id)
            await self.send(error_event(SessionError("the server failed to handle this event; the session goes on",
                                                     code="server_error", kind="server_error"), event_id_of(ev)))

    def _event_id(self, data: str | bytes) -> str | None:
        """The ``event_id`` of a frame that is not handled, if it has one."""
        try:
            return event_id_of(read_json(data, self._options.max_frame_bytes))
        except SessionError:
            return None

    async def _apply(self, command: Command) -> None:
        await self.session.apply(command)

    # -- client events ------------------------------------------------------------------------------------------

    async def _session_update(self, model: Any, ev: Message) -> None:
        if model.session.type != "realtime":
            raise SessionError("only 'realtime' sessions are supported", code="invalid_value", param="session.type")
        data = _without_formats(ev["session"]) if self._plays else ev["session"]
        new, warnings = read_settings(self.session.settings, data, where="session.", speech=self._speech,
                                      max_tools=self._options.max_tools)
        await self._apply(UpdateSettings(new))
        for warning in warnings:
            await self.send(warning.to_event())

    async def _item_create(self, model: Any, ev: Message) -> None:
        item = item_from_client(model.item, max_image_bytes=self._options.max_image_bytes)
        await self._apply(AddItem(item, model.previous_item_id))

    async def _item_truncate(self, model: Any, ev: Message) -> None:
        await self._apply(TruncateItem(model.item_id, model.content_index, model.audio_end_ms))
        if self._reckoned is not None:
            self._reckoned.truncated(model.item_id)  # the client says it stopped playing there

    async def _audio_append(self, model: Any, ev: Message) -> None:
        self.session.audio.need_voice()
        fmt = self.session.settings.input_format
        try:
            pcm = decode_audio(model.audio, fmt)
        except AudioDecodeError as exc:
            raise SessionError(f"'audio': {exc}", code="invalid_value", param="audio") from None
        await self._apply(AppendAudio(pcm, fmt.rate))

    async def _response_create(self, model: Any, ev: Message) -> None:
        data: dict[str, Any] = ev.get("response") or {}
        self.session.check_can_respond()
        settings, warnings = response_settings(self.session.settings, data, speech=self._speech,
                                               max_tools=self._options.max_tools)
        metadata = parse_metadata(data.get("metadata"))
        out_of_band = _conversation_mode(data) == "none"
        inputs = model.response.input if model.response is not None else None
        items = self._input_items(inputs) if inputs is not None else None
        self._response_rate.take()
        for warning in warnings:
            await self.send(warning.to_event())
        await self.send(self._response_rate.to_event())
        await self._apply(Respond(settings, metadata, out_of_band, items))

    def _input_items(self, models: list[Any]) -> tuple[Item, ...]:
        """``response.input``: references to conversation items, and new items read as ``item.create`` reads them."""
        limit = self._options.max_image_bytes
        return tuple(self.session.conversation.require(model.id, f"response.input[{n}].id")
                     if isinstance(model, ItemReference)
                     else item_from_client(model, where=f"response.input[{n}].", max_image_bytes=limit)
                     for n, model in enumerate(models))


def _conversation_mode(data: dict[str, Any]) -> str:
    mode = data.get("conversation") or "auto"  # null is omitted
    if mode not in ("auto", "none"):
        raise SessionError("'response.conversation' must be 'auto' or 'none'", code="invalid_value",
                           param="response.conversation")
    return str(mode)


_FORMAT_FIELDS = ("format",)


def _without_formats(session: dict[str, Any]) -> dict[str, Any]:
    """``session`` without audio formats (and the beta names for them): a transport that carries the audio itself
    (WebRTC: Opus) decodes it to the session's PCM16 at 24 kHz."""
    session = {k: v for k, v in session.items() if k not in ("input_audio_format", "output_audio_format")}
    audio = session.get("audio")
    if isinstance(audio, dict):
        session["audio"] = {side: ({k: v for k, v in part.items() if k not in _FORMAT_FIELDS}
                                   if isinstance(part, dict) else part) for side, part in audio.items()}
    return session
