"""LlamaCppBackend with the real SmolLM2-135M and a conversation longer than its context: fitted, never failed.

The context is 1024 tokens here (the server's is 2048): the same fitting, reached in fewer turns, so that a
30-turn chat stays short to run. Only the long chat generates; the other tests look at the fitted prompt.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterator

import pytest

from tests.requirements import require_smollm2
from voxcall.llm import (
    ChatItem,
    Done,
    FunctionCallItem,
    FunctionOutputItem,
    LlamaCppBackend,
    LLMError,
    LLMRequest,
    Message,
    TextDelta,
    Usage,
)
from voxcall.llm.local.demos import demo_messages
from voxcall.tools import Tool

require_smollm2()

N_CTX = 1024
WEATHER = Tool("get_weather", "Get the weather forecast for a city.",
               {"type": "object", "properties": {"city": {"type": "string", "examples": ["Paris"]}},
                "required": ["city"]})
TIMEOUT = 180.0  # seconds per stream: a prompt evaluated afresh after a cut (~600 tokens) takes a minute on a
# 2-core machine shared with other busy processes (a few seconds on an idle one)


@pytest.fixture(scope="module")
def backend() -> Iterator[LlamaCppBackend]:
    model = LlamaCppBackend(n_ctx=N_CTX)
    yield model
    asyncio.run(model.aclose())


def weather_turn(n: int) -> list[ChatItem]:
    """A turn with a tool call and its output, about 60 tokens."""
    call_id = f"call_{n}"
    return [Message(role="user", text=f"Turn {n}: what is the weather like in city number {n} today?"),
            FunctionCallItem(call_id=call_id, name="get_weather", arguments=f'{{"city": "City {n}"}}'),
            FunctionOutputItem(call_id=call_id, output=f"Sunny and {n % 30} degrees, light wind from the west."),
            Message(role="assistant", text=f"It is sunny in city {n}, {n % 30} degrees.")]


async def test_a_30_turn_chat_completes_and_mostly_reuses_the_evaluated_prefix(
        backend: LlamaCppBackend, caplog: pytest.LogCaptureFixture) -> None:
    """Turns of about 25 tokens and two-token replies: the chat outgrows the context at about turn 18; what it costs
    to run is mostly evaluating the prompts after each cut."""
    caplog.set_level(logging.INFO, logger="voxcall.llm.local.plan")
    items: list[ChatItem] = []
    usages: list[Usage] = []
    for n in range(30):
        items.append(Message(role="user", text=f"Turn {n}: hello again, and what is the weather like in city {n}, "
                                               "the one by the river?"))
        request = LLMRequest(items=list(items), instructions="You are a helpful assistant.", tools=[WEATHER],
                             max_output_tokens=2)
        async with asyncio.timeout(TIMEOUT):
            events = [event async for event in backend.stream(request)]
        assert isinstance(events[-1], Done) and isinstance(events[-2], Usage), f"turn {n}"
        usages.append(events[-2])
        items.append(Message(role="assistant", text="".join(e.text for e in events if isinstance(e, TextDelta))
                             or "Sure."))
    assert all(usage.input_tokens + 2 <= N_CTX for usage in usages)
    dropped = [r.getMessage() for r in caplog.records if "oldest" in r.getMessage()]
    assert dropped and "oldest of 30 turns are left out" in dropped[-1]
    # Turns go in chunks: most prompts share all but the newest words with the one before. A prompt evaluated
    # afresh past the head (instructions, tools, demonstrations) marks a cut; dropping one turn per request
    # once the context is full would cut on every one of the last ~12.
    fresh = [n for n, usage in enumerate(usages) if n and usage.input_tokens - usage.cached_input_tokens > 100]
    assert 1 <= len(fresh) <= 4, fresh


def test_the_oldest_turns_go_with_their_calls_and_outputs_and_the_prompt_fits(backend: LlamaCppBackend) -> None:
    items = [item for n in range(40) for item in weather_turn(n)] + [Message(role="user", text="And tomorrow?")]
    request = LLMRequest(items=items, instructions="You are a helpful assistant.", tools=[WEATHER])
    fitted = backend.planner.prompt.fit(request, [WEATHER], "")
    assert 0 < fitted.dropped_turns < 40 and fitted.turns == 41
    assert len(fitted.tokens) <= N_CTX - backend.planner.options.max_output_tokens
    conversation = fitted.messages[1 + len(demo_messages([WEATHER], with_plain=True)):]
    assert conversation[0].role == "user" and conversation[0].text.startswith(f"Turn {fitted.dropped_turns}:")
    assert conversation[-1].text == "And tomorrow?"
    for at, message in enumerate(conversation):
        if message.text.startswith("Result of get_weather"):  # each output right after the call it answers
            assert "<code>get_weather(" in conversation[at - 1].text


def test_a_long_latest_turn_pushes_out_the_demonstrations(backend: LlamaCppBackend) -> None:
    """The latest turn with the demonstrations does not fit: they go, and the earlier turn, which then fits,
    stays."""
    question = "Please read this carefully. " * 90 + "What is the weather in Oslo?"  # with demonstrations: too long
    request = LLMRequest(items=[*weather_turn(1), Message(role="user", text=question)],
                         instructions="You are a helpful assistant.", tools=[WEATHER])
    fitted = backend.planner.prompt.fit(request, [WEATHER], "")
    assert fitted.dropped_demos and fitted.dropped_turns == 0
    assert len(fitted.tokens) <= N_CTX - backend.planner.options.max_output_tokens
    assert [m.role for m in fitted.messages] == ["system", "user", "assistant", "user", "assistant", "user"]
    assert fitted.messages[1].text.startswith("Turn 1:") and fitted.messages[-1].text == question
    assert "def get_weather(" in fitted.messages[0].text  # the tools' prompt stays whole


async def test_instructions_longer_than_the_context_fail_with_a_clear_error(backend: LlamaCppBackend) -> None:
    request = LLMRequest(items=[Message(role="user", text="Hi")], instructions="Always be polite. " * 300,
                         max_output_tokens=8)
    with pytest.raises(LLMError) as caught:
        await anext(backend.stream(request))
    assert caught.value.code == "context_length_exceeded"
    assert "instructions" in caught.value.message and f"({N_CTX} tokens)" in caught.value.message


def test_the_warm_prefix_of_a_fitted_conversation_opens_the_next_prompt(backend: LlamaCppBackend) -> None:
    before = [item for n in range(40) for item in weather_turn(n)]
    after = [*before, Message(role="user", text="And tomorrow?")]
    prefix = backend.planner.prefix(LLMRequest(items=before, tools=[WEATHER]))
    prompt = backend.planner.plan(LLMRequest(items=after, tools=[WEATHER]), [WEATHER]).prompt
    assert backend.planner.prompt.fit(LLMRequest(items=after, tools=[WEATHER]), [WEATHER], "").dropped_turns > 0
    assert prompt[:len(prefix)] == prefix
