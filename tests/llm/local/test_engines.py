"""The engine contract, on both engines: SmolLM2-135M in process and on a real ``llama-server``.

Each test hands the same plan to each engine (``engine.start``) and checks what any engine must do with it: a
grammar holds from the first token, banned tokens are never sampled, a first token may be banned alone (the call
decision), a run stops at its limit, a prompt evaluated once is reused, and a relayed reply samples nothing.
"""

from __future__ import annotations

import asyncio
import json
import math
from collections import OrderedDict
from collections.abc import AsyncIterator
from dataclasses import replace

import httpx2 as httpx
import pytest

from tests.llm.local.test_llama_server import WEATHER
from voxcall.llm import FunctionCallItem, FunctionOutputItem, LlamaCppBackend, LlamaServerBackend, LLMRequest, Message
from voxcall.llm.local import LocalBackend
from voxcall.llm.local.driver import NEXT, Run, Token
from voxcall.llm.local.engine import Finished, Sink
from voxcall.llm.local.plan import Plan
from voxcall.llm.local.server_engine import ServerEngine, _Exchange


async def _sent(prompt: list[int]) -> None:
    """What an exchange awaits before it sends a prompt, when no engine keeps its record."""


HANG_S = 120.0  # a reply that takes longer is stuck (a cold prompt on a busy machine takes seconds, not minutes)
SMALL_TALK = LLMRequest(items=[Message("user", "Tell me about your day.")], tools=[WEATHER], max_output_tokens=16)
EXPLICIT = LLMRequest(items=[Message("user", "Get the weather forecast for Oslo.")], tools=[WEATHER],
                      max_output_tokens=32)


@pytest.fixture(params=["in process", "llama-server"])
async def local(request: pytest.FixtureRequest, in_process: LlamaCppBackend,
                llama_server: str) -> AsyncIterator[LocalBackend]:
    if request.param == "in process":
        yield in_process
        return
    served = await asyncio.to_thread(LlamaServerBackend, llama_server)
    yield served
    await served.aclose()


def plan_for(local: LocalBackend, request: LLMRequest) -> Plan:
    return local.planner.plan(request, local.planner.shown_tools(request))


async def reply(local: LocalBackend, plan: Plan) -> tuple[str, Finished]:
    """What the engine says for ``plan``, and its last word."""
    sink = Sink(asyncio.get_running_loop(), asyncio.Queue())
    generation = local.engine.start(plan, sink)
    text = ""
    try:
        async with asyncio.timeout(HANG_S):
            while True:
                item = await sink.queue.get()
                if isinstance(item, BaseException):
                    raise item
                if isinstance(item, Finished):
                    return text, item
                text += item
    finally:
        sink.cancel.set()
        generation.cancel()


async def test_a_grammar_holds_from_the_first_token(local: LocalBackend) -> None:
    plan = replace(plan_for(local, SMALL_TALK), grammar='root ::= "Yes, " [a-z]+ "." | "No."', call_grammar=None,
                   call_threshold=None)
    text, finished = await reply(local, plan)
    assert text == "No." or (text.startswith("Yes, ") and text.endswith(".") and text[5:-1].isalpha())
    assert finished.reason == "stop" and finished.output_tokens >= 1


async def test_banned_tokens_are_never_sampled(local: LocalBackend) -> None:
    plan = replace(plan_for(local, SMALL_TALK), call_threshold=None, call_grammar=None)
    with_e = local.planner.vocabulary.token_mask(lambda text: "e" in text.lower())
    free, _ = await reply(local, plan)
    banned, finished = await reply(local, replace(plan, banned=with_e))
    assert "e" in free.lower()  # the ban changes something
    assert banned and "e" not in banned.lower() and finished.output_tokens > 0


async def test_the_call_decision_bans_the_openers_from_the_first_token_alone(local: LocalBackend) -> None:
    plan = plan_for(local, EXPLICIT)
    called, finished = await reply(local, replace(plan, call_threshold=0.0))
    assert called.startswith("<code>get_weather(") and called.endswith("</code>") and finished.reason == "stop"
    words, _ = await reply(local, replace(plan, call_threshold=math.inf))
    assert words and not words.lstrip().startswith("<")


async def test_a_reply_stops_at_its_token_limit(local: LocalBackend) -> None:
    plan = replace(plan_for(local, SMALL_TALK), call_threshold=None, call_grammar=None, max_tokens=3)
    _, finished = await reply(local, plan)
    assert (finished.reason, finished.output_tokens) == ("length", 3)


async def test_a_prompt_evaluated_once_is_reused(local: LocalBackend) -> None:
    plan = replace(plan_for(local, SMALL_TALK), call_threshold=None, call_grammar=None, max_tokens=2)
    await reply(local, plan)
    _, again = await reply(local, plan)
    assert again.input_tokens == len(plan.prompt) and again.cached_tokens >= len(plan.prompt) - 1


async def test_a_relayed_reply_samples_nothing(local: LocalBackend) -> None:
    relayed = LLMRequest(items=[*EXPLICIT.items, FunctionCallItem("c1", "get_weather", '{"city": "Oslo"}'),
                                FunctionOutputItem("c1", "12 degrees and rain")], tools=[WEATHER])
    plan = plan_for(local, relayed)
    text, finished = await reply(local, plan)
    assert plan.complete and text == plan.prefill and "12 degrees and rain" in text
    assert (finished.reason, finished.output_tokens, finished.cached_tokens) == ("stop", 0, 0)


async def test_a_first_token_banned_with_all_likely_ones_is_sampled_among_the_rest(local: LocalBackend) -> None:
    """When the call decision's ban covers every likely first token, the engine samples with them ruled out (here:
    all but the ends, mid-sentence, so an end it is, and the reply ends)."""
    plan = plan_for(local, SMALL_TALK)
    vocabulary = local.planner.vocabulary
    all_but_ends = ~vocabulary.token_mask(lambda text: False)
    all_but_ends[[token for token in range(vocabulary.n_vocab) if vocabulary.is_end(token)]] = False
    mid_sentence = plan.prompt + vocabulary.tokenize("The three largest cities of France are Paris,")  # no end near
    text, finished = await reply(local, replace(plan, prompt=mid_sentence, call_threshold=math.inf,
                                                openers=all_but_ends))
    assert (text, finished.reason, finished.output_tokens) == ("", "stop", 0)


async def test_an_answer_without_a_sampled_token_ends_the_reply(in_process: LlamaCppBackend) -> None:
    """llama.cpp's server may answer the banned-first-token request without reporting a token (its non-streamed
    answer drops the probabilities of what it stopped on): the reply ends instead of failing."""
    vocabulary = in_process.planner.vocabulary
    plan = plan_for(in_process, SMALL_TALK)
    hello = vocabulary.tokenize("Hello")[0]

    def server(request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        if "logit_bias" in body:
            return httpx.Response(200, json={"content": "", "stop_type": "word", "completion_probabilities": []})
        return httpx.Response(200, json={"completion_probabilities": [
            {"id": hello, "logprob": 0.0, "top_logprobs": [{"id": hello, "logprob": 0.0}]}]})

    banned = vocabulary.token_mask(lambda text: False)
    banned[hello] = True
    async with httpx.AsyncClient(transport=httpx.MockTransport(server), base_url="http://llama") as client:
        exchange = _Exchange(client, vocabulary, plan, Sink(asyncio.get_running_loop(), asyncio.Queue()), _sent,
                             OrderedDict())
        assert await exchange.answer(Run(plan.prompt, 8, None, None, banned)) == Token(end="stop")


async def test_a_prompt_the_server_still_reads_counts_though_its_request_was_closed(
        in_process: LlamaCppBackend) -> None:
    """The server reads a prompt it has whole, even for a request closed meanwhile (a hidden reply dropped at the
    end of speech): how long a new prompt waits counts what is left of it, not only the new prompt's own tokens."""
    reading = asyncio.Event()

    async def server(request: httpx.Request) -> httpx.Response:
        prompt = json.loads(request.content)["prompt"]
        if len(prompt) > 100:  # the second prompt: 300 tokens to read at 100 a second
            reading.set()
            await asyncio.sleep(HANG_S)
        return httpx.Response(200, json={"timings": {"prompt_n": len(prompt), "prompt_per_second": 100.0}})

    shared, new = list(range(1000, 1100)), list(range(2000, 2300))
    async with httpx.AsyncClient(transport=httpx.MockTransport(server), base_url="http://llama") as client:
        engine = ServerEngine(client, in_process.planner.vocabulary, n_ctx=2048)
        await engine.warm(shared)  # measures the speed: 100 tokens a second
        assert engine.pending_s([*shared, *new]) == pytest.approx(3.0)
        sink = Sink(asyncio.get_running_loop(), asyncio.Queue())
        generation = engine.start(replace(plan_for(in_process, SMALL_TALK), prompt=[*shared, *new]), sink)
        await reading.wait()
        sink.cancel.set()
        generation.cancel()  # the reply is dropped, its request closed; the server reads on
        pending = engine.pending_s([*shared, *new, 7, 8])
        assert pending is not None and 2.5 < pending <= 3.02  # what is left of the 3 s, and two tokens
        assert engine.pending_s(shared) == pytest.approx(pending - 0.02, abs=0.05)  # held, yet behind the rest


async def test_a_run_under_a_grammar_reports_the_likeliest_tokens_at_each_place(local: LocalBackend) -> None:
    """What optional arguments are decided by (:mod:`voxcall.llm.local.optional`): with ``top``, each token comes
    with that many of the likeliest tokens at its place, from the raw logits (the grammar left out), likeliest
    first."""
    vocabulary = local.planner.vocabulary
    plan = plan_for(local, SMALL_TALK)
    exchange = _Exchange(local.engine._client, vocabulary, plan,  # type: ignore[attr-defined]
                         Sink(asyncio.get_running_loop(), asyncio.Queue()), _sent, OrderedDict())
    try:
        tokens = [await exchange.answer(Run(plan.prompt, 16, 'root ::= "Zebra zebra zebra"', None, top=5))]
        while isinstance(last := tokens[-1], Token) and last.end is None:
            tokens.append(await exchange.answer(NEXT))
    finally:
        await exchange.close()
    said = [t for t in tokens if isinstance(t, Token) and t.text]
    assert "".join(t.text for t in said) == "Zebra zebra zebra"
    for token in said:
        chances = [p for _, p in token.top]
        assert len(chances) == 5 and chances == sorted(chances, reverse=True) and 0 < sum(chances) <= 1 + 1e-6
    likeliest = {vocabulary.piece(t).decode(errors="replace") for t, _ in said[0].top}
    assert said[0].text not in likeliest  # the grammar's token, which small talk would not begin with
