"""The prompt cache of the in-process engine with the real SmolLM2-135M: sessions with different prompts stop
evicting each other.

The engine is llama.cpp's server; with one slot, a session whose prompt the slot dropped for another session's finds
it in the host-memory prompt cache (``state_cache_bytes``), restored rather than evaluated again, and the reply
that follows is the one a fresh evaluation gives.
"""

from __future__ import annotations

import asyncio
from dataclasses import replace

import pytest

from tests.llm.local.test_llamacpp import TOOLS, collect, ends_properly
from tests.requirements import require_smollm2
from voxcall.config import DEFAULT_INSTRUCTIONS
from voxcall.llm import LlamaCppBackend, LLMEvent, LLMRequest, Message, TextDelta, ToolCall, Usage
from voxcall.llm.local.plan import LOCAL_DEFAULTS, ReplyOptions
from voxcall.llm.local.sent_prompts import SentPrompts
from voxcall.tools import Tool

require_smollm2()

CONVERTER = Tool("convert_units", "Convert a quantity from one unit to another.",
                 {"type": "object", "properties": {"value": {"type": "number"}, "from_unit": {"type": "string"},
                                                   "to_unit": {"type": "string"}},
                  "required": ["value", "from_unit", "to_unit"]})


def ask(tools: list[Tool], words: str = "Hello there") -> LLMRequest:
    return LLMRequest(items=[Message("user", words)], tools=tools, max_output_tokens=8)


def alternating(backend: LlamaCppBackend, words: str = "Hello there") -> list[list[LLMEvent]]:
    """The events of three requests on ``backend``: one session's instructions and tools, another's, the first's
    again. (Sessions with the same instructions share the start of their prompts: see the last test.)"""
    sessions = [("You answer questions about the weather.", TOOLS), ("You convert units.", [CONVERTER])]

    async def run() -> list[list[LLMEvent]]:
        try:
            return [await collect(backend.stream(replace(ask(tools, words), instructions=instructions)))
                    for instructions, tools in (*sessions, sessions[0])]
        finally:
            await backend.aclose()
    return asyncio.run(run())


def usage(events: list[LLMEvent]) -> Usage:
    return ends_properly(events)


@pytest.mark.parametrize("state_cache_bytes", [LOCAL_DEFAULTS.state_cache_bytes, 0])
def test_sessions_with_different_tools_keep_their_prefix_only_with_the_cache(state_cache_bytes: int) -> None:
    backend = LlamaCppBackend(n_ctx=1024, slots=1, state_cache_bytes=state_cache_bytes,
                              options=ReplyOptions(demos=False))
    # without a cache, nothing would restore the slot a one-token prompt (``sent_prompts``) pushed out
    assert backend.engine._sent.sole_cached_slot is bool(state_cache_bytes)  # type: ignore[attr-defined]
    first, other, again = (usage(events) for events in alternating(backend))
    assert again.input_tokens == first.input_tokens
    if state_cache_bytes:
        assert again.cached_input_tokens >= again.input_tokens - 2  # its whole prefix, but the last token or two
    else:
        assert again.cached_input_tokens <= other.cached_input_tokens + 1  # only what it shares with the other


def test_a_restored_prompt_gives_the_reply_a_fresh_one_gives() -> None:
    backend = LlamaCppBackend(n_ctx=1024, slots=1)
    first, _, again = alternating(backend, "What's the weather in Oslo, and is it raining?")
    assert usage(again).cached_input_tokens > usage(first).cached_input_tokens + 100  # restored, not evaluated

    def said(events: list[LLMEvent]) -> list[object]:
        return [e.text if isinstance(e, TextDelta) else (e.name, e.arguments) for e in events
                if isinstance(e, TextDelta | ToolCall)]

    assert said(again) == said(first)  # greedy decoding after the restored state: the same reply


def test_a_session_with_tools_of_its_own_reuses_the_rules_another_session_evaluated() -> None:
    """The rules of calling come before the tools in every tools prompt, so a session whose tools the engine never
    saw evaluates only from its example and stubs on (with the same instructions as the other session)."""
    backend = LlamaCppBackend(n_ctx=1024, slots=1, options=ReplyOptions(demos=False))

    async def run() -> list[Usage]:
        try:
            return [usage(await collect(backend.stream(ask(tools)))) for tools in (TOOLS, [CONVERTER])]
        finally:
            await backend.aclose()

    first, other = asyncio.run(run())
    assert first.cached_input_tokens == 0 and other.cached_input_tokens >= 120, (first, other)


def test_a_short_prompt_beginning_as_a_longer_one_does_not_cost_the_longer_one_its_cached_prefix() -> None:
    """A session without tools (the instructions alone) and one with tools and the same instructions, in turn: the
    short prompt keeps most of itself for the long one, so llama.cpp's server would keep its slot and evaluate the
    tools again; the engine has it look in its prompt cache instead (see ``sent_prompts``)."""
    backend = LlamaCppBackend(n_ctx=1024, slots=1, options=ReplyOptions(demos=False))
    instructions = DEFAULT_INSTRUCTIONS  # ~80 tokens: most of a prompt without tools

    async def run() -> list[Usage]:
        try:
            return [usage(await collect(backend.stream(replace(ask(tools), instructions=instructions))))
                    for tools in (TOOLS, [], TOOLS)]
        finally:
            await backend.aclose()

    first, short, again = asyncio.run(run())
    assert short.input_tokens < first.input_tokens / 2 and short.cached_input_tokens > 10  # it begins as the first
    assert again.cached_input_tokens >= again.input_tokens - 2, (first, short, again)


@pytest.mark.parametrize(("sole", "slot", "prompt", "sent_before", "missed"), [
    (True, [1] * 100, [1] * 90 + [2] * 200, [[1] * 90 + [2] * 150], True),  # keeps 0.9; the cache has 150 more
    (False, [1] * 100, [1] * 90 + [2] * 200, [[1] * 90 + [2] * 150], False),  # a server others use too
    (True, [1] * 100, [1] * 40 + [2] * 200, [[1] * 40 + [2] * 150], False),  # keeps 0.4: the server looks itself
    (True, [1] * 100, [1] * 90 + [2] * 200, [[1] * 90 + [2] * 20], False),  # the cache has too little more
    (True, [], [2] * 200, [[2] * 150], False),  # an empty slot: the server looks by itself
])
def test_a_slot_that_would_hide_the_cache_is_told_apart(sole: bool, slot: list[int], prompt: list[int],
                                                        sent_before: list[list[int]], missed: bool) -> None:
    sent = SentPrompts(sole_cached_slot=sole)
    for earlier in sent_before:
        sent.add(earlier)
    sent.add(slot)
    sent.slot = tuple(slot)
    assert sent.cache_missed(prompt) is missed
