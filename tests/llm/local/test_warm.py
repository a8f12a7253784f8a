"""LlamaCppBackend.warm with the real SmolLM2-135M: what a warm leaves in the context, and how it gives way.

The worker's steps are watched through :class:`Worker`, which wraps the context's ``eval`` (and may hold its first
chunk until the test lets it go) and logs, in the worker's own order, each chunk and the end of each warm. Orders
are asserted on that log and on the events, never on timings.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from tests.llm.local.test_llamacpp import TIMEOUT, TOOLS, _visible, collect, ends_properly
from voxcall.llm import LlamaCppBackend, LLMEvent, LLMRequest, Message, warm
from voxcall.llm.local import model as local_model
from voxcall.tools import Tool

CHUNK = 16
"""The prompt chunk of the tests that stop a warm midway: small, so that a short prompt has several."""


@pytest.fixture(scope="module")
def backend() -> Iterator[LlamaCppBackend]:
    model = LlamaCppBackend(n_ctx=1024)
    yield model
    asyncio.run(model.aclose())


@pytest.fixture
def small_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(local_model, "PROMPT_CHUNK", CHUNK)
    monkeypatch.setattr(local_model, "PRELOAD_CHUNK", CHUNK)


class Worker:
    """Logs the worker's steps: ``"chunk"`` per ``eval`` call, ``"warmed"`` when a warm's job ends. With ``hold``,
    the first ``eval`` waits, once :attr:`started` is set, until :attr:`release` is."""

    def __init__(self, backend: LlamaCppBackend, monkeypatch: pytest.MonkeyPatch, *, hold: bool = False) -> None:
        self.log: list[str] = []
        self.started = threading.Event()
        self.release = threading.Event()
        if not hold:
            self.release.set()
        model = backend.model
        evaluate, preload = model._llm.eval, model.preload

        def eval_chunk(tokens: Any) -> None:
            self.log.append("chunk")
            self.started.set()
            self.release.wait(TIMEOUT)
            evaluate(tokens)

        def watched_preload(*args: Any) -> int:
            try:
                return preload(*args)
            finally:
                self.log.append("warmed")

        monkeypatch.setattr(model._llm, "eval", eval_chunk)
        monkeypatch.setattr(model, "preload", watched_preload)

    async def wait_started(self) -> None:
        await asyncio.to_thread(self.started.wait, TIMEOUT)

    def warm_chunks(self) -> int:
        """How many chunks the first warm evaluated."""
        return self.log.index("warmed")


def conversation(tools: list[Tool]) -> tuple[LLMRequest, LLMRequest]:
    """A conversation no earlier test evaluated, before and after the user's new words."""
    before = LLMRequest(items=[Message("user", "Weather in Oslo?"), Message("assistant", "It is sunny in Oslo.")],
                        instructions=f"You are a test assistant (run {time.time_ns()}).", tools=tools,
                        max_output_tokens=8, voice=True)
    after = LLMRequest(items=[*before.items, Message("user", "And in Rome?")], instructions=before.instructions,
                       tools=tools, max_output_tokens=8, voice=True)
    return before, after


async def test_after_a_warm_the_request_evaluates_only_the_new_words(backend: LlamaCppBackend,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    before, after = conversation(TOOLS)
    prefix = len(backend.planner.prefix(before))
    assert prefix > 300  # system prompt, tool stubs, demonstrations, the turn so far
    async with asyncio.timeout(TIMEOUT):
        await warm(backend, before)
        worker = Worker(backend, monkeypatch)
        await warm(backend, before)  # already in the context: nothing to evaluate
        assert worker.log == ["warmed"]
        usage = ends_properly(await collect(backend.stream(after)))
    assert usage.cached_input_tokens >= prefix
    assert usage.input_tokens - usage.cached_input_tokens < 20  # the user's words and the turns' markers


async def test_a_cancelled_warm_stops_at_the_next_chunk_and_leaves_the_backend_correct(
        backend: LlamaCppBackend, monkeypatch: pytest.MonkeyPatch, small_chunks: None) -> None:
    before, after = conversation([])
    prefix = len(backend.planner.prefix(before))
    reference = await collect(backend.stream(after))  # cold
    await collect(backend.stream(LLMRequest(items=[Message("user", "Hello!")], max_output_tokens=4)))
    worker = Worker(backend, monkeypatch, hold=True)
    warming = asyncio.create_task(warm(backend, before))
    await worker.wait_started()
    warming.cancel()
    with pytest.raises(asyncio.CancelledError):
        await warming
    worker.release.set()  # the chunk under way finishes; the cancel flag is read before the next
    events = await collect(backend.stream(after))
    assert worker.warm_chunks() == 1
    usage = ends_properly(events)
    assert CHUNK <= usage.cached_input_tokens < prefix  # the chunk it evaluated is reused
    assert _visible(events) == _visible(reference)  # greedy: the same reply as from a cold context


async def test_a_stream_preempts_a_running_warm(backend: LlamaCppBackend, monkeypatch: pytest.MonkeyPatch,
                                               small_chunks: None) -> None:
    before, after = conversation([])
    prefix = len(backend.planner.prefix(before))
    worker = Worker(backend, monkeypatch, hold=True)
    log: list[str | LLMEvent] = []

    async def warming() -> None:
        await warm(backend, before)
        log.append("warm returned")

    async def streaming() -> None:
        async for event in backend.stream(after):
            log.append(event)

    async with asyncio.timeout(TIMEOUT):
        warm_task = asyncio.create_task(warming())
        await worker.wait_started()  # the warm's first chunk is under way (and held)
        stream_task = asyncio.create_task(streaming())
        await asyncio.sleep(0.1)  # the stream has arrived, queued behind that chunk
        worker.release.set()
        await asyncio.gather(warm_task, stream_task)
    assert prefix > 3 * CHUNK
    assert worker.warm_chunks() == 1  # it gave way after the chunk under way
    assert log[0] == "warm returned"
    usage = ends_properly([e for e in log if not isinstance(e, str)])
    assert CHUNK <= usage.cached_input_tokens < prefix  # the stream went on from where the warm stopped


async def test_a_queued_warm_does_nothing_once_a_stream_arrived(backend: LlamaCppBackend,
                                                                monkeypatch: pytest.MonkeyPatch,
                                                                small_chunks: None) -> None:
    before, after = conversation([])
    worker = Worker(backend, monkeypatch, hold=True)
    async with asyncio.timeout(TIMEOUT):
        first = asyncio.create_task(collect(backend.stream(LLMRequest(items=[Message("user", "Hi!")],
                                                                      max_output_tokens=4))))
        await worker.wait_started()  # the first stream holds the worker
        warm_task = asyncio.create_task(warm(backend, before))
        await asyncio.sleep(0.1)  # the warm is queued
        second = asyncio.create_task(collect(backend.stream(after)))
        await asyncio.sleep(0.1)  # so is the stream, after it
        worker.release.set()
        await asyncio.gather(first, warm_task, second)
    assert worker.log.count("warmed") == 1
    assert ends_properly(second.result()).cached_input_tokens < CHUNK  # the warm evaluated nothing
