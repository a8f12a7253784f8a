"""Parallel calls on the local path: values the user listed for the call just made, or words after it asking
another tool, open another block (:mod:`voxcall.llm.local.parallel`), pure rules first, then with the real
SmolLM2-135M."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest

from tests.llm.local.test_llamacpp import TIMER, WEATHER, collect
from voxcall.llm import LlamaCppBackend, LLMRequest, Message, ToolCall
from voxcall.llm.local.parallel import last_block, listed_after, next_call
from voxcall.tools.schema import Tool

NAMES = {"get", "weather", "set", "timer"}


@pytest.mark.parametrize(("said", "value", "rest"), [
    ("What's the weather in Paris and in Rome?", "Paris", "Rome?"),
    ("Weather in Paris, and also for Rome", "Paris", "Rome"),
    ("Weather in Oslo, Rome and Madrid", "Oslo", "Rome and Madrid"),
    ("What's the weather in Boston, MA?", "Boston", ""),  # a comma without "and"/"or" after it: one value
    ("Weather in Mariposa, CA, and make sure it is in Celsius", "Mariposa", ""),  # no value after the "and"
    ("A trip to New York, NY in December and I stay 5 days", "New York", ""),
    ("Timers for 5 and 10 minutes", 5, "10 minutes"),
    ("What's the weather in Paris and tell me a joke", "Paris", ""),  # another kind of word: no list
    ("Weather in Paris and set a timer", "Paris", ""),  # a tool's name: another tool, not guessed
    ("Weather in Paris", "Paris", ""),
    ("The server is at example.org, and I will be using the nickname 'main'", "example.org", ""),  # a sentence
    ("Add 1 and 2", 1, ""),  # 2 is the call's own other value
    ("Find music or theater events in San Diego", "Music", "theater events in San Diego"),  # the shape as said
    ("What's the snow like in Paris and Bordeaux?", "Paris, France", "Bordeaux?"),  # a place written in a form
])
def test_a_value_is_listed_after_another_of_the_same_shape(said: str, value: object, rest: str) -> None:
    assert listed_after(said, value, NAMES, used=["1", "2"] if said.startswith("Add") else []) == rest


def test_the_next_call_is_of_the_same_tool_from_the_words_after_the_first() -> None:
    reply = "Sure.<code>get_weather(city='Paris')</code>"
    assert last_block(reply) == "<code>get_weather(city='Paris')</code>"
    found = next_call(last_block(reply), [WEATHER, TIMER], "Weather in Paris and in Rome?")
    assert found is not None and found.tool is WEATHER and found.said == "Rome?"
    assert next_call("<code>get_weather(city='Paris')</code>", [WEATHER, TIMER], "Weather in Paris?") is None


def test_a_word_naming_one_of_the_calls_fields_is_no_further_value() -> None:
    server = Tool(name="add_server", description="Add a database server.", parameters={
        "type": "object", "required": ["host", "username", "password"], "properties": {
            "host": {"type": "string"}, "port": {"type": "integer"}, "username": {"type": "string"},
            "password": {"type": "string"}}})
    for said in ("Add a server: host example.org, port 5432, username 'admin', and password 'secret'",
                 "Add the server example.org and password secret"):
        block = "<code>add_server(host='example.org', username='admin', password='secret')</code>"
        assert next_call(block, [server], said) is None
    assert next_call("<code>add_server(host='alpha.org', username='admin', password='x')</code>", [server],
                     "Add servers alpha.org and beta.org, username 'admin', password 'x'") is not None


@pytest.mark.parametrize(("block", "said", "tool", "rest"), [
    ("<code>set_timer(minutes=10)</code>", "Set a timer for 10 minutes and tell me the weather in Oslo.",
     "get_weather", "tell me the weather in Oslo."),
    ("<code>get_weather(city='Oslo')</code>", "Weather in Oslo, please, and a timer for 5 minutes",
     "set_timer", "a timer for 5 minutes"),  # the last joiner that leaves the words asking for one tool
    ("<code>get_weather(city='Oslo')</code>", "Weather in Oslo and set a timer", None, ""),  # no minutes said
    ("<code>get_weather(city='Oslo')</code>", "Weather in Oslo and what is the time", None, ""),  # no tool's
    ("<code>set_timer(minutes=5)</code>", "The weather is bad, set a timer for 5 minutes", None, ""),  # before it
    ("<code>get_weather(city='Oslo')</code>", "Weather in Oslo and the weather in Rome", None, ""),  # not again
])
def test_the_next_call_may_be_another_tool_the_words_after_the_first_ask_for(
        block: str, said: str, tool: str | None, rest: str) -> None:
    found = next_call(block, [WEATHER, TIMER], said)
    assert (found.tool.name, found.said) == (tool, rest) if found else tool is None


def test_a_tool_the_reply_called_already_is_not_asked_again() -> None:
    said = "Set a timer for 5 minutes and tell me the weather in Oslo"
    found = next_call("<code>set_timer(minutes=5)</code>", [WEATHER, TIMER], said)
    assert found is not None and found.tool is WEATHER
    assert next_call("<code>set_timer(minutes=5)</code>", [WEATHER, TIMER], said, {"get_weather"}) is None


def test_an_identifier_said_again_after_a_call_asks_no_other_tool() -> None:
    def tool(name: str, key: str) -> Tool:
        return Tool(name=name, description="", parameters={"type": "object", "required": [key],
                                                            "properties": {key: {"type": "string"}}})

    stock, order = tool("inventory_management", "product_id"), tool("order_status_check", "order_id")
    said = "Check the stock of product 123123, and the id was 123123"
    assert next_call("<code>inventory_management(product_id='123123')</code>", [stock, order], said) is None
    asked = next_call("<code>inventory_management(product_id='123123')</code>", [stock, order],
                      "Check the stock of product 123123, and the order status of id 555")
    assert asked is not None and asked.tool is order


@pytest.fixture(scope="module")
def backend() -> Iterator[LlamaCppBackend]:
    model = LlamaCppBackend(n_ctx=2048)
    yield model
    asyncio.run(model.aclose())


@pytest.mark.parametrize(("said", "calls"), [
    ("What's the weather in Paris and in Rome?", [("get_weather", {"city": "Paris"}),
                                                  ("get_weather", {"city": "Rome"})]),
    ("Set timers for 5 and 10 minutes.", [("set_timer", {"minutes": 5}), ("set_timer", {"minutes": 10})]),
    ("What's the weather in Paris?", [("get_weather", {"city": "Paris"})]),
    ("Set a timer for 10 minutes and tell me the weather in Oslo.", [("set_timer", {"minutes": 10}),
                                                                     ("get_weather", {"city": "Oslo"})]),
])
async def test_listed_values_make_several_calls(backend: LlamaCppBackend, said: str,
                                                calls: list[tuple[str, object]]) -> None:
    events = await collect(backend.stream(LLMRequest(items=[Message("user", said)], tools=[WEATHER, TIMER])))
    assert [(e.name, e.arguments) for e in events if isinstance(e, ToolCall)] == calls


async def test_one_call_when_parallel_calls_are_off(backend: LlamaCppBackend) -> None:
    request = LLMRequest(items=[Message("user", "What's the weather in Paris and in Rome?")], tools=[WEATHER, TIMER],
                         parallel_tool_calls=False)
    events = await collect(backend.stream(request))
    assert len([e for e in events if isinstance(e, ToolCall)]) == 1
