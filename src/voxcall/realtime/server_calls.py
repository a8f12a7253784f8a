"""Running the server-side tool calls of one response round, with approvals and the events clients watch.

The calls of a round run in parallel (each validated, limited and timed out by the registry). Each is an
``mcp_call`` output item: ``response.mcp_call.in_progress`` then ``.completed`` or ``.failed``, plus the simpler
``voxcall.tool_call.started`` / ``.completed``. A tool that needs approval first gets an ``mcp_approval_request``
item and waits for the client's ``mcp_approval_response``; a denial is reported to the model as the result. An
identical call (same tool, same arguments) repeated within the response is answered from the first result and
the model is told so, rather than running the tool twice. A result reused from the tool cache
(:mod:`voxcall.tools.cache`) says ``cached: true`` in ``voxcall.tool_call.completed``.
"""

from __future__ import annotations

import asyncio
import json
import logging

from voxcall.realtime.items import ApprovalRequestItem, McpCallItem
from voxcall.realtime.output_items import OutputItems
from voxcall.realtime.protocol import ProtocolError, event, new_id, unicode_text
from voxcall.realtime.timing import ResponseTiming
from voxcall.realtime.toolbox import Toolbox
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
            raise ProtocolError(f"no approval request {request_id!r} is waiting for an answer",
                                code="invalid_approval_request_id", param="item.approval_request_id")

    def answer(self, request_id: str, approve: bool, reason: str | None) -> None:
        """Deliver the client's answer (call :meth:`check` first)."""
        future = self._waiting.get(request_id)
        if future is not None and not future.done():
            future.set_result((approve, reason))


class ServerCalls:
    """The server tool calls of one response, round after round."""

    def __init__(self, out: OutputItems, toolbox: Toolbox, context: ToolContext, approvals: Approvals | None,
                 timing: ResponseTiming) -> None:
        """Calls become items of ``out`` (the response's output); ``context`` is the calling session's; each run
        is timed in ``timing``."""
        self._out = out
        self._timing = timing
        self._toolbox = toolbox
        self._context = context
        self._approvals = approvals
        self._results: dict[str, ToolResult] = {}
        self.running: dict[str, McpCallItem] = {}  # item id -> mcp_call item not finished yet

    async def run_round(self, calls: list[tuple[McpCallItem, ToolCall]], round_no: int) -> bool:
        """Run the round's calls in parallel; every item ends completed or failed (or, if cancelled, stays in
        :attr:`running` for the response to close). Return whether the model has anything to report: False
        when every call went to a tool that only acts and succeeded (see :meth:`Toolbox.only_acts`)."""
        for item, _ in calls:
            self.running[item.id] = item
        results = await asyncio.gather(*(self._one(item, call, round_no) for item, call in calls))
        return not all(self._toolbox.only_acts(call.name) and not result.is_error
                       for (_, call), result in zip(calls, results, strict=True))

    async def _one(self, item: McpCallItem, call: ToolCall, round_no: int) -> ToolResult:
        key = f"{call.name}\n{json.dumps(call.arguments, sort_keys=True)}"
        result = self._results.get(key)
        if result is not None:
            result = ToolResult(f"(the same call was already made in this turn; its result again) {result.output}",
                                result.is_error, result.data)
        else:
            result = await self._approved_run(item, call, round_no)
            self._results[key] = result
        await self._finish(item, call, result, round_no)
        return result

    async def _approved_run(self, item: McpCallItem, call: ToolCall, round_no: int) -> ToolResult:
        tool = self._toolbox.get(call.name)
        if tool is not None and tool.needs_approval and self._approvals is not None:
            approved, reason = await self._ask(item, call)
            if not approved:
                return ToolResult("the user did not approve this call" + (f" ({reason})" if reason else ""),
                                  is_error=True)
        await self._out.event("response.mcp_call.in_progress", item)
        self._timing.tool_started(call.call_id, call.name)
        await self._out.emit(event("voxcall.tool_call.started", response_id=self._out.response_id,
                                        call_id=call.call_id, tool=call.name, params=call.arguments, round=round_no))
        return await self._toolbox.run(call.name, call.arguments, self._context)

    async def _ask(self, item: McpCallItem, call: ToolCall) -> tuple[bool, str | None]:
        assert self._approvals is not None
        request = ApprovalRequestItem(new_id("item"), item.name, item.server_label, call.arguments_json)
        item.approval_request_id = request.id
        future = self._approvals.expect(request.id)
        await self._out.add(request)
        await self._out.done(request)
        return await self._approvals.wait(request.id, future)

    async def _finish(self, item: McpCallItem, call: ToolCall, result: ToolResult, round_no: int) -> None:
        self._timing.tool_ended(call.call_id, failed=result.is_error, cached=result.cached)
        output = unicode_text(result.output)
        item.output = output
        item.error = output if result.is_error else None
        item.status = "completed"
        self.running.pop(item.id, None)
        kind = "response.mcp_call.failed" if result.is_error else "response.mcp_call.completed"
        await self._out.event(kind, item)
        await self._out.emit(event("voxcall.tool_call.completed", response_id=self._out.response_id,
                                        call_id=call.call_id, tool=call.name, result=output,
                                        status="error" if result.is_error else "ok", cached=result.cached,
                                        round=round_no))
        await self._out.done(item)
