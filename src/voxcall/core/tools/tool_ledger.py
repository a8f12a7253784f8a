"""The tool ledger of one session: every tool call from the moment the model proposes it to its last state.

A :class:`ToolLedger` holds one :class:`LedgerCall` per call, server tool or client tool, in one :class:`CallState`:

- ``PROPOSED``: the model wrote the call (its arguments are complete) and nothing has run;
- ``RUNNING``: a server tool runs (a task the ledger owns, not the response's), or a client tool's call was sent
  and its ``function_call_output`` is awaited;
- ``DONE`` / ``FAILED``: it produced a result (an error result is ``FAILED``);
- ``TIMED_OUT``: a server tool passed its deadline (the result says so), or a client sent no output within
  ``tools.client_tool_wait`` (the ledger adds the output that says so);
- ``CANCELLED``: it never ran (its response was cancelled first) or was cut off (a barge-in on a tool that may be
  stopped); ``reason`` says which.

Invariants:

- states move forward only: ``PROPOSED`` → ``RUNNING`` → one of the four ends, or ``PROPOSED`` → ``CANCELLED``; an
  ended call never changes again, and every move is one ``voxcall.tool_call.*`` event and one count in
  ``/metrics`` (``voxcall_tool_call_states_total``);
- a call that produced a result keeps it in the history, whatever happens to its response afterwards: a barge-in
  cancels only calls that have not started and tools that may be stopped (``ToolEffects.stoppable``); others
  finish, and their result lands in their item;
- a server tool's task belongs to the ledger, so its response may end while it runs (the acknowledgement: see
  :mod:`voxcall.core.tools.server_calls`); the session is told when such a *detached* call lands, and speaks it;
- the same tool with the same canonical arguments (JSON, keys sorted) in one user turn runs once: a repeat is
  ``repeat_of`` the first, waits for its result and gets it, marked as a repeat (not for a tool that ``repeats``);
- the session's :meth:`close` cancels every task and timer the ledger holds: nothing outlives the session;
- each call is an ``execute_tool`` span of its response's turn (:mod:`voxcall.telemetry.tracing`), opened when it is
  proposed, with one event per move at the move's own time, and ended with its last state (or when its hidden
  response is forgotten, or the session closes).

Transitions are decided with no ``await`` between reading a state and writing the next one.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from voxcall.core.conversation.conversation import Conversation
from voxcall.core.conversation.items import CallItem, CallOutputItem, McpCallItem, MessageItem
from voxcall.core.events import Emit, ItemAdded, ItemDone, ToolCallMoved
from voxcall.core.events.tools import CallState
from voxcall.core.ids import new_id
from voxcall.core.observer import Observer
from voxcall.telemetry.tracing import ToolOutcome, ToolSide, ToolTrace, TurnTrace
from voxcall.tools import ToolCall, ToolResult

log = logging.getLogger(__name__)

REPEAT_NOTE = "(the same call was already made in this turn; its result again) "
"""What a repeated call's output starts with, before the first call's output."""


_NEXT: dict[CallState, frozenset[CallState]] = {  # the moves out of each state; the four ends have none
    CallState.PROPOSED: frozenset({CallState.RUNNING, CallState.CANCELLED}),
    CallState.RUNNING: frozenset({CallState.DONE, CallState.FAILED, CallState.CANCELLED, CallState.TIMED_OUT}),
}

Landed = Callable[["LedgerCall"], None]
"""Told when a detached server call (its response already ended) has its result, or a client tool's call timed out
and the ledger added its output: either way there is something new to answer."""


@dataclass(eq=False)
class LedgerCall:
    """One call and its history. ``emit`` sends its events (its response's way out: a hidden one's gate)."""

    call: ToolCall
    item: CallItem | McpCallItem
    response_id: str
    turn: str | None  # the id of the user message the call answers (None: no user message yet)
    server: bool
    emit: Emit
    state: CallState = CallState.PROPOSED
    reason: str | None = None
    repeat_of: str | None = None  # the call_id of the first identical call of the turn
    result: ToolResult | None = None
    round: int = 0
    stoppable: bool = True
    detached: bool = False  # its response ended while it ran: the session speaks its result when it lands
    speak: bool = True  # a detached result is spoken when it lands (not after a barge-in: kept for the next answer)
    transitions: list[tuple[CallState, float]] = field(default_factory=list)
    trace: ToolTrace = field(default_factory=ToolTrace)
    landed: asyncio.Future[ToolResult] | None = None
    task: asyncio.Task[None] | None = None

    @property
    def key(self) -> str:
        """Tool and canonical arguments: what makes two calls the same call."""
        return f"{self.call.name}\n{json.dumps(self.call.arguments, sort_keys=True, ensure_ascii=False)}"

    @property
    def item_output(self) -> str:
        """The text the call's item holds as its output (or its error)."""
        if isinstance(self.item, McpCallItem):
            return self.item.error if self.item.error is not None else self.item.output
        return self.result.output if self.result is not None else ""

    def to_wire(self) -> dict[str, Any]:
        """What ``conversation.item.retrieve`` shows of the call (``voxcall_tool_call``)."""
        start = self.transitions[0][1] if self.transitions else 0.0
        return {"state": self.state.value, "reason": self.reason, "repeat_of": self.repeat_of,
                "transitions": [{"state": s.value, "at_ms": round((at - start) * 1000)} for s, at in self.transitions]}


class ToolLedger:
    """Every tool call of one session, its state, its task or timer, and the events of each move."""

    def __init__(self, conversation: Conversation, observer: Observer, *, client_wait: float,
                 on_landed: Landed) -> None:
        """``client_wait``: seconds a client tool's output is awaited; ``on_landed`` lets the session answer a
        detached result, or a client tool that never answered."""
        self._conversation = conversation
        self._observer = observer
        self._client_wait = client_wait
        self._on_landed = on_landed
        self.calls: dict[str, LedgerCall] = {}
        self._timers: dict[str, asyncio.Task[None]] = {}

    def get(self, call_id: str) -> LedgerCall | None:
        """The call ``call_id``, if the ledger has it."""
        return self.calls.get(call_id)

    # -- moves ----------------------------------------------------------------------------------------------

    async def propose(self, call: ToolCall, item: CallItem | McpCallItem, response_id: str, emit: Emit,
                      turn: TurnTrace, *, server: bool, repeats: bool = False, mcp_server: str | None = None,
                      deadline_s: float | None = None) -> LedgerCall:
        """Record a call the model wrote (``PROPOSED``) and open its span in ``turn`` (``mcp_server``: the MCP
        server of a server tool that has one; ``deadline_s``: a server tool's timeout, a client tool's is
        ``client_wait``); a server call identical to an earlier one of the same user turn is its repeat, unless the
        tool ``repeats``. Proposing a call twice returns the first record."""
        known = self.calls.get(call.call_id)
        if known is not None:
            return known
        entry = LedgerCall(call, item, response_id, self._turn(), server, emit)
        if server and not repeats:
            first = next((c for c in self.calls.values() if c.server and c.turn == entry.turn and c.key == entry.key
                          and c.repeat_of is None and c.state is not CallState.CANCELLED), None)
            entry.repeat_of = first.call.call_id if first is not None else None
        self.calls[call.call_id] = entry
        entry.trace = turn.tool_call(call_id=call.call_id, name=call.name,
                                     side=ToolSide.SERVER if server else ToolSide.CLIENT,
                                     arguments=call.arguments_json, mcp_server=mcp_server,
                                     deadline_s=deadline_s if server else self._client_wait)
        await self._move(entry, CallState.PROPOSED, params=call.arguments)
        return entry

    async def run(self, entry: LedgerCall, work: Callable[[], Awaitable[ToolResult]], *, stoppable: bool,
                  round_no: int, on_result: Callable[[LedgerCall], Awaitable[None]]) -> None:
        """``PROPOSED`` → ``RUNNING``: run a server call in a task of the ledger's. ``work`` produces the result
        (a repeat waits for its first call's instead); ``on_result`` records it in the call's item before the
        call's end is announced. Returns at once; :meth:`wait` waits."""
        loop = asyncio.get_running_loop()
        entry.landed, entry.stoppable, entry.round = loop.create_future(), stoppable, round_no
        first = self.calls.get(entry.repeat_of) if entry.repeat_of else None
        await self._move(entry, CallState.RUNNING, params=entry.call.arguments, round=round_no)

        async def body() -> None:
            original = await self._first_result(first)
            if original is not None:
                result = ToolResult(REPEAT_NOTE + original.output, original.is_error, original.data,
                                    timed_out=original.timed_out)
            else:
                try:
                    result = await work()
                except Exception:  # a bug must not leave the call running for ever: it fails, without details
                    log.exception("tool call %s (%s) crashed", entry.call.call_id, entry.call.name)
                    result = ToolResult(f"tool {entry.call.name!r} failed (server error)", is_error=True)
            await self._land(entry, result, on_result)

        entry.task = asyncio.create_task(body(), name=f"voxcall-tool-{entry.call.call_id}")

    @staticmethod
    async def _first_result(first: LedgerCall | None) -> ToolResult | None:
        """The result of the call a repeat repeats, once it has one; None when there is none to wait for (not a
        repeat, or the first call never ran or was cut off: then the repeat runs itself)."""
        if first is None or first.landed is None:
            return None
        try:
            return await asyncio.shield(first.landed)
        except asyncio.CancelledError:
            if first.landed.cancelled():  # the first call was cancelled, not this one
                return None
            raise

    async def _land(self, entry: LedgerCall, result: ToolResult,
                    on_result: Callable[[LedgerCall], Awaitable[None]]) -> None:
        if entry.state is not CallState.RUNNING:
            return
        entry.result = result
        state = (CallState.TIMED_OUT if result.timed_out else CallState.FAILED if result.is_error
                 else CallState.DONE)
        await on_result(entry)
        status = "timed_out" if result.timed_out else "error" if result.is_error else "ok"
        await self._move(entry, state, result=entry.item_output, status=status,
                         cached=result.cached, round=entry.round, repeat_of=entry.repeat_of)
        assert entry.landed is not None
        if not entry.landed.done():
            entry.landed.set_result(result)
        if entry.detached and entry.speak:
            self._on_landed(entry)

    async def wait(self, entries: list[LedgerCall], timeout: float | None) -> list[LedgerCall]:
        """Wait until every call of ``entries`` has its result, or ``timeout`` seconds (None: no limit); the calls
        still running. Cancelling the wait leaves the calls running."""
        tasks = {entry.task for entry in entries if entry.task is not None and not entry.task.done()}
        if tasks:
            await asyncio.wait(tasks, timeout=timeout)
        return [entry for entry in entries if entry.state is CallState.RUNNING]

    def detach(self, entries: list[LedgerCall]) -> None:
        """Their response ends while they run: each is spoken when it lands."""
        for entry in entries:
            entry.detached = True

    async def interrupt(self, entries: list[LedgerCall], why: str) -> list[LedgerCall]:
        """The response of ``entries`` ended before they did (``why``: "the response was cancelled"): a call not
        started is ``CANCELLED`` ("not run: …"); a running one is cut off ("not completed: …") when it may be
        stopped, else it runs on, detached, its result kept for the next answer (not spoken). Returns the calls
        that run on."""
        running_on: list[LedgerCall] = []
        for entry in entries:
            if entry.state is CallState.PROPOSED:
                await self._move(entry, CallState.CANCELLED, reason=f"not run: {why}")
            elif entry.state is CallState.RUNNING and entry.stoppable:
                task = entry.task
                await self._move(entry, CallState.CANCELLED, reason=f"not completed: {why}")
                if entry.landed is not None:
                    entry.landed.cancel()  # a repeat waiting for this result runs itself
                if task is not None and not task.done():
                    task.cancel()
                    await asyncio.wait([task])
            elif entry.state is CallState.RUNNING:
                entry.detached, entry.speak = True, False
                running_on.append(entry)
        return running_on

    async def sent(self, entry: LedgerCall) -> None:
        """A client tool's call went out with its response: ``RUNNING`` until its output arrives, or
        ``client_wait`` seconds."""
        await self._move(entry, CallState.RUNNING, params=entry.call.arguments)
        self._timers[entry.call.call_id] = asyncio.create_task(self._await_client(entry),
                                                               name=f"voxcall-client-wait-{entry.call.call_id}")

    async def answered(self, call_id: str, output: str) -> None:
        """The client sent the output of ``call_id``."""
        entry = self.calls.get(call_id)
        timer = self._timers.pop(call_id, None)
        if timer is not None:
            timer.cancel()
        if entry is not None and entry.state is CallState.RUNNING:
            entry.result = ToolResult(output)
            await self._move(entry, CallState.DONE, result=output, status="ok")

    async def _await_client(self, entry: LedgerCall) -> None:
        await asyncio.sleep(self._client_wait)
        self._timers.pop(entry.call.call_id, None)
        if self._conversation.call(entry.call.call_id) is None:  # a discarded hidden response's, or deleted
            self.calls.pop(entry.call.call_id, None)
            return
        if entry.state is not CallState.RUNNING or self._conversation.has_output(entry.call.call_id):
            return
        output = (f"error: the client's tool {entry.call.name!r} did not answer within {self._client_wait:g} s; "
                  "tell the user it could not be done now")
        item = CallOutputItem(new_id("item"), entry.call.call_id, output)
        before = self._conversation.add(item)
        entry.result = ToolResult(output, is_error=True, timed_out=True)
        await entry.emit(ItemAdded(item.snapshot(), before))
        await entry.emit(ItemDone(item.snapshot(), before))
        await self._move(entry, CallState.TIMED_OUT, result=output, status="timed_out")
        self._on_landed(entry)

    def forget(self, response_id: str) -> None:
        """A hidden response was discarded: its calls never happened (none of them was sent or ran)."""
        for call_id in [c for c, entry in self.calls.items() if entry.response_id == response_id]:
            entry = self.calls.pop(call_id)
            entry.trace.ended(ToolOutcome.CANCELLED, reason="its hidden response was discarded")
            timer = self._timers.pop(call_id, None)
            for task in (entry.task, timer):
                if task is not None:
                    task.cancel()

    async def close(self) -> None:
        """The session ends: cancel every task and timer (a call still open ends cancelled in its trace)."""
        for entry in self.calls.values():
            if entry.state in _NEXT:
                entry.trace.ended(ToolOutcome.CANCELLED, reason="the session closed")
        tasks = [t for t in (*(e.task for e in self.calls.values()), *self._timers.values())
                 if t is not None and not t.done()]
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.wait(tasks)
        self._timers.clear()

    # -- helpers --------------------------------------------------------------------------------------------

    async def _move(self, entry: LedgerCall, state: CallState, **fields: Any) -> None:
        """Record the move to ``state`` and announce it (its span was opened proposed: :meth:`propose`)."""
        if entry.transitions:
            assert state in _NEXT.get(entry.state, frozenset()), f"{entry.state} -> {state}"
        entry.state = state
        now = time.monotonic()
        entry.transitions.append((state, now))
        if "reason" in fields:
            entry.reason = fields["reason"]
        if state not in _NEXT:
            entry.trace.ended(ToolOutcome(state.value), output=fields.get("result"), reason=entry.reason, at=now)
        elif state is not CallState.PROPOSED:
            entry.trace.moved(state.value, at=now)
        self._observer.tool_call_state(state.value)
        await entry.emit(ToolCallMoved(entry.response_id, entry.call.call_id, entry.item.id, state,
                                       entry.call.name, entry.server, **fields))

    def _turn(self) -> str | None:
        """The id of the latest user message: the turn a call belongs to."""
        return next((item.id for item in reversed(self._conversation.items)
                     if isinstance(item, MessageItem) and item.role == "user"), None)

