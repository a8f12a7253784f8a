"""LlamaCppBackend.warm with the real SmolLM2-135M: what a warm leaves in the server's cache, and how it gives way.

The engine in this process warms in chunks (each request the prefix so far) and stops at the chunk under way when
a reply starts. The server's own report (``/metrics``: prompt tokens evaluated) says what was evaluated; orders are
asserted on the events, never on timings.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator

import httpx2
import pytest

from tests.llm.local.test_llamacpp import TIMEOUT, TOOLS, _visible, collect, ends_properly
from voxcall.language import LANGUAGES
from voxcall.llm import LlamaCppBackend, LLMEvent, LLMRequest, Message, TextDelta, ToolCall, warm, warm_shared
from voxcall.llm.local import server_engine
from voxcall.tools import Tool


@pytest.fixture(scope="module")
def backend() -> Iterator[LlamaCppBackend]:
    model = LlamaCppBackend(n_ctx=2048)
    yield model
    asyncio.run(model.aclose())


async def evaluated(backend: LlamaCppBackend) -> int:
    """The prompt tokens the in-process server has evaluated so far (its ``/metrics``)."""
    async with httpx2.AsyncClient(base_url=backend.server.url, transport=backend.server.transport()) as client:
        text = (await client.get("/metrics")).text
    return int(float(next(line.split()[-1] for line in text.splitlines()
                          if line.startswith("llamacpp:prompt_tokens_total"))))


def conversation(tools: list[Tool], turns: int = 1, *, voice: bool = True) -> tuple[LLMRequest, LLMRequest]:
    """A conversation no earlier test evaluated, before and after the user's new words (``voice``: spoken; a cold
    spoken reply opens with an acknowledgement)."""
    said = [Message("user", "Weather in Oslo?"), Message("assistant", "It is sunny in Oslo.")] * turns
    before = LLMRequest(items=said, instructions=f"You are a test assistant (run {time.time_ns()}).", tools=tools,
                        max_output_tokens=8, voice=voice)
    after = LLMRequest(items=[*before.items, Message("user", "And in Rome?")], instructions=before.instructions,
                       tools=tools, max_output_tokens=8, voice=voice)
    return before, after


async def test_after_a_warm_the_request_evaluates_only_the_new_words(backend: LlamaCppBackend) -> None:
    before, after = conversation(TOOLS)
    prefix = len(backend.planner.prefix(before))
    assert prefix > 300  # system prompt, tool stubs, demonstrations, the turn so far
    async with asyncio.timeout(TIMEOUT):
        start = await evaluated(backend)
        await warm(backend, before)
        assert await evaluated(backend) - start >= prefix - 1
        again = await evaluated(backend)
        await warm(backend, before)  # cached already: a look or two, a token each
        assert await evaluated(backend) - again <= 3
        usage = ends_properly(await collect(backend.stream(after)))
    assert usage.cached_input_tokens >= prefix - 1
    assert usage.input_tokens - usage.cached_input_tokens < 20  # the user's words and the turns' markers


async def test_the_part_every_tools_prompt_shares_is_evaluated_once_for_every_tool_set(
        backend: LlamaCppBackend) -> None:
    """What a server warms at start: the instructions and the rules of calling, which a session declaring tools no
    one declared before then reuses, evaluating from its own tools on."""
    defaults = LLMRequest(items=[], instructions=f"You are a test assistant (run {time.time_ns()}).", voice=True)
    shared = backend.planner.shared_prefix(defaults)
    text = b"".join(backend.planner.vocabulary.piece(t, special=True) for t in shared).decode()
    assert defaults.instructions in text and "Rules:" in text and "def " not in text
    converter = Tool("convert_units", "Convert a quantity from one unit to another.",
                     {"type": "object", "properties": {"value": {"type": "number"}, "unit": {"type": "string"}},
                      "required": ["value", "unit"]})
    asked = [LLMRequest(items=[Message("user", "Weather in Oslo?")], instructions=defaults.instructions, tools=tools,
                        max_output_tokens=8, voice=True) for tools in (TOOLS, [converter])]
    assert all(backend.planner.prefix(request)[:len(shared)] == shared for request in asked)
    async with asyncio.timeout(TIMEOUT):  # the instructions are new: without the warm, ~20 tokens were cached
        await warm_shared(backend, defaults)
        usage = ends_properly(await collect(backend.stream(asked[1])))
    assert usage.cached_input_tokens >= len(shared) - 1


async def test_a_spoken_question_before_the_warm_is_done_opens_with_a_short_phrase(
        backend: LlamaCppBackend) -> None:
    """A session's first turn, its tools prompt not read yet: the reply opens with "Let me see." (or another of
    the phrases), then the model's own reply follows; once the prompt is warm, the same turn gets none."""
    before, after = conversation(TOOLS)
    async with asyncio.timeout(TIMEOUT):
        await warm_shared(backend, LLMRequest(items=[], instructions=before.instructions, voice=True))
        assert backend.engine.pending_s(backend.planner.prefix(before)) > 0.3  # the stubs, the demonstrations
        cold = await collect(backend.stream(after))
        await warm(backend, before)
        warmed = await collect(backend.stream(after))
    ends_properly(cold)
    first, *rest = [e for e in cold if isinstance(e, TextDelta | ToolCall)]
    assert isinstance(first, TextDelta) and first.text.strip() in LANGUAGES["en"].thinking
    assert rest  # the model's reply: words or a call
    assert _visible(warmed) == _visible(cold)[1:]  # the same reply (greedy), without the phrase


async def test_a_cancelled_warm_leaves_the_backend_correct(backend: LlamaCppBackend) -> None:
    before, after = conversation([], turns=12, voice=False)
    reference = await collect(backend.stream(after))  # cold
    before, after = conversation([], turns=12, voice=False)  # the same words, after another prefix
    warming = asyncio.create_task(warm(backend, before))
    await asyncio.sleep(0.1)  # its first chunk is under way
    warming.cancel()
    with pytest.raises(asyncio.CancelledError):
        await warming
    events = await collect(backend.stream(after))
    assert _visible(events) == _visible(reference)  # greedy: the same reply as from a cold context


async def test_a_stream_stops_a_running_warm_after_its_chunk(backend: LlamaCppBackend,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(backend.engine, "_chunk_s", 0.0)  # chunks of MIN_WARM_CHUNK tokens: many of them
    monkeypatch.setattr(backend.engine, "_speed", 1.0)
    before, after = conversation([], turns=12, voice=False)
    prefix = len(backend.planner.prefix(before))
    log: list[str | LLMEvent] = []

    async def warming() -> None:
        await warm(backend, before)
        log.append("warm returned")

    async def streaming() -> None:
        async for event in backend.stream(after):
            log.append(event)

    async with asyncio.timeout(TIMEOUT):
        start = await evaluated(backend)
        warm_task = asyncio.create_task(warming())
        while await evaluated(backend) == start:  # a chunk was evaluated
            await asyncio.sleep(0.01)
        stream_task = asyncio.create_task(streaming())
        await asyncio.gather(warm_task, stream_task)
    assert log[0] == "warm returned"  # the warm gave way before the reply's first word
    usage = ends_properly([e for e in log if not isinstance(e, str)])
    assert server_engine.MIN_WARM_CHUNK <= usage.cached_input_tokens < prefix  # it went on from where the warm was
