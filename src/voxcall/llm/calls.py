"""Turning a model's tool-call text into events: checking a native call against the request's tools, announcing a
finished call, keeping to one call per reply when a request turns parallel tool calls off, and showing the model
a call it botched so that it can write it again."""

from __future__ import annotations

import json
import re
from typing import Any

from voxcall.llm.base import (
    ChatItem,
    FunctionCallItem,
    FunctionOutputItem,
    LLMEvent,
    ToolCallArgumentsDelta,
    ToolCallStart,
)
from voxcall.tools.calls import ToolCall, new_call_id
from voxcall.tools.codecalls.events import CodeCallEvent, RejectedCall
from voxcall.tools.codecalls.segments import ToolIndex

_ONE_CALL = "parallel tool calls are off for this request: only the first call of a reply runs"
_REPEATED = "the same call, with the same arguments, was made earlier in this reply: it runs once"
_EXTENDED = "the same call, its arguments but for ones added or left out, was made earlier in this reply: it runs once"
_NOT_A_NAME = re.compile(r"[^a-zA-Z0-9_-]")


class NativeCall:
    """One tool call a model writes natively (a cloud API's streamed call, or a script's), checked as the local
    path checks its code calls: by :meth:`ToolIndex.check <voxcall.tools.codecalls.segments.ToolIndex.check>`.

    The call gets voxcall's own id, whatever the provider sent (kept as ``provider_call_id``). A call of an
    undeclared tool is never announced (:meth:`start` and :meth:`delta` yield nothing), so no client ever sees it
    as a ``function_call``; :meth:`finish` rejects it.
    """

    def __init__(self, index: ToolIndex, name: str, provider_call_id: str = "") -> None:
        """``index`` holds the request's tools (``native=True``); ``name`` is the tool name as written."""
        self.call_id = new_call_id()
        self.provider_call_id = provider_call_id
        self.written = name
        self.tool = index.resolve(name)
        self._index = index

    def start(self) -> list[LLMEvent]:
        """The call's start event, or nothing for an undeclared tool."""
        if self.tool is None:
            return []
        return [ToolCallStart(self.call_id, self.tool.name, self.provider_call_id)]

    def delta(self, fragment: str) -> list[LLMEvent]:
        """The event for a fragment of the arguments, or nothing (an empty fragment, an undeclared tool)."""
        return [ToolCallArgumentsDelta(self.call_id, fragment)] if fragment and self.tool is not None else []

    def finish(self, arguments: str) -> ToolCall | RejectedCall:
        """The call with ``arguments`` (the JSON text as written; empty counts as ``{}``, as some servers send
        nothing for a tool without parameters), or its rejection with the reason to give back."""
        if not self.written:
            rejected = RejectedCall("", arguments, "the call has no function name")
        elif self.tool is None:
            rejected = self._index.unknown(self.written, arguments)
        else:
            parsed = _json_object(arguments)
            if isinstance(parsed, dict):
                checked = self._index.check(self.tool, self.written, parsed, arguments)
                if isinstance(checked, ToolCall):
                    return ToolCall(checked.name, checked.arguments, self.call_id, checked.warnings)
                rejected = checked
            else:
                rejected = RejectedCall(self.written, arguments, f"{self.tool.name}: {parsed}")
        announced = self.call_id if self.tool is not None else ""
        return RejectedCall(rejected.name, rejected.source, rejected.reason, announced, repairable=True)


def _json_object(text: str) -> dict[str, Any] | str:
    """``text`` read as a JSON object, or why it is not one."""
    if not text.strip():
        return {}
    try:
        parsed = json.loads(text)
    except json.JSONDecodeError as exc:
        return f"arguments are not valid JSON: {exc.msg}"
    return parsed if isinstance(parsed, dict) else "arguments must be a JSON object"


def repair_items(rejected: RejectedCall) -> list[ChatItem]:
    """What the model is shown of a call it botched, so that it can write it again: the call as written, and as
    its output why it was rejected.

    Providers take back only what they could have sent (vLLM parses a call's arguments; OpenAI checks names), so
    the call carries a name made of the allowed characters and its arguments only when they are a JSON object;
    the output quotes what was written.
    """
    call_id = new_call_id()
    name = _NOT_A_NAME.sub("_", rejected.name)[:64] or "unnamed"
    readable = isinstance(_json_object(rejected.source), dict)
    output = f"error: the call was not run: {rejected.reason}"
    if not readable:
        output += f"\narguments as written: {rejected.source}"
    output += "\nWrite the call again, corrected, or answer without it."
    return [FunctionCallItem(call_id, name, rejected.source if readable and rejected.source.strip() else "{}"),
            FunctionOutputItem(call_id, output)]


def announce_call(call: ToolCall, fragments: int = 1) -> list[LLMEvent]:
    """The events a native backend would stream for ``call``: start, its arguments JSON in ``fragments``
    pieces, then the call itself. Paths that learn a call all at once thus look like the streaming ones."""
    text = call.arguments_json
    size = max(1, -(-len(text) // max(1, fragments)))  # ceiling division: at most ``fragments`` pieces
    deltas: list[LLMEvent] = [ToolCallArgumentsDelta(call.call_id, text[i:i + size])
                              for i in range(0, len(text), size)]
    return [ToolCallStart(call.call_id, call.name), *deltas, call]


def finish_reason(reported: str, made_calls: bool) -> str:
    """The reason to report in :class:`Done`: ``"tool_calls"`` for a reply that made calls, even where the
    provider says ``"stop"``, so downstream can rely on it; otherwise what was reported."""
    return "tool_calls" if made_calls and reported == "stop" else reported


class CallLimit:
    """The calls a reply read from text may make (cloud APIs are sent ``parallel_tool_calls`` itself): one when
    ``parallel`` is False, and never the same call twice, name and arguments alike (a small model that loops writes
    its call again: Qwen2.5-Coder-0.5B wrote ``uber.ride(...)`` twice for one ride), nor again with arguments added
    or left out, the ones both have alike (it wrote a weather call again with ``api_key='South Korea'`` added: a
    second run of the same request, not a request of its own). Each call past the limit
    becomes a :class:`RejectedCall`, so the client sees why it did not run; a call meant twice is asked for in two
    replies."""

    def __init__(self, parallel: bool) -> None:
        self._parallel = parallel
        self._calls: list[ToolCall] = []  # the calls made

    def check(self, call: ToolCall) -> ToolCall | RejectedCall:
        """``call`` itself, or its rejection when it repeats a call made, or when a call was made and only one is
        allowed."""
        if any((earlier.name, earlier.arguments) == (call.name, call.arguments) for earlier in self._calls):
            return RejectedCall(name=call.name, source=call.arguments_json, reason=_REPEATED)
        if any(_extends(call, earlier) or _extends(earlier, call) for earlier in self._calls):
            return RejectedCall(name=call.name, source=call.arguments_json, reason=_EXTENDED)
        if self._calls and not self._parallel:
            return RejectedCall(name=call.name, source=call.arguments_json, reason=_ONE_CALL)
        self._calls.append(call)
        return call

    def apply(self, events: list[CodeCallEvent]) -> list[CodeCallEvent]:
        """``events`` with every call passed through :meth:`check`."""
        return [self.check(ev) if isinstance(ev, ToolCall) else ev for ev in events]


def _extends(call: ToolCall, earlier: ToolCall) -> bool:
    """Whether ``call`` is ``earlier`` with arguments added: the same tool, every one of ``earlier``'s arguments
    (there is one at least) with the same value."""
    return (call.name == earlier.name and bool(earlier.arguments)
            and earlier.arguments.items() <= call.arguments.items())
