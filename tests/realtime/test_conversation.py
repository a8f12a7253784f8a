"""The conversation: items read from clients, their order, calls and outputs, and what a backend is given."""

from __future__ import annotations

import pytest

from voxcall.llm import FunctionCallItem, FunctionOutputItem, Message
from voxcall.realtime.conversation import Conversation, Item, Spoken, to_chat_items, transcript_until
from voxcall.realtime.protocol import ProtocolError


def user(text: str, item_id: str | None = None) -> Item:
    return Item.from_client({"type": "message", "role": "user", "id": item_id,
                             "content": [{"type": "input_text", "text": text}]})


def test_items_insert_after_an_id_at_the_root_or_last() -> None:
    conversation = Conversation()
    assert conversation.add(user("b", "b")) is None
    assert conversation.add(user("c", "c")) == "b"
    assert conversation.add(user("a", "a"), "root") is None
    assert conversation.add(user("b2", "b2"), "b") == "b"
    assert [i.id for i in conversation.items] == ["a", "b", "b2", "c"]
    with pytest.raises(ProtocolError) as caught:
        conversation.add(user("again", "a"))
    assert caught.value.code == "duplicate_item_id"


def test_calls_outputs_and_what_the_backend_sees() -> None:
    conversation = Conversation()
    conversation.add(user("weather?"))
    call = Item.from_client({"type": "function_call", "name": "get_weather", "call_id": "c1"})
    conversation.add(call)
    assert call.arguments == "{}" and conversation.unanswered_calls() == [call]
    conversation.add(Item.from_client({"type": "function_call_output", "call_id": "c1", "output": {"t": 21}}))
    assert conversation.has_output("c1") and conversation.unanswered_calls() == []
    assert to_chat_items(conversation.items) == [
        Message("user", "weather?"), FunctionCallItem("c1", "get_weather", "{}"),
        FunctionOutputItem("c1", '{"t": 21}')]


def test_wire_form_of_each_item_type() -> None:
    approval = Item.from_client({"type": "mcp_approval_response", "approval_request_id": "r1", "approve": False,
                                 "reason": "no"})
    assert approval.to_wire()["approve"] is False and approval.to_wire()["reason"] == "no"
    assistant = Item.from_client({"type": "message", "role": "assistant", "content": [{"type": "text", "text": "x"}]})
    assert assistant.to_wire()["content"] == [{"type": "output_text", "text": "x"}]


def test_transcript_until_keeps_the_share_of_a_cut_clause() -> None:
    spoken = [Spoken("one two", 0, 1000), Spoken("three four five six", 1000, 2000)]
    assert transcript_until(spoken, 1500) == "one two three four"
    assert transcript_until(spoken, 0) == ""
