"""OpenAIResponsesBackend against a real local HTTP server streaming hand-written Responses API events."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from tests.llm.fake_server import HOLD, FakeServer, Reply, responses_sse
from tests.llm.helpers import TIMEOUT, arguments_text, collect
from voxcall.llm import (
    ChatItem,
    Done,
    FunctionCallItem,
    FunctionOutputItem,
    LLMError,
    LLMRequest,
    Message,
    OpenAIResponsesBackend,
    RejectedCall,
    TextDelta,
    ToolCall,
    ToolCallArgumentsDelta,
    ToolCallStart,
    Usage,
)
from voxcall.llm.openai_responses import response_input
from voxcall.tools import Tool


def text_delta(delta: str) -> dict[str, Any]:
    return {"type": "response.output_text.delta", "item_id": "msg_1", "output_index": 0, "content_index": 0,
            "delta": delta, "logprobs": []}


def function_call(index: int, call_id: str, name: str, arguments: str = "", status: str = "in_progress",
                  ) -> dict[str, Any]:
    return {"type": "function_call", "id": f"fc_{index}", "call_id": call_id, "name": name,
            "arguments": arguments, "status": status}


def call_added(index: int, call_id: str, name: str) -> dict[str, Any]:
    return {"type": "response.output_item.added", "output_index": index,
            "item": function_call(index, call_id, name)}


def args_delta(index: int, delta: str) -> dict[str, Any]:
    return {"type": "response.function_call_arguments.delta", "item_id": f"fc_{index}", "output_index": index,
            "delta": delta}


def args_done(index: int, arguments: str) -> dict[str, Any]:
    return {"type": "response.function_call_arguments.done", "item_id": f"fc_{index}", "output_index": index,
            "arguments": arguments}


def call_done(index: int, call_id: str, name: str, arguments: str) -> dict[str, Any]:
    return {"type": "response.output_item.done", "output_index": index,
            "item": function_call(index, call_id, name, arguments, "completed")}


def completed(input_tokens: int = 0, output_tokens: int = 0, cached: int = 0, *, status: str = "completed",
              incomplete_reason: str | None = None) -> dict[str, Any]:
    response: dict[str, Any] = {
        "id": "resp_1", "object": "response", "status": status, "output": [],
        "usage": {"input_tokens": input_tokens, "output_tokens": output_tokens,
                  "total_tokens": input_tokens + output_tokens,
                  "input_tokens_details": {"cached_tokens": cached, "cache_write_tokens": 0},
                  "output_tokens_details": {"reasoning_tokens": 0}},
    }
    if incomplete_reason is not None:
        response["incomplete_details"] = {"reason": incomplete_reason}
    return {"type": f"response.{status}", "response": response}


def backend_for(server: FakeServer, **kwargs: Any) -> OpenAIResponsesBackend:
    return OpenAIResponsesBackend("test-model", base_url=server.base_url, max_retries=0, **kwargs)


WEATHER = Tool(name="get_weather", description="Current weather for a city.",
               parameters={"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]})


def user(text: str = "Hi") -> LLMRequest:
    return LLMRequest(items=[Message("user", text)], tools=[WEATHER])


def started(events: list[Any]) -> dict[str, str]:
    """The calls announced in ``events``: the provider's id -> voxcall's id."""
    return {e.provider_call_id: e.call_id for e in events if isinstance(e, ToolCallStart)}


async def test_text_reply_with_usage(server: FakeServer) -> None:
    server.replies.append(Reply(responses_sse(text_delta("Hel"), text_delta("lo"), completed(9, 2, 4))))
    events = await collect(backend_for(server).stream(user()))
    assert events == [TextDelta("Hel"), TextDelta("lo"), Usage(9, 2, 4), Done("stop")]


async def test_calls_stream_and_each_is_yielded_once(server: FakeServer) -> None:
    gate = asyncio.Event()
    steps = responses_sse(text_delta("Checking."), call_added(1, "call_a", "get_weather"),
                          args_delta(1, '{"city":'), args_delta(1, '"Paris"}'), args_done(1, '{"city":"Paris"}'),
                          call_done(1, "call_a", "get_weather", '{"city":"Paris"}'),
                          call_added(2, "call_b", "get_weather"))
    steps += [gate, *responses_sse(args_delta(2, '{"city":"Rome"}'),
                                   call_done(2, "call_b", "get_weather", '{"city":"Rome"}'), completed(20, 10))]
    server.replies.append(Reply(steps))
    events: list[Any] = []
    async with asyncio.timeout(TIMEOUT):
        async for event in backend_for(server).stream(user()):
            events.append(event)
            if isinstance(event, ToolCall) and event.call_id == started(events)["call_a"]:
                assert not gate.is_set()
                gate.set()
    ids = started(events)
    assert [type(e).__name__ for e in events] == [
        "TextDelta", "ToolCallStart", "ToolCallArgumentsDelta", "ToolCallArgumentsDelta", "ToolCall",
        "ToolCallStart", "ToolCallArgumentsDelta", "ToolCall", "Usage", "Done"]
    assert events[1] == ToolCallStart(ids["call_a"], "get_weather", "call_a")
    assert arguments_text(events, ids["call_a"]) == '{"city":"Paris"}'
    assert [e for e in events if isinstance(e, ToolCall)] == [
        ToolCall("get_weather", {"city": "Paris"}, ids["call_a"]),
        ToolCall("get_weather", {"city": "Rome"}, ids["call_b"])]
    assert events[-1] == Done("tool_calls")


async def test_invalid_arguments_are_rejected(server: FakeServer) -> None:
    server.replies.append(Reply(responses_sse(call_added(0, "c1", "get_weather"), args_done(0, "{city: Paris"),
                                              completed())))
    events = await collect(backend_for(server).stream(user()))
    [rejected] = [e for e in events if isinstance(e, RejectedCall)]
    assert (rejected.name, rejected.source) == ("get_weather", "{city: Paris")
    assert rejected.call_id == started(events)["c1"] and rejected.repairable


async def test_calls_are_checked_against_the_declared_tools(server: FakeServer) -> None:
    server.replies.append(Reply(responses_sse(
        call_added(0, "c1", "get_wether"), args_delta(0, '{"city":"Paris"}'), args_done(0, '{"city":"Paris"}'),
        call_added(1, "c2", "get_weather"), args_done(1, '{"city": ["Paris"]}'), completed())))
    events = await collect(backend_for(server).stream(user()))
    assert list(started(events)) == ["c2"]  # the undeclared tool is never announced, nor its arguments
    assert all(e.call_id == started(events)["c2"] for e in events if isinstance(e, ToolCallArgumentsDelta))
    unknown, wrong_type = [e for e in events if isinstance(e, RejectedCall)]
    assert unknown.name == "get_wether" and "did you mean 'get_weather'?" in unknown.reason
    assert "is not of type 'string'" in wrong_type.reason
    assert not [e for e in events if isinstance(e, ToolCall)]


async def test_an_empty_call_id_is_replaced_by_voxcalls_own(server: FakeServer) -> None:
    server.replies.append(Reply(responses_sse(
        call_added(0, "", "get_weather"), args_done(0, '{"city":"Paris"}'),
        call_added(1, "", "get_weather"), args_done(1, '{"city":"Rome"}'), completed())))
    events = await collect(backend_for(server).stream(user()))
    calls = [e for e in events if isinstance(e, ToolCall)]
    assert len({c.call_id for c in calls}) == 2 and all(c.call_id.startswith("call_") for c in calls)


async def test_incomplete_response_is_length(server: FakeServer) -> None:
    server.replies.append(Reply(responses_sse(text_delta("Once"),
                                              completed(3, 1, status="incomplete",
                                                        incomplete_reason="max_output_tokens"))))
    events = await collect(backend_for(server).stream(user()))
    assert events[-2:] == [Usage(3, 1), Done("length")]


async def test_failed_response_is_an_llm_error(server: FakeServer) -> None:
    failed = {"type": "response.failed", "response": {
        "id": "r", "status": "failed", "output": [], "error": {"code": "server_error", "message": "secret path"}}}
    server.replies.append(Reply(responses_sse(text_delta("Hi"), failed)))
    with pytest.raises(LLMError) as caught:
        await collect(backend_for(server).stream(user()))
    assert caught.value.message == "backend response failed (server_error)"


async def test_error_event_is_an_llm_error(server: FakeServer) -> None:
    server.replies.append(Reply(responses_sse({"type": "error", "code": "rate_limit_exceeded",
                                               "message": "slow down, key sk-abc", "param": None})))
    with pytest.raises(LLMError) as caught:
        await collect(backend_for(server).stream(user()))
    assert "sk-abc" not in caught.value.message and "rate_limit_exceeded" in caught.value.message


async def test_stream_without_completion_is_an_error(server: FakeServer) -> None:
    server.replies.append(Reply(responses_sse(text_delta("Hi"))))
    with pytest.raises(LLMError) as caught:
        await collect(backend_for(server).stream(user()))
    assert caught.value.code == "incomplete_stream"


async def test_http_401(server: FakeServer) -> None:
    server.replies.append(Reply([b'{"error": {"message": "bad key sk-1"}}'], status=401,
                                content_type="application/json"))
    with pytest.raises(LLMError) as caught:
        await collect(backend_for(server).stream(user()))
    assert (caught.value.code, caught.value.message) == ("auth", "backend returned HTTP 401")


async def test_closing_the_stream_aborts_the_request(server: FakeServer) -> None:
    server.replies.append(Reply([*responses_sse(text_delta("Hello")), HOLD]))
    stream = backend_for(server).stream(user())
    async with asyncio.timeout(TIMEOUT):
        assert await anext(stream) == TextDelta("Hello")
        await stream.aclose()
        await server.disconnected.wait()


async def test_request_body(server: FakeServer, weather_tool: Tool) -> None:
    server.replies.append(Reply(responses_sse(completed())))
    items: list[ChatItem] = [Message("user", "Weather?"), FunctionCallItem("c1", "get_weather", '{"city":"Oslo"}'),
             FunctionOutputItem("c1", "cold"), FunctionCallItem("c2", "get_weather", "{}")]
    request = LLMRequest(items=items, instructions="Be brief.", tools=[weather_tool],
                         tool_choice={"type": "function", "name": "get_weather"}, max_output_tokens=40,
                         temperature=0.5)
    await collect(backend_for(server, extra_body={"reasoning": {"effort": "low"}}).stream(request))
    recorded = server.requests[0]
    assert recorded.path == "/v1/responses"
    assert recorded.body == {
        "model": "test-model", "stream": True, "store": False, "instructions": "Be brief.",
        "input": [
            {"type": "message", "role": "user", "content": "Weather?"},
            {"type": "function_call", "call_id": "c1", "name": "get_weather", "arguments": '{"city":"Oslo"}'},
            {"type": "function_call_output", "call_id": "c1", "output": "cold"},
        ],
        "tools": [weather_tool.to_openai()],
        "tool_choice": {"type": "function", "name": "get_weather"},
        "max_output_tokens": 40, "temperature": 0.5, "reasoning": {"effort": "low"},
    }


def test_input_items_carry_the_ids_the_provider_gave_when_they_are_distinct() -> None:
    items: list[ChatItem] = [FunctionCallItem("call_v1", "f", "{}", "fc_a"), FunctionOutputItem("call_v1", "1")]
    assert [i["call_id"] for i in response_input(items)] == ["fc_a", "fc_a"]
    items += [FunctionCallItem("call_v2", "f", "{}", "fc_a"), FunctionOutputItem("call_v2", "2")]
    assert [i["call_id"] for i in response_input(items)] == ["call_v1", "call_v1", "call_v2", "call_v2"]


def test_input_items_keep_roles() -> None:
    assert response_input([Message("system", "S"), Message("assistant", "A")]) == [
        {"type": "message", "role": "system", "content": "S"},
        {"type": "message", "role": "assistant", "content": "A"}]
