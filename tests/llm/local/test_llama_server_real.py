"""LlamaServerBackend against a real llama.cpp server (the scale-out launcher, ``python -m voxcall.llm.local.serve``,
in a child process) serving SmolLM2-135M:
it writes what the in-process path writes, reuses the server's cached prompt, and keeps the grammar's guarantees
(the fixtures are in conftest.py).
"""

from __future__ import annotations

import pytest

from tests.llm.local.test_llama_server import WEATHER
from tests.llm.local.test_llamacpp import TIMER, collect
from tests.requirements import require_smollm2
from voxcall.llm import (
    Done,
    LlamaCppBackend,
    LlamaServerBackend,
    LLMEvent,
    LLMRequest,
    Message,
    TextDelta,
    ToolCall,
    Usage,
)

require_smollm2()


def outcome(events: list[LLMEvent]) -> tuple[str, list[tuple[str, object]], Done]:
    """What a reply said and called, and how it ended."""
    done = events[-1]
    assert isinstance(done, Done) and isinstance(events[-2], Usage)
    text = "".join(e.text for e in events if isinstance(e, TextDelta))
    return text, [(e.name, e.arguments) for e in events if isinstance(e, ToolCall)], done


REQUESTS = [
    LLMRequest(items=[Message("user", "What's the weather in Paris?")], tools=[WEATHER, TIMER]),
    LLMRequest(items=[Message("user", "Set a timer for 10 minutes.")], tools=[WEATHER, TIMER]),
    LLMRequest(items=[Message("user", "Hello! Who are you?")], tools=[WEATHER, TIMER], max_output_tokens=12),
    LLMRequest(items=[Message("user", "What's the weather like?")], tools=[WEATHER], tool_choice="required",
               max_output_tokens=32),
    LLMRequest(items=[Message("user", "Tell me about Rome.")], tools=[WEATHER], voice=True, max_output_tokens=12),
    LLMRequest(items=[Message("user", "What's the weather in Paris and in Rome?")], tools=[WEATHER, TIMER]),
    LLMRequest(items=[Message("user", "Set timers for 5 and 10 minutes.")], tools=[WEATHER, TIMER]),
]


@pytest.mark.parametrize("request_", REQUESTS, ids=["evident", "timer", "small-talk", "required", "spoken",
                                                    "listed-cities", "listed-numbers"])
async def test_the_server_writes_what_the_in_process_path_writes(served: LlamaServerBackend,
                                                                 in_process: LlamaCppBackend,
                                                                 request_: LLMRequest) -> None:
    here = outcome(await collect(in_process.stream(request_)))
    there = outcome(await collect(served.stream(request_)))
    assert there[1] == here[1]  # the same decision and the same calls, argument for argument
    assert (there[2] == Done("tool_calls")) == (here[2] == Done("tool_calls"))
    if not here[1]:  # words: the first is the same; later ones may differ (batched evaluation rounds differently)
        assert there[0].split()[:1] == here[0].split()[:1] and "`" not in there[0]


async def test_the_weather_request_calls_the_weather_tool(served: LlamaServerBackend) -> None:
    _, calls, done = outcome(await collect(served.stream(REQUESTS[0])))
    assert calls == [("get_weather", {"city": "Paris"})] and done == Done("tool_calls")


async def test_listed_values_make_several_calls_on_the_server_too(served: LlamaServerBackend) -> None:
    _, calls, done = outcome(await collect(served.stream(REQUESTS[5])))
    assert calls == [("get_weather", {"city": "Paris"}), ("get_weather", {"city": "Rome"})]
    assert done == Done("tool_calls")


async def test_the_next_turn_finds_its_prefix_in_the_servers_cache(served: LlamaServerBackend) -> None:
    first = LLMRequest(items=[Message("user", "Set a timer for 3 minutes.")], tools=[WEATHER, TIMER])
    await collect(served.stream(first))
    second = LLMRequest(items=[Message("user", "Set a timer for 4 minutes.")], tools=[WEATHER, TIMER])
    usage = (await collect(served.stream(second)))[-2]
    assert isinstance(usage, Usage)
    assert usage.cached_input_tokens >= usage.input_tokens - 20  # only the new user words were evaluated


async def test_a_warm_prefix_is_cached_before_the_user_speaks(served: LlamaServerBackend) -> None:
    tools = [TIMER]  # a tool set no test above used: its prefix is new to the server
    await served.warm(LLMRequest(items=[], tools=tools, instructions="You are a kitchen timer."))
    request = LLMRequest(items=[Message("user", "Set a timer for 7 minutes.")], tools=tools,
                         instructions="You are a kitchen timer.")
    usage = (await collect(served.stream(request)))[-2]
    assert isinstance(usage, Usage) and usage.cached_input_tokens >= usage.input_tokens - 20  # the words, markers
