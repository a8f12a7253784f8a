"""The conversation: items read from clients, their order, calls and outputs, and what a backend is given."""

from __future__ import annotations

import json
from typing import Any

import pytest

from voxcall.core.conversation.conversation import Conversation, item_bytes, overflow, to_chat_items
from voxcall.core.conversation.items import (
    ApprovalResponseItem,
    CallItem,
    Item,
    McpCallItem,
    MessageItem,
    Spoken,
    SpokenAudio,
)
from voxcall.core.errors import SessionError
from voxcall.llm import FunctionCallItem, FunctionOutputItem, Message
from voxcall.realtime.client_events import parse_client_event
from voxcall.realtime.items import item_from_client


def read(item: dict[str, Any]) -> Item:
    """An item as ``conversation.item.create`` reads it: the SDK's models first, then voxcall's checks."""
    model = parse_client_event({"type": "conversation.item.create", "item": item}).model
    return item_from_client(model.item, max_image_bytes=1_000_000)  # type: ignore[attr-defined]


def user(text: str, item_id: str | None = None) -> Item:
    return read({"type": "message", "role": "user", "id": item_id, "content": [{"type": "input_text", "text": text}]})


def test_items_insert_after_an_id_at_the_root_or_last() -> None:
    conversation = Conversation()
    assert conversation.add(user("b", "b")) is None
    assert conversation.add(user("c", "c")) == "b"
    assert conversation.add(user("a", "a"), "root") is None
    assert conversation.add(user("b2", "b2"), "b") == "b"
    assert [i.id for i in conversation.items] == ["a", "b", "b2", "c"]
    with pytest.raises(SessionError) as caught:
        conversation.add(user("again", "a"))
    assert caught.value.code == "duplicate_item_id"


def test_calls_outputs_and_what_the_backend_sees() -> None:
    conversation = Conversation()
    conversation.add(user("weather?"))
    call = read({"type": "function_call", "name": "get_weather", "call_id": "c1"})
    assert isinstance(call, CallItem) and call.arguments == "{}"
    conversation.add(call)
    assert conversation.unanswered_calls() == [call]
    conversation.add(read({"type": "function_call_output", "call_id": "c1", "output": {"t": 21}}))
    assert conversation.has_output("c1") and conversation.unanswered_calls() == []
    server = McpCallItem("item_m", "c2", "now", "clock__now", "clock", "{}", output="noon", status="completed")
    conversation.add(server)
    assert to_chat_items(conversation.items) == [
        Message("user", "weather?"), FunctionCallItem("c1", "get_weather", "{}"), FunctionOutputItem("c1", '{"t": 21}'),
        FunctionCallItem("c2", "clock__now", "{}"), FunctionOutputItem("c2", "noon")]


def call_pair(call_id: str, arguments: str = "{}") -> list[Item]:
    return [read({"type": "function_call", "name": "f", "call_id": call_id, "arguments": arguments,
                  "id": f"call-{call_id}"}),
            read({"type": "function_call_output", "call_id": call_id, "output": "ok", "id": f"out-{call_id}"})]


def test_overflow_drops_the_oldest_until_count_and_size_fit() -> None:
    items = [user("x" * 100, f"u{n}") for n in range(5)]
    size = item_bytes(items[0])
    assert size == len(json.dumps(items[0].to_wire(), separators=(",", ":")))
    assert overflow(items, max_items=5, max_bytes=5 * size) == []
    assert [i.id for i in overflow(items, max_items=3, max_bytes=5 * size)] == ["u0", "u1"]
    assert [i.id for i in overflow(items, max_items=5, max_bytes=4 * size - 1)] == ["u0", "u1"]
    assert item_bytes(user("é")) == item_bytes(user("e")) + 1  # UTF-8 bytes, not characters


def test_overflow_never_separates_a_call_from_its_output() -> None:
    items = [*call_pair("c1"), user("then", "u1")]
    assert [i.id for i in overflow(items, max_items=2, max_bytes=10**6)] == ["call-c1", "out-c1"]
    big = [user("hi", "u0"), *call_pair("c2", json.dumps({"text": "y" * 500})), user("z" * 300, "u1")]
    limit = sum(map(item_bytes, big)) - item_bytes(big[0]) - item_bytes(big[1]) + 1  # fits without u0 and the call
    assert [i.id for i in overflow(big, max_items=10, max_bytes=limit)] == ["u0", "call-c2", "out-c2"]


def test_each_item_type_has_its_own_class_and_wire_form() -> None:
    approval = read({"type": "mcp_approval_response", "approval_request_id": "r1", "approve": False,
                     "reason": "no"})
    assert isinstance(approval, ApprovalResponseItem)
    assert approval.to_wire()["approve"] is False and approval.to_wire()["reason"] == "no"
    assistant = read({"type": "message", "role": "assistant", "content": [{"type": "text", "text": "x"}]})
    assert isinstance(assistant, MessageItem)
    assert assistant.to_wire()["content"] == [{"type": "output_text", "text": "x"}]
    failed = McpCallItem("i", "c", "now", "clock__now", "clock", error="down")
    assert failed.to_wire()["output"] is None and failed.to_wire()["error"]["message"] == "down"


@pytest.mark.parametrize(("item", "param"), [
    ({"type": "message", "role": "user", "content": [{"type": "input_audio", "audio": "AAAA"}]},
     "item.content[0].type"),
    ({"type": "message", "role": "user", "content": [{"type": "input_text"}]}, "item.content[0].text"),
    ({"type": "function_call", "name": "", "arguments": "{}"}, "item.name"),
    ({"type": "mcp_call", "id": "i", "server_label": "s", "name": "n", "arguments": "{}"}, "item.type"),
    ({"type": "message", "id": "x" * 65, "role": "user", "content": []}, "item.id"),
])
def test_what_voxcall_does_not_take_is_named(item: dict[str, Any], param: str) -> None:
    with pytest.raises(SessionError) as caught:
        read(item)
    assert caught.value.param == param


def test_transcript_until_keeps_the_share_of_a_cut_clause() -> None:
    spoken = SpokenAudio([Spoken("one two", 0, 1000), Spoken("three four five six", 1000, 2000)], sent_ms=2000)
    assert spoken.transcript_until(1500) == "one two three four"
    assert spoken.transcript_until(0) == ""
