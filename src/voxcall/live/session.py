"""One GPT-Live session: the Live protocol's commands and events, over a hosted session core that does the work.

The core session hears, thinks, calls tools and speaks; this edge drives it with typed commands and turns what it
emits into Live events:

- the server owns the turns: the core runs server VAD that answers at the end of each user turn and stops the
  voice when the user talks over it, and it hears while it speaks (full duplex); the client only streams audio;
- input audio passes through :class:`~voxcall.live.audio_bridge.AudioBridge` (the wire format, mute);
- the core's audio and its words go out through :class:`~voxcall.live.playout.PacedPlayout` (the session's playout),
  paced in real time, each clause's words with its audio, so that a barge-in stops the voice at once and the core cuts
  the reply to what the user heard;
- partial transcripts of the user's speech become ``session.input_transcript.delta``;
- appends become conversation items: instructions and thinking are silent, commentary is said;
- a delegated task is the voice's :mod:`~voxcall.live.delegation` tool; under ``responses`` delegation the
  :class:`~voxcall.live.backend.Backend` runs it;
- everything else the core emits (ids, lifecycles, ``.done`` events) has no Live counterpart and is dropped.

Every bad command is answered with an ``error`` event (``client_event_id`` set) and the session goes on.
"""

from __future__ import annotations

import asyncio
import base64
import dataclasses
import logging
import time
from typing import Any

from openai.types.live import ClientEvent
from pydantic import TypeAdapter, ValidationError

from voxcall.core.commands import AddItem, AppendAudio, Cancel, ClearOutputAudio, Respond, UpdateSettings
from voxcall.core.conversation.items import MessageItem
from voxcall.core.errors import SessionError
from voxcall.core.events import (
    Event,
    OutputAudio,
    OutputTextDelta,
    ResponseDone,
    SpeechStarted,
    SpokenClause,
    TranscriptCompleted,
    TranscriptDelta,
)
from voxcall.core.hearing.partials import next_delta
from voxcall.core.hearing.turn_detection import TurnDetection
from voxcall.core.ids import new_id
from voxcall.core.settings import SessionSettings
from voxcall.core.tools.toolbox import Toolbox
from voxcall.live.audio_bridge import AudioBridge
from voxcall.live.backend import Backend, backend_models
from voxcall.live.config import LiveConfig, LiveError, error_wire, invalid, read_update
from voxcall.live.delegation import Announce, Delegations
from voxcall.live.playout import PacedPlayout
from voxcall.live.timeline import Timeline
from voxcall.serving.frames import Message, Send, event
from voxcall.serving.host import CloseConnection, SessionHost
from voxcall.validation import first_problem

log = logging.getLogger(__name__)


MAX_FIXTURE_MS = 30_000
"""Longest output audio fixture (the protocol's limit)."""

_FIXTURE_CHUNK_MS = 100
_APPEND_KINDS = {"session.instructions.append": "instructions", "session.thinking.append": "thinking",
                 "session.commentary.append": "commentary"}
_CLIENT_EVENT: TypeAdapter[Any] = TypeAdapter(ClientEvent)
_KINDS = frozenset({"session.start", "session.update", "session.input_audio.append", "session.input_audio.mute",
                    "session.input_audio.unmute", "session.output_audio.fixture.play", *_APPEND_KINDS,
                    "decision.create", "decision.item.create", "decision.item.delete", "response.item.create",
                    "response.create", "session.close"})
_CONTEXT = {
    "instructions": "Instruction from the application: {}",
    "thinking": "Background for you only (do not read it out): {}",
    "commentary": "Speak to the user about this (answer it if it is their question or request; pass it on if it is "
                  "news for them): {}",
    "answer": "The back office answered the user's message; tell the user, in your own words: {}",
}


class LiveSession:
    """The state and behaviour of one ``/v1/live/sessions`` connection after ``session.start``."""

    def __init__(self, host: SessionHost, config: LiveConfig, send: Send, close_socket: CloseConnection) -> None:
        self.id = new_id("live")
        self.config = config
        shared = host.shared
        self._shared = shared
        self._send = send
        self._close_socket = close_socket
        self._live = shared.settings.live
        self.timeline = Timeline()
        self._started_at = int(time.time())
        self.expires_at = self._started_at + self._live.max_session_seconds
        self._bridge = AudioBridge(config)
        self._output = PacedPlayout(send, self.timeline, self._bridge, lead_ms=self._live.output_lead_ms)
        self._delegations = Delegations(lambda: self.config, self._announce, self._run_task,
                                        timeout=self._live.delegation_timeout)
        self._backend: Backend | None = None
        if config.delegation.kind == "responses":
            self._backend = Backend(host, send, config.delegation.responses)
        self.hosted = host.open(self, protocol="live", close=self._idle, toolbox=self._voice_tools(),
                                playout=self._output)
        self.session = self.hosted.session
        self._acknowledge(config)
        self._speech_started_ms: dict[str, int] = {}
        self._heard: dict[str, str] = {}  # per user turn: the transcript deltas sent so far
        self._fixture_playing = False
        self._say_after_response = False
        self._tasks: list[asyncio.Task[None]] = []
        self.closed = False

    # -- lifecycle ----------------------------------------------------------------------------------------------

    async def start(self, client_event_id: str | None) -> None:
        """Configure the core and greet the client with ``session.started``."""
        self.timeline.start()
        self._output.start()
        await self.hosted.start()
        await self.session.apply(UpdateSettings(self._core_settings()))
        for item in self.config.input:
            await self.session.apply(AddItem(_initial_item(item)))
        if self._backend is not None:
            await self._backend.start()
        await self._reply("session.started", client_event_id, session=self._resource())
        loop = asyncio.get_running_loop()
        self._tasks = [loop.create_task(self._report_usage(), name=f"voxcall-live-usage-{self.id}"),
                       loop.create_task(self._expire(), name=f"voxcall-live-expiry-{self.id}")]

    async def close(self) -> None:
        """The connection ended: stop everything the session runs."""
        self.closed = True
        for task in self._tasks:
            task.cancel()
        self._delegations.cancel_all()
        if self._backend is not None:
            await self._backend.close()
        await self.hosted.close()
        await self._output.close()

    # -- client events ------------------------------------------------------------------------------------------

    async def handle(self, ev: Message) -> None:
        """Handle one decoded client event; a bad one gets an ``error`` event."""
        client_event_id = ev.get("event_id") if isinstance(ev.get("event_id"), str) else None
        try:
            await self._dispatch(_checked(ev), client_event_id)
        except SessionError as err:
            await self.error(err, client_event_id)
        except Exception:  # a bug must not end the session: the client learns that its command failed, not why
            log.exception("live session %s: handling a client event failed", self.id)
            await self.error(LiveError("the server failed to handle this event; the session goes on",
                                       code="server_error", kind="server_error"), client_event_id)

    async def error(self, err: SessionError, client_event_id: str | None) -> None:
        await self._reply("error", client_event_id, error=error_wire(err, client_event_id))

    async def _dispatch(self, ev: Message, client_event_id: str | None) -> None:
        kind = ev["type"]
        if kind == "session.input_audio.append":
            if not self._fixture_playing:  # a fixture drops the input while it plays
                self.session.audio.need_voice()
                await self.session.apply(AppendAudio(self._bridge.inward(ev["audio"]), self._bridge.wire_rate))
        elif kind in ("session.input_audio.mute", "session.input_audio.unmute"):
            self._bridge.muted = kind.endswith(".mute")
            await self._reply(f"session.input_audio.{'muted' if self._bridge.muted else 'unmuted'}", client_event_id)
        elif kind in _APPEND_KINDS:
            await self._append(_APPEND_KINDS[kind], ev, client_event_id)
        elif kind == "session.update":
            await self._update(ev, client_event_id)
        elif kind == "session.output_audio.fixture.play":
            await self._play_fixture(ev["audio"], client_event_id)
        elif kind in ("response.item.create", "response.create"):
            if self._backend is None:
                raise LiveError(f"{kind} requires Responses delegation.", code="invalid_request")
            if kind == "response.create" and self._backend.typed:
                self._start_typed_task()
            elif kind == "response.create":
                await self._backend.response_create(client_event_id)
            else:
                await self._backend.item_create(ev["item"], client_event_id)
        elif kind == "session.close":
            await self.close_session("close_requested", client_event_id)
        elif kind == "session.start":
            raise LiveError("the session has started already", code="session_already_started", param="type")
        else:  # decision.*
            raise LiveError(f"{kind}: voxcall does not run Decisions", code="unsupported_event", param="type")

    async def _update(self, ev: Message, client_event_id: str | None) -> None:
        config = read_update(self.config, ev.get("session"), backend_models=self._shared_models())
        if self._backend is not None and config.delegation.responses != self.config.delegation.responses:
            await self._backend.configure(config.delegation.responses)
        self.config = config
        self._acknowledge(config)
        await self._reply("session.updated", client_event_id, session=self._resource())

    async def _append(self, what: str, ev: Message, client_event_id: str | None) -> None:
        """``session.{instructions,thinking,commentary}.append``: context for the voice; commentary is said."""
        if self._fixture_playing:
            raise LiveError(f"session.{what}.append is refused while an output audio fixture plays",
                            code="fixture_playing")
        delegation_id = ev.get("delegation_id")
        if delegation_id is not None:
            if self._backend is not None:
                raise LiveError("a delegation_id is refused under Responses delegation (the backend answers its "
                                "own tasks)", param="delegation_id")
            if not self._delegations.is_open(delegation_id):
                raise LiveError(f"no open delegation {delegation_id!r}", code="unknown_delegation",
                                param="delegation_id")
        now = self.timeline.now_ms()
        if what == "commentary" and delegation_id is not None:
            self._delegations.answer(delegation_id, ev["content"])  # the task's result: the voice says it
        else:
            context = MessageItem.of_text("system", _CONTEXT[what].format(ev["content"]))
            await self.session.apply(AddItem(context))
            if what == "commentary":
                await self._say()
        await self._reply(f"session.{what}.appended", client_event_id, start_ms=now, end_ms=now)

    async def _say(self) -> None:
        """Let the voice speak what the conversation now holds: at once, or after the response it is giving."""
        if self.session.responses.visible is not None:
            self._say_after_response = True
            return
        await self.session.apply(Respond())

    async def _play_fixture(self, audio: str, client_event_id: str | None) -> None:
        """Play prerecorded audio as the voice: it interrupts the voice, and input is dropped until it ends."""
        if self._fixture_playing:
            raise LiveError("an output audio fixture is playing already; wait for its 'played'",
                            code="fixture_playing")
        wire, duration_ms = self._bridge.fixture(audio)
        if duration_ms > MAX_FIXTURE_MS:
            raise LiveError(f"a fixture may last at most {MAX_FIXTURE_MS // 1000} s, this one lasts "
                            f"{duration_ms / 1000:.1f} s", param="audio")
        await self._stop_voice()
        self._fixture_playing = True
        await self._reply("session.output_audio.fixture.playing", client_event_id)
        for chunk, ms in _chunks(wire, duration_ms, self._bridge):
            self._output.fixture(chunk, ms)

        async def played() -> None:
            self._fixture_playing = False
            await self._reply("session.output_audio.fixture.played", client_event_id)

        self._output.mark(played)

    async def close_session(self, reason: str, client_event_id: str | None = None) -> None:
        """``session.closed`` with the final usage, then the connection closes (1000)."""
        if self.closed:
            return
        await self._reply("session.closed", client_event_id, reason=reason, session=self._resource(),
                          usage=self._usage())
        self.closed = True
        await self._close_socket(1000, reason)

    # -- the core's events (the host's codec) -------------------------------------------------------------------

    def encode(self, ev: Event) -> Message | None:
        """What the client gets of one of the core's events: the voice's audio and words go out paced (None), the
        user's words as ``session.input_transcript.delta``."""
        if isinstance(ev, OutputAudio):
            self._output.capture(ev)
        elif isinstance(ev, SpokenClause):
            self._output.clause(ev)
        elif isinstance(ev, OutputTextDelta):  # a voice without speech models answers in text
            self._output.text(ev.response_id, ev.delta)
        elif isinstance(ev, ResponseDone):
            self._output.flush(ev.response.id)
            if self._say_after_response:
                self._say_after_response = False
                self.hosted.submit(Respond())
        elif isinstance(ev, SpeechStarted):
            self._speech_started_ms[ev.item_id] = ev.audio_start_ms
        elif isinstance(ev, TranscriptDelta):
            self._heard[ev.item_id] = self._heard.get(ev.item_id, "") + ev.delta
            return self._heard_delta(ev.item_id, ev.delta)
        elif isinstance(ev, TranscriptCompleted):
            rest = next_delta(self._heard.pop(ev.item_id, ""), ev.transcript, final=True, catch_up=True)
            if rest:
                return self._heard_delta(ev.item_id, rest)
        return None

    async def write(self, message: Message) -> None:
        await self._send(message)

    async def refused(self, error: SessionError) -> None:
        await self.error(error, None)

    def _heard_delta(self, item_id: str, delta: str) -> Message:
        now = self.timeline.now_ms()
        start = min(self._speech_started_ms.get(item_id, now), now)
        return event("session.input_transcript.delta", delta=delta, start_ms=start, end_ms=now)

    async def _stop_voice(self) -> None:
        """The voice stops where the user is (its reply cut to what was heard) and says nothing more."""
        await self.session.apply(ClearOutputAudio())
        if self.session.responses.visible is not None:
            await self.session.apply(Cancel())

    # -- delegation -----------------------------------------------------------------------------------------------

    async def _announce(self, delegation_id: str, target: str, response_id: str | None, task: str) -> None:
        delegation: dict[str, Any] = {"id": delegation_id, "target": target, "type": "delegation",
                                      "voxcall_task": task}
        if response_id is not None:
            delegation["response_id"] = response_id
        await self._send(event("session.delegation.created", offset_ms=self.timeline.now_ms(), delegation=delegation))

    def _start_typed_task(self) -> None:
        """The text flow: the client's messages (``response.item.create``) and ``response.create`` with no task
        running feed the backend; the task is announced like the voice's own, and the voice says its answer."""
        assert self._backend is not None
        items = self._backend.take_typed()
        text = " ".join(item.text for item in items if isinstance(item, MessageItem) and item.text)

        async def run() -> None:
            assert self._backend is not None
            for item in items:
                if isinstance(item, MessageItem) and item.role == "user":
                    self.hosted.submit(AddItem(MessageItem.of_text("user", item.text)))
            answer = await self._backend.run(new_id("deleg"), text, self._announce, items)
            self.hosted.submit(AddItem(MessageItem.of_text("system", _CONTEXT["answer"].format(answer))))
            self.hosted.submit(self._say)

        self._tasks.append(asyncio.create_task(run(), name=f"voxcall-live-typed-{self.id}"))

    async def _run_task(self, delegation_id: str, task: str, announce: Announce) -> str:
        if self._backend is None:
            raise RuntimeError("a responses task without a backend")
        return await self._backend.run(delegation_id, task, announce)

    def _voice_tools(self) -> Toolbox:
        """The voice's tools: the delegation tool, with the server's tools beside it under ``client`` delegation
        (under ``responses`` they are the backend's)."""
        own = self._delegations.registry()
        if self.config.delegation.kind == "client" and self._shared.toolbox is not None:
            return self._shared.toolbox.joined(own)
        return Toolbox(own)

    def _acknowledge(self, config: LiveConfig) -> None:
        """The voice acknowledges a delegated task after the delegation's delay (0: as soon as it is made)."""
        self.session.acknowledge_after = max(config.delegation.acknowledgement_delay_ms, 1) / 1000

    # -- helpers --------------------------------------------------------------------------------------------------

    def _core_settings(self) -> SessionSettings:
        """The core's settings: the voice's instructions and format, server VAD that answers and is interrupted,
        transcription with the server's model."""
        voice = self._shared.voice
        fmt = self._bridge.core
        settings = dataclasses.replace(
            self.session.settings, instructions=self.config.instructions or self._shared.settings.session.instructions,
            output_modalities=("audio",) if voice is not None else ("text",), input_format=fmt, output_format=fmt,
            turn_detection=TurnDetection())
        if voice is not None:
            settings = dataclasses.replace(settings, transcription={"model": voice.stt.name})
            if self.config.voice is not None:
                settings = dataclasses.replace(settings, voice=self.config.voice)
        return settings

    def _shared_models(self) -> frozenset[str] | None:
        return backend_models(self._shared)

    def _resource(self) -> dict[str, Any]:
        return self.config.to_wire(session_id=self.id, expires_at=self.expires_at)

    def _usage(self) -> dict[str, Any]:
        return {"seconds": self.timeline.now_ms() // 1000}

    async def _reply(self, kind: str, client_event_id: str | None, **fields: Any) -> None:
        ev = event(kind, **fields)
        if client_event_id is not None:
            ev["client_event_id"] = client_event_id
        await self._send(ev)

    async def _report_usage(self) -> None:
        while True:
            await asyncio.sleep(self._live.usage_interval_seconds)
            await self._send(event("session.usage.updated", usage=self._usage()))

    async def _expire(self) -> None:
        await asyncio.sleep(self.expires_at - time.time())
        await self.close_session("expired")

    async def _idle(self, code: int, reason: str) -> None:
        """The host found the session idle for ``session.idle_timeout``: it ends as expired."""
        await self.close_session("expired")


def _checked(ev: Message) -> Message:
    """``ev`` checked against the SDK's client event models (unknown types and bad fields refused)."""
    kind = ev.get("type")
    if not isinstance(kind, str) or kind not in _KINDS:
        raise LiveError(f"unknown event type {kind!r}", code="unknown_event_type", param="type")
    try:
        _CLIENT_EVENT.validate_python(ev)
    except ValidationError as exc:
        raise invalid(first_problem(exc, skip=1)) from None
    return ev


def _initial_item(item: Any) -> MessageItem:
    """A startup ``input`` message as a conversation item (a developer message is a system one)."""
    role = item["role"]
    return MessageItem.of_text("system" if role == "developer" else role, item["content"][0]["text"])


def _chunks(wire: str, duration_ms: int, bridge: AudioBridge) -> list[tuple[str, int]]:
    """A fixture's wire audio cut into chunks of about 100 ms (the pace it is sent at)."""
    raw = base64.b64decode(wire)
    if not duration_ms:
        return []
    step = max(1, len(raw) * _FIXTURE_CHUNK_MS // duration_ms)
    step += step % bridge.core.sample_width
    pieces = [raw[i:i + step] for i in range(0, len(raw), step)]
    per_ms = len(raw) / duration_ms
    return [(base64.b64encode(p).decode("ascii"), round(len(p) / per_ms)) for p in pieces]

