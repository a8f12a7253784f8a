"""Events produced by the ``<code>`` call parser, shared with the LLM backends."""

from __future__ import annotations

from dataclasses import dataclass, field

from voxcall.tools.calls import ToolCall


@dataclass(frozen=True, slots=True)
class TextDelta:
    """Text outside any call block: safe to show and to speak. ``filler``: words a backend says while the model is
    not ready ("Let me see."), not the model's: a response's timing does not count them as its first token."""

    text: str
    filler: bool = False


@dataclass(frozen=True, slots=True)
class RejectedCall:
    """A call the model wrote that cannot be run, with a reason the model could act on.

    ``name`` is the tool name as written (empty when none could be read), ``source`` the call's source text (on a
    native path, its arguments as written). ``call_id`` names the call when it was announced (its started item is
    taken back), else it is empty. ``repairable``: a native call the tools do not accept (an undeclared name,
    arguments that are not a JSON object or break the schema), which the model may be asked to write again.
    """

    name: str
    source: str
    reason: str
    call_id: str = ""
    repairable: bool = False


CodeCallEvent = TextDelta | ToolCall | RejectedCall


@dataclass(slots=True)
class CodeCallResult:
    """The whole of a reply, parsed: what may be spoken, the valid calls, and the rejected ones."""

    text: str = ""
    calls: list[ToolCall] = field(default_factory=list)
    rejected: list[RejectedCall] = field(default_factory=list)

    @classmethod
    def of(cls, events: list[CodeCallEvent]) -> CodeCallResult:
        """The result a scanner's events for a whole reply make."""
        result = cls()
        for event in events:
            if isinstance(event, TextDelta):
                result.text += event.text
            elif isinstance(event, RejectedCall):
                result.rejected.append(event)
            else:
                result.calls.append(event)
        return result
