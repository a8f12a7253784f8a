"""One session: it takes typed commands, routes each to the part that owns it, and keeps the session's settings.

Commands are applied one at a time, in order (:meth:`Session.apply` is awaited by the one task that feeds the
session), so session state changes only between commands or inside response tasks. A command the session cannot act
on raises :class:`~voxcall.core.errors.SessionError` (so does a bug, as a ``server_error`` without details) and the
session carries on. What the session has to say goes out as typed events (:mod:`voxcall.core.events`), in order,
through the ``emit`` it was given. The parts:

- :class:`~voxcall.core.conversation.conversation.Conversation`: the items;
- :class:`~voxcall.core.hearing.heard_audio.HeardAudio`: input audio, turn detection, transcription;
- :class:`~voxcall.core.responses.lifecycle.ResponseLifecycle`: the visible response and any hidden one;
- :class:`~voxcall.core.tools.session_tools.SessionTools`: server tools, the tool context, approvals;
- :class:`~voxcall.core.tools.tool_ledger.ToolLedger`: every tool call and its state;
- :class:`~voxcall.core.landed.LandedResults`: results that land after their response ended, answered by a response
  of their own.

The session knows no protocol and no socket: an edge decodes its frames into commands and encodes the events. Its
trace (:mod:`voxcall.telemetry.tracing`) is opened with it, from its parts, and ended when it closes; each response
opens a turn in it.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any

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
from voxcall.core.conversation.conversation import Conversation, item_bytes
from voxcall.core.conversation.items import (
    ApprovalResponseItem,
    CallItem,
    CallOutputItem,
    Item,
    McpCallItem,
    MessageItem,
)
from voxcall.core.conversation.output_items import History, OutOfBand
from voxcall.core.errors import SessionError
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
from voxcall.core.hearing.heard_audio import HeardAudio
from voxcall.core.hearing.transcription import choose_hearing
from voxcall.core.ids import new_id
from voxcall.core.landed import LandedResults
from voxcall.core.parts import SessionParts
from voxcall.core.playout import Ducking, Heard, Playout
from voxcall.core.requests import llm_request
from voxcall.core.responses.lifecycle import HiddenKind, Phase, ResponseLifecycle
from voxcall.core.responses.prefetch import SpeculationSlots
from voxcall.core.responses.response import ResponseRun
from voxcall.core.responses.response_inputs import ResponseInputs, SessionContext
from voxcall.core.responses.timing import HeardTurn, ResponseTiming
from voxcall.core.settings import SessionSettings
from voxcall.core.tools.session_tools import SessionTools
from voxcall.core.tools.tool_ledger import ToolLedger
from voxcall.language import acknowledgement
from voxcall.llm import LLMRequest, Warmable, computes_here, media_of, warm
from voxcall.speech.stt import Hearing
from voxcall.speech.tts import TTS
from voxcall.telemetry.tracing import Trigger

log = logging.getLogger(__name__)


class Session:
    """The state and behaviour of one conversation with one client."""

    def __init__(self, parts: SessionParts, emit: Emit, playout: Playout | None = None) -> None:
        """``parts`` are what the session is built from (the process's backend, speech models, server tools and
        speculation slots, the server's ``session:`` and ``tools:`` settings); ``emit`` takes its events;
        ``playout`` plays its speech (:mod:`voxcall.core.playout`; None: nothing is played, nothing cleared)."""
        self.id = new_id("sess")
        self.parts = parts
        self.trace = parts.trace(self.id)
        options, voice, toolbox = parts.options, parts.voice, parts.toolbox
        self.backend = backend = parts.backend
        self.voice = voice
        self.voice_gain = 1.0  # the assistant's volume; the volume tools drive it
        self.emit = emit
        self.closed = False
        self.settings = SessionSettings(instructions=options.instructions,
                                        voice=voice.voices.default if voice else SessionSettings.voice,
                                        output_modalities=("audio",) if voice else ("text",),
                                        audio_input=options.audio_input)
        self.conversation = Conversation()
        self.tools = SessionTools(toolbox, session_id=self.id, voice=self, allow_mcp=parts.tools.allow_session_mcp,
                                  allow_remote_mcp=parts.tools.allow_remote_session_mcp)
        self.playout = playout
        host = toolbox.output if toolbox is not None else None  # music shares it with the assistant's speech
        self._ducking = Ducking(host) if host is not None else None
        if playout is not None and self._ducking is not None:
            playout.watch(self._ducking)
        self.landed = LandedResults(self)
        self.ledger = ToolLedger(self.conversation, parts.observer, client_wait=parts.tools.client_tool_wait,
                                 on_landed=self.landed.add)
        # seconds before a slow tool is acknowledged (None: never); an edge may change it for later responses
        self.acknowledge_after = parts.tools.acknowledge_after_ms / 1000 or None
        self._acknowledged = 0  # acknowledgements said so far (the phrases take turns)
        self._handling = False  # a command is being applied: what landed is answered after it
        self.responses = ResponseLifecycle(self.conversation, emit,
                                           parts.slots or SpeculationSlots(options.max_speculative),
                                           self._follow_up, prefetch=options.prefetch,
                                           max_hidden_events=options.max_hidden_events,
                                           max_history_items=options.max_history_items,
                                           max_conversation_bytes=options.max_conversation_bytes,
                                           observer=parts.observer, drop_images="image" not in media_of(backend),
                                           ledger=self.ledger, on_idle=self.landed.answer)
        self.audio = HeardAudio(voice, emit, self.conversation, self.responses, self, parts.observer,
                                max_turn_ms=round(options.max_turn_seconds * 1000), eager_turn_ms=options.eager_turn_ms,
                                live_transcript_ms=options.live_transcript_ms,
                                max_direct_audio_bytes=options.max_direct_audio_bytes)
        self._context = SessionContext(backend, self.ledger, options.llm_timeout, self._acknowledgement,
                                       lambda: self.voice_gain, self.tools.context, self.tools.approvals,
                                       options.repair_tool_calls, self.trace)
        self._preparing: asyncio.Task[None] | None = None  # the backend preparing the next turn's prompt
        self.audio.use_turn_detection(self.settings.turn_detection)
        self._handlers: dict[type[Any], Callable[[Any], Awaitable[None]]] = {
            UpdateSettings: self._update, AddItem: self._add_item, DeleteItem: self._delete_item,
            RetrieveItem: self._retrieve_item, TruncateItem: self._truncate_item, Respond: self._respond,
            Cancel: self._cancel, AppendAudio: self._append_audio, CommitAudio: self._commit_audio,
            ClearAudio: self._clear_audio, ClearOutputAudio: self._clear_output_audio,
        }

    # -- lifecycle ----------------------------------------------------------------------------------------------

    async def close(self) -> None:
        """The client went away: stop every task of the session; it emits nothing more."""
        self.closed = True
        for task in (self._preparing, self.landed.task):
            if task is not None:
                task.cancel()
                await asyncio.wait([task])
        await self.responses.close()
        await self.ledger.close()
        if self._ducking is not None:
            self._ducking.stop()
        await self.audio.close()
        await self.tools.close()
        self.trace.end()

    # -- commands -----------------------------------------------------------------------------------------------

    async def apply(self, command: Command) -> None:
        """Carry out one command; :class:`SessionError` when the session cannot (a bug is one too, a
        ``server_error`` that says no more)."""
        self._handling = True
        try:
            await self._handlers[type(command)](command)
        except SessionError:
            raise
        except Exception:  # a bug must not end the session: the client learns that its command failed, not why
            log.exception("session %s: %s failed", self.id, type(command).__name__)
            raise SessionError("the server failed to handle this event; the session goes on", code="server_error",
                               kind="server_error") from None
        finally:
            self._handling = False
            self.landed.answer()  # a result that landed meanwhile (the command may have started a response: later)

    @property
    def handling(self) -> bool:
        """Whether a command is being applied now."""
        return self._handling

    def check_can_respond(self) -> None:
        """Raise unless a response may start now: one is running already."""
        visible = self.responses.visible
        if self.responses.phase is Phase.VISIBLE and visible is not None:
            raise SessionError(f"Conversation already has an active response in progress: {visible.id}. Wait until "
                               "the response is finished before creating a new one.",
                               code="conversation_already_has_active_response")

    async def _update(self, command: UpdateSettings) -> None:
        new = command.settings
        self.tools.check_names(new)
        if new.audio_input == "direct" and "audio" not in media_of(self.backend):
            raise SessionError(f"audio_input 'direct' needs a model that hears audio; the {self.backend.name} backend "
                               "takes text (the server's model_inputs do not include audio)", code="invalid_value",
                               param="session.audio.input.voxcall_audio_input")
        if new.mcp_servers != self.settings.mcp_servers:
            await self.tools.use_mcp_servers(new.mcp_servers)
        await self.responses.discard("session.update")
        turns_changed = new.turn_detection != self.settings.turn_detection
        self.settings = new
        if turns_changed:
            self.audio.use_turn_detection(new.turn_detection)
        await self.emit(SettingsApplied(new))
        self._prepare()
        self.responses.speculate()

    async def _add_item(self, command: AddItem) -> None:
        item = command.item
        size, limit = item_bytes(item), self.parts.options.max_conversation_bytes
        if size > limit:
            raise SessionError(f"the item is {size} bytes of JSON, more than a whole conversation may hold ({limit}, "
                               "session.max_conversation_bytes)", code="item_too_large", param="item")
        if isinstance(item, CallOutputItem):
            self.conversation.check_output(item.call_id)
        if isinstance(item, ApprovalResponseItem):
            self.tools.approvals.check(item.approval_request_id)
        await self.responses.discard("conversation.item.create")
        before = self.conversation.add(item, command.previous_item_id)
        shown = item.snapshot()
        await self.emit(ItemAdded(shown, before))
        await self.emit(ItemDone(shown, before))
        if isinstance(item, CallOutputItem):
            await self.ledger.answered(item.call_id, item.output)
        if isinstance(item, ApprovalResponseItem):
            self.tools.approvals.answer(item.approval_request_id, item.approve, item.reason)
        self.responses.speculate()

    async def _delete_item(self, command: DeleteItem) -> None:
        self.conversation.require(command.item_id)
        await self.responses.discard("conversation.item.delete")
        self.conversation.delete(command.item_id)
        await self.emit(ItemDeleted(command.item_id))
        self.responses.speculate()

    async def _retrieve_item(self, command: RetrieveItem) -> None:
        item = self.conversation.require(command.item_id)
        call = self.ledger.get(item.call_id) if isinstance(item, CallItem | McpCallItem) else None
        await self.emit(ItemRetrieved(item.snapshot(), call.to_wire() if call is not None else None))

    async def _truncate_item(self, command: TruncateItem) -> None:
        item_id, index, end_ms = command.item_id, command.content_index, command.audio_end_ms
        self.conversation.check_truncate(item_id, index, end_ms)
        await self.responses.discard("conversation.item.truncate")
        self.conversation.truncate(item_id, index, end_ms)
        await self.emit(ItemTruncated(item_id, index, end_ms))

    async def _append_audio(self, command: AppendAudio) -> None:
        await self.audio.append(command.pcm, command.rate)

    async def _commit_audio(self, command: CommitAudio) -> None:
        await self.audio.commit()

    async def _clear_audio(self, command: ClearAudio) -> None:
        await self.audio.clear()

    async def _clear_output_audio(self, command: ClearOutputAudio) -> None:
        """The user's speech output stops (the JS Agents SDK clears it on every interruption): the session's speech
        is over now, :class:`OutputAudioCleared` names the latest response the client was sent, and the messages are
        cut to what was heard. A response still running is not cancelled: that takes a :class:`Cancel`."""
        cleared = await self.playout.clear() if self.playout is not None else None
        heard = self.responses.heard
        if heard is not None:
            await self.emit(OutputAudioCleared(heard.id))
        if cleared is not None:
            await self._cut_to_heard(cleared.heard)

    async def barge_in(self) -> None:
        """The user speaks over the assistant: its speech stops where the user is, its response is cancelled, and
        its messages are cut to the words the user heard."""
        cleared = await self.playout.clear() if self.playout is not None else None
        await self.responses.cancel("turn_detected")
        if cleared is not None:
            await self.emit(OutputAudioCleared(cleared.response_id))
            await self._cut_to_heard(cleared.heard)

    async def _cut_to_heard(self, heard: tuple[Heard, ...]) -> None:
        """Cut each assistant message to what of its audio was heard (the core truncates for a playout that
        plays the speech itself)."""
        for part in heard:
            item = self.conversation.get(part.item_id)
            if not isinstance(item, MessageItem) or item.role != "assistant" or not item.content \
                    or item.content[0].get("type") != "output_audio":
                continue
            end_ms = min(part.audio_end_ms, item.audio_ms)
            self.conversation.truncate(item.id, 0, end_ms)
            await self.emit(ItemTruncated(item.id, 0, end_ms))

    async def _respond(self, command: Respond) -> None:
        timing = ResponseTiming()  # a response asked for is timed from the request
        self.check_can_respond()
        settings = command.settings or self.settings
        if self.settings.audio_input != "direct":
            await self.audio.transcribed()  # the model must read what the user just said (unless it hears it)
        # A hidden follow-up is this response when the request's effective settings are the ones it was generated
        # with: a field restated with the session's value (LiveKit's ``tool_choice: "auto"``), or null, changes
        # nothing; ``metadata`` never matters. One with its own input or out of band answers something else.
        metadata = dict(command.metadata) if command.metadata is not None else None
        items = list(command.input) if command.input is not None else None
        if items is None and not command.out_of_band and await self.responses.claim(metadata, settings=settings):
            return
        await self.responses.discard("response.create with other settings")
        await self._start_response(settings, metadata, timing, out_of_band=command.out_of_band, items=items)

    async def _cancel(self, command: Cancel) -> None:
        await self.responses.discard("response.cancel")
        visible = self.responses.visible
        if visible is None:
            # OpenAI's words: clients (LiveKit's plugin) recognise this prefix as the ordinary barge-in race
            raise SessionError("Cancellation failed: no active response found", code="response_cancel_not_active")
        if command.response_id is not None and command.response_id != visible.id:
            raise SessionError(f"response {command.response_id!r} is not the active response", code="invalid_value",
                               param="response_id")
        await self.responses.cancel("client_cancelled")

    # -- responses ----------------------------------------------------------------------------------------------

    async def respond_to_turn(self, turn: HeardTurn) -> None:
        """Answer a user turn the server heard (``create_response``): with the session's settings. A response
        speaking a tool's late result gives way to the user."""
        await self.responses.discard("user turn")
        if self.landed.reporting:
            await self.responses.cancel("turn_detected")
        await self._start_response(self.settings, None, ResponseTiming.for_turn(turn))

    def _acknowledgement(self) -> str:
        """The phrase a response says when its tools are slow: in the session's language, or the user's."""
        hearing = self.hearing()
        said = next((item.text for item in reversed(self.conversation.items)
                     if item.type == "message" and item.role == "user"), "")
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
            context = items if items is not None else self.landed.fold(context)
        if self.landed.reporting:
            await self.responses.cancel("turn_detected")  # it began meanwhile: the user's turn goes first
        self.responses.start(self.new_run(settings, metadata, history, context, self.emit, timing))

    def _follow_up(self, history: History, context: list[Item], emit: Emit, kind: HiddenKind,
                   origin: float | None) -> ResponseRun:
        """A hidden response of ``kind``: what a plain ``response.create`` would produce now (a follow-up answers
        tool output; an eager turn, the user's speech), timed from ``origin`` (None: now; an eager turn: the end
        of the speech, so that its trace's turn holds the stages it is claimed with)."""
        trigger = Trigger.TOOL_OUTPUT if kind is HiddenKind.FOLLOW_UP else Trigger.SPEECH
        timing = ResponseTiming(trigger=trigger) if origin is None else ResponseTiming(origin=origin, trigger=trigger)
        return self.new_run(self.settings, None, history, context, emit, timing, hidden=kind.value)

    def new_run(self, settings: SessionSettings, metadata: dict[str, str] | None, history: History,
                context: list[Item], emit: Emit, timing: ResponseTiming | None = None, *,
                hidden: str | None = None) -> ResponseRun:
        """A response generated with ``settings`` from ``context``: its items go to ``history``, its events to
        ``emit``; ``hidden``: the kind of a hidden one."""
        timing = timing or ResponseTiming()
        heard_at = timing.origin if timing.trigger is Trigger.SPEECH else None  # the end of the speech it answers
        return ResponseRun(ResponseInputs(
            self._context, self._request(settings, context, heard_at), settings, history, emit, metadata,
            tts=self._speaking(settings), toolbox=self.tools.toolbox, acknowledge_after=self.acknowledge_after,
            timing=timing, hidden=hidden))

    def _request(self, settings: SessionSettings, context: list[Item], heard_at: float | None = None) -> LLMRequest:
        toolbox = self.tools.toolbox
        return llm_request(settings, context, toolbox.tools if toolbox is not None else [], media_of(self.backend),
                           heard_at)

    def _speaking(self, settings: SessionSettings) -> TTS | None:
        """The voice ``settings`` speak with (see :meth:`Voice.speaking`); None: the server does not speak."""
        if self.voice is None:
            return None
        hearing = self.hearing()
        return self.voice.speaking(settings.voice, hearing.language if hearing is not None else None)

    def hearing(self) -> Hearing | None:
        """How the session's audio is heard (checked when it was set: it cannot fail here)."""
        if self.voice is None:
            return None
        return choose_hearing(self.settings.transcription, self.voice.models, self.voice.stt.name)

    def hears_directly(self) -> bool:
        """Whether the model hears the user's turns themselves (``audio_input: direct``)."""
        return self.settings.audio_input == "direct"

    def speech_began(self) -> None:
        """A user turn began: the backend prepares the prompt of the answer."""
        self._prepare()

    def preparing_here(self) -> bool:
        """Whether the backend is preparing the next turn's prompt on this machine's CPU."""
        return self._preparing is not None and not self._preparing.done() and computes_here(self.backend)

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
