"""One Realtime session: reads client events, keeps the conversation, runs responses and speculative follow-ups.

Client events are handled one at a time, in order (the socket reader awaits each), so session state changes
only between events or inside response tasks. Every bad event becomes an ``error`` event naming it, and the
session carries on. A response is a task (:class:`~voxcall.realtime.response.ResponseRun`); at most one is
visible at a time. After the tool calls of a response have all been answered, a hidden follow-up may start
(:mod:`voxcall.realtime.prefetch`); a plain ``response.create`` claims it, anything that changes what it would
say discards it.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from voxcall.audio.codec import AudioDecodeError, StreamResampler, decode_audio
from voxcall.audio.formats import AudioFormat
from voxcall.llm import LLMBackend, LLMRequest
from voxcall.realtime.conversation import Conversation, Item, to_chat_items, transcript_until
from voxcall.realtime.outbox import Outbox, OutputGate, Send
from voxcall.realtime.prefetch import DeferredHistory, ParkedWork, Speculation, SpeculationSlots
from voxcall.realtime.protocol import Event, ProtocolError, error_event, event, field, new_id
from voxcall.realtime.response import CancelReason, Emit, History, ResponseParams, ResponseRun
from voxcall.realtime.server_calls import Approvals
from voxcall.realtime.settings import (
    SessionSettings,
    apply_settings,
    only_metadata,
    parse_metadata,
    response_settings,
)
from voxcall.realtime.toolbox import Toolbox
from voxcall.realtime.voice import RATE, AudioBufferFull, InputAudio, Voice
from voxcall.speech.turns import SpeechStarted, TurnDetector
from voxcall.tools import ToolContext
from voxcall.tools.mcp import MCPManager, MCPServerConfig

log = logging.getLogger(__name__)

_MIN_COMMIT_MS = 100


@dataclass
class SessionOptions:
    """Server-wide knobs every session gets."""

    model: str = "voxcall"
    instructions: str = ""
    prefetch: bool = True
    llm_timeout: float = 60.0
    max_frame_bytes: int = 1_048_576
    max_history_items: int = 200
    max_hidden_events: int = 2048  # a speculation buffers at most this many events, then its stream pauses
    beta: bool = False
    allow_session_mcp: bool = False  # sessions may declare MCP servers in session.update (loopback URLs only)
    allow_remote_session_mcp: bool = False  # ... and remote ones


class OutOfBand:
    """The history of a ``conversation: "none"`` response: its items join no conversation."""

    conversation_id: str | None = None

    def add(self, item: Item) -> str | None:
        return None

    def remove(self, item: Item) -> None:
        return None


class Session:
    """The state and behaviour of one client connection."""

    def __init__(self, backend: LLMBackend, send: Send, *, options: SessionOptions | None = None,
                 slots: SpeculationSlots | None = None, voice: Voice | None = None,
                 toolbox: Toolbox | None = None) -> None:
        self.id = new_id("sess")
        self.toolbox = toolbox
        self._base_toolbox = toolbox  # the process's server tools; self.toolbox adds the session's MCP servers
        self._mcp: MCPManager | None = None
        self.approvals = Approvals()
        self.options = options or SessionOptions()
        self.backend = backend
        self.slots = slots or SpeculationSlots(4)
        self.voice = voice
        self.voice_gain = 1.0  # the assistant's volume; the volume tools drive it
        self.settings = SessionSettings(instructions=self.options.instructions,
                                        output_modalities=["audio"] if voice else ["text"])
        self.conversation = Conversation()
        self.input = InputAudio()
        self._turn_item: str | None = None  # id reserved for the user item of the turn being spoken
        self._resampler: StreamResampler | None = None  # input audio to 16 kHz, continuous across appends
        self._resampler_format: AudioFormat | None = None
        self._transcriptions: set[asyncio.Task[None]] = set()
        self._apply_turn_detection()
        self.outbox = Outbox(send, beta=self.options.beta)
        self._active: ResponseRun | None = None
        self._active_task: asyncio.Task[None] | None = None
        self._speculation: Speculation | None = None
        self._last_done: ResponseRun | None = None
        self._failed_speculation_for: str | None = None
        self._handlers: dict[str, Callable[[Event], Awaitable[None]]] = {
            "session.update": self._session_update,
            "conversation.item.create": self._item_create,
            "conversation.item.delete": self._item_delete,
            "conversation.item.retrieve": self._item_retrieve,
            "conversation.item.truncate": self._item_truncate,
            "response.create": self._response_create,
            "response.cancel": self._response_cancel,
            "input_audio_buffer.append": self._audio_append,
            "input_audio_buffer.commit": self._audio_commit,
            "input_audio_buffer.clear": self._audio_clear,
            "output_audio_buffer.clear": self._output_audio_clear,
        }

    # -- lifecycle ----------------------------------------------------------------------------------------------

    async def start(self) -> None:
        """Start writing and greet the client with ``session.created``."""
        self.outbox.start()
        await self.outbox.put(event("session.created", session=self.to_wire()))

    async def close(self) -> None:
        """The client went away: stop every task of the session; nothing more is written."""
        self.outbox.closed = True
        await self._discard_speculation("session closed")
        await self._cancel_active("client_cancelled")
        for task in list(self._transcriptions):
            task.cancel()
        if self._transcriptions:
            await asyncio.wait(self._transcriptions)
        if self._mcp is not None:
            await self._mcp.close()
        await self.outbox.close(flush=False)

    def to_wire(self) -> dict[str, Any]:
        """The GA session object."""
        return {"type": "realtime", "object": "realtime.session", "id": self.id, "model": self.options.model,
                **self.settings.to_wire()}

    @property
    def active_response(self) -> ResponseRun | None:
        """The visible response in progress, if any."""
        return self._active

    @property
    def speculation(self) -> Speculation | None:
        """The hidden follow-up waiting for a claim, if any."""
        return self._speculation

    # -- client events ------------------------------------------------------------------------------------------

    async def handle_frame(self, data: str | bytes) -> None:
        """Handle one client frame; a bad one is answered with an ``error`` event."""
        client_event_id: str | None = None
        try:
            ev = self._decode(data)
            client_event_id = ev.get("event_id") if isinstance(ev.get("event_id"), str) else None
            kind = field(ev, "type", str)
            handler = self._handlers.get(kind)
            if handler is None:
                raise ProtocolError(f"unknown event type {kind!r}", code="unknown_event_type", param="type")
            await handler(ev)
        except ProtocolError as err:
            await self.outbox.put(error_event(err, client_event_id))

    def _decode(self, data: str | bytes) -> Event:
        if len(data) > self.options.max_frame_bytes:
            raise ProtocolError(f"frame of {len(data)} bytes exceeds the limit of {self.options.max_frame_bytes}",
                                code="frame_too_large")
        try:
            ev = json.loads(data)
        except (ValueError, UnicodeDecodeError):
            raise ProtocolError("the frame is not valid JSON", code="invalid_json") from None
        if not isinstance(ev, dict):
            raise ProtocolError("an event must be a JSON object", code="invalid_event")
        return ev

    async def _session_update(self, ev: Event) -> None:
        data = field(ev, "session", dict)
        if data.get("type", "realtime") != "realtime":
            raise ProtocolError("only 'realtime' sessions are supported", code="invalid_value", param="session.type")
        new = apply_settings(self.settings, data, where="session.", audio=self.voice is not None)
        self._check_tool_names(new)
        if new.mcp_servers != self.settings.mcp_servers:
            await self._use_mcp_servers(new.mcp_servers)
        await self._discard_speculation("session.update")
        turns_changed = new.turn_detection != self.settings.turn_detection
        self.settings = new
        if turns_changed:
            self._apply_turn_detection()
        await self.outbox.put(event("session.updated", session=self.to_wire()))
        self._maybe_speculate()

    async def _use_mcp_servers(self, specs: list[dict[str, Any]]) -> None:
        """Start the MCP servers a session declared (when the operator allows it) and add their tools."""
        manager, toolbox = None, self._base_toolbox
        if specs:
            if not self.options.allow_session_mcp:
                raise ProtocolError("MCP servers in session.update are switched off on this server (the operator can "
                                    "allow them with tools.allow_session_mcp)", code="unsupported_tool_type",
                                    param="session.tools")
            manager, toolbox = await self._start_session_mcp(specs)
        old, self._mcp, self.toolbox = self._mcp, manager, toolbox
        if old is not None:
            await old.close()

    async def _start_session_mcp(self, specs: list[dict[str, Any]]) -> tuple[MCPManager, Toolbox]:
        try:
            configs = [MCPServerConfig.from_session_tool(d, allow_remote=self.options.allow_remote_session_mcp)
                       for d in specs]
        except ValueError as exc:
            raise ProtocolError(f"'session.tools': {exc}", code="invalid_tool", param="session.tools") from None
        manager = MCPManager(configs)
        await manager.start()
        problem = ", ".join(f"{name}: {reason}" for name, reason in manager.failures.items())
        if not problem:
            try:
                return manager, (self._base_toolbox or Toolbox()).extended(manager)
            except ValueError as exc:  # a name clash with a server tool
                problem = str(exc)
        await manager.close()
        raise ProtocolError(f"MCP server unavailable: {problem}", code="mcp_server_unavailable", param="session.tools")

    def _check_tool_names(self, settings: SessionSettings) -> None:
        """A client tool may not take the name of a server tool: the model could not tell them apart."""
        for n, tool in enumerate(settings.tools):
            if self.toolbox is not None and tool.name in self.toolbox.registry:
                raise ProtocolError(f"tool name {tool.name!r} is taken by a server-side tool; rename the client tool",
                                    code="invalid_tool", param=f"session.tools[{n}].name")

    async def _item_create(self, ev: Event) -> None:
        item = Item.from_client(field(ev, "item", dict))
        previous = field(ev, "previous_item_id", str, required=False)
        if item.type == "function_call_output":
            self._check_output(item)
        if item.type == "mcp_approval_response":
            self.approvals.check(item.approval_request_id)
        await self._discard_speculation("conversation.item.create")
        before = self.conversation.add(item, previous)
        await self.outbox.put(event("conversation.item.added", previous_item_id=before, item=item.to_wire()))
        await self.outbox.put(event("conversation.item.done", previous_item_id=before, item=item.to_wire()))
        if item.type == "mcp_approval_response" and item.approval_request_id is not None:
            self.approvals.answer(item.approval_request_id, item.approve, item.reason)
        self._maybe_speculate()

    def _check_output(self, item: Item) -> None:
        call = self.conversation.call(item.call_id)
        if call is None:
            raise ProtocolError(f"no function call with call_id {item.call_id!r} in the conversation",
                                code="invalid_call_id", param="item.call_id")
        if call.status != "completed":
            raise ProtocolError(f"the call {item.call_id!r} is not complete yet", code="invalid_call_id",
                                param="item.call_id")
        if self.conversation.has_output(item.call_id):
            raise ProtocolError(f"the call {item.call_id!r} already has an output", code="duplicate_call_output",
                                param="item.call_id")

    async def _item_delete(self, ev: Event) -> None:
        item_id = field(ev, "item_id", str)
        self.conversation.require(item_id)
        await self._discard_speculation("conversation.item.delete")
        self.conversation.delete(item_id)
        await self.outbox.put(event("conversation.item.deleted", item_id=item_id))
        self._maybe_speculate()

    async def _item_retrieve(self, ev: Event) -> None:
        item = self.conversation.require(field(ev, "item_id", str))
        await self.outbox.put(event("conversation.item.retrieved", item=item.to_wire()))

    async def _item_truncate(self, ev: Event) -> None:
        item = self.conversation.require(field(ev, "item_id", str))
        index = field(ev, "content_index", int)
        field(ev, "audio_end_ms", int)
        if item.role != "assistant" or not 0 <= index < len(item.content):
            raise ProtocolError("only the content of an assistant message can be truncated", code="invalid_value",
                                param="content_index")
        if item.content[index].get("type") != "output_audio":
            raise ProtocolError("only audio content can be truncated", code="invalid_value", param="content_index")
        end_ms = field(ev, "audio_end_ms", int)
        if not 0 <= end_ms <= item.audio_ms:
            raise ProtocolError(f"audio_end_ms must be from 0 to the item's audio length ({item.audio_ms} ms)",
                                code="invalid_value", param="audio_end_ms")
        await self._discard_speculation("conversation.item.truncate")
        item.content[index]["transcript"] = transcript_until(item.spoken, end_ms)
        item.spoken = [s for s in item.spoken if s.start_ms < end_ms]
        await self.outbox.put(event("conversation.item.truncated", item_id=item.id, content_index=index,
                                    audio_end_ms=end_ms))

    # -- input audio --------------------------------------------------------------------------------------------

    def _need_voice(self) -> Voice:
        if self.voice is None:
            raise ProtocolError("audio input is not available: this server runs without speech models; send text",
                                code="unsupported_event", param="type")
        return self.voice

    def _apply_turn_detection(self) -> None:
        turns = self.settings.turn_detection
        detector = None
        if turns is not None and self.voice is not None:
            detector = TurnDetector(self.voice.vad(), threshold=turns.threshold,
                                    prefix_padding_ms=turns.prefix_padding_ms,
                                    silence_duration_ms=turns.silence_duration_ms)
        self.input.use_detector(detector)

    async def _audio_append(self, ev: Event) -> None:
        self._need_voice()
        fmt = self.settings.input_format
        if self._resampler is None or self._resampler_format != fmt:
            self._resampler, self._resampler_format = StreamResampler(fmt.rate, RATE), fmt
        try:
            pcm = self._resampler.process(decode_audio(field(ev, "audio", str), fmt))
        except AudioDecodeError as exc:
            raise ProtocolError(f"'audio': {exc}", code="invalid_value", param="audio") from None
        try:
            boundaries = self.input.append(pcm)
        except AudioBufferFull as exc:
            raise ProtocolError(f"input audio buffer full: {exc}; it was cleared", code="input_audio_buffer_full",
                                param="audio") from None
        for boundary in boundaries:
            if isinstance(boundary, SpeechStarted):
                await self._speech_started(boundary.audio_start_ms)
            else:
                await self._speech_stopped(boundary.audio_end_ms)

    async def _speech_started(self, start_ms: int) -> None:
        """A user turn began: the next user item is reserved, a hidden follow-up is dropped, and with
        ``interrupt_response`` the assistant stops talking (barge-in)."""
        self._turn_item = new_id("item")
        await self.outbox.put(event("input_audio_buffer.speech_started", audio_start_ms=start_ms,
                                    item_id=self._turn_item))
        await self._discard_speculation("user speech")
        turns = self.settings.turn_detection
        if turns is not None and turns.interrupt_response:
            await self._cancel_active("turn_detected")

    async def _speech_stopped(self, end_ms: int) -> None:
        item_id = self._turn_item or new_id("item")
        self._turn_item = None
        await self.outbox.put(event("input_audio_buffer.speech_stopped", audio_end_ms=end_ms, item_id=item_id))
        turns = self.settings.turn_detection
        await self._commit(self.input.take_turn(end_ms), item_id,
                           respond=turns is not None and turns.create_response)

    async def _audio_commit(self, ev: Event) -> None:
        self._need_voice()
        if self.input.duration_ms < _MIN_COMMIT_MS:
            raise ProtocolError(f"buffer too small: expected at least {_MIN_COMMIT_MS} ms of audio, have "
                                f"{self.input.duration_ms} ms", code="input_audio_buffer_commit_empty")
        await self._commit(self.input.take_all(), new_id("item"), respond=False)

    async def _audio_clear(self, ev: Event) -> None:
        self._need_voice()
        self.input.clear()
        await self.outbox.put(event("input_audio_buffer.cleared"))

    async def _output_audio_clear(self, ev: Event) -> None:
        raise ProtocolError("output_audio_buffer.clear is for WebRTC connections; over WebSocket, cancel the "
                            "response and truncate the item instead", code="unsupported_event", param="type")

    async def _commit(self, pcm: Any, item_id: str, *, respond: bool) -> None:
        """Make a user audio item of ``pcm`` and transcribe it; then, if asked, answer it."""
        await self._discard_speculation("new user audio")
        item = Item(item_id, "message", role="user", content=[{"type": "input_audio", "transcript": None}])
        previous = self.conversation.add(item)
        await self.outbox.put(event("input_audio_buffer.committed", previous_item_id=previous, item_id=item_id))
        await self.outbox.put(event("conversation.item.added", previous_item_id=previous, item=item.to_wire()))
        task = asyncio.create_task(self._transcribe(item, pcm, respond), name=f"voxcall-stt-{item_id}")
        self._transcriptions.add(task)
        task.add_done_callback(self._transcriptions.discard)

    async def _transcribe(self, item: Item, pcm: Any, respond: bool) -> None:
        voice = self._need_voice()
        try:
            transcript = await voice.transcribe(pcm)
        except Exception as exc:  # a model failure must not end the session
            log.exception("transcription of %s failed", item.id)
            await self.outbox.put(event("conversation.item.input_audio_transcription.failed", item_id=item.id,
                                        content_index=0, error={"type": "transcription_error",
                                                                "code": type(exc).__name__,
                                                                "message": "transcription failed"}))
            return
        item.content[0]["transcript"] = transcript
        await self.outbox.put(event("conversation.item.input_audio_transcription.delta", item_id=item.id,
                                    content_index=0, delta=transcript))
        await self.outbox.put(event("conversation.item.input_audio_transcription.completed", item_id=item.id,
                                    content_index=0, transcript=transcript,
                                    usage={"type": "duration", "seconds": round(len(pcm) / RATE, 3)}))
        await self.outbox.put(event("conversation.item.done", item=item.to_wire()))
        if respond and transcript and self._active is None and self.conversation.get(item.id) is item:
            await self._start_response(self.settings, None)

    # -- responses ----------------------------------------------------------------------------------------------

    async def _response_create(self, ev: Event) -> None:
        data = field(ev, "response", dict, required=False, default={})
        if self._active is not None:
            raise ProtocolError(f"Conversation already has an active response in progress: {self._active.id}. "
                                "Wait until the response is finished before creating a new one.",
                                code="conversation_already_has_active_response")
        settings = response_settings(self.settings, data, audio=self.voice is not None)
        metadata = parse_metadata(data.get("metadata"))
        out_of_band = self._conversation_mode(data) == "none"
        items = self._input_items(data) if "input" in data else None
        if self._transcriptions:  # the model must read what the user just said
            await asyncio.wait(self._transcriptions)
        if self._speculation is not None and only_metadata(data) and await self._claim(metadata):
            return
        await self._discard_speculation("response.create with overrides")
        await self._start_response(settings, metadata, out_of_band=out_of_band, items=items)

    async def _start_response(self, settings: SessionSettings, metadata: dict[str, str] | None, *,
                              out_of_band: bool = False, items: list[Item] | None = None) -> None:
        if out_of_band:
            history: History = OutOfBand()
            context = items if items is not None else self.conversation.items
        else:
            history = self.conversation
            context, parked = self._context()
            for work in parked:
                await work()
            if items is not None:
                context = items
        run = self._new_run(settings, metadata, history, context, self.outbox.put)
        self._active = run
        self._active_task = asyncio.create_task(self._drive(run), name=f"voxcall-response-{run.id}")

    @staticmethod
    def _conversation_mode(data: dict[str, Any]) -> str:
        mode = data.get("conversation", "auto")
        if mode not in ("auto", "none"):
            raise ProtocolError("'response.conversation' must be 'auto' or 'none'", code="invalid_value",
                                param="response.conversation")
        return str(mode)

    def _input_items(self, data: dict[str, Any]) -> list[Item]:
        raw = data["input"]
        if not isinstance(raw, list):
            raise ProtocolError("'response.input' must be an array of items", code="invalid_type",
                                param="response.input")
        items: list[Item] = []
        for n, entry in enumerate(raw):
            if isinstance(entry, dict) and entry.get("type") == "item_reference":
                items.append(self.conversation.require(entry.get("id"), f"response.input[{n}].id"))
            else:
                items.append(Item.from_client(entry, where=f"response.input[{n}]."))
        return items

    def _new_run(self, settings: SessionSettings, metadata: dict[str, str] | None, history: History,
                 context: list[Item], emit: Emit) -> ResponseRun:
        params = ResponseParams(instructions=settings.instructions, tools=list(settings.tools),
                                tool_choice=settings.tool_choice, output_modalities=list(settings.output_modalities),
                                max_output_tokens=settings.max_output_tokens, temperature=settings.temperature,
                                metadata=metadata, output_format=settings.output_format)
        server_tools = self.toolbox.tools if self.toolbox is not None else []
        request = LLMRequest(items=to_chat_items(context), instructions=settings.instructions,
                             tools=[*settings.tools, *server_tools], tool_choice=settings.tool_choice,
                             max_output_tokens=settings.max_output_tokens, temperature=settings.temperature,
                             voice=settings.audio_out)
        return ResponseRun(self.backend, request, params, history, emit, llm_timeout=self.options.llm_timeout,
                           tts=self.voice.tts if self.voice else None, gain=lambda: self.voice_gain,
                           toolbox=self.toolbox, context=ToolContext(session_id=self.id, voice=self),
                           approvals=self.approvals)

    def _context(self) -> tuple[list[Item], list[ParkedWork]]:
        """The items a response sees, and the history trimming to do (irreversible, so parked by speculation)."""
        items = self.conversation.items
        excess = len(items) - self.options.max_history_items
        if excess <= 0:
            return items, []
        old = items[:excess]

        async def trim() -> None:
            for item in old:
                if self.conversation.get(item.id) is not None:
                    self.conversation.delete(item.id)
                    await self.outbox.put(event("conversation.item.deleted", item_id=item.id))

        return items[excess:], [trim]

    async def _drive(self, run: ResponseRun) -> None:
        try:
            await run.run()
        finally:
            self._response_ended(run)

    def _response_ended(self, run: ResponseRun) -> None:
        """Book-keeping when a visible (or claimed) response ends; runs inside its task, before it completes."""
        if self._active is run:
            self._active, self._active_task = None, None
        if run.status == "completed" and run.history is self.conversation:
            self._last_done = run
            self._maybe_speculate()

    async def _response_cancel(self, ev: Event) -> None:
        response_id = field(ev, "response_id", str, required=False)
        await self._discard_speculation("response.cancel")
        if self._active is None:
            raise ProtocolError("there is no active response to cancel", code="response_cancel_not_active")
        if response_id is not None and response_id != self._active.id:
            raise ProtocolError(f"response {response_id!r} is not the active response", code="invalid_value",
                                param="response_id")
        await self._cancel_active("client_cancelled")

    async def _cancel_active(self, reason: CancelReason) -> None:
        """Cancel the visible response: it ends with ``response.done`` (cancelled) before this returns."""
        run, task = self._active, self._active_task
        if run is None or task is None or task.done():
            return
        run.cancel_reason = reason
        task.cancel()
        await asyncio.wait([task])
        if not run.started:  # cancelled before its first step: its own code never ran
            await run.abandon()
            self._response_ended(run)

    # -- speculation --------------------------------------------------------------------------------------------

    def _maybe_speculate(self) -> None:
        """Start a hidden follow-up when the last response's calls are all answered and nothing else runs."""
        last = self._last_done
        if (not self.options.prefetch or self._active is not None or self._speculation is not None
                or last is None or not last.calls or last.id == self._failed_speculation_for
                or not all(self.conversation.has_output(c.call_id) for c in last.calls)
                or self.conversation.unanswered_calls() or not self.slots.try_acquire()):
            return
        gate = OutputGate(self.outbox, limit=self.options.max_hidden_events)
        history = DeferredHistory(self.conversation)
        context, parked = self._context()
        run = self._new_run(self.settings, None, history, context, gate.emit)
        run.released.clear()  # no speech and no server tool for a follow-up nobody asked for yet
        self._speculation = Speculation(run, gate, history, self.conversation, self.slots, parked,
                                        on_end=self._speculation_ended)

    def _speculation_ended(self, spec: Speculation) -> None:
        if spec.state == "claimed":
            self._response_ended(spec.run)
        elif spec.state == "discarded" and self._speculation is spec:
            self._speculation = None
            if spec.run.status == "failed" and self._last_done is not None:
                self._failed_speculation_for = self._last_done.id

    async def _claim(self, metadata: dict[str, str] | None) -> bool:
        spec, self._speculation = self._speculation, None
        if spec is None or not spec.claimable:
            return False
        ended_hidden = spec.task.done()  # then its end was not yet booked as a visible response's
        if not ended_hidden:
            self._active, self._active_task = spec.run, spec.task
        if await spec.claim(metadata):
            if ended_hidden:
                self._response_ended(spec.run)
            return True
        self._active, self._active_task = None, None
        return False

    async def _discard_speculation(self, reason: str) -> None:
        spec, self._speculation = self._speculation, None
        if spec is not None:
            await spec.discard(reason)
