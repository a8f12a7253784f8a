"""Running the server-side tool calls of one response round, with approvals and the events clients watch.

The calls of a round run in parallel, each a task of the session's :class:`~voxcall.core.tools.tool_ledger.ToolLedger`
(validated, limited and timed out by the registry). Each is an ``mcp_call`` output item:
``response.mcp_call.in_progress`` then ``.completed`` or ``.failed``; the ledger adds the ``voxcall.tool_call.*``
event of each move. A tool that needs approval first gets an ``mcp_approval_request`` item and waits for the
client's ``mcp_approval_response``; a denial is reported to the model as the result. The same call (same tool,
same canonical arguments) made again in one user turn, in the same reply or a later one, runs once: the ledger
answers the repeat with the first result and tells the model so. A result reused from the tool cache
(:mod:`voxcall.tools.cache`) says ``cached: true`` in ``voxcall.tool_call.completed``.

A round whose tools have not all finished ``acknowledge_after`` seconds after they started (none of them waiting for
an approval) returns its calls still running: the response says its acknowledgement and ends, and the ledger
carries on with them. Each such *detached* call is finished with ``conversation.item.done`` (its response is over)
when it lands, and the session speaks the result.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from dataclasses import dataclass

from voxcall.core.conversation.items import ApprovalRequestItem, CallItem, McpCallItem
from voxcall.core.conversation.output_items import OutputItems
from voxcall.core.errors import SessionError
from voxcall.core.events import CallState, ItemDone, ServerCallProgress
from voxcall.core.events.tools import CallProgress
from voxcall.core.ids import new_id, unicode_text
from voxcall.core.responses.timing import ResponseTiming
from voxcall.core.tools.tool_ledger import LedgerCall, ToolLedger
from voxcall.core.tools.toolbox import BUILTIN_LABEL, Toolbox
from voxcall.tools import ToolCall, ToolContext, ToolResult

log = logging.getLogger(__name__)

APPROVAL_TIMEOUT = 300.0


class Approvals:
    """A session's approval requests awaiting the client's answer."""

    def __init__(self, timeout: float = APPROVAL_TIMEOUT) -> None:
        self.timeout = timeout
        self._waiting: dict[str, asyncio.Future[tuple[bool, str | None]]] = {}

    def expect(self, request_id: str) -> asyncio.Future[tuple[bool, str | None]]:
        """Start waiting for ``request_id`` (before the client can see the request, so no answer is missed)."""
        future = self._waiting[request_id] = asyncio.get_running_loop().create_future()
        return future

    async def wait(self, request_id: str, future: asyncio.Future[tuple[bool, str | None]]) -> tuple[bool, str | None]:
        """``(approved, reason)``; no answer within the timeout counts as a denial."""
        try:
            return await asyncio.wait_for(future, self.timeout)
        except TimeoutError:
            return False, f"no answer within {self.timeout:g} s"
        finally:
            self._waiting.pop(request_id, None)

    def check(self, request_id: str | None) -> None:
        """Raise a protocol error unless a response is waiting for ``request_id``."""
        if request_id not in self._waiting:
            raise SessionError(f"no approval request {request_id!r} is waiting for an answer",
                                code="invalid_approval_request_id", param="item.approval_request_id")

    def answer(self, request_id: str, approve: bool, reason: str | None) -> None:
        """Deliver the client's answer (call :meth:`check` first)."""
        future = self._waiting.get(request_id)
        if future is not None and not future.done():
            future.set_result((approve, reason))


@dataclass
class Round:
    """How a round went: ``to_report`` (the model has something to say about its results), and the calls still
    running after the acknowledgement delay (the response acknowledges them and ends)."""

    to_report: bool
    running: list[LedgerCall]


class ServerCalls:
    """The server tool calls of one response, round after round."""

    def __init__(self, out: OutputItems, toolbox: Toolbox, context: ToolContext, approvals: Approvals | None,
                 timing: ResponseTiming, ledger: ToolLedger, acknowledge_after: float | None) -> None:
        """Calls become items of ``out`` (the response's output) and entries of ``ledger``; ``context`` is the
        calling session's; each run is timed in ``timing``; ``acknowledge_after`` (seconds, None: never) is how
        long a round may run before the response acknowledges it and ends."""
        self._out = out
        self._timing = timing
        self._toolbox = toolbox
        self._context = context
        self._approvals = approvals
        self._ledger = ledger
        self._acknowledge_after = acknowledge_after
        self._round: list[tuple[McpCallItem, ToolCall]] = []  # the calls of the round under way

    async def propose(self, item: McpCallItem, call: ToolCall) -> LedgerCall:
        """Record a call the model wrote in the ledger (once: proposing again returns the same entry)."""
        registry = self._toolbox.registry
        effects = registry.effects(call.name)
        return await self._ledger.propose(call, item, self._out.response_id, self._out.emit, self._timing.trace,
                                          server=True, repeats=effects is not None and effects.repeats,
                                          mcp_server=None if item.server_label == BUILTIN_LABEL else item.server_label,
                                          deadline_s=registry.timeout_of(call.name))

    async def run_round(self, calls: list[tuple[McpCallItem, ToolCall]], round_no: int) -> Round:
        """Run the round's calls in parallel until all have finished, or the acknowledgement delay passed. The
        model has nothing to report when every call went to a tool that only acts and succeeded (see
        :meth:`Toolbox.only_acts`)."""
        self._round = list(calls)  # before any await: a cancel from here on finds every call of the round
        entries = [await self.propose(item, call) for item, call in calls]
        for entry in entries:
            effects = self._toolbox.registry.effects(entry.call.name)
            await self._ledger.run(entry, functools.partial(self._approved_run, entry, round_no),
                                   stoppable=effects is None or effects.stoppable, round_no=round_no,
                                   on_result=self._record)
        approving = any(self._needs_approval(entry.call.name) for entry in entries)
        running = await self._ledger.wait(entries, None if approving else self._acknowledge_after)
        self._round = []
        if running:
            self._ledger.detach(running)
            return Round(True, running)
        results = [entry.result for entry in entries]
        return Round(not all(self._toolbox.only_acts(entry.call.name) and result is not None and not result.is_error
                             for entry, result in zip(entries, results, strict=True)), [])

    async def stop(self, why: str) -> None:
        """The response ends (cancelled, failed) with calls of it unfinished: the ledger stops those it may; the
        others run on and land in their items; each call stopped or never run is recorded, never dangling."""
        entries = [await self.propose(item, call) for item, call in self._round]
        self._round = []
        entries = [entry for entry in entries if entry.state in (CallState.PROPOSED, CallState.RUNNING)]
        await self._ledger.interrupt(entries, why)
        for entry in entries:
            if entry.state is CallState.CANCELLED:
                await self._close_item(entry.item, entry.reason or why)

    async def not_run(self, calls: list[tuple[McpCallItem, ToolCall]], why: str) -> None:
        """Calls the model wrote that will never run (the response ended first, or the round limit)."""
        entries = [await self.propose(item, call) for item, call in calls]
        await self._ledger.interrupt(entries, why)
        for entry in entries:
            await self._close_item(entry.item, entry.reason or why)

    async def _close_item(self, item: CallItem | McpCallItem, reason: str) -> None:
        assert isinstance(item, McpCallItem)  # the ledger's server calls are mcp_call items
        item.status, item.error = "incomplete", reason
        await self._progress(item, "failed")
        await self._out.done(item)

    async def _progress(self, item: McpCallItem, progress: CallProgress) -> None:
        await self._out.emit(ServerCallProgress(self._out.response_id, item.id, self._out.index(item), progress))

    def _needs_approval(self, name: str) -> bool:
        tool = self._toolbox.get(name)
        return tool is not None and tool.needs_approval and self._approvals is not None

    async def _approved_run(self, entry: LedgerCall, round_no: int) -> ToolResult:
        item, call = entry.item, entry.call
        assert isinstance(item, McpCallItem)
        if self._needs_approval(call.name):
            approved, reason = await self._ask(item, call)
            if not approved:
                return ToolResult("the user did not approve this call" + (f" ({reason})" if reason else ""),
                                  is_error=True)
        await self._progress(item, "in_progress")
        self._timing.tool_started(call.call_id, call.name)
        return await self._toolbox.run(call.name, call.arguments, self._context)

    async def _ask(self, item: McpCallItem, call: ToolCall) -> tuple[bool, str | None]:
        assert self._approvals is not None
        request = ApprovalRequestItem(new_id("item"), item.name, item.server_label, call.arguments_json)
        item.approval_request_id = request.id
        future = self._approvals.expect(request.id)
        await self._out.add(request)
        await self._out.done(request)
        return await self._approvals.wait(request.id, future)

    async def _record(self, entry: LedgerCall) -> None:
        """A call's result landed: into its item, announced in its response, or (detached) in the conversation."""
        item, call, result = entry.item, entry.call, entry.result
        assert isinstance(item, McpCallItem) and result is not None
        self._timing.tool_ended(call.call_id, failed=result.is_error, cached=result.cached)
        output = unicode_text(result.output)
        item.output = output
        item.error = output if result.is_error else None
        item.status = "completed"
        if entry.detached:
            await self._out.emit(ItemDone(item.snapshot()))
            return
        await self._progress(item, "failed" if result.is_error else "completed")
        await self._out.done(item)
