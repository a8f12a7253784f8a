"""One Realtime session: it routes each client event to the part that owns it, and keeps the session's settings.

Client events are handled one at a time, in order (the socket reader awaits each), so session state changes
only between events or inside response tasks. Each is read with the SDK's models first
(:mod:`voxcall.realtime.client_events`); every bad event becomes an ``error`` event naming it, and the session
carries on. The parts:

- :class:`~voxcall.realtime.conversation.Conversation`: the items;
- :class:`~voxcall.realtime.heard_audio.HeardAudio`: input audio, turn detection, transcription;
- :class:`~voxcall.realtime.lifecycle.ResponseLifecycle`: the visible response and any hidden one;
- :class:`~voxcall.realtime.session_tools.SessionTools`: server tools, the tool context, approvals;
- :class:`~voxcall.realtime.outbox.Outbox`: the ordered way out to the socket.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
from collections.abc import Awaitable, Callable
from typing import Any

from openai.types.realtime import (
    ConversationItemCreateEvent,
    ConversationItemDeleteEvent,
    ConversationItemRetrieveEvent,
    ConversationItemTruncateEvent,
    InputAudioBufferAppendEvent,
    ResponseCancelEvent,
    SessionUpdateEvent,
)

from voxcall.config import SessionOptions, ToolsSettings
from voxcall.llm import LLMBackend, LLMRequest, Warmable, warm
from voxcall.realtime.client_events import ItemReference, ResponseCreateEvent, parse_client_event
from voxcall.realtime.conversation import Conversation, to_chat_items
from voxcall.realtime.heard_audio import HeardAudio
from voxcall.realtime.items import ApprovalResponseItem, CallOutputItem, Item, item_from_client
from voxcall.realtime.lifecycle import Phase, ResponseLifecycle
from voxcall.realtime.metrics import Metrics
from voxcall.realtime.outbox import Outbox, Send
from voxcall.realtime.output_items import History, OutOfBand
from voxcall.realtime.prefetch import SpeculationSlots
from voxcall.realtime.protocol import Event, ProtocolError, error_event, event, new_id
from voxcall.realtime.response import ResponseRun
from voxcall.realtime.response_inputs import ResponseInputs, ResponseParams
from voxcall.realtime.session_tools import SessionTools
from voxcall.realtime.settings import (
    ServerSpeech,
    SessionSettings,
    only_metadata,
    parse_metadata,
    read_settings,
    response_settings,
)
from voxcall.realtime.timing import HeardTurn, ResponseTiming
from voxcall.realtime.toolbox import Toolbox
from voxcall.realtime.voice import Voice

log = logging.getLogger(__name__)


class Session:
    """The state and behaviour of one client connection."""

    def __init__(self, backend: LLMBackend, send: Send, *, options: SessionOptions | None = None,
                 tools: ToolsSettings | None = None, model: str = "voxcall", beta: bool = False,
                 slots: SpeculationSlots | None = None, voice: Voice | None = None,
                 toolbox: Toolbox | None = None, metrics: Metrics | None = None) -> None:
        """``options`` and ``tools`` are the server's ``session:`` and ``tools:`` sections; ``model`` is the name
        the session reports, ``beta`` picks the beta protocol's event names. ``slots``, ``voice``, ``toolbox`` and
        ``metrics`` are the process's, shared by all its sessions."""
        self.id = new_id("sess")
        self.metrics = metrics = metrics or Metrics()
        self.options = options = options or SessionOptions()
        self.model = model
        tools = tools or ToolsSettings()
        self.backend = backend
        self.voice = voice
        self.voice_gain = 1.0  # the assistant's volume; the volume tools drive it
        self._speech = ServerSpeech(speaks=True, languages=frozenset({voice.stt.language})) if voice else ServerSpeech()
        self.settings = SessionSettings(instructions=options.instructions,
                                        output_modalities=["audio"] if voice else ["text"])
        self.conversation = Conversation()
        self.outbox = Outbox(send, beta=beta)
        self.tools = SessionTools(toolbox, session_id=self.id, voice=self, allow_mcp=tools.allow_session_mcp,
                                  allow_remote_mcp=tools.allow_remote_session_mcp)
        slots = slots or SpeculationSlots(options.max_speculative)
        self.responses = ResponseLifecycle(self.conversation, self.outbox, slots,
                                           self._follow_up, prefetch=options.prefetch,
                                           max_hidden_events=options.max_hidden_events,
                                           max_history_items=options.max_history_items, metrics=metrics)
        self.audio = HeardAudio(voice, self.outbox, self.conversation, self.responses, self._respond_to_turn,
                                metrics, eager_turn_ms=options.eager_turn_ms, on_speech=self._prepare)
        self._preparing: asyncio.Task[None] | None = None  # the backend preparing the next turn's prompt
        self.audio.use_turn_detection(self.settings.turn_detection)
        # Each handler takes the event's SDK model and the event in the GA shape (settings are read from the dict).
        self._handlers: dict[str, Callable[[Any, Event], Awaitable[None]]] = {
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
        if self._preparing is not None:
            self._preparing.cancel()
            await asyncio.wait([self._preparing])
        await self.responses.close()
        await self.audio.close()
        await self.tools.close()
        await self.outbox.close(flush=False)

    def to_wire(self) -> dict[str, Any]:
        """The GA session object."""
        return {"type": "realtime", "object": "realtime.session", "id": self.id, "model": self.model,
                **self.settings.to_wire()}

    # -- client events ------------------------------------------------------------------------------------------

    async def handle_frame(self, data: str | bytes) -> None:
        """Handle one client frame; a bad one is answered with an ``error`` event."""
        client_event_id: str | None = None
        try:
            ev = self._decode(data)
            client_event_id = ev.get("event_id") if isinstance(ev.get("event_id"), str) else None
            parsed = parse_client_event(ev)
            await self._handlers[parsed.kind](parsed.model, parsed.data)
        except ProtocolError as err:
            await self.outbox.put(error_event(err, client_event_id))
        except Exception:  # a bug must not end the session: the client learns that its event failed, not why
            log.exception("session %s: handling a client event failed", self.id)
            await self.outbox.put(error_event(ProtocolError(
                "the server failed to handle this event; the session goes on", code="server_error",
                kind="server_error"), client_event_id))

    def _decode(self, data: str | bytes) -> Event:
        if len(data) > self.options.max_frame_bytes:
            raise ProtocolError(f"frame of {len(data)} bytes exceeds the limit of {self.options.max_frame_bytes}",
                                code="frame_too_large")
        try:
            ev = json.loads(data, parse_constant=_not_a_json_number)
        except (ValueError, UnicodeDecodeError):
            raise ProtocolError("the frame is not valid JSON", code="invalid_json") from None
        except RecursionError:
            raise ProtocolError("the frame's JSON is nested too deeply", code="invalid_json") from None
        if not isinstance(ev, dict):
            raise ProtocolError("an event must be a JSON object", code="invalid_event")
        if _has_lone_surrogate(ev):
            raise ProtocolError("the frame holds a lone UTF-16 surrogate (such as \\ud800), which is not Unicode "
                                "text", code="invalid_json")
        return ev

    async def _session_update(self, model: SessionUpdateEvent, ev: Event) -> None:
        if model.session.type != "realtime":
            raise ProtocolError("only 'realtime' sessions are supported", code="invalid_value", param="session.type")
        new, warnings = read_settings(self.settings, ev["session"], where="session.", speech=self._speech,
                                      max_tools=self.options.max_tools)
        self.tools.check_names(new)
        if new.mcp_servers != self.settings.mcp_servers:
            await self.tools.use_mcp_servers(new.mcp_servers)
        await self.responses.discard("session.update")
        turns_changed = new.turn_detection != self.settings.turn_detection
        self.settings = new
        if turns_changed:
            self.audio.use_turn_detection(new.turn_detection)
        await self.outbox.put(event("session.updated", session=self.to_wire()))
        self._prepare()
        for warning in warnings:
            await self.outbox.put(warning.to_event())
        self.responses.speculate()

    async def _item_create(self, model: ConversationItemCreateEvent, ev: Event) -> None:
        item = item_from_client(model.item)
        if isinstance(item, CallOutputItem):
            self.conversation.check_output(item.call_id)
        if isinstance(item, ApprovalResponseItem):
            self.tools.approvals.check(item.approval_request_id)
        await self.responses.discard("conversation.item.create")
        before = self.conversation.add(item, model.previous_item_id)
        await self.outbox.put(event("conversation.item.added", previous_item_id=before, item=item.to_wire()))
        await self.outbox.put(event("conversation.item.done", previous_item_id=before, item=item.to_wire()))
        if isinstance(item, ApprovalResponseItem):
            self.tools.approvals.answer(item.approval_request_id, item.approve, item.reason)
        self.responses.speculate()

    async def _item_delete(self, model: ConversationItemDeleteEvent, ev: Event) -> None:
        item_id = model.item_id
        self.conversation.require(item_id)
        await self.responses.discard("conversation.item.delete")
        self.conversation.delete(item_id)
        await self.outbox.put(event("conversation.item.deleted", item_id=item_id))
        self.responses.speculate()

    async def _item_retrieve(self, model: ConversationItemRetrieveEvent, ev: Event) -> None:
        item = self.conversation.require(model.item_id)
        await self.outbox.put(event("conversation.item.retrieved", item=item.to_wire()))

    async def _item_truncate(self, model: ConversationItemTruncateEvent, ev: Event) -> None:
        item_id, index, end_ms = model.item_id, model.content_index, model.audio_end_ms
        self.conversation.check_truncate(item_id, index, end_ms)
        await self.responses.discard("conversation.item.truncate")
        self.conversation.truncate(item_id, index, end_ms)
        await self.outbox.put(event("conversation.item.truncated", item_id=item_id, content_index=index,
                                    audio_end_ms=end_ms))

    async def _audio_append(self, model: InputAudioBufferAppendEvent, ev: Event) -> None:
        await self.audio.append(model.audio, self.settings.input_format)

    async def _audio_commit(self, model: object, ev: Event) -> None:
        await self.audio.commit()

    async def _audio_clear(self, model: object, ev: Event) -> None:
        await self.audio.clear()

    async def _output_audio_clear(self, model: object, ev: Event) -> None:
        raise ProtocolError("output_audio_buffer.clear is for WebRTC connections; over WebSocket, cancel the "
                            "response and truncate the item instead", code="unsupported_event", param="type")

    async def _response_create(self, model: ResponseCreateEvent, ev: Event) -> None:
        timing = ResponseTiming()  # a response asked for is timed from the request
        data: dict[str, Any] = ev.get("response") or {}
        if self.responses.phase is Phase.VISIBLE:
            assert self.responses.visible is not None
            raise ProtocolError(f"Conversation already has an active response in progress: "
                                f"{self.responses.visible.id}. Wait until the response is finished before creating "
                                "a new one.", code="conversation_already_has_active_response")
        settings, warnings = response_settings(self.settings, data, speech=self._speech,
                                               max_tools=self.options.max_tools)
        metadata = parse_metadata(data.get("metadata"))
        out_of_band = _conversation_mode(data) == "none"
        inputs = model.response.input if model.response is not None else None
        items = self._input_items(inputs) if inputs is not None else None
        for warning in warnings:
            await self.outbox.put(warning.to_event())
        await self.audio.transcribed()  # the model must read what the user just said
        if only_metadata(data) and await self.responses.claim(metadata):
            return
        await self.responses.discard("response.create with overrides")
        await self._start_response(settings, metadata, timing, out_of_band=out_of_band, items=items)

    async def _response_cancel(self, model: ResponseCancelEvent, ev: Event) -> None:
        response_id = model.response_id
        await self.responses.discard("response.cancel")
        visible = self.responses.visible
        if visible is None:
            raise ProtocolError("there is no active response to cancel", code="response_cancel_not_active")
        if response_id is not None and response_id != visible.id:
            raise ProtocolError(f"response {response_id!r} is not the active response", code="invalid_value",
                                param="response_id")
        await self.responses.cancel("client_cancelled")

    # -- responses ----------------------------------------------------------------------------------------------

    async def _respond_to_turn(self, turn: HeardTurn) -> None:
        """Answer a user turn the server heard (``create_response``): with the session's settings."""
        await self.responses.discard("user turn")
        await self._start_response(self.settings, None, ResponseTiming.for_turn(turn))

    async def _start_response(self, settings: SessionSettings, metadata: dict[str, str] | None,
                              timing: ResponseTiming, *, out_of_band: bool = False,
                              items: list[Item] | None = None) -> None:
        history: History
        if out_of_band:
            history = OutOfBand()
            context = items if items is not None else self.conversation.items
        else:
            history = self.conversation
            context, parked = self.responses.context()
            for work in parked:
                await work()
            if items is not None:
                context = items
        self.responses.start(self._new_run(settings, metadata, history, context, self.outbox.put, timing))

    def _follow_up(self, history: History, context: list[Item], emit: Send) -> ResponseRun:
        """A hidden follow-up: what a plain ``response.create`` would produce now."""
        return self._new_run(self.settings, None, history, context, emit)

    def _new_run(self, settings: SessionSettings, metadata: dict[str, str] | None, history: History,
                 context: list[Item], emit: Send, timing: ResponseTiming | None = None) -> ResponseRun:
        params = ResponseParams(instructions=settings.instructions, tools=list(settings.tools),
                                tool_choice=settings.tool_choice, output_modalities=list(settings.output_modalities),
                                max_output_tokens=settings.max_output_tokens, temperature=settings.temperature,
                                metadata=metadata, output_format=settings.output_format, speed=settings.speed)
        return ResponseRun(ResponseInputs(
            self.backend, self._request(settings, context), params, history, emit, llm_timeout=self.options.llm_timeout,
            tts=self.voice.tts if self.voice else None, gain=lambda: self.voice_gain, toolbox=self.tools.toolbox,
            context=self.tools.context, approvals=self.tools.approvals, timing=timing or ResponseTiming()))

    def _request(self, settings: SessionSettings, context: list[Item]) -> LLMRequest:
        """What the backend is asked: ``context`` with the settings, the client's tools and the server's."""
        toolbox = self.tools.toolbox
        return LLMRequest(items=to_chat_items(context), instructions=settings.instructions,
                          tools=[*settings.tools, *(toolbox.tools if toolbox is not None else [])],
                          tool_choice=settings.tool_choice, max_output_tokens=settings.max_output_tokens,
                          temperature=settings.temperature, voice=settings.audio_out,
                          parallel_tool_calls=settings.parallel_tool_calls)

    def _prepare(self) -> None:
        """Let the backend evaluate, in the background, the prompt the next turn starts from (instructions, tools,
        history so far), so that turn evaluates only its new words. Called when the session's settings change and
        when the user starts speaking; a newer preparation replaces an older one."""
        if not isinstance(self.backend, Warmable):
            return
        if self._preparing is not None:
            self._preparing.cancel()
        request = self._request(self.settings, self.responses.context()[0])
        self._preparing = asyncio.create_task(warm(self.backend, request), name=f"voxcall-warm-{self.id}")

    def _input_items(self, models: list[Any]) -> list[Item]:
        """``response.input``: references to conversation items, and new items read as ``item.create`` reads them."""
        return [self.conversation.require(model.id, f"response.input[{n}].id") if isinstance(model, ItemReference)
                else item_from_client(model, where=f"response.input[{n}].") for n, model in enumerate(models)]


def _not_a_json_number(constant: str) -> float:
    """``NaN``, ``Infinity`` and ``-Infinity`` are Python's extensions of JSON: refused, or an echo of them (a
    tool's schema in ``session.updated``) would be no JSON to the client."""
    raise ProtocolError(f"{constant} is not a JSON number", code="invalid_json")


_SURROGATE = re.compile("[\ud800-\udfff]")


def _has_lone_surrogate(value: Any) -> bool:
    """Whether a string of the decoded frame holds half a UTF-16 pair (JSON's ``\\ud800`` escape spells one, and
    a binary frame may carry one raw). UTF-8 cannot encode it, so any echo of it, even the ``event_id`` of an
    ``error``, would fail on the socket. ASCII strings (audio) are passed over at no cost."""
    stack: list[Any] = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if not item.isascii() and _SURROGATE.search(item):
                return True
        elif isinstance(item, dict):
            stack.extend(item)
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return False


def _conversation_mode(data: dict[str, Any]) -> str:
    mode = data.get("conversation", "auto")
    if mode not in ("auto", "none"):
        raise ProtocolError("'response.conversation' must be 'auto' or 'none'", code="invalid_value",
                            param="response.conversation")
    return str(mode)
