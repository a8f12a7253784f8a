"""A session's size and time limits: the conversation's bytes, and the idle timeout."""

from __future__ import annotations

import json
from typing import Any

from voxcall.llm import FunctionCallItem, FunctionOutputItem
from voxcall.realtime.conversation import item_bytes

from .harness import ControlledBackend, Harness


async def test_oldest_items_are_deleted_before_a_response_until_the_conversation_fits() -> None:
    backend = ControlledBackend()
    async with Harness(backend, max_conversation_bytes=2048) as h:
        for n in range(6):
            await h.say(f"note {n}: " + "x" * 400)
        assert sum(map(item_bytes, h.session.conversation.items)) > 2048
        notes = h.session.conversation.items
        await h.send(type="response.create")
        await h.wait("response.done")
        deleted = [e["item_id"] for e in h.of("conversation.item.deleted")]
        assert deleted and deleted == [item.id for item in notes[:len(deleted)]]  # the oldest, in order
        kept = notes[len(deleted):]
        assert sum(map(item_bytes, kept)) <= 2048 < sum(map(item_bytes, notes[len(deleted) - 1:]))  # no more
        assert len(backend.requests[0].items) == len(kept)


async def test_a_call_and_its_output_are_deleted_together() -> None:
    backend = ControlledBackend()
    async with Harness(backend, max_conversation_bytes=1500) as h:
        await h.say("hi")
        await h.send(type="conversation.item.create", item={
            "type": "function_call", "id": "call_item", "call_id": "c1", "name": "lookup",
            "arguments": json.dumps({"text": "y" * 700})})
        await h.output("c1", "ok")
        await h.say("z" * 600)
        await h.send(type="response.create")
        await h.wait("response.done")
        deleted = [e["item_id"] for e in h.of("conversation.item.deleted")]
        assert "call_item" in deleted and len(deleted) == 3  # the greeting, the call, and its output with it
        items = backend.requests[0].items
        assert not any(isinstance(i, FunctionCallItem | FunctionOutputItem) for i in items)


async def test_an_item_bigger_than_the_conversation_limit_is_refused() -> None:
    async with Harness(ControlledBackend(), max_conversation_bytes=1024) as h:
        await h.send(type="conversation.item.create", event_id="evt_big", item={
            "type": "message", "role": "user", "content": [{"type": "input_text", "text": "x" * 1100}]})
        [error] = h.of("error")
        details: dict[str, Any] = error["error"]
        assert details["code"] == "item_too_large" and details["event_id"] == "evt_big"
        assert "session.max_conversation_bytes" in details["message"] and details["param"] == "item"
        assert len(h.session.conversation) == 0 and not h.of("conversation.item.added")
