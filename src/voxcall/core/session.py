"""One Realtime session: it routes each client event to the part that owns it, and keeps the session's settings.

Client events are handled one at a time, in order (the socket reader awaits each), so session state changes
only between events or inside response tasks. Each is read with the SDK's models first
(:mod:`voxcall.core.client_events`); every bad event becomes an ``error`` event naming it, and the session
carries on. The parts:

- :class:`~voxcall.core.conversation.conversation.Conversation`: the items;
- :class:`~voxcall.core.hearing.heard_audio.HeardAudio`: input audio, turn detection, transcription;
- :class:`~voxcall.core.responses.lifecycle.ResponseLifecycle`: the visible response and any hidden one;
- :class:`~voxcall.core.tools.session_tools.SessionTools`: server tools, the tool context, approvals;
- :class:`~voxcall.core.tools.tool_ledger.ToolLedger`: every tool call and its state; a server tool's result that
  lands after its response ended (the response acknowledged a slow tool) is answered by a response of its own, as
  soon as none runs, the call moved to the end of what the model reads (the conversation keeps its order);
- :class:`~voxcall.core.responses.outbox.Outbox`: the ordered way out to the socket.

A session idle for ``session.idle_timeout`` (no client event, no response running) ends its connection through the
``close_socket`` it was given (code 1000, a reason naming the setting).
"""

from __future__ import annotations

import asyncio
import logging
import time
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
from voxcall.core.client_events import (
    ItemReference,
    ResponseCreateEvent,
    decode_frame,
    event_id_of,
    parse_client_event,
)
from voxcall.core.conversation.conversation import Conversation, item_bytes, to_chat_items
from voxcall.core.conversation.items import (
    ApprovalResponseItem,
    CallItem,
    CallOutputItem,
    Item,
    McpCallItem,
    MessageItem,
    item_from_client,
)
from voxcall.core.conversation.output_items import History, OutOfBand
from voxcall.core.events import (
    Emit,
    ItemAdded,
    ItemDeleted,
    ItemDone,
    ItemRetrieved,
    ItemTruncated,
    OutputAudioCleared,
    SettingsApplied,
)
from voxcall.core.events import (
    Event as CoreEvent,
)
from voxcall.core.events.wire import RealtimeEncoder
from voxcall.core.hearing.heard_audio import HeardAudio
from voxcall.core.hearing.transcription import Hearing, choose_hearing
from voxcall.core.metrics import Metrics
from voxcall.core.playback import Playback
from voxcall.core.protocol import ProtocolError, error_event, event, new_id
from voxcall.core.rate_limits import Clock, EventFate, EventRate, ResponseRate
from voxcall.core.responses.acknowledgement import acknowledgement
from voxcall.core.responses.lifecycle import Phase, ResponseLifecycle
from voxcall.core.responses.outbox import Outbox, Send
from voxcall.core.responses.prefetch import SpeculationSlots
from voxcall.core.responses.response import ResponseRun
from voxcall.core.responses.response_inputs import ResponseInputs, ResponseParams
from voxcall.core.responses.timing import HeardTurn, ResponseTiming
from voxcall.core.settings import (
    ServerSpeech,
    SessionSettings,
    parse_metadata,
    read_settings,
    response_settings,
)
from voxcall.core.tools.session_tools import SessionTools
from voxcall.core.tools.tool_ledger import LedgerCall, ToolLedger
from voxcall.core.tools.toolbox import Toolbox
from voxcall.core.voice import Voice
from voxcall.llm import LLMBackend, LLMRequest, Warmable, media_of, warm
from voxcall.speech.tts import TTS

log = logging.getLogger(__name__)

Wire = dict[str, Any]
"""A client event as decoded from its frame."""

CloseSocket = Callable[[int, str], Awaitable[None]]
"""Ends a session's connection with a WebSocket close code and reason."""

IDLE_CLOSE_CODE = 1000
"""The close code of a session ended for idleness (a normal closure: nothing went wrong)."""


class Session:
    """The state and behaviour of one client connection."""

    def __init__(self, backend: LLMBackend, send: Send, *, options: SessionOptions | None = None,
                 tools: ToolsSettings | None = None, model: str = "voxcall", beta: bool = False,
                 slots: SpeculationSlots | None = None, voice: Voice | None = None,
                 toolbox: Toolbox | None = None, metrics: Metrics | None = None,
                 clock: Clock = time.monotonic, close_socket: CloseSocket | None = None) -> None:
        """``options`` and ``tools`` are the server's ``session:`` and ``tools:`` sections; ``model`` is the name
        the session reports, ``beta`` picks the beta protocol's event names. ``slots``, ``voice``, ``toolbox`` and
        ``metrics`` are the process's, shared by all its sessions; the rate limits count time on ``clock``.
        ``close_socket`` ends the connection of a session idle for ``idle_timeout`` (None: it is never ended for
        idleness)."""
        self.id = new_id("sess")
        self.metrics = metrics = metrics or Metrics()
        self.options = options = options or SessionOptions()
        self.model = model
        tools = tools or ToolsSettings()
        self.backend = backend
        self.voice = voice
        self.voice_gain = 1.0  # the assistant's volume; the volume tools drive it
        self._speech = (ServerSpeech(speaks=True, voices=voice.voices, models=voice.models, stt_model=voice.stt.name)
                        if voice else ServerSpeech())
        self.settings = SessionSettings(instructions=options.instructions, voice=self._speech.voices.default,
                                        output_modalities=["audio"] if voice else ["text"],
                                        audio_input=options.audio_input)
        self.conversation = Conversation()
        self.outbox = Outbox(send, beta=beta)
        self._wire = RealtimeEncoder(self.id, model)
        self._event_rate = EventRate(options.events_per_second, clock)
        self._response_rate = ResponseRate(options.responses_per_minute, clock)
        self._close_socket = close_socket
        self._active_at = 0.0  # when (event loop time) the client last sent an event or a response last ran
        self._idle_watch: asyncio.Task[None] | None = None
        self.tools = SessionTools(toolbox, session_id=self.id, voice=self, allow_mcp=tools.allow_session_mcp,
                                  allow_remote_mcp=tools.allow_remote_session_mcp)
        host = toolbox.output if toolbox is not None else None  # music shares it with the assistant's speech
        self.playback = Playback(host) if host is not None else None
        slots = slots or SpeculationSlots(options.max_speculative)
        self.ledger = ToolLedger(self.conversation, metrics, client_wait=tools.client_tool_wait,
                                 on_landed=self._landed)
        # seconds before a slow tool is acknowledged (None: never); an edge may change it for later responses
        self.acknowledge_after = tools.acknowledge_after_ms / 1000 or None
        self._acknowledged = 0  # acknowledgements said so far (the phrases take turns)
        self._unanswered: list[LedgerCall] = []  # landed results (and unanswered client calls) awaiting a response
        self._answering: asyncio.Task[None] | None = None  # discarding a hidden response to answer them
        self._report: ResponseRun | None = None  # the latest response started to answer them
        self._handling = False  # a client event is being handled: what landed is answered after it
        self.responses = ResponseLifecycle(self.conversation, self._emit, slots,
                                           self._follow_up, prefetch=options.prefetch,
                                           max_hidden_events=options.max_hidden_events,
                                           max_history_items=options.max_history_items,
                                           max_conversation_bytes=options.max_conversation_bytes, metrics=metrics,
                                           drop_images="image" not in media_of(backend), ledger=self.ledger,
                                           on_idle=self._answer_landed)
        self.audio = HeardAudio(voice, self._emit, self.conversation, self.responses, self._respond_to_turn,
                                metrics, max_turn_ms=round(options.max_turn_seconds * 1000),
                                eager_turn_ms=options.eager_turn_ms, live_transcript_ms=options.live_transcript_ms,
                                hearing=self._hearing, on_speech=self._prepare,
                                direct=lambda: self.settings.audio_input == "direct",
                                max_direct_audio_bytes=options.max_direct_audio_bytes)
        self._preparing: asyncio.Task[None] | None = None  # the backend preparing the next turn's prompt
        self.audio.use_turn_detection(self.settings.turn_detection)
        # Each handler takes the event's SDK model and the event in the GA shape (settings are read from the dict).
        self._handlers: dict[str, Callable[[Any, Wire], Awaitable[None]]] = {
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
        if self._close_socket is not None:
            self._active_at = asyncio.get_running_loop().time()
            self._idle_watch = asyncio.create_task(self._expire_when_idle(self._close_socket),
                                                   name=f"voxcall-idle-{self.id}")
        await self.outbox.put(event("session.created", session=self.to_wire()))

    async def _emit(self, ev: CoreEvent) -> None:
        """Send one of the session's events to the client."""
        await self.outbox.put(self._wire(ev))

    async def close(self) -> None:
        """The client went away: stop every task of the session; nothing more is written."""
        self.outbox.closed = True
        for task in (self._preparing, self._idle_watch, self._answering):
            if task is not None:
                task.cancel()
                await asyncio.wait([task])
        await self.responses.close()
        await self.ledger.close()
        if self.playback is not None:
            self.playback.stop()
        await self.audio.close()
        await self.tools.close()
        await self.outbox.close(flush=False)

    async def finish(self, expired: asyncio.Event) -> None:
        """The server is stopping: let the response running now (if any) end, unless ``expired`` is set first; then
        write out what is queued (nothing more once expired) and stop writing. The caller then closes the
        connection, which ends the session (and a response still running)."""
        ended = asyncio.ensure_future(self.responses.settled())
        cut = asyncio.ensure_future(expired.wait())
        try:
            await asyncio.wait([ended, cut], return_when=asyncio.FIRST_COMPLETED)
        finally:
            settled = ended.done() and not ended.cancelled()
            ended.cancel()
            cut.cancel()
        await self.outbox.close(flush=settled)

    async def _expire_when_idle(self, close_socket: CloseSocket) -> None:
        """End the connection once the session has been idle for ``idle_timeout``: counted from the client's last
        event or the end of the last response, whichever is later; never while a response runs."""
        loop = asyncio.get_running_loop()
        timeout = self.options.idle_timeout
        while True:
            if self.responses.phase is Phase.VISIBLE:
                await self.responses.settled()
                self._active_at = loop.time()
            left = self._active_at + timeout - loop.time()
            if left <= 0:
                break
            await asyncio.sleep(left)
        log.info("session %s: idle for %g s; closing it", self.id, timeout)
        await close_socket(IDLE_CLOSE_CODE, f"idle for {timeout:g} s (session.idle_timeout)")

    def to_wire(self) -> dict[str, Any]:
        """The GA session object."""
        return self._wire.session(self.settings.to_wire())

    # -- client events ------------------------------------------------------------------------------------------

    async def handle_frame(self, data: str | bytes) -> None:
        """Handle one client frame; a bad one is answered with an ``error`` event, one over the rate limit is
        dropped (see :class:`~voxcall.core.rate_limits.EventRate`)."""
        self._active_at = asyncio.get_running_loop().time()
        fate = self._event_rate.admit()
        if fate is not EventFate.ACCEPTED:
            if fate is EventFate.REFUSED:
                await self.outbox.put(error_event(self._event_rate.error(), self._event_id(data)))
            return
        try:
            ev = decode_frame(data, self.options.max_frame_bytes)
        except ProtocolError as err:
            await self.outbox.put(error_event(err, None))
            return
        await self.submit(ev)

    async def submit(self, ev: Wire) -> None:
        """Handle one decoded client event (a frame, or a command an edge made up); a bad one is answered with an
        ``error`` event whose ``event_id`` is the event's own. An edge that calls this directly keeps its own frame
        and rate limits."""
        self._active_at = asyncio.get_running_loop().time()
        client_event_id = event_id_of(ev)
        self._handling = True
        try:
            parsed = parse_client_event(ev)
            await self._handlers[parsed.kind](parsed.model, parsed.data)
        except ProtocolError as err:
            await self.outbox.put(error_event(err, client_event_id))
        except Exception:  # a bug must not end the session: the client learns that its event failed, not why
            log.exception("session %s: handling a client event failed", self.id)
            await self.outbox.put(error_event(ProtocolError(
                "the server failed to handle this event; the session goes on", code="server_error",
                kind="server_error"), client_event_id))
        finally:
            self._handling = False
        self._answer_landed()  # a result that landed meanwhile (the event may have started a response: then later)

    def _event_id(self, data: str | bytes) -> str | None:
        """The ``event_id`` of a frame that is not handled, if it has one."""
        try:
            return event_id_of(decode_frame(data, self.options.max_frame_bytes))
        except ProtocolError:
            return None

    async def _session_update(self, model: SessionUpdateEvent, ev: Wire) -> None:
        if model.session.type != "realtime":
            raise ProtocolError("only 'realtime' sessions are supported", code="invalid_value", param="session.type")
        new, warnings = read_settings(self.settings, ev["session"], where="session.", speech=self._speech,
                                      max_tools=self.options.max_tools)
        self.tools.check_names(new)
        if new.audio_input == "direct" and "audio" not in media_of(self.backend):
            raise ProtocolError(f"audio_input 'direct' needs a model that hears audio; the {self.backend.name} backend "
                                "takes text (the server's model_inputs do not include audio)", code="invalid_value",
                                param="session.audio.input.voxcall_audio_input")
        if new.mcp_servers != self.settings.mcp_servers:
            await self.tools.use_mcp_servers(new.mcp_servers)
        await self.responses.discard("session.update")
        turns_changed = new.turn_detection != self.settings.turn_detection
        self.settings = new
        if turns_changed:
            self.audio.use_turn_detection(new.turn_detection)
        await self._emit(SettingsApplied(self.settings))
        self._prepare()
        for warning in warnings:
            await self.outbox.put(warning.to_event())
        self.responses.speculate()

    async def _item_create(self, model: ConversationItemCreateEvent, ev: Wire) -> None:
        item = item_from_client(model.item, max_image_bytes=self.options.max_image_bytes)
        size, limit = item_bytes(item), self.options.max_conversation_bytes
        if size > limit:
            raise ProtocolError(f"the item is {size} bytes of JSON, more than a whole conversation may hold ({limit}, "
                                "session.max_conversation_bytes)", code="item_too_large", param="item")
        if isinstance(item, CallOutputItem):
            self.conversation.check_output(item.call_id)
        if isinstance(item, ApprovalResponseItem):
            self.tools.approvals.check(item.approval_request_id)
        await self.responses.discard("conversation.item.create")
        before = self.conversation.add(item, model.previous_item_id)
        shown = item.snapshot()
        await self._emit(ItemAdded(shown, before))
        await self._emit(ItemDone(shown, before))
        if isinstance(item, CallOutputItem):
            await self.ledger.answered(item.call_id, item.output)
        if isinstance(item, ApprovalResponseItem):
            self.tools.approvals.answer(item.approval_request_id, item.approve, item.reason)
        self.responses.speculate()

    async def _item_delete(self, model: ConversationItemDeleteEvent, ev: Wire) -> None:
        item_id = model.item_id
        self.conversation.require(item_id)
        await self.responses.discard("conversation.item.delete")
        self.conversation.delete(item_id)
        await self._emit(ItemDeleted(item_id))
        self.responses.speculate()

    async def _item_retrieve(self, model: ConversationItemRetrieveEvent, ev: Wire) -> None:
        item = self.conversation.require(model.item_id)
        call = self.ledger.get(item.call_id) if isinstance(item, CallItem | McpCallItem) else None
        await self._emit(ItemRetrieved(item.snapshot(), call.to_wire() if call is not None else None))

    async def _item_truncate(self, model: ConversationItemTruncateEvent, ev: Wire) -> None:
        item_id, index, end_ms = model.item_id, model.content_index, model.audio_end_ms
        self.conversation.check_truncate(item_id, index, end_ms)
        await self.responses.discard("conversation.item.truncate")
        item = self.conversation.truncate(item_id, index, end_ms)
        if self.playback is not None:
            self.playback.stopped(item.spoken)
        await self._emit(ItemTruncated(item_id, index, end_ms))

    async def _audio_append(self, model: InputAudioBufferAppendEvent, ev: Wire) -> None:
        await self.audio.append(model.audio, self.settings.input_format)

    async def _audio_commit(self, model: object, ev: Wire) -> None:
        await self.audio.commit()

    async def _audio_clear(self, model: object, ev: Wire) -> None:
        await self.audio.clear()

    async def _output_audio_clear(self, model: object, ev: Wire) -> None:
        """The client dropped the audio it had not played (the JS Agents SDK does on every interruption): the
        session's speech is over now, and ``output_audio_buffer.cleared`` names the latest response the client was
        sent. A response still running is not cancelled: the protocol has the client send ``response.cancel``."""
        if self.playback is not None:
            self.playback.stop()
        heard = self.responses.heard
        if heard is not None:
            await self._emit(OutputAudioCleared(heard.id))

    async def _response_create(self, model: ResponseCreateEvent, ev: Wire) -> None:
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
        self._response_rate.take()
        for warning in warnings:
            await self.outbox.put(warning.to_event())
        await self.outbox.put(self._response_rate.to_event())
        if self.settings.audio_input != "direct":
            await self.audio.transcribed()  # the model must read what the user just said (unless it hears it)
        # A hidden follow-up is this response when the request's effective settings are the ones it was generated
        # with: a field restated with the session's value (LiveKit's ``tool_choice: "auto"``), or null, changes
        # nothing; ``metadata`` never matters. One with its own input or out of band answers something else.
        if items is None and not out_of_band and await self.responses.claim(metadata, settings=settings):
            return
        await self.responses.discard("response.create with other settings")
        await self._start_response(settings, metadata, timing, out_of_band=out_of_band, items=items)

    async def _response_cancel(self, model: ResponseCancelEvent, ev: Wire) -> None:
        response_id = model.response_id
        await self.responses.discard("response.cancel")
        visible = self.responses.visible
        if visible is None:
            # OpenAI's words: clients (LiveKit's plugin) recognise this prefix as the ordinary barge-in race
            raise ProtocolError("Cancellation failed: no active response found", code="response_cancel_not_active")
        if response_id is not None and response_id != visible.id:
            raise ProtocolError(f"response {response_id!r} is not the active response", code="invalid_value",
                                param="response_id")
        await self.responses.cancel("client_cancelled")

    # -- responses ----------------------------------------------------------------------------------------------

    async def _respond_to_turn(self, turn: HeardTurn) -> None:
        """Answer a user turn the server heard (``create_response``): with the session's settings. A response
        speaking a tool's late result gives way to the user."""
        await self.responses.discard("user turn")
        visible = self.responses.visible
        if visible is not None and visible is self._report:
            await self.responses.cancel("turn_detected")
        await self._start_response(self.settings, None, ResponseTiming.for_turn(turn))

    def _landed(self, call: LedgerCall) -> None:
        """The ledger has something new to answer: a detached tool's result, or a client tool that never
        answered."""
        self._unanswered.append(call)
        self._answer_landed()

    def _answer_landed(self) -> None:
        """Answer what landed, unless a response runs (then once it ended: the lifecycle calls back when idle).
        A hidden response is discarded first: it was generated without the result."""
        if not self._unanswered or self._handling or self.responses.phase is Phase.VISIBLE or self.outbox.closed:
            return
        if self.responses.phase is Phase.HIDDEN:
            if self._answering is None or self._answering.done():
                self._answering = asyncio.create_task(self._discard_then_answer(), name=f"voxcall-answer-{self.id}")
            return
        if self.conversation.unanswered_calls() or self.audio.buffer.in_turn:
            return  # the client owes outputs, or the user is speaking: the response that follows answers it
        context, _ = self.responses.context()  # trimming, when due, waits for the next response
        run = self._new_run(self.settings, None, self.conversation, self._fold_landed(context), self._emit,
                            ResponseTiming())
        self._report = run
        self.responses.start(run)

    def _fold_landed(self, context: list[Item]) -> list[Item]:
        """What a response starting now reads: ``context`` with the results that landed since the last response
        moved to its end (a user's question that came after them stays last: they are kept for that answer),
        which are then answered. The conversation itself keeps every item where it is."""
        landed = {call.item.id for call in self._unanswered if call.server}  # a client's output is already last
        self._unanswered = []
        last = context[-1] if context else None
        if not landed or (isinstance(last, MessageItem) and last.role == "user"):
            return context
        return [item for item in context if item.id not in landed] + [item for item in context if item.id in landed]

    async def _discard_then_answer(self) -> None:
        await self.responses.discard("a tool result landed")
        self._answer_landed()

    def _acknowledgement(self) -> str:
        """The phrase a response says when its tools are slow: in the session's language, or the user's."""
        hearing = self._hearing()
        said = next((item.text for item in reversed(self.conversation.items)
                     if isinstance(item, MessageItem) and item.role == "user"), "")
        phrase = acknowledgement(hearing.language if hearing is not None else None, said, self._acknowledged)
        self._acknowledged += 1
        return phrase

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
            context = items if items is not None else self._fold_landed(context)
        if self.responses.visible is not None and self.responses.visible is self._report:
            await self.responses.cancel("turn_detected")  # it began meanwhile: the user's turn goes first
        self.responses.start(self._new_run(settings, metadata, history, context, self._emit, timing))

    def _follow_up(self, history: History, context: list[Item], emit: Emit) -> ResponseRun:
        """A hidden follow-up: what a plain ``response.create`` would produce now."""
        return self._new_run(self.settings, None, history, context, emit)

    def _new_run(self, settings: SessionSettings, metadata: dict[str, str] | None, history: History,
                 context: list[Item], emit: Emit, timing: ResponseTiming | None = None) -> ResponseRun:
        params = ResponseParams(instructions=settings.instructions, tools=list(settings.tools),
                                tool_choice=settings.tool_choice, output_modalities=list(settings.output_modalities),
                                max_output_tokens=settings.max_output_tokens, temperature=settings.temperature,
                                metadata=metadata, output_format=settings.output_format, speed=settings.speed)
        return ResponseRun(ResponseInputs(
            self.backend, self._request(settings, context), params, history, emit, llm_timeout=self.options.llm_timeout,
            tts=self._speaking(settings), gain=lambda: self.voice_gain, toolbox=self.tools.toolbox,
            context=self.tools.context, approvals=self.tools.approvals, timing=timing or ResponseTiming(),
            repair_calls=self.options.repair_tool_calls,
            playback=self.playback, settings=settings, ledger=self.ledger,
            acknowledge_after=self.acknowledge_after, acknowledge=self._acknowledgement))

    def _request(self, settings: SessionSettings, context: list[Item]) -> LLMRequest:
        """What the backend is asked: ``context`` with the settings, the client's tools and the server's."""
        toolbox = self.tools.toolbox
        return LLMRequest(items=to_chat_items(context, media_of(self.backend)), instructions=settings.instructions,
                          tools=[*settings.tools, *(toolbox.tools if toolbox is not None else [])],
                          tool_choice=settings.tool_choice, max_output_tokens=settings.max_output_tokens,
                          temperature=settings.temperature, voice=settings.audio_out,
                          parallel_tool_calls=settings.parallel_tool_calls)

    def _speaking(self, settings: SessionSettings) -> TTS | None:
        """The voice ``settings`` speak with (see :meth:`Voice.speaking`); None: the server does not speak."""
        if self.voice is None:
            return None
        hearing = self._hearing()
        return self.voice.speaking(settings.voice, hearing.language if hearing is not None else None)

    def _hearing(self) -> Hearing | None:
        """How the session's audio is heard (checked when it was set: it cannot fail here)."""
        if self.voice is None:
            return None
        return choose_hearing(self.settings.transcription, self.voice.models, self.voice.stt.name)

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
        limit = self.options.max_image_bytes
        return [self.conversation.require(model.id, f"response.input[{n}].id") if isinstance(model, ItemReference)
                else item_from_client(model, where=f"response.input[{n}].", max_image_bytes=limit)
                for n, model in enumerate(models)]


def _conversation_mode(data: dict[str, Any]) -> str:
    mode = data.get("conversation") or "auto"  # null is omitted
    if mode not in ("auto", "none"):
        raise ProtocolError("'response.conversation' must be 'auto' or 'none'", code="invalid_value",
                            param="response.conversation")
    return str(mode)
