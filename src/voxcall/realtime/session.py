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

from voxcall.llm import LLMBackend, LLMRequest
from voxcall.realtime.conversation import Conversation, Item, to_chat_items
from voxcall.realtime.outbox import Outbox, OutputGate, Send
from voxcall.realtime.prefetch import DeferredHistory, ParkedWork, Speculation, SpeculationSlots
from voxcall.realtime.protocol import Event, ProtocolError, error_event, event, field, new_id
from voxcall.realtime.response import CancelReason, Emit, History, ResponseParams, ResponseRun
from voxcall.realtime.settings import (
    SessionSettings,
    apply_settings,
    only_metadata,
    parse_metadata,
    response_settings,
)

log = logging.getLogger(__name__)

_AUDIO_EVENTS = ("input_audio_buffer.append", "input_audio_buffer.commit", "input_audio_buffer.clear",
                 "output_audio_buffer.clear")


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
                 slots: SpeculationSlots | None = None) -> None:
        self.id = new_id("sess")
        self.options = options or SessionOptions()
        self.backend = backend
        self.slots = slots or SpeculationSlots(4)
        self.settings = SessionSettings(instructions=self.options.instructions)
        self.conversation = Conversation()
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
            **dict.fromkeys(_AUDIO_EVENTS, self._audio_unsupported),
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
        new = apply_settings(self.settings, data, where="session.")
        await self._discard_speculation("session.update")
        self.settings = new
        await self.outbox.put(event("session.updated", session=self.to_wire()))
        self._maybe_speculate()

    async def _item_create(self, ev: Event) -> None:
        item = Item.from_client(field(ev, "item", dict))
        previous = field(ev, "previous_item_id", str, required=False)
        if item.type == "function_call_output":
            self._check_output(item)
        await self._discard_speculation("conversation.item.create")
        before = self.conversation.add(item, previous)
        await self.outbox.put(event("conversation.item.added", previous_item_id=before, item=item.to_wire()))
        await self.outbox.put(event("conversation.item.done", previous_item_id=before, item=item.to_wire()))
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
            raise ProtocolError("only audio content can be truncated, and this server does not produce audio yet",
                                code="invalid_value", param="content_index")

    async def _audio_unsupported(self, ev: Event) -> None:
        raise ProtocolError(f"{ev['type']} is not supported: this server has no audio input yet; send text items",
                            code="unsupported_event", param="type")

    # -- responses ----------------------------------------------------------------------------------------------

    async def _response_create(self, ev: Event) -> None:
        data = field(ev, "response", dict, required=False, default={})
        if self._active is not None:
            raise ProtocolError(f"Conversation already has an active response in progress: {self._active.id}. "
                                "Wait until the response is finished before creating a new one.",
                                code="conversation_already_has_active_response")
        settings = response_settings(self.settings, data)
        metadata = parse_metadata(data.get("metadata"))
        out_of_band = self._conversation_mode(data) == "none"
        items = self._input_items(data) if "input" in data else None
        if self._speculation is not None and only_metadata(data) and await self._claim(metadata):
            return
        await self._discard_speculation("response.create with overrides")
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
                                metadata=metadata)
        request = LLMRequest(items=to_chat_items(context), instructions=settings.instructions,
                             tools=list(settings.tools), tool_choice=settings.tool_choice,
                             max_output_tokens=settings.max_output_tokens, temperature=settings.temperature)
        return ResponseRun(self.backend, request, params, history, emit, llm_timeout=self.options.llm_timeout)

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
