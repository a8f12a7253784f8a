"""Turning a model's tool-call text into events: parsing the arguments, announcing a finished call, and keeping
to one call per reply when a request turns parallel tool calls off."""

from __future__ import annotations

import json

from voxcall.llm.base import LLMEvent, ToolCallArgumentsDelta, ToolCallStart
from voxcall.tools.calls import ToolCall
from voxcall.tools.codecalls.events import CodeCallEvent, RejectedCall

_ONE_CALL = "parallel tool calls are off for this request: only the first call of a reply runs"


def parse_call(call_id: str, name: str, arguments: str) -> ToolCall | RejectedCall:
    """Read ``arguments`` (JSON text) into a :class:`ToolCall`, or reject the call with a reason to give back.

    Empty arguments count as ``{}``: some servers send nothing at all for a tool without parameters.
    """
    if not arguments.strip():
        return ToolCall(name=name, arguments={}, call_id=call_id)
    try:
        parsed = json.loads(arguments)
    except json.JSONDecodeError as exc:
        return RejectedCall(name=name, source=arguments, reason=f"arguments are not valid JSON: {exc.msg}")
    if not isinstance(parsed, dict):
        return RejectedCall(name=name, source=arguments, reason="arguments must be a JSON object")
    return ToolCall(name=name, arguments=parsed, call_id=call_id)


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
    """One call per reply when ``parallel`` is False, for the paths that read calls from text (cloud APIs are sent
    the flag itself): each later call becomes a :class:`RejectedCall`, so the client sees why it did not run."""

    def __init__(self, parallel: bool) -> None:
        self._parallel = parallel
        self._made = False

    def check(self, call: ToolCall) -> ToolCall | RejectedCall:
        """``call`` itself, or its rejection when a call was already made and only one is allowed."""
        if self._made and not self._parallel:
            return RejectedCall(name=call.name, source=call.arguments_json, reason=_ONE_CALL)
        self._made = True
        return call

    def apply(self, events: list[CodeCallEvent]) -> list[CodeCallEvent]:
        """``events`` with every call passed through :meth:`check`."""
        return [self.check(ev) if isinstance(ev, ToolCall) else ev for ev in events]
