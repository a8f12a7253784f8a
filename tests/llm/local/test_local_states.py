"""Saved context states with the real SmolLM2-135M: sessions with different prompts stop evicting each other.

A prompt evaluated before another one is restored from its saved state rather than evaluated again, and what the
model picks next is exactly what it picked after evaluating the prompt from scratch.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator

import numpy as np
import pytest

from tests.llm.local.test_llamacpp import TOOLS, collect, ends_properly
from tests.requirements import require_smollm2
from voxcall.llm import LlamaCppBackend, LLMRequest, Message
from voxcall.llm.local.model import STATE_MARGIN, LocalModel
from voxcall.llm.local.plan import LOCAL_DEFAULTS, ReplyOptions
from voxcall.tools import Tool

PICKS = 6  # greedy tokens compared after a restore


@pytest.fixture(scope="module")
def model() -> Iterator[LocalModel]:
    loaded = LocalModel(require_smollm2(), n_ctx=1024, n_threads=2, decode_threads=1,
                        state_cache_bytes=LOCAL_DEFAULTS.state_cache_bytes)
    yield loaded
    loaded.close()


def prompt(model: LocalModel, system: str, user: str) -> list[int]:
    """A chat prompt whose system part (repeated) is longer than :data:`STATE_MARGIN` tokens."""
    text = model.template.render([Message("system", " ".join([system] * 6)), Message("user", user)])
    tokens = model.tokenize(text, prompt_start=True)
    assert len(tokens) > STATE_MARGIN + 16
    return tokens


def greedy(model: LocalModel) -> list[int]:
    picked = []
    for _ in range(PICKS):
        picked.append(model.pick(0.0))
        model.advance(picked[-1])
    return picked


def test_a_prompt_evaluated_before_another_is_restored_exactly(model: LocalModel) -> None:
    cancel = threading.Event()
    first = prompt(model, "You know the weather in every city of the world.", "Is it raining in Oslo?")
    second = prompt(model, "You are a calculator that adds and multiplies numbers.", "What is 3 times 4?")
    # evaluated from scratch, the last token alone as after a restore (llama.cpp's kernels for one token and for a
    # batch of them differ in the last bits)
    assert model.evaluate(first[:-1], cancel) < STATE_MARGIN
    assert model.evaluate(first, cancel) == len(first) - 1
    fresh_logits = model._logits().copy()
    fresh_picks = greedy(model)
    assert model.evaluate(second, cancel) < STATE_MARGIN
    assert model.evaluate(first, cancel) == len(first) - 1  # restored: only the last token is evaluated
    np.testing.assert_array_equal(model._logits(), fresh_logits)
    assert greedy(model) == fresh_picks


def test_a_warm_restores_a_saved_prefix(model: LocalModel) -> None:
    cancel = threading.Event()
    first = prompt(model, "You book tables at the restaurants of the town for its visitors.", "A table for two?")
    second = prompt(model, "You translate English words and sentences into French for tourists.", "Good morning?")
    model.evaluate(first, cancel)
    model.evaluate(second, cancel)
    assert model.preload(first, cancel) == len(first)  # all there once restored: nothing evaluated
    assert model.evaluate(first, cancel) == len(first) - 1


CONVERTER = Tool("convert_units", "Convert a quantity from one unit to another.",
                 {"type": "object", "properties": {"value": {"type": "number"}, "from_unit": {"type": "string"},
                                                   "to_unit": {"type": "string"}},
                  "required": ["value", "from_unit", "to_unit"]})


def cached_tokens_alternating(backend: LlamaCppBackend) -> list[tuple[int, int]]:
    """(input, cached) tokens of three requests: one session's tools, another's, the first's again."""
    def ask(tools: list[Tool]) -> LLMRequest:
        return LLMRequest(items=[Message("user", "Hello there")], tools=tools, max_output_tokens=2)

    async def run() -> list[tuple[int, int]]:
        usages = [ends_properly(await collect(backend.stream(ask(tools)))) for tools in (TOOLS, [CONVERTER], TOOLS)]
        await backend.aclose()
        return [(usage.input_tokens, usage.cached_input_tokens) for usage in usages]
    return asyncio.run(run())


@pytest.mark.parametrize("state_cache_bytes", [LOCAL_DEFAULTS.state_cache_bytes, 0])
def test_sessions_with_different_tools_keep_their_prefix_only_with_the_store(state_cache_bytes: int) -> None:
    backend = LlamaCppBackend(n_ctx=1024, state_cache_bytes=state_cache_bytes, options=ReplyOptions(demos=False))
    (first, _), (_, shared_with_first), (again, cached) = cached_tokens_alternating(backend)
    assert again == first
    if state_cache_bytes:
        assert cached >= again - 2  # its whole prefix: the prompt but its last token (or the reply's opener)
    else:
        assert cached <= shared_with_first + 1  # only what the other session's prompt shares with it
