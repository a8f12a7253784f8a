"""The shared pieces: request validation, history pairing, call parsing and announcing, the factory."""

from __future__ import annotations

from typing import Any

import pytest

from voxcall.llm import (
    BACKEND_KINDS,
    CodeFormatBackend,
    FunctionCallItem,
    FunctionOutputItem,
    LLMRequest,
    Message,
    OpenAIChatBackend,
    OpenAIResponsesBackend,
    RejectedCall,
    ScriptedBackend,
    ToolCall,
    ToolCallArgumentsDelta,
    ToolCallStart,
    Warmable,
    create_backend,
    warm,
)
from voxcall.llm.base import ChatItem
from voxcall.llm.calls import announce_call, parse_call
from voxcall.llm.history import pair_calls_with_outputs

# -- LLMRequest -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("choice", "expected"), [
    ("auto", "auto"), ("none", "none"), ("required", "required"),
    ({"type": "function", "name": "f"}, {"type": "function", "name": "f"}),
    ({"type": "function", "function": {"name": "f"}}, {"type": "function", "name": "f"}),
])
def test_tool_choice_is_normalised(choice: Any, expected: Any) -> None:
    assert LLMRequest(items=[], tool_choice=choice).tool_choice == expected


@pytest.mark.parametrize("choice", ["any", {"type": "function"}, {"type": "function", "name": 3}])
def test_bad_tool_choice_is_refused(choice: Any) -> None:
    with pytest.raises(ValueError, match="tool_choice"):
        LLMRequest(items=[], tool_choice=choice)


# -- history ----------------------------------------------------------------------------------------------------


def test_pairing_keeps_a_valid_history_unchanged() -> None:
    items: list[ChatItem] = [Message("user", "q"), FunctionCallItem("a", "f", "{}"), FunctionOutputItem("a", "1"),
                             FunctionCallItem("b", "f", "{}"), FunctionOutputItem("b", "2"), Message("user", "r")]
    assert pair_calls_with_outputs(items) == items


def test_pairing_moves_late_outputs_after_their_call_run() -> None:
    call_a, call_b = FunctionCallItem("a", "f", "{}"), FunctionCallItem("b", "g", "{}")
    out_a, out_b = FunctionOutputItem("a", "1"), FunctionOutputItem("b", "2")
    user = Message("user", "still there?")
    assert pair_calls_with_outputs([call_a, call_b, user, out_b, out_a]) == [call_a, call_b, out_a, out_b, user]


def test_pairing_drops_dangling_calls_orphans_and_duplicates() -> None:
    call_a = FunctionCallItem("a", "f", "{}")
    out_a = FunctionOutputItem("a", "1")
    items: list[ChatItem] = [call_a, FunctionCallItem("x", "f", "{}"), out_a, FunctionOutputItem("y", "?"),
                             FunctionOutputItem("a", "again"), FunctionCallItem("a", "f", "{}")]
    assert pair_calls_with_outputs(items) == [call_a, out_a]


# -- calls ------------------------------------------------------------------------------------------------------


def test_parse_call() -> None:
    assert parse_call("c", "f", ' {"x": 1} ') == ToolCall("f", {"x": 1}, "c")
    assert parse_call("c", "f", "") == ToolCall("f", {}, "c")
    assert isinstance(parse_call("c", "f", "[1]"), RejectedCall)
    rejected = parse_call("c", "f", "{oops")
    assert isinstance(rejected, RejectedCall) and rejected.source == "{oops" and "JSON" in rejected.reason


@pytest.mark.parametrize("fragments", [1, 2, 3, 100])
def test_announce_call(fragments: int) -> None:
    call = ToolCall("f", {"city": "Paris", "days": 3}, "c9")
    events = announce_call(call, fragments)
    assert events[0] == ToolCallStart("c9", "f") and events[-1] is call
    deltas = events[1:-1]
    assert all(isinstance(d, ToolCallArgumentsDelta) and d.call_id == "c9" for d in deltas)
    assert "".join(d.delta for d in deltas if isinstance(d, ToolCallArgumentsDelta)) == call.arguments_json
    assert len(deltas) == min(fragments, len(call.arguments_json))


# -- factory ----------------------------------------------------------------------------------------------------


def test_create_each_kind() -> None:
    assert isinstance(create_backend("scripted"), ScriptedBackend)
    chat = create_backend("openai-chat", model="m", base_url="http://localhost:1/v1")
    assert isinstance(chat, OpenAIChatBackend) and chat.model == "m"
    assert isinstance(create_backend("openai-responses", model="m", base_url="http://localhost:1/v1"),
                      OpenAIResponsesBackend)
    coded = create_backend("openai-chat", model="m", base_url="http://localhost:1/v1", tool_format="code")
    assert isinstance(coded, CodeFormatBackend) and isinstance(coded.inner, OpenAIChatBackend)
    assert coded.name == "openai-chat+code"


def test_create_scripted_with_a_script() -> None:
    backend = create_backend("scripted", script={"default": "hi"})
    assert isinstance(backend, ScriptedBackend) and backend.script.default == "hi"


def test_unknown_kind_lists_the_known_ones() -> None:
    with pytest.raises(ValueError, match="openai-chat, openai-responses, scripted, llamacpp"):
        create_backend("nope")
    assert BACKEND_KINDS == ("openai-chat", "openai-responses", "scripted", "llamacpp")


def test_openai_kinds_need_a_model() -> None:
    with pytest.raises(ValueError, match="needs a model"):
        create_backend("openai-chat", base_url="http://localhost:1/v1")


def test_unknown_tool_format() -> None:
    with pytest.raises(ValueError, match="tool format"):
        create_backend("scripted", tool_format="xml")  # type: ignore[arg-type]


# -- warm -------------------------------------------------------------------------------------------------------


async def test_warm_is_a_no_op_for_a_backend_without_the_capability() -> None:
    backend = ScriptedBackend()
    assert not isinstance(backend, Warmable)
    assert await warm(backend, LLMRequest(items=[Message("user", "hi")])) is None
