"""Native tool calls from a real OpenAI-compatible HTTP server (the official client, hand-written streams):
voxcall's own call ids whatever the provider numbers, and calls the tools do not accept rejected and repaired."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.core.tools.test_server_calls import make_toolbox
from tests.harness import WEATHER, Harness
from tests.llm.fake_server import FakeServer, Reply, chat_sse, responses_sse
from tests.llm.test_openai_chat import call, finish, text
from tests.llm.test_openai_responses import args_done, call_added, completed, text_delta
from voxcall.llm import LLMBackend, OpenAIChatBackend, OpenAIResponsesBackend


def chat(server: FakeServer) -> OpenAIChatBackend:
    return OpenAIChatBackend("m", base_url=server.base_url, max_retries=0)


def responses(server: FakeServer) -> OpenAIResponsesBackend:
    return OpenAIResponsesBackend("m", base_url=server.base_url, max_retries=0)


def chat_call(name: str, arguments: str, call_id: str = "call_0") -> Reply:
    """A Chat Completions reply making one call (by default under the id a per-reply numbering server gives)."""
    return Reply(chat_sse(call(0, call_id=call_id, name=name, args=arguments), finish("tool_calls")))


def chat_text(words: str) -> Reply:
    return Reply(chat_sse(text(words, "stop")))


def sent_ids(body: dict[str, Any]) -> tuple[list[str], list[str]]:
    """The call ids a Chat Completions request carries: those of the assistant's calls, those of the outputs."""
    calls = [c["id"] for m in body["messages"] for c in m.get("tool_calls") or ()]
    outputs = [m["tool_call_id"] for m in body["messages"] if m["role"] == "tool"]
    return calls, outputs


async def ask(h: Harness, words: str = "weather in Paris?") -> dict[str, Any]:
    """Say ``words``, ask for a response and return its ``response.done``."""
    count = len(h.of("response.done")) + 1
    await h.say(words)
    await h.send(type="response.create")
    return await h.wait("response.done", count)


# -- call ids ---------------------------------------------------------------------------------------------------


async def test_call_0_in_every_reply_completes_the_loop_with_distinct_ids(server: FakeServer) -> None:
    server.replies.extend([chat_call("get_weather", '{"city": "Paris"}'), chat_call("get_weather", '{"city": "Oslo"}'),
                           chat_text("Sunny in Paris, rain in Oslo.")])
    async with Harness(chat(server), prefetch=False) as h:
        await h.send(type="session.update", session={"type": "realtime", "tools": [WEATHER]})
        first = (await ask(h))["response"]["output"][0]
        await h.output(first["call_id"], "sunny")
        await h.send(type="response.create")
        second = (await h.wait("response.done", 2))["response"]["output"][0]
        await h.output(second["call_id"], "rain")  # refused before: "the call 'call_0' already has an output"
        await h.send(type="response.create")
        done = await h.wait("response.done", 3)
        assert not h.of("error")
        assert done["response"]["output"][0]["content"][0]["text"] == "Sunny in Paris, rain in Oslo."
        ids = [first["call_id"], second["call_id"]]
        assert len(set(ids)) == 2 and "call_0" not in ids and all(i.startswith("call_") for i in ids)
        # the provider gets its own id back while it is distinct in the request, and voxcall's once it is not
        assert sent_ids(server.requests[1].body) == (["call_0"], ["call_0"])
        assert sent_ids(server.requests[2].body) == (ids, ids)
        assert [m["content"] for m in server.requests[2].body["messages"] if m["role"] == "tool"] == ["sunny", "rain"]


async def test_call_0_in_every_server_tool_round_keeps_every_result(server: FakeServer) -> None:
    toolbox, runs = make_toolbox()
    server.replies.extend([chat_call("add", '{"a": 2, "b": 3}'), chat_call("add", '{"a": 5, "b": 10}'),
                           chat_text("The total is 15.")])
    async with Harness(chat(server), toolbox=toolbox, prefetch=False) as h:
        done = await ask(h, "add up")
        assert [o["type"] for o in done["response"]["output"]] == ["mcp_call", "mcp_call", "message"]
        assert runs["add"] == 2
        calls, outputs = sent_ids(server.requests[2].body)
        assert calls == outputs and len(set(calls)) == 2  # before: the second call_0 was left out as a repeat
        assert [m["content"] for m in server.requests[2].body["messages"] if m["role"] == "tool"] == ["5", "15"]


async def test_empty_call_ids_are_replaced_by_voxcalls_own(server: FakeServer) -> None:
    server.replies.extend([
        Reply(responses_sse(call_added(0, "", "get_weather"), args_done(0, '{"city": "Paris"}'), completed())),
        Reply(responses_sse(text_delta("Sunny."), completed()))])
    async with Harness(responses(server), prefetch=False) as h:
        await h.send(type="session.update", session={"type": "realtime", "tools": [WEATHER]})
        [item] = (await ask(h))["response"]["output"]
        assert item["call_id"].startswith("call_")
        await h.output(item["call_id"], "sunny")  # refused before: an empty call_id
        await h.send(type="response.create")
        await h.wait("response.done", 2)
        assert not h.of("error")
        sent = [i for i in server.requests[1].body["input"] if i["type"] != "message"]
        assert [(i["type"], i["call_id"]) for i in sent] == [("function_call", item["call_id"]),
                                                             ("function_call_output", item["call_id"])]


# -- validation and repair --------------------------------------------------------------------------------------


BAD_CALLS = [
    pytest.param("get_wether", '{"city": "Paris"}', "unknown tool 'get_wether'; did you mean 'get_weather'?",
                 id="undeclared-name"),
    pytest.param("get_weather", '{"city": Paris}', "arguments are not valid JSON", id="not-json"),
    pytest.param("get_weather", '["Paris"]', "arguments must be a JSON object", id="not-an-object"),
    pytest.param("get_weather", '{"city": 7}', "argument 'city': 7 is not of type 'string'", id="schema"),
]


@pytest.mark.parametrize(("name", "arguments", "reason"), BAD_CALLS)
async def test_a_bad_call_is_rejected_and_repaired_within_the_response(
        server: FakeServer, name: str, arguments: str, reason: str) -> None:
    server.replies.extend([chat_call(name, arguments), chat_call("get_weather", '{"city": "Paris"}')])
    async with Harness(chat(server), prefetch=False) as h:
        await h.send(type="session.update", session={"type": "realtime", "tools": [WEATHER]})
        done = await ask(h)
        [rejected] = h.of("voxcall.tool_call.rejected")
        assert rejected["name"] == name and reason in rejected["reason"]
        assert len(h.of("response.done")) == 1 and done["response"]["status"] == "completed"
        [item] = done["response"]["output"]
        assert (item["type"], item["status"], json.loads(item["arguments"])) == (
            "function_call", "completed", {"city": "Paris"})
        assert [i.type for i in h.session.conversation.items] == ["message", "function_call"]
        assert all(e["item"]["name"] == "get_weather" for e in h.of("response.output_item.added"))
        repair = server.requests[1].body["messages"][-2:]  # the bad call, and why it was refused
        assert repair[0]["tool_calls"][0]["function"]["name"] == name
        assert repair[1]["role"] == "tool" and reason in repair[1]["content"]
        assert repair[1]["tool_call_id"] == repair[0]["tool_calls"][0]["id"]
        json.loads(repair[0]["tool_calls"][0]["function"]["arguments"])  # a provider may parse what it is sent


@pytest.mark.parametrize("api", ["chat", "responses"])
async def test_repair_works_on_both_apis(server: FakeServer, api: str) -> None:
    backend: LLMBackend
    if api == "chat":
        backend = chat(server)
        server.replies.extend([chat_call("get_wether", '{"city": "Paris"}'), chat_text("Sorry, I cannot.")])
    else:
        backend = responses(server)
        server.replies.extend([
            Reply(responses_sse(call_added(0, "fc_1", "get_wether"), args_done(0, '{"city": "Paris"}'), completed())),
            Reply(responses_sse(text_delta("Sorry, I cannot."), completed()))])
    async with Harness(backend, prefetch=False) as h:
        await h.send(type="session.update", session={"type": "realtime", "tools": [WEATHER]})
        done = await ask(h)
        assert [o["type"] for o in done["response"]["output"]] == ["message"]
        assert len(server.requests) == 2 and len(h.of("voxcall.tool_call.rejected")) == 1
        if api == "responses":
            call_item, output = server.requests[1].body["input"][-2:]
            assert call_item["type"] == "function_call" and call_item["name"] == "get_wether"
            assert output["call_id"] == call_item["call_id"] and "did you mean" in output["output"]


async def test_with_repair_off_a_bad_call_is_only_rejected(server: FakeServer) -> None:
    server.replies.append(chat_call("get_wether", '{"city": "Paris"}'))
    async with Harness(chat(server), prefetch=False, repair_tool_calls=False) as h:
        await h.send(type="session.update", session={"type": "realtime", "tools": [WEATHER]})
        done = await ask(h)
        assert len(h.of("voxcall.tool_call.rejected")) == 1 and len(server.requests) == 1
        assert done["response"]["status"] == "completed" and done["response"]["output"] == []
        assert not h.of("response.output_item.added")


async def test_a_call_botched_twice_is_rejected_and_the_response_ends_cleanly(server: FakeServer) -> None:
    server.replies.extend([chat_call("get_weather", '{"city": 1}'), chat_call("get_weather", '{"city": 2}')])
    async with Harness(chat(server), prefetch=False) as h:
        await h.send(type="session.update", session={"type": "realtime", "tools": [WEATHER]})
        done = await ask(h)
        await h.settle()
        assert len(server.requests) == 2  # one repair attempt, no more
        assert [e["reason"] for e in h.of("voxcall.tool_call.rejected")] == [
            "get_weather: argument 'city': 1 is not of type 'string'",
            "get_weather: argument 'city': 2 is not of type 'string'"]
        assert len(h.of("response.done")) == 1
        assert done["response"]["status"] == "completed" and done["response"]["output"] == []
        # each started call was taken back: announced, then done as incomplete and deleted from the conversation
        assert [e["item"]["status"] for e in h.of("response.output_item.done")] == ["incomplete", "incomplete"]
        assert len(h.of("conversation.item.deleted")) == 2
        assert [i.type for i in h.session.conversation.items] == ["message"]


async def test_a_bad_server_tool_call_is_repaired_before_anything_runs(server: FakeServer) -> None:
    toolbox, runs = make_toolbox()
    server.replies.extend([chat_call("add", '{"a": "two", "b": 3}'), chat_call("add", '{"a": 2, "b": 3}'),
                           chat_text("It is 5.")])
    async with Harness(chat(server), toolbox=toolbox, prefetch=False) as h:
        done = await ask(h, "add up")
        assert runs["add"] == 1 and len(server.requests) == 3
        [rejected] = h.of("voxcall.tool_call.rejected")
        assert rejected["reason"] == "add: argument 'a': 'two' is not of type 'integer'"
        assert [(o["type"], o.get("output")) for o in done["response"]["output"]] == [("mcp_call", "5"),
                                                                                      ("message", None)]


async def test_no_repair_when_the_reply_also_calls_a_client_tool(server: FakeServer) -> None:
    server.replies.append(Reply(chat_sse(call(0, call_id="call_0", name="get_wether", args="{}"),
                                         call(1, call_id="call_1", name="get_weather", args='{"city": "Oslo"}'),
                                         finish("tool_calls"))))
    async with Harness(chat(server), prefetch=False) as h:
        await h.send(type="session.update", session={"type": "realtime", "tools": [WEATHER]})
        done = await ask(h)
        assert len(server.requests) == 1 and len(h.of("voxcall.tool_call.rejected")) == 1
        assert [o["name"] for o in done["response"]["output"]] == ["get_weather"]  # the client answers it first
