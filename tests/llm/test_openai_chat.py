"""OpenAIChatBackend against a real local HTTP server streaming hand-written Chat Completions chunks."""

from __future__ import annotations

import asyncio
import socket
from typing import Any

import pytest

from tests.llm.fake_server import HOLD, FakeServer, Reply, chat_sse
from tests.llm.helpers import TIMEOUT, arguments_text, collect
from voxcall.llm import (
    ChatItem,
    Done,
    FunctionCallItem,
    FunctionOutputItem,
    LLMError,
    LLMRequest,
    Message,
    OpenAIChatBackend,
    RejectedCall,
    TextDelta,
    ToolCall,
    ToolCallArgumentsDelta,
    ToolCallStart,
    Usage,
)
from voxcall.llm.openai_chat import chat_messages, chat_tool_choice
from voxcall.tools import Tool


def text(content: str, finish: str | None = None) -> dict[str, Any]:
    return {"choices": [{"index": 0, "delta": {"content": content}, "finish_reason": finish}]}


def call(index: int, *, call_id: str | None = None, name: str | None = None, args: str | None = None,
         ) -> dict[str, Any]:
    function = {k: v for k, v in (("name", name), ("arguments", args)) if v is not None}
    fragment: dict[str, Any] = {"index": index, "function": function}
    if call_id is not None:
        fragment.update(id=call_id, type="function")
    return {"choices": [{"index": 0, "delta": {"tool_calls": [fragment]}, "finish_reason": None}]}


def finish(reason: str) -> dict[str, Any]:
    return {"choices": [{"index": 0, "delta": {}, "finish_reason": reason}]}


def usage(prompt: int, completion: int, cached: int | None = None) -> dict[str, Any]:
    data: dict[str, Any] = {"prompt_tokens": prompt, "completion_tokens": completion,
                            "total_tokens": prompt + completion}
    if cached is not None:
        data["prompt_tokens_details"] = {"cached_tokens": cached}
    return {"choices": [], "usage": data}


def backend_for(server: FakeServer, **kwargs: Any) -> OpenAIChatBackend:
    return OpenAIChatBackend("test-model", base_url=server.base_url, max_retries=0, **kwargs)


WEATHER = Tool(name="get_weather", description="Current weather for a city.",
               parameters={"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]})
PING = Tool(name="ping")
FORECAST = Tool(name="forecast", parameters={"type": "object", "properties": {
    "city": {"type": "string"}, "days": {"type": "array", "items": {"type": "integer"}}, "note": {"type": "string"}}})


def user(text: str = "Hi", tools: list[Tool] | None = None) -> LLMRequest:
    return LLMRequest(items=[Message("user", text)], tools=[WEATHER, PING, FORECAST] if tools is None else tools)


def started(events: list[Any]) -> dict[str, str]:
    """The calls announced in ``events``: the provider's id -> voxcall's id."""
    return {e.provider_call_id: e.call_id for e in events if isinstance(e, ToolCallStart)}


# -- streaming ------------------------------------------------------------------------------------------------


async def test_text_reply_with_usage(server: FakeServer) -> None:
    server.replies.append(Reply(chat_sse({"choices": [{"index": 0, "delta": {"role": "assistant"}}]},
                                         text("Hel"), text("lo"), finish("stop"), usage(12, 2, cached=8))))
    events = await collect(backend_for(server).stream(user()))
    assert events == [TextDelta("Hel"), TextDelta("lo"), Usage(12, 2, 8), Done("stop")]


async def test_request_body(server: FakeServer, weather_tool: Tool) -> None:
    server.replies.append(Reply(chat_sse(text("ok", "stop"))))
    request = LLMRequest(items=[Message("user", "Weather?")], instructions="Be brief.", tools=[weather_tool],
                         tool_choice={"type": "function", "name": "get_weather"}, max_output_tokens=50,
                         temperature=0.2)
    await collect(backend_for(server).stream(request))
    recorded = server.requests[0]
    assert recorded.path == "/v1/chat/completions"
    assert recorded.body == {
        "model": "test-model", "stream": True, "stream_options": {"include_usage": True},
        "messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Weather?"}],
        "tools": [weather_tool.to_chat()],
        "tool_choice": {"type": "function", "function": {"name": "get_weather"}},
        "max_tokens": 50, "temperature": 0.2,
        "chat_template_kwargs": {"enable_thinking": False},
    }


async def test_parallel_calls_by_index_each_yielded_as_soon_as_complete(server: FakeServer) -> None:
    gate = asyncio.Event()
    steps = chat_sse(call(0, call_id="call_a", name="get_weather", args=""), call(0, args='{"city":'),
                     call(0, args=' "Paris"}'), call(1, call_id="call_b", name="get_weather"), done=False)
    steps += [gate, *chat_sse(call(1, args='{"city": "Rome"}'), finish("tool_calls"), usage(30, 20))]
    server.replies.append(Reply(steps))
    events: list[Any] = []
    async with asyncio.timeout(TIMEOUT):
        async for event in backend_for(server).stream(user()):
            events.append(event)
            if isinstance(event, ToolCall) and event.call_id == started(events)["call_a"]:
                assert not gate.is_set(), "the first call must be out before the second call's arguments"
                gate.set()
    ids = started(events)
    calls = [e for e in events if isinstance(e, ToolCall)]
    assert [(c.call_id, c.name, c.arguments) for c in calls] == [
        (ids["call_a"], "get_weather", {"city": "Paris"}), (ids["call_b"], "get_weather", {"city": "Rome"})]
    kinds = [type(e).__name__ for e in events]
    assert kinds == ["ToolCallStart", "ToolCallArgumentsDelta", "ToolCallArgumentsDelta", "ToolCall",
                     "ToolCallStart", "ToolCallArgumentsDelta", "ToolCall", "Usage", "Done"]
    assert events[-2:] == [Usage(30, 20), Done("tool_calls")]
    assert arguments_text(events, ids["call_a"]) == '{"city": "Paris"}'


async def test_text_then_call(server: FakeServer) -> None:
    server.replies.append(Reply(chat_sse(text("Let me check."), call(0, call_id="c1", name="get_weather",
                                                                      args='{"city":"Oslo"}'),
                                         finish("tool_calls"))))
    events = await collect(backend_for(server).stream(user()))
    mine = started(events)["c1"]
    assert events == [TextDelta("Let me check."), ToolCallStart(mine, "get_weather", "c1"),
                      ToolCallArgumentsDelta(mine, '{"city":"Oslo"}'),
                      ToolCall("get_weather", {"city": "Oslo"}, mine), Usage(0, 0), Done("tool_calls")]


async def test_text_after_a_call_completes_it_first(server: FakeServer) -> None:
    server.replies.append(Reply(chat_sse(call(0, call_id="c1", name="ping", args="{}"), text("Done."),
                                         finish("stop"))))
    events = await collect(backend_for(server).stream(user()))
    assert [type(e).__name__ for e in events] == ["ToolCallStart", "ToolCallArgumentsDelta", "ToolCall",
                                                  "TextDelta", "Usage", "Done"]
    assert events[-1] == Done("tool_calls")  # a reply that made calls says so, whatever the server said


async def test_arguments_in_many_fragments(server: FakeServer) -> None:
    arguments = '{"city": "Reykjavík", "days": [1, 2, 3], "note": "a \\"quoted\\" word"}'
    server.replies.append(Reply(chat_sse(call(0, call_id="c1", name="forecast"),
                                         *(call(0, args=char) for char in arguments), finish("tool_calls"))))
    events = await collect(backend_for(server).stream(user()))
    assert arguments_text(events, started(events)["c1"]) == arguments
    assert sum(isinstance(e, ToolCallArgumentsDelta) for e in events) == len(arguments)
    [parsed] = [e for e in events if isinstance(e, ToolCall)]
    assert parsed.arguments == {"city": "Reykjavík", "days": [1, 2, 3], "note": 'a "quoted" word'}


async def test_server_repeating_id_and_name_in_every_chunk(server: FakeServer) -> None:
    # llama.cpp's server sends the id and the name again with every arguments fragment
    server.replies.append(Reply(chat_sse(*(call(0, call_id="c1", name="get_weather", args=fragment)
                                           for fragment in ('{"', "city", '": "', "Paris", '"}', "")),
                                         finish("tool_calls"))))
    events = await collect(backend_for(server).stream(user()))
    mine = started(events)["c1"]
    assert [e for e in events if isinstance(e, ToolCallStart)] == [ToolCallStart(mine, "get_weather", "c1")]
    assert [e for e in events if isinstance(e, ToolCall)] == [ToolCall("get_weather", {"city": "Paris"}, mine)]


async def test_every_call_gets_voxcalls_own_id_whatever_the_server_sent(server: FakeServer) -> None:
    server.replies.append(Reply(chat_sse(call(0, name="ping", args="{}"), call(1, call_id="", name="ping"),
                                         call(2, call_id="call_0", name="ping"), finish("tool_calls"))))
    server.replies.append(Reply(chat_sse(call(0, call_id="call_0", name="ping"), finish("tool_calls"))))
    backend = backend_for(server)
    first = await collect(backend.stream(user()))
    second = await collect(backend.stream(user()))
    starts = [e for e in first + second if isinstance(e, ToolCallStart)]
    calls = [e for e in first + second if isinstance(e, ToolCall)]
    assert [s.provider_call_id for s in starts] == ["", "", "call_0", "call_0"]
    assert [c.call_id for c in calls] == [s.call_id for s in starts]
    assert len({c.call_id for c in calls}) == 4 and all(c.call_id.startswith("call_") and len(c.call_id) > 20
                                                        for c in calls)


async def test_invalid_json_arguments_are_rejected(server: FakeServer) -> None:
    server.replies.append(Reply(chat_sse(call(0, call_id="c1", name="get_weather", args='{"city": Paris}'),
                                         call(1, call_id="c2", name="get_weather", args='["Paris"]'),
                                         finish("tool_calls"))))
    events = await collect(backend_for(server).stream(user()))
    rejected = [e for e in events if isinstance(e, RejectedCall)]
    assert [(r.name, r.source) for r in rejected] == [("get_weather", '{"city": Paris}'),
                                                      ("get_weather", '["Paris"]')]
    assert "not valid JSON" in rejected[0].reason and "JSON object" in rejected[1].reason
    assert [r.call_id for r in rejected] == list(started(events).values())  # each announced call taken back
    assert all(r.repairable for r in rejected)
    assert not any(isinstance(e, ToolCall) for e in events)


async def test_calls_are_checked_against_the_declared_tools(server: FakeServer) -> None:
    server.replies.append(Reply(chat_sse(call(0, call_id="c1", name="get_wether", args='{"city": "Paris"}'),
                                         call(1, call_id="c2", name="get_weather", args='{"city": 5}'),
                                         call(2, call_id="c3", name="get_weather", args='{"town": "Rome"}'),
                                         call(3, call_id="c4", name="functions.get_weather",
                                              args='{"city": "Oslo", "when": null}'),
                                         finish("tool_calls"))))
    events = await collect(backend_for(server).stream(user()))
    assert "c1" not in started(events)  # an undeclared tool is never announced
    unknown, wrong_type, missing = [e for e in events if isinstance(e, RejectedCall)]
    assert (unknown.name, unknown.call_id) == ("get_wether", "")
    assert "unknown tool 'get_wether'; did you mean 'get_weather'?" in unknown.reason
    assert "5 is not of type 'string'" in wrong_type.reason and wrong_type.call_id == started(events)["c2"]
    assert "missing required argument: city" in missing.reason
    [ok] = [e for e in events if isinstance(e, ToolCall)]  # a dotted name and a stray null are repaired
    assert (ok.name, ok.arguments, ok.call_id) == ("get_weather", {"city": "Oslo"}, started(events)["c4"])


async def test_empty_arguments_mean_no_arguments(server: FakeServer) -> None:
    server.replies.append(Reply(chat_sse(call(0, call_id="c1", name="ping"), finish("tool_calls"))))
    events = await collect(backend_for(server).stream(user()))
    assert ToolCall("ping", {}, started(events)["c1"]) in events


async def test_length_finish_reason(server: FakeServer) -> None:
    server.replies.append(Reply(chat_sse(text("Once upon", "length"))))
    events = await collect(backend_for(server).stream(user()))
    assert events[-1] == Done("length")


# -- failures -------------------------------------------------------------------------------------------------


async def test_http_401_is_a_safe_llm_error(server: FakeServer) -> None:
    body = b'{"error": {"message": "Incorrect API key provided: sk-secret123", "code": "invalid_api_key"}}'
    server.replies.append(Reply([body], status=401, content_type="application/json"))
    with pytest.raises(LLMError) as caught:
        await collect(backend_for(server, api_key="sk-secret123").stream(user()))
    assert caught.value.code == "auth" and caught.value.status == 401
    assert str(caught.value) == "backend returned HTTP 401 (invalid_api_key)"
    assert "sk-" not in caught.value.message


async def test_http_500_is_a_server_error(server: FakeServer) -> None:
    server.replies.append(Reply([b'{"error": {"message": "boom at /srv/app.py line 3"}}'], status=500,
                                content_type="application/json"))
    with pytest.raises(LLMError) as caught:
        await collect(backend_for(server).stream(user()))
    assert (caught.value.code, caught.value.message) == ("server_error", "backend returned HTTP 500")


async def test_connection_refused() -> None:
    with socket.socket() as sock:  # a port nothing listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    backend = OpenAIChatBackend("m", base_url=f"http://127.0.0.1:{port}/v1", max_retries=0)
    with pytest.raises(LLMError) as caught:
        await collect(backend.stream(user()))
    assert (caught.value.code, caught.value.message) == ("unavailable", "backend unavailable: connection refused")


async def test_stalled_server_times_out(server: FakeServer) -> None:
    server.replies.append(Reply([HOLD]))
    with pytest.raises(LLMError) as caught:
        await collect(backend_for(server, timeout=0.3).stream(user()))
    assert (caught.value.code, caught.value.message) == ("timeout", "backend timed out")


async def test_error_inside_the_stream(server: FakeServer) -> None:
    server.replies.append(Reply([*chat_sse(text("Hel"), done=False),
                                 b'data: {"error": {"message": "overloaded: key sk-x", "code": "overloaded"}}\n\n']))
    events = []
    with pytest.raises(LLMError) as caught:
        async for event in backend_for(server).stream(user()):
            events.append(event)
    assert events == [TextDelta("Hel")]
    assert caught.value.message == "backend reported an error (overloaded)"


async def test_stream_cut_short_is_an_error_not_a_half_call(server: FakeServer) -> None:
    server.replies.append(Reply(chat_sse(call(0, call_id="c1", name="get_weather", args='{"ci'), done=False)))
    events = []
    with pytest.raises(LLMError) as caught:
        async for event in backend_for(server).stream(user()):
            events.append(event)
    assert caught.value.code == "incomplete_stream"
    assert not any(isinstance(e, ToolCall) for e in events)


async def test_closing_the_stream_aborts_the_request(server: FakeServer) -> None:
    server.replies.append(Reply([*chat_sse(text("Hello"), done=False), HOLD]))
    stream = backend_for(server).stream(user())
    async with asyncio.timeout(TIMEOUT):
        assert await anext(stream) == TextDelta("Hello")
        await stream.aclose()
        await server.disconnected.wait()


# -- request building -----------------------------------------------------------------------------------------


def test_messages_merge_text_and_calls_and_follow_with_outputs() -> None:
    items: list[ChatItem] = [
        Message("user", "Weather in Paris and Rome?"),
        Message("assistant", "Checking."),
        FunctionCallItem("c1", "get_weather", '{"city":"Paris"}'),
        FunctionCallItem("c2", "get_weather", '{"city":"Rome"}'),
        FunctionOutputItem("c1", "sunny"),
        FunctionOutputItem("c2", "rain"),
        Message("assistant", "Sunny in Paris, rain in Rome."),
    ]
    assert chat_messages("Sys.", items) == [
        {"role": "system", "content": "Sys."},
        {"role": "user", "content": "Weather in Paris and Rome?"},
        {"role": "assistant", "content": "Checking.", "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": '{"city":"Paris"}'}},
            {"id": "c2", "type": "function", "function": {"name": "get_weather", "arguments": '{"city":"Rome"}'}},
        ]},
        {"role": "tool", "tool_call_id": "c1", "content": "sunny"},
        {"role": "tool", "tool_call_id": "c2", "content": "rain"},
        {"role": "assistant", "content": "Sunny in Paris, rain in Rome."},
    ]


def test_messages_carry_the_ids_the_provider_gave_when_they_are_distinct() -> None:
    once: list[ChatItem] = [Message("user", "q"), FunctionCallItem("call_v1", "f", "{}", "call_0"),
                            FunctionOutputItem("call_v1", "1")]
    messages = chat_messages("", once)
    assert messages[1]["tool_calls"][0]["id"] == "call_0" and messages[2]["tool_call_id"] == "call_0"
    twice = [*once, FunctionCallItem("call_v2", "f", "{}", "call_0"), FunctionOutputItem("call_v2", "2")]
    messages = chat_messages("", twice)
    assert [m["tool_calls"][0]["id"] for m in messages if "tool_calls" in m] == ["call_v1", "call_v2"]
    assert [m["tool_call_id"] for m in messages if m["role"] == "tool"] == ["call_v1", "call_v2"]


def test_messages_drop_dangling_calls_and_orphan_outputs() -> None:
    items: list[ChatItem] = [Message("user", "Hi"), FunctionCallItem("c1", "ping", "{}"),
                             FunctionOutputItem("zz", "lost"), Message("user", "Still there?")]
    assert chat_messages("", items) == [{"role": "user", "content": "Hi"},
                                        {"role": "user", "content": "Still there?"}]


def test_call_without_preceding_text_gets_its_own_assistant_message() -> None:
    items: list[ChatItem] = [Message("user", "Hi"), FunctionCallItem("c1", "ping", "{}"),
                             FunctionOutputItem("c1", "pong")]
    assert chat_messages("", items)[1] == {"role": "assistant", "content": None, "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "ping", "arguments": "{}"}}]}


@pytest.mark.parametrize(("choice", "expected"), [
    ("auto", "auto"), ("none", "none"), ("required", "required"),
    ({"type": "function", "name": "f"}, {"type": "function", "function": {"name": "f"}}),
])
def test_tool_choice_conversion(choice: str | dict[str, Any], expected: str | dict[str, Any]) -> None:
    assert chat_tool_choice(choice) == expected


def test_openai_itself_gets_max_completion_tokens_and_no_template_kwargs() -> None:
    backend = OpenAIChatBackend("gpt-x", base_url="https://api.openai.com/v1", api_key="sk-test")
    params = backend.request_params(LLMRequest(items=[Message("user", "Hi")], max_output_tokens=5))
    assert params["max_completion_tokens"] == 5
    assert "max_tokens" not in params and "extra_body" not in params and "tools" not in params


def test_reasoning_switch_and_extra_body_for_other_servers() -> None:
    backend = OpenAIChatBackend("m", base_url="http://localhost:8000/v1", extra_body={"top_k": 20})
    params = backend.request_params(LLMRequest(items=[Message("user", "Hi")]))
    assert params["extra_body"] == {"chat_template_kwargs": {"enable_thinking": False}, "top_k": 20}
    kept = OpenAIChatBackend("m", base_url="http://localhost:8000/v1", disable_reasoning=False)
    assert "extra_body" not in kept.request_params(LLMRequest(items=[Message("user", "Hi")]))


def test_tools_without_tool_choice_are_not_sent_when_absent() -> None:
    backend = OpenAIChatBackend("m", base_url="http://localhost:8000/v1")
    params = backend.request_params(LLMRequest(items=[Message("user", "Hi")], tool_choice="required"))
    assert "tool_choice" not in params


async def test_local_server_never_gets_the_openai_key(server: FakeServer, monkeypatch: pytest.MonkeyPatch,
                                                      ) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-real-openai-key")
    server.replies.append(Reply(chat_sse(text("ok", "stop"))))
    await collect(backend_for(server).stream(user()))
    assert server.requests[0].headers["authorization"] == "Bearer no-key"


def test_openai_without_a_key_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(LLMError) as caught:
        OpenAIChatBackend("gpt-x")
    assert caught.value.code == "auth"


async def test_aclose_closes_the_client(server: FakeServer) -> None:
    backend = backend_for(server)
    await backend.aclose()
    assert backend._client.is_closed()


async def test_call_without_a_name_is_rejected(server: FakeServer) -> None:
    server.replies.append(Reply(chat_sse(call(0, call_id="c1", args='{"x": 1}'), finish("tool_calls"))))
    events = await collect(backend_for(server).stream(user()))
    assert events == [RejectedCall("", '{"x": 1}', "the call has no function name", repairable=True),
                      Usage(0, 0), Done("tool_calls")]
