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
from voxcall.llm.calls import NativeCall, announce_call, repair_items
from voxcall.llm.history import pair_calls_with_outputs, provider_items
from voxcall.tools import Tool
from voxcall.tools.codecalls.segments import ToolIndex

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


def test_provider_items_send_the_providers_own_ids_back_when_distinct() -> None:
    items: list[ChatItem] = [FunctionCallItem("call_mine1", "f", "{}", "p1"), FunctionOutputItem("call_mine1", "1"),
                             FunctionCallItem("client_made", "f", "{}"), FunctionOutputItem("client_made", "2")]
    assert provider_items(items) == [FunctionCallItem("p1", "f", "{}", "p1"), FunctionOutputItem("p1", "1"),
                                     FunctionCallItem("client_made", "f", "{}"), FunctionOutputItem("client_made", "2")]


def test_provider_items_use_voxcalls_ids_when_the_providers_repeat() -> None:
    # a server numbering calls per reply: call_0 in every reply; and a client-made call that took the same id
    items: list[ChatItem] = [FunctionCallItem("call_x", "f", "{}", "call_0"), FunctionOutputItem("call_x", "1"),
                             FunctionCallItem("call_y", "f", "{}", "call_0"), FunctionOutputItem("call_y", "2")]
    assert provider_items(items) == items
    clash: list[ChatItem] = [FunctionCallItem("call_0", "f", "{}"), FunctionOutputItem("call_0", "1"),
                             FunctionCallItem("call_z", "f", "{}", "call_0"), FunctionOutputItem("call_z", "2")]
    assert provider_items(clash) == clash


# -- calls ------------------------------------------------------------------------------------------------------

WEATHER = Tool(name="get-weather", parameters={"type": "object", "properties": {"city": {"type": "string"}},
                                               "required": ["city"]})


def test_a_native_call_gets_its_own_id_and_is_checked() -> None:
    index = ToolIndex([WEATHER], native=True)
    call = NativeCall(index, "get-weather", "call_0")
    start = call.start()
    assert start == [ToolCallStart(call.call_id, "get-weather", "call_0")] and call.call_id != "call_0"
    assert call.delta('{"city": "Paris"}') == [ToolCallArgumentsDelta(call.call_id, '{"city": "Paris"}')]
    assert call.finish('{"city": "Paris"}') == ToolCall("get-weather", {"city": "Paris"}, call.call_id)
    assert NativeCall(index, "x").call_id != NativeCall(index, "x").call_id


@pytest.mark.parametrize(("name", "arguments", "reason"), [
    ("get_weathr", '{"city": "Paris"}', "unknown tool 'get_weathr'; did you mean 'get-weather'?"),
    ("get-weather", '{"city": Paris}', "get-weather: arguments are not valid JSON"),
    ("get-weather", '"Paris"', "get-weather: arguments must be a JSON object"),
    ("get-weather", "", "get-weather: missing required argument: city"),
    ("get-weather", '{"city": 1}', "get-weather: argument 'city': 1 is not of type 'string'"),
    ("", '{"city": "Paris"}', "the call has no function name"),
])
def test_a_native_call_the_tools_do_not_accept_is_rejected(name: str, arguments: str, reason: str) -> None:
    call = NativeCall(ToolIndex([WEATHER], native=True), name)
    rejected = call.finish(arguments)
    assert isinstance(rejected, RejectedCall) and rejected.repairable
    assert rejected.reason.startswith(reason) and rejected.source == arguments
    assert (rejected.call_id == call.call_id) is (name == "get-weather")  # only an announced call names its item
    if name != "get-weather":
        assert call.start() == [] and call.delta(arguments) == []  # an undeclared tool is never shown


def test_repair_items_show_the_call_and_why_it_failed() -> None:
    call, output = repair_items(RejectedCall("get weather!", '{"city": 1}', "wrong type", repairable=True))
    assert isinstance(call, FunctionCallItem) and isinstance(output, FunctionOutputItem)
    assert (call.name, call.arguments, output.call_id) == ("get_weather_", '{"city": 1}', call.call_id)
    assert output.output.startswith("error: the call was not run: wrong type")
    call, output = repair_items(RejectedCall("f", "{oops", "not JSON", repairable=True))
    assert call.arguments == "{}" and "arguments as written: {oops" in output.output  # providers parse arguments
    call, _ = repair_items(RejectedCall("", "", "no name", repairable=True))
    assert (call.name, call.arguments) == ("unnamed", "{}")




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
    assert BACKEND_KINDS == ("openai-chat", "openai-responses", "scripted", "llamacpp", "llama-server")


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
