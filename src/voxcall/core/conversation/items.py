"""Conversation items, one small class per type, and their GA wire form.

An :data:`Item` is a message, a client tool's call or its output, a server tool's call (``mcp_call``, also for
built-in and module tools, whose ``server_label`` is ``voxcall``), or an approval request / response for one.
Items a client sends are read into these by its edge (:mod:`voxcall.realtime.items` for the Realtime protocol).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, ClassVar, Literal

from voxcall.core.ids import new_id

__all__ = ["ApprovalRequestItem", "ApprovalResponseItem", "CallItem", "CallOutputItem", "Item", "McpCallItem",
           "MessageItem", "Spoken", "SpokenAudio"]

Status = Literal["completed", "incomplete", "in_progress"]
Role = Literal["user", "assistant", "system"]



@dataclass(frozen=True)
class Spoken:
    """A clause of an assistant message spoken as audio, and its span in the item's audio (ms) once all of it is
    sent: a clause cut off mid-way keeps its full span, so a cut inside it keeps its share of the words."""

    text: str
    start_ms: int
    end_ms: int


@dataclass
class SpokenAudio:
    """The audio of an assistant message as the client received it: the clauses, each recorded as its audio starts
    to go out, and ``sent_ms``, the milliseconds of audio actually sent (a clause cut off counts what was sent)."""

    clauses: list[Spoken] = field(default_factory=list)
    sent_ms: int = 0

    def transcript_until(self, audio_end_ms: int) -> str:
        """The transcript the user heard when playback stopped at ``audio_end_ms``; a cut clause keeps its share."""
        parts: list[str] = []
        for clause in self.clauses:
            if clause.start_ms >= audio_end_ms:
                break
            if clause.end_ms <= audio_end_ms:
                parts.append(clause.text)
            else:
                share = (audio_end_ms - clause.start_ms) / max(1, clause.end_ms - clause.start_ms)
                words = clause.text.split()
                parts.append(" ".join(words[:round(len(words) * share)]))
        return " ".join(p for p in parts if p)

    def truncate(self, audio_end_ms: int) -> None:
        """Playback stopped at ``audio_end_ms``: the audio is that long, and clauses after it are gone."""
        self.clauses = [c for c in self.clauses if c.start_ms < audio_end_ms]
        self.sent_ms = audio_end_ms


def _base(item: Item) -> dict[str, Any]:
    return {"id": item.id, "object": "realtime.item", "type": item.type, "status": item.status}


@dataclass
class MessageItem:
    """A message; ``content`` holds its parts in wire form (``{"type": "input_text", "text": ...}``), ``spoken``
    the audio sent for an assistant message, and ``heard_wav`` (base64 WAV) a user turn's audio kept for a model
    that hears it (``session.audio_input: direct``; never sent to clients)."""

    type: ClassVar[Literal["message"]] = "message"
    id: str
    role: Role
    content: list[dict[str, Any]]
    status: Status = "completed"
    spoken: SpokenAudio = field(default_factory=SpokenAudio, repr=False, compare=False)
    heard_wav: str | None = field(default=None, repr=False, compare=False)

    @property
    def audio_ms(self) -> int:
        """Milliseconds of audio sent for this message (every chunk, also of a clause cut off)."""
        return self.spoken.sent_ms

    @property
    def text(self) -> str:
        """The message's text: its text parts and audio transcripts joined."""
        return "".join(str(p.get("text") or p.get("transcript") or "") for p in self.content)

    def to_wire(self) -> dict[str, Any]:
        """The GA message item."""
        return {**_base(self), "role": self.role, "content": [dict(p) for p in self.content]}

    @classmethod
    def of_text(cls, role: Role, text: str) -> MessageItem:
        """A message of one text part, with a fresh id."""
        return cls(new_id("item"), role, [{"type": "output_text" if role == "assistant" else "input_text",
                                            "text": text}])

    def snapshot(self) -> MessageItem:
        """A copy as the message stands now (its parts copied: text streams into them)."""
        return replace(self, content=[dict(p) for p in self.content])


@dataclass
class CallItem:
    """A call of a client tool (``function_call``): the client runs it and sends a :class:`CallOutputItem`.

    ``call_id`` is voxcall's; ``provider_call_id`` the id the model's provider gave the call (never sent to clients).
    """

    type: ClassVar[Literal["function_call"]] = "function_call"
    id: str
    call_id: str
    name: str
    arguments: str = ""
    status: Status = "completed"
    provider_call_id: str = field(default="", repr=False, compare=False)

    @property
    def called_as(self) -> str:
        """The tool's name as the model wrote it."""
        return self.name

    def snapshot(self) -> CallItem:
        """A copy as the item stands now."""
        return replace(self)

    def to_wire(self) -> dict[str, Any]:
        """The GA function call item."""
        return {**_base(self), "call_id": self.call_id, "name": self.name, "arguments": self.arguments}


@dataclass
class CallOutputItem:
    """The output of the client tool call ``call_id``."""

    type: ClassVar[Literal["function_call_output"]] = "function_call_output"
    id: str
    call_id: str
    output: str
    status: Status = "completed"

    def snapshot(self) -> CallOutputItem:
        """A copy as the item stands now."""
        return replace(self)

    def to_wire(self) -> dict[str, Any]:
        """The GA function call output item."""
        return {**_base(self), "call_id": self.call_id, "output": self.output}


@dataclass
class McpCallItem:
    """A call of a server tool, run by voxcall: ``name`` on its server ``server_label``, ``alias`` as the model
    calls it; ``error`` says why it failed; ``provider_call_id`` as on :class:`CallItem`."""

    type: ClassVar[Literal["mcp_call"]] = "mcp_call"
    id: str
    call_id: str
    name: str
    alias: str
    server_label: str
    arguments: str = ""
    output: str = ""
    error: str | None = None
    approval_request_id: str | None = None
    status: Status = "completed"
    provider_call_id: str = field(default="", repr=False, compare=False)

    @property
    def called_as(self) -> str:
        """The tool's name as the model wrote it."""
        return self.alias or self.name

    def snapshot(self) -> McpCallItem:
        """A copy as the item stands now."""
        return replace(self)

    def to_wire(self) -> dict[str, Any]:
        """The GA MCP call item: the output once it completed without error."""
        error = {"type": "tool_execution_error", "message": self.error} if self.error is not None else None
        return {**_base(self), "server_label": self.server_label, "name": self.name, "arguments": self.arguments,
                "output": self.output if self.status == "completed" and self.error is None else None,
                "error": error, "approval_request_id": self.approval_request_id}


@dataclass
class ApprovalRequestItem:
    """voxcall asks the client whether a server tool call may run."""

    type: ClassVar[Literal["mcp_approval_request"]] = "mcp_approval_request"
    id: str
    name: str
    server_label: str
    arguments: str
    status: Status = "completed"

    def snapshot(self) -> ApprovalRequestItem:
        """A copy as the item stands now."""
        return replace(self)

    def to_wire(self) -> dict[str, Any]:
        """The GA approval request item."""
        return {**_base(self), "server_label": self.server_label, "name": self.name, "arguments": self.arguments}


@dataclass
class ApprovalResponseItem:
    """The client's answer to the approval request ``approval_request_id``."""

    type: ClassVar[Literal["mcp_approval_response"]] = "mcp_approval_response"
    id: str
    approval_request_id: str
    approve: bool
    reason: str | None = None
    status: Status = "completed"

    def snapshot(self) -> ApprovalResponseItem:
        """A copy as the item stands now."""
        return replace(self)

    def to_wire(self) -> dict[str, Any]:
        """The GA approval response item."""
        return {**_base(self), "approval_request_id": self.approval_request_id, "approve": self.approve,
                "reason": self.reason}


Item = MessageItem | CallItem | CallOutputItem | McpCallItem | ApprovalRequestItem | ApprovalResponseItem
"""One conversation item."""
