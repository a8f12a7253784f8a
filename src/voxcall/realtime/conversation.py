"""A session's conversation: ordered items (messages, function calls, function call outputs) and their wire form.

Items are read from client events (checked here, with protocol errors that name the bad parameter), written by
responses, and turned into the neutral :mod:`voxcall.llm` items a backend takes.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

from voxcall.llm import ChatItem, FunctionCallItem, FunctionOutputItem, Message
from voxcall.realtime.protocol import ProtocolError, new_id
from voxcall.tools.calls import new_call_id

ItemType = Literal["message", "function_call", "function_call_output", "mcp_call", "mcp_approval_request",
                   "mcp_approval_response"]
_TEXT_PARTS = {"user": ("input_text",), "system": ("input_text",), "assistant": ("output_text", "text")}
_MAX_ID = 64


@dataclass(frozen=True)
class Spoken:
    """A clause of an assistant message that was sent as audio, and its span in the item's audio (ms)."""

    text: str
    start_ms: int
    end_ms: int


def transcript_until(spoken: list[Spoken], audio_end_ms: int) -> str:
    """The transcript the user heard when playback stopped at ``audio_end_ms``; a cut clause keeps its share."""
    parts: list[str] = []
    for clause in spoken:
        if clause.start_ms >= audio_end_ms:
            break
        if clause.end_ms <= audio_end_ms:
            parts.append(clause.text)
        else:
            share = (audio_end_ms - clause.start_ms) / max(1, clause.end_ms - clause.start_ms)
            words = clause.text.split()
            parts.append(" ".join(words[:round(len(words) * share)]))
    return " ".join(p for p in parts if p)


@dataclass
class Item:
    """One conversation item. ``content`` holds message parts in wire form (``{"type": "input_text", ...}``)."""

    id: str
    type: ItemType
    role: Literal["user", "assistant", "system"] | None = None
    content: list[dict[str, Any]] = field(default_factory=list)
    status: Literal["completed", "incomplete", "in_progress"] = "completed"
    call_id: str = ""
    name: str = ""
    arguments: str = ""
    output: str = ""
    server_label: str = ""  # mcp_call / mcp_approval_request: the tool's server ("voxcall" for built-ins)
    error: str | None = None  # mcp_call: why it failed
    approval_request_id: str | None = None  # mcp_call / mcp_approval_response
    approve: bool = False  # mcp_approval_response
    reason: str | None = None  # mcp_approval_response
    alias: str = ""  # mcp_call: the tool's name as the model calls it (``name`` is its name on its server)
    spoken: list[Spoken] = field(default_factory=list, repr=False, compare=False)  # audio of an assistant message

    @property
    def audio_ms(self) -> int:
        """Milliseconds of audio sent for this item."""
        return self.spoken[-1].end_ms if self.spoken else 0

    @property
    def text(self) -> str:
        """A message's text: its text parts and audio transcripts joined."""
        return "".join(str(p.get("text") or p.get("transcript") or "") for p in self.content)

    def to_wire(self) -> dict[str, Any]:
        """The item as a GA ``ConversationItem``."""
        base: dict[str, Any] = {"id": self.id, "object": "realtime.item", "type": self.type, "status": self.status}
        if self.type == "message":
            return {**base, "role": self.role, "content": [dict(p) for p in self.content]}
        if self.type == "function_call":
            return {**base, "call_id": self.call_id, "name": self.name, "arguments": self.arguments}
        if self.type == "mcp_call":
            error = {"type": "tool_execution_error", "message": self.error} if self.error is not None else None
            return {**base, "server_label": self.server_label, "name": self.name, "arguments": self.arguments,
                    "output": self.output if self.status == "completed" and self.error is None else None,
                    "error": error, "approval_request_id": self.approval_request_id}
        if self.type == "mcp_approval_request":
            return {**base, "server_label": self.server_label, "name": self.name, "arguments": self.arguments}
        if self.type == "mcp_approval_response":
            return {**base, "approval_request_id": self.approval_request_id, "approve": self.approve,
                    "reason": self.reason}
        return {**base, "call_id": self.call_id, "output": self.output}

    @classmethod
    def from_client(cls, data: Any, *, where: str = "item.") -> Item:
        """Read an item sent by a client (``conversation.item.create`` or ``response.create`` input)."""
        if not isinstance(data, dict):
            raise ProtocolError(f"'{where.rstrip('.')}' must be an object", code="invalid_type",
                                param=where.rstrip("."))
        item_id = data.get("id") or new_id("item")
        if not isinstance(item_id, str) or len(item_id) > _MAX_ID:
            raise ProtocolError(f"'{where}id' must be a string of at most {_MAX_ID} characters",
                                code="invalid_value", param=f"{where}id")
        kind = data.get("type", "message")
        if kind == "message":
            return _message(item_id, data, where)
        if kind == "function_call":
            name = _string(data, "name", where, required=True)
            arguments = _string(data, "arguments", where) or "{}"
            call_id = _string(data, "call_id", where) or new_call_id()
            return cls(item_id, "function_call", call_id=call_id, name=name, arguments=arguments)
        if kind == "function_call_output":
            call_id = _string(data, "call_id", where, required=True)
            output = data.get("output")
            if not isinstance(output, str):  # be kind to clients that send JSON values
                output = _string(data, "output", where, required=True) if output is None else json.dumps(output)
            return cls(item_id, "function_call_output", call_id=call_id, output=output)
        if kind == "mcp_approval_response":
            request_id = _string(data, "approval_request_id", where, required=True)
            approve = data.get("approve")
            if not isinstance(approve, bool):
                raise ProtocolError(f"'{where}approve' must be a boolean", code="invalid_type",
                                    param=f"{where}approve")
            reason = data.get("reason")
            if reason is not None and not isinstance(reason, str):
                raise ProtocolError(f"'{where}reason' must be a string", code="invalid_type", param=f"{where}reason")
            return cls(item_id, "mcp_approval_response", approval_request_id=request_id, approve=approve,
                       reason=reason)
        raise ProtocolError(f"unsupported item type {kind!r}; expected message, function_call, function_call_output "
                            "or mcp_approval_response", code="invalid_value", param=f"{where}type")


def _string(data: dict[str, Any], key: str, where: str, *, required: bool = False) -> str:
    value = data.get(key)
    if value is None and not required:
        return ""
    if not isinstance(value, str) or (required and not value):
        raise ProtocolError(f"'{where}{key}' must be a non-empty string", code="invalid_value",
                            param=f"{where}{key}")
    return value


def _message(item_id: str, data: dict[str, Any], where: str) -> Item:
    role = data.get("role")
    if role not in _TEXT_PARTS:
        raise ProtocolError(f"'{where}role' must be user, assistant or system", code="invalid_value",
                            param=f"{where}role")
    content = data.get("content")
    if not isinstance(content, list):
        raise ProtocolError(f"'{where}content' must be an array of content parts", code="invalid_type",
                            param=f"{where}content")
    parts: list[dict[str, Any]] = []
    for n, part in enumerate(content):
        param = f"{where}content[{n}]"
        if not isinstance(part, dict) or part.get("type") not in _TEXT_PARTS[role]:
            allowed = ", ".join(_TEXT_PARTS[role])
            raise ProtocolError(f"'{param}.type' must be one of: {allowed} (audio and images are not supported "
                                "in items yet)", code="invalid_value", param=f"{param}.type")
        text = part.get("text")
        if not isinstance(text, str):
            raise ProtocolError(f"'{param}.text' must be a string", code="invalid_type", param=f"{param}.text")
        parts.append({"type": "output_text" if role == "assistant" else "input_text", "text": text})
    return Item(item_id, "message", role=role, content=parts)


class Conversation:
    """The ordered items of a session's default conversation."""

    def __init__(self) -> None:
        self.id = new_id("conv")
        self._items: list[Item] = []

    def __len__(self) -> int:
        return len(self._items)

    @property
    def conversation_id(self) -> str:
        """The conversation's id (so a conversation is a response's ``History``)."""
        return self.id

    def remove(self, item: Item) -> None:
        """Take ``item`` out (a response dropping a call it never finished)."""
        self._items.remove(item)

    @property
    def items(self) -> list[Item]:
        """The items in order (a copy)."""
        return list(self._items)

    def get(self, item_id: str) -> Item | None:
        """The item with ``item_id``, if present."""
        return next((i for i in self._items if i.id == item_id), None)

    def require(self, item_id: Any, param: str = "item_id") -> Item:
        """The item with ``item_id``, or a protocol error naming it."""
        item = self.get(item_id) if isinstance(item_id, str) else None
        if item is None:
            raise ProtocolError(f"item with id {item_id!r} does not exist", code="item_not_found", param=param)
        return item

    def add(self, item: Item, previous_item_id: str | None = None) -> str | None:
        """Insert ``item`` after ``previous_item_id`` (``"root"``: first; None: last); return the id before it."""
        if self.get(item.id) is not None:
            raise ProtocolError(f"an item with id {item.id!r} already exists", code="duplicate_item_id",
                                param="item.id")
        if previous_item_id is None:
            index = len(self._items)
        elif previous_item_id == "root":
            index = 0
        else:
            index = self._items.index(self.require(previous_item_id, "previous_item_id")) + 1
        self._items.insert(index, item)
        return self._items[index - 1].id if index > 0 else None

    def delete(self, item_id: str) -> Item:
        """Remove and return the item (a protocol error if it does not exist)."""
        item = self.require(item_id)
        self._items.remove(item)
        return item

    def call(self, call_id: str) -> Item | None:
        """The function call with ``call_id``, if any."""
        return next((i for i in self._items if i.type == "function_call" and i.call_id == call_id), None)

    def has_output(self, call_id: str) -> bool:
        """Whether the call ``call_id`` has been answered."""
        return any(i.type == "function_call_output" and i.call_id == call_id for i in self._items)

    def check_output(self, call_id: str) -> None:
        """Raise a protocol error unless ``call_id`` names a completed call that has no output yet."""
        call = self.call(call_id)
        if call is None:
            raise ProtocolError(f"no function call with call_id {call_id!r} in the conversation",
                                code="invalid_call_id", param="item.call_id")
        if call.status != "completed":
            raise ProtocolError(f"the call {call_id!r} is not complete yet", code="invalid_call_id",
                                param="item.call_id")
        if self.has_output(call_id):
            raise ProtocolError(f"the call {call_id!r} already has an output", code="duplicate_call_output",
                                param="item.call_id")

    def check_truncate(self, item_id: str, index: int, end_ms: int) -> None:
        """Raise a protocol error unless part ``index`` of ``item_id`` is assistant audio at least ``end_ms`` long."""
        item = self.require(item_id)
        if item.role != "assistant" or not 0 <= index < len(item.content):
            raise ProtocolError("only the content of an assistant message can be truncated", code="invalid_value",
                                param="content_index")
        if item.content[index].get("type") != "output_audio":
            raise ProtocolError("only audio content can be truncated", code="invalid_value", param="content_index")
        if not 0 <= end_ms <= item.audio_ms:
            raise ProtocolError(f"audio_end_ms must be from 0 to the item's audio length ({item.audio_ms} ms)",
                                code="invalid_value", param="audio_end_ms")

    def truncate(self, item_id: str, index: int, end_ms: int) -> None:
        """Cut an assistant audio part (checked with :meth:`check_truncate`) to what was heard by ``end_ms``."""
        item = self.require(item_id)
        item.content[index]["transcript"] = transcript_until(item.spoken, end_ms)
        item.spoken = [s for s in item.spoken if s.start_ms < end_ms]

    def unanswered_calls(self) -> list[Item]:
        """Completed function calls that have no output yet."""
        answered = {i.call_id for i in self._items if i.type == "function_call_output"}
        return [i for i in self._items
                if i.type == "function_call" and i.status == "completed" and i.call_id not in answered]


def to_chat_items(items: Iterable[Item]) -> list[ChatItem]:
    """The neutral LLM items for ``items``; empty messages and unfinished calls are left out."""
    out: list[ChatItem] = []
    for item in items:
        if item.type == "message" and item.role and item.text:
            out.append(Message(item.role, item.text))
        elif item.type == "function_call" and item.status == "completed":
            out.append(FunctionCallItem(item.call_id, item.name, item.arguments))
        elif item.type == "function_call_output":
            out.append(FunctionOutputItem(item.call_id, item.output))
        elif item.type == "mcp_call" and item.status != "in_progress":  # a server tool: its call and its result
            out.append(FunctionCallItem(item.call_id, item.alias or item.name, item.arguments))
            out.append(FunctionOutputItem(item.call_id, item.output if item.error is None else f"error: {item.error}"))
    return out
