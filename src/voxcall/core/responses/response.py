"""One response: a task that streams a backend's events out as Realtime server events.

A :class:`ResponseRun` turns the shared LLM events into output items (an assistant message for text, one
``function_call`` item per call), in the GA event order, and ends with exactly one ``response.done``
carrying the full output, the usage and the status. Where its events go (the socket, or a speculation's gate)
and where its items go (the conversation, a deferred view of it, or nowhere for out-of-band responses) are
given to it, so the same code runs visible responses and hidden speculative ones.

A call the tools do not accept never becomes a ``function_call``: the client gets a ``voxcall.tool_call.rejected``
event with the reason. When the backend marks it repairable (a native call: an undeclared name, arguments that are
not a JSON object or break the schema) and ``repair_calls`` is on, the model is shown the call and the reason and
generates once more within the same response (once per response; a reply that also called client tools ends
the response instead, since the client must answer those first). A call still botched is only rejected.

After a round of server tools the model generates again to report the results, except when every call of the
round went to a tool that only acts and succeeded (fire-and-forget: ``@tool(returns=False)``, or an MCP tool
marked so): then the response ends there, and what the model said before the calls is the whole answer. A round
still running after ``acknowledge_after`` seconds ends the response with a short acknowledgement instead; its
calls run on in the session's tool ledger, and the session answers their results when they land.

Every call the model writes is proposed to the session's :class:`~voxcall.core.tools.tool_ledger.ToolLedger`; a
client tool's call is handed to it as sent when the response ends, so an output that never comes is noticed.

The response is a turn of the session's trace (:mod:`voxcall.telemetry.tracing`), opened with it: each model
request a ``chat`` span, each call an ``execute_tool`` span (opened by the ledger), its marks those of its
:class:`~voxcall.core.responses.timing.ResponseTiming`.

Cancelling the task (after setting :attr:`ResponseRun.cancel_reason`) ends the response with status
``cancelled``: the provider stream is closed, what the user already received stays in the history, and a call
whose arguments never completed is removed so no dangling call is left behind.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncGenerator
from typing import Any, Literal

from voxcall.audio.codec import PCM
from voxcall.core.conversation.conversation import to_chat_items
from voxcall.core.conversation.items import CallItem, Item, McpCallItem, MessageItem, Spoken
from voxcall.core.conversation.output_items import History, OutputItems
from voxcall.core.events import (
    ArgumentsDelta,
    ArgumentsDone,
    CallState,
    ContentPartAdded,
    ContentPartDone,
    Event,
    OutputAudio,
    OutputAudioDone,
    OutputTextDelta,
    OutputTextDone,
    OutputTranscriptDelta,
    OutputTranscriptDone,
    ResponseCreated,
    ResponseDone,
    ResponseState,
    SpokenClause,
    ToolCallRejected,
)
from voxcall.core.events.responses import Status
from voxcall.core.ids import new_id, unicode_text
from voxcall.core.responses.response_inputs import ResponseInputs, UsageTotals
from voxcall.core.responses.speaker import Speaker
from voxcall.core.tools.server_calls import ServerCalls
from voxcall.core.tools.toolbox import Toolbox
from voxcall.llm import (
    ChatItem,
    Done,
    LLMError,
    LLMEvent,
    ToolCallArgumentsDelta,
    ToolCallStart,
    Usage,
    model_of,
)
from voxcall.llm.calls import repair_items
from voxcall.telemetry.tracing import LLMTrace
from voxcall.tools import ToolCall
from voxcall.tools.codecalls import RejectedCall, TextDelta

log = logging.getLogger(__name__)

CancelReason = Literal["client_cancelled", "turn_detected"]


class ResponseRun:
    """A response in progress. ``run()`` is the task body; it never raises except when cancelled."""

    def __init__(self, inputs: ResponseInputs) -> None:
        self.inputs = inputs
        self.request = inputs.request  # grows by the server tool rounds of this response
        self.settings = inputs.settings
        self.metadata = inputs.metadata  # a claim sets the caller's
        self.session = inputs.session
        self.id = new_id("resp")
        self.status: Status = "in_progress"
        self.status_details: dict[str, Any] | None = None
        self.out = OutputItems(self.id, inputs.history, inputs.emit)
        self.calls: list[ToolCall] = []
        self.usage = UsageTotals()
        self.cancel_reason: CancelReason = "client_cancelled"
        self.started = False
        self.released = asyncio.Event()  # cleared while hidden: no speech, no server tools
        self.released.set()
        self.speak_ahead = False  # while hidden, synthesise speech anyway (it waits in the gate with the rest)
        self.timing = timing = inputs.timing
        timing.traced(inputs.session.trace.turn(trigger=timing.trigger, response_id=self.id, origin=timing.origin,
                                                hidden=inputs.hidden))
        self._llm = LLMTrace()  # the model request under way
        self._message: MessageItem | None = None
        self._speaker: Speaker | None = None
        self._open_calls: dict[str, CallItem | McpCallItem] = {}
        self._server_calls: list[tuple[McpCallItem, ToolCall]] = []  # finished arguments, not yet run
        self._client_calls = False  # the round produced calls the client must answer
        self._botched: list[RejectedCall] = []  # the round's repairable rejections
        self._not_run = ""  # why server calls left in _server_calls were not run, when not because of the end
        self._runner: ServerCalls | None = None

    @property
    def history(self) -> History:
        """Where the response's items go."""
        return self.out.history

    @history.setter
    def history(self, history: History) -> None:
        self.out.history = history

    @property
    def output(self) -> list[Item]:
        """The output items so far."""
        return self.out.items

    async def emit(self, ev: Event) -> None:
        """Send an event of this response."""
        await self.out.emit(ev)

    # -- the task -----------------------------------------------------------------------------------------------

    async def run(self) -> None:
        """Stream the response to its end: completed, incomplete, failed or cancelled."""
        self.started = True
        await self.emit(ResponseCreated(self.state()))
        try:
            await self._stream()
        except asyncio.CancelledError:
            await self._end("cancelled", {"type": "cancelled", "reason": self.cancel_reason})
            raise
        except LLMError as exc:
            log.warning("response %s failed: %s", self.id, exc.message)
            await self._end("failed", _failure(exc.code, exc.message))
        except TimeoutError:
            timeout = self.session.llm_timeout
            log.warning("response %s: backend silent for %.0f s", self.id, timeout)
            await self._end("failed", _failure("timeout", f"the model did not answer within {timeout:g} s"))
        except Exception:  # a bug must not kill the session: report it without details
            log.exception("response %s crashed", self.id)
            await self._end("failed", _failure("server_error", "the response failed because of a server error"))

    async def abandon(self) -> None:
        """Report a response whose task was cancelled before it ever ran: created, then done (cancelled)."""
        if not self.started:
            self.started = True
            await self.emit(ResponseCreated(self.state()))
            await self._end("cancelled", {"type": "cancelled", "reason": self.cancel_reason})

    async def _stream(self) -> None:
        """Generate; while the model calls server tools, run them and generate again (up to the round limit); when
        it botched a call, show it why and generate again (once)."""
        rounds = 0
        repairs = 1 if self.session.repair_calls else 0
        toolbox = self.inputs.toolbox
        while True:
            start = len(self.output)
            finish = await self._generate()
            if finish == "length":
                break
            repair = self._repair() if repairs and not self._client_calls else []
            to_report = bool(repair)  # what the next generation is for
            if self._server_calls and toolbox is not None:
                if rounds >= toolbox.max_rounds:  # the model called tools although they were switched off
                    self._not_run = "the tool round limit was reached"
                    break
                calls, self._server_calls = self._server_calls, []
                await self.released.wait()  # a hidden follow-up runs no tool until it is claimed
                rounds += 1
                outcome = await self._tool_runner(toolbox).run_round(calls, rounds)
                if outcome.running:  # slow tools: say so and end; the session speaks their results
                    await self._text(self.session.acknowledge())
                    for entry in outcome.running:
                        entry.trace.acknowledged()
                    break
                to_report = outcome.to_report or to_report
            elif not repair:
                break
            if self._client_calls:  # only the client's calls remain: it answers them, then asks again
                break
            if not to_report:  # tools that only act succeeded: no round just to say so
                break
            if repair:
                repairs -= 1
            self.request.items.extend([*to_chat_items(self.output[start:]), *repair])
            if toolbox is not None and rounds >= toolbox.max_rounds:
                self.request.tool_choice = "none"  # a final answer, with tools disabled
        if finish == "length":
            await self._end("incomplete", {"type": "incomplete", "reason": "max_output_tokens"})
        else:
            await self._end("completed", None)

    def _tool_runner(self, toolbox: Toolbox) -> ServerCalls:
        if self._runner is None:
            self._runner = ServerCalls(self.out, toolbox, self.session.context, self.session.approvals,
                                       self.timing, self.session.ledger, self.inputs.acknowledge_after)
        return self._runner

    async def _generate(self) -> str:
        """One backend stream: its events become output items; returns its finish reason."""
        backend = self.session.backend
        self._llm = self.timing.trace.llm_request(model=model_of(backend), provider=backend.name)
        stream: AsyncGenerator[LLMEvent, None] = backend.stream(self.request)
        finish = "stop"
        self._client_calls = False
        self._botched = []
        error: str | None = None
        try:
            while True:
                async with asyncio.timeout(self.session.llm_timeout):
                    try:
                        ev = await anext(stream)
                    except StopAsyncIteration:
                        break
                if isinstance(ev, Done):
                    finish = ev.finish_reason
                else:
                    await self._handle(ev)
        except (LLMError, TimeoutError) as exc:
            error = exc.message if isinstance(exc, LLMError) else "timeout"
            raise
        finally:
            await stream.aclose()
            self._llm.end(error=error)
        await self._close_message("completed")
        return finish

    async def _handle(self, ev: LLMEvent) -> None:
        if isinstance(ev, ToolCallStart | ToolCall) or (isinstance(ev, TextDelta) and ev.text and not ev.filler):
            self._llm.first_token(at=self.timing.token())
        if isinstance(ev, TextDelta):
            await self._text(unicode_text(ev.text))
        elif isinstance(ev, ToolCallStart):
            await self._start_call(ev.call_id, ev.name, ev.provider_call_id)
        elif isinstance(ev, ToolCallArgumentsDelta):
            item = self._open_calls.get(ev.call_id)
            if item is not None:
                await self._arguments_delta(item, unicode_text(ev.delta))
        elif isinstance(ev, ToolCall):
            await self._finish_call(ev)
        elif isinstance(ev, RejectedCall):
            await self._reject(ev)
        elif isinstance(ev, Usage):
            self.usage.add(ev)
            self._llm.usage(input_tokens=ev.input_tokens, output_tokens=ev.output_tokens,
                            cached_input_tokens=ev.cached_input_tokens)

    # -- text ---------------------------------------------------------------------------------------------------

    @property
    def _spoken(self) -> bool:
        return self.settings.audio_out and self.inputs.tts is not None

    async def _text(self, delta: str) -> None:
        if not delta:
            return
        if self._message is None:
            await self._open_message()
        assert self._message is not None
        item = self._message
        if self._speaker is not None:
            item.content[0]["transcript"] += delta
            self._speaker.feed(delta)
            await self.emit(OutputTranscriptDelta(self.id, item.id, self.out.index(item), 0, delta))
        else:
            item.content[0]["text"] += delta
            await self.emit(OutputTextDelta(self.id, item.id, self.out.index(item), 0, delta))

    async def _open_message(self) -> None:
        spoken = self._spoken
        part = {"type": "output_audio", "transcript": ""} if spoken else {"type": "output_text", "text": ""}
        item = MessageItem(new_id("item"), "assistant", [part], status="in_progress")
        self._message = item
        await self.out.add(item)
        await self.emit(ContentPartAdded(self.id, item.id, self.out.index(item), 0, spoken))
        if spoken and self.inputs.tts is not None:
            ready = _open_event() if self.speak_ahead else self.released
            self._speaker = Speaker(self.inputs.tts, self.settings.output_format, self.session.gain,
                                    _MessageSpeech(self, item), ready, speed=self.settings.speed)
            item.spoken = self._speaker.audio  # the audio sent so far, also when the response is cut off

    async def _close_message(self, status: Literal["completed", "incomplete"]) -> None:
        item = self._message
        if item is None:
            return
        speaker, self._speaker = self._speaker, None
        if item.content[0]["type"] == "output_audio":  # by the item, not the speaker: a cancel may come mid-finish
            if speaker is not None:
                await (speaker.finish() if status == "completed" else speaker.cancel())
            text = item.content[0]["transcript"]
            spoken = True
            index = self.out.index(item)
            await self.emit(OutputAudioDone(self.id, item.id, index, 0))
            await self.emit(OutputTranscriptDone(self.id, item.id, index, 0, text))
        else:
            text = item.content[0]["text"]
            spoken = False
            await self.emit(OutputTextDone(self.id, item.id, self.out.index(item), 0, text))
        self._message = None
        self.timing.trace.said(text)
        await self.emit(ContentPartDone(self.id, item.id, self.out.index(item), 0, spoken, text))
        item.status = status
        await self.out.done(item)

    # -- calls --------------------------------------------------------------------------------------------------

    async def _start_call(self, call_id: str, name: str, provider_call_id: str = "") -> CallItem | McpCallItem:
        """Open the item of a call: a ``function_call`` for the client, an ``mcp_call`` for a server tool."""
        await self._close_message("completed")
        server = self.inputs.toolbox.get(name) if self.inputs.toolbox is not None else None
        item: CallItem | McpCallItem
        if server is None:
            item = CallItem(new_id("item"), call_id, name, status="in_progress", provider_call_id=provider_call_id)
        else:
            item = McpCallItem(new_id("item"), call_id, server.remote_name, name, server.server_label,
                               status="in_progress", provider_call_id=provider_call_id)
        self._open_calls[call_id] = item
        await self.out.add(item)
        return item

    async def _arguments_delta(self, item: CallItem | McpCallItem, delta: str) -> None:
        item.arguments += delta
        await self.emit(ArgumentsDelta(self.id, item.id, self.out.index(item), item.call_id, delta,
                                       isinstance(item, McpCallItem)))

    async def _finish_call(self, call: ToolCall) -> None:
        item = self._open_calls.pop(call.call_id, None)
        if item is None:  # a path that streams no argument deltas (the local one): one delta per call
            item = await self._start_call(call.call_id, call.name)
            self._open_calls.pop(call.call_id)
            await self._arguments_delta(item, call.arguments_json)
        item.arguments = call.arguments_json
        self.calls.append(call)
        if isinstance(item, McpCallItem):  # it stays open until the tool has run
            await self.emit(ArgumentsDone(self.id, item.id, self.out.index(item), call.call_id, call.name,
                                          item.arguments, True))
            assert self.inputs.toolbox is not None  # a server call's item is made only with a toolbox
            await self._tool_runner(self.inputs.toolbox).propose(item, call)
            self._server_calls.append((item, call))
            return
        await self.session.ledger.propose(call, item, self.id, self.emit, self.timing.trace, server=False)
        item.status = "completed"
        self._client_calls = True
        await self.emit(ArgumentsDone(self.id, item.id, self.out.index(item), call.call_id, call.name,
                                      item.arguments, False))
        await self.out.done(item)

    async def _reject(self, rejected: RejectedCall) -> None:
        """A call the model botched: drop its item (if one was started) and tell the client why."""
        started = self._open_calls.get(rejected.call_id) if rejected.call_id else None
        if started is not None:
            await self._drop(started)
        if rejected.repairable:
            self._botched.append(rejected)
        log.info("response %s: rejected call %r: %s", self.id, rejected.name, rejected.reason)
        await self.emit(ToolCallRejected(self.id, rejected.name, rejected.reason))

    def _repair(self) -> list[ChatItem]:
        """What the model is shown of the round's botched calls to write them again (nothing when none was)."""
        return [item for rejected in self._botched for item in repair_items(rejected)]

    async def _drop(self, item: CallItem | McpCallItem) -> None:
        self._open_calls.pop(item.call_id, None)
        await self.out.drop(item)

    # -- the end ------------------------------------------------------------------------------------------------

    async def _end(self, status: Status, details: dict[str, Any] | None) -> None:
        ended: Literal["completed", "incomplete"] = "completed" if status == "completed" else "incomplete"
        await self._close_message(ended)
        for item in list(self._open_calls.values()):
            await self._drop(item)
        runner = self._runner
        if runner is not None:  # server calls that never ran, or were stopped: recorded, never dangling
            await runner.not_run(self._server_calls, self._not_run or f"the response was {status}")
            await runner.stop(f"the response was {status}")
        ledger = self.session.ledger
        for output in self.output:  # the client's turn to run its tools: the ledger waits for their outputs
            entry = ledger.get(output.call_id) if isinstance(output, CallItem) else None
            if entry is not None and entry.state is CallState.PROPOSED:
                await ledger.sent(entry)
        self.status, self.status_details = status, details
        await self.emit(ResponseDone(self.state()))
        await self.emit(self.timing.report(self.id))

    def state(self) -> ResponseState:
        """The response as it stands (its usage once it ended)."""
        return ResponseState(self.id, self.status, self.status_details, tuple(i.snapshot() for i in self.output),
                             self.history.conversation_id, self.settings.output_modalities,
                             self.settings.max_output_tokens, self.metadata,
                             self.usage.counts() if self.status != "in_progress" else None)


class _MessageSpeech:
    """The speech of one message of a response, out as the response's events."""

    def __init__(self, run: ResponseRun, item: MessageItem) -> None:
        self._run = run
        self._item = item

    async def clause(self, spoken: Spoken) -> None:
        run, item = self._run, self._item
        await run.emit(SpokenClause(run.id, item.id, run.out.index(item), 0, spoken.text, spoken.start_ms,
                                    spoken.end_ms))

    async def audio(self, pcm: PCM, start_ms: int, duration_ms: int) -> None:
        run, item = self._run, self._item
        run.timing.audio()
        await run.emit(OutputAudio(run.id, item.id, run.out.index(item), 0, pcm, run.settings.output_format, start_ms,
                                   duration_ms))


def _open_event() -> asyncio.Event:
    ready = asyncio.Event()
    ready.set()
    return ready


def _failure(code: str, message: str) -> dict[str, Any]:
    return {"type": "failed", "error": {"type": "server_error", "code": code, "message": message}}
