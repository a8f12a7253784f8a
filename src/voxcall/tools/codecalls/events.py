"""Events produced by the ``<code>`` call parser, shared with the LLM backends."""

from __future__ import annotations

from dataclasses import dataclass, field

from voxcall.tools.calls import ToolCall


@dataclass(frozen=True, slots=True)
class TextDelta:
    """Text outside any call block: safe to show and to speak."""

    text: str


@dataclass(frozen=True, slots=True)
class RejectedCall:
    """A call the model wrote that cannot be run, with a reason the model could act on.

    ``name`` is the tool name as written (empty when none could be read), ``source`` the call's source text.
    """

    name: str
    source: str
    reason: str


CodeCallEvent = TextDelta | ToolCall | RejectedCall


@dataclass(slots=True)
class CodeCallResult:
    """The whole of a reply, parsed: what may be spoken, the valid calls, and the rejected ones."""

    text: str = ""
    calls: list[ToolCall] = field(default_factory=list)
    rejected: list[RejectedCall] = field(default_factory=list)
