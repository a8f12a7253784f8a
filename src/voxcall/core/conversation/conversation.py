"""A session's conversation: its items in order, the checks on them a client event needs, and what a backend
is given of them.

The items themselves (one class per type, their wire form, reading a client's item) are in
:mod:`voxcall.core.conversation.items`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from voxcall.core.conversation.images import UNSEEN_IMAGE
from voxcall.core.conversation.items import CallItem, CallOutputItem, Item, McpCallItem, MessageItem
from voxcall.core.errors import SessionError
from voxcall.core.ids import new_id
from voxcall.llm import AudioPart, ChatItem, FunctionCallItem, FunctionOutputItem, ImagePart, Media, Message


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
            raise SessionError(f"item with id {item_id!r} does not exist", code="item_not_found", param=param)
        return item

    def add(self, item: Item, previous_item_id: str | None = None) -> str | None:
        """Insert ``item`` after ``previous_item_id`` (``"root"``: first; None: last); return the id before it."""
        if self.get(item.id) is not None:
            raise SessionError(f"an item with id {item.id!r} already exists", code="duplicate_item_id",
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

    def call(self, call_id: str) -> CallItem | None:
        """The function call with ``call_id``, if any."""
        return next((i for i in self._items if isinstance(i, CallItem) and i.call_id == call_id), None)

    def has_output(self, call_id: str) -> bool:
        """Whether the call ``call_id`` has been answered."""
        return any(isinstance(i, CallOutputItem) and i.call_id == call_id for i in self._items)

    def check_output(self, call_id: str) -> None:
        """Raise a protocol error unless ``call_id`` names a completed call that has no output yet."""
        call = self.call(call_id)
        if call is None:
            raise SessionError(f"no function call with call_id {call_id!r} in the conversation",
                                code="invalid_call_id", param="item.call_id")
        if call.status != "completed":
            raise SessionError(f"the call {call_id!r} is not complete yet", code="invalid_call_id",
                                param="item.call_id")
        if self.has_output(call_id):
            raise SessionError(f"the call {call_id!r} already has an output", code="duplicate_call_output",
                                param="item.call_id")

    def check_truncate(self, item_id: str, index: int, end_ms: int) -> None:
        """Raise a protocol error unless part ``index`` of ``item_id`` is assistant audio of which at least ``end_ms``
        was sent (every chunk sent counts, also of a clause cut off by a cancel)."""
        item = self.require(item_id)
        if not isinstance(item, MessageItem) or item.role != "assistant" or not 0 <= index < len(item.content):
            raise SessionError("only the content of an assistant message can be truncated", code="invalid_value",
                                param="content_index")
        if item.content[index].get("type") != "output_audio":
            raise SessionError("only audio content can be truncated", code="invalid_value", param="content_index")
        if not 0 <= end_ms <= item.audio_ms:
            raise SessionError(f"audio_end_ms must be from 0 to the item's audio length ({item.audio_ms} ms, the "
                                "audio sent for it)", code="invalid_value", param="audio_end_ms")

    def truncate(self, item_id: str, index: int, end_ms: int) -> MessageItem:
        """Cut an assistant audio part (checked with :meth:`check_truncate`) to what was heard by ``end_ms``;
        returns the item."""
        item = self.require(item_id)
        assert isinstance(item, MessageItem)
        item.content[index]["transcript"] = item.spoken.transcript_until(end_ms)
        item.spoken.truncate(end_ms)
        return item

    def unanswered_calls(self) -> list[CallItem]:
        """Completed function calls that have no output yet."""
        answered = {i.call_id for i in self._items if isinstance(i, CallOutputItem)}
        return [i for i in self._items
                if isinstance(i, CallItem) and i.status == "completed" and i.call_id not in answered]


def item_bytes(item: Item) -> int:
    """The size of ``item``'s wire JSON in UTF-8 bytes: what ``session.max_conversation_bytes`` counts."""
    return len(json.dumps(item.to_wire(), ensure_ascii=False, separators=(",", ":")).encode())


def overflow(items: list[Item], *, max_items: int, max_bytes: int) -> list[Item]:
    """The oldest of ``items`` to drop so that the rest are at most ``max_items`` and ``max_bytes`` of JSON (see
    :func:`item_bytes`). A function call and its output are dropped together, so that no model is ever sent a
    call without its output or an output without its call."""
    sizes = {item.id: item_bytes(item) for item in items}
    count, total = len(items), sum(sizes.values())
    calls: dict[str, list[Item]] = {}
    for item in items:
        if isinstance(item, CallItem | CallOutputItem):
            calls.setdefault(item.call_id, []).append(item)
    dropped: set[str] = set()
    for item in items:
        if count <= max_items and total <= max_bytes:
            break
        group = calls[item.call_id] if isinstance(item, CallItem | CallOutputItem) else [item]
        for member in group:
            if member.id not in dropped:
                dropped.add(member.id)
                count, total = count - 1, total - sizes[member.id]
    return [item for item in items if item.id in dropped]


def to_chat_items(items: Iterable[Item], media: frozenset[Media] = frozenset()) -> list[ChatItem]:
    """The neutral LLM items for ``items``, for a backend that takes ``media`` besides text; empty messages and
    unfinished calls are left out. See :func:`chat_message` for images and audio."""
    out: list[ChatItem] = []
    for item in items:
        if isinstance(item, MessageItem):
            message = chat_message(item, media)
            if message.text or message.media:
                out.append(message)
        elif isinstance(item, CallItem) and item.status == "completed":
            out.append(FunctionCallItem(item.call_id, item.name, item.arguments, item.provider_call_id))
        elif isinstance(item, CallOutputItem):
            out.append(FunctionOutputItem(item.call_id, item.output))
        elif isinstance(item, McpCallItem) and item.status != "in_progress":  # a server tool: call and result
            out.append(FunctionCallItem(item.call_id, item.called_as, item.arguments, item.provider_call_id))
            out.append(FunctionOutputItem(item.call_id, item.output if item.error is None else f"error: {item.error}"))
    return out


def chat_message(item: MessageItem, media: frozenset[Media]) -> Message:
    """The LLM message for ``item``. A user turn's kept audio (:attr:`MessageItem.heard_wav`) goes as audio instead
    of its transcript when the backend hears; each image goes as an image when it sees, else the model reads
    :data:`~voxcall.core.conversation.images.UNSEEN_IMAGE` in its place (also for an image already dropped)."""
    if item.heard_wav is not None and "audio" in media:
        return Message(item.role, "", (AudioPart(item.heard_wav),))
    if not any(part.get("type") == "input_image" for part in item.content):
        return Message(item.role, item.text)
    texts: list[str] = []
    shown: list[ImagePart] = []
    for part in item.content:
        if part.get("type") != "input_image":
            texts.append(str(part.get("text") or ""))
        elif "image" in media and part.get("image_url"):
            shown.append(ImagePart(part["image_url"], part["detail"]))
        else:
            texts.append(UNSEEN_IMAGE)
    return Message(item.role, "\n".join(text for text in texts if text), tuple(shown))
