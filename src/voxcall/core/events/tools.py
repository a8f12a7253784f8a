"""Events of tool calls: a call's arguments as the model writes them, a server tool call's progress, the tool
ledger's moves, and calls the tools refused."""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

CallProgress = Literal["in_progress", "completed", "failed"]


class CallState(enum.Enum):
    """Where one tool call stands in the session's tool ledger (:mod:`voxcall.core.tools.tool_ledger`)."""

    PROPOSED = "proposed"
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"
    CANCELLED = "cancelled"
    TIMED_OUT = "timed_out"


@dataclass(slots=True)  # not frozen: one per streamed delta, and a frozen __init__ costs 1 µs more
class ArgumentsDelta:
    """More of a call's arguments (JSON text): a client tool's ``function_call``, or a server tool's ``mcp_call``
    (``server``)."""

    response_id: str
    item_id: str
    output_index: int
    call_id: str
    delta: str
    server: bool


@dataclass(frozen=True, slots=True)
class ArgumentsDone:
    """A call's arguments are complete."""

    response_id: str
    item_id: str
    output_index: int
    call_id: str
    name: str
    arguments: str
    server: bool


@dataclass(frozen=True, slots=True)
class ServerCallProgress:
    """A server tool call (an ``mcp_call`` item) started running, or ended."""

    response_id: str
    item_id: str
    output_index: int
    progress: CallProgress


@dataclass(frozen=True, slots=True)
class ToolCallMoved:
    """The tool ledger moved call ``call_id`` to ``state`` (:mod:`voxcall.core.tools.tool_ledger`). ``server``: a
    server tool's call; the other fields are those the move knows: the arguments when proposed or started, the
    round of a server call, the result, its ``status`` (``ok``, ``error``, ``timed_out``) and whether it came
    from the cache or repeats an earlier call, the reason of a cancel."""

    response_id: str
    call_id: str
    item_id: str
    state: CallState
    tool: str
    server: bool
    params: Mapping[str, Any] | None = None
    round: int | None = None
    result: str | None = None
    status: str | None = None
    cached: bool = False
    repeat_of: str | None = None
    reason: str | None = None


@dataclass(frozen=True, slots=True)
class ToolCallRejected:
    """A call the model wrote that the tools do not accept (no such tool, arguments that break its schema)."""

    response_id: str
    name: str
    reason: str
