"""``ServerEngine``: the :class:`~voxcall.llm.local.engine.Engine` of every local model, spoken to as llama.cpp's
server, whether it runs in this process (:class:`~voxcall.llm.local.embedded.EmbeddedServer`, over a private Unix
socket) or elsewhere (``llama-server``, or :mod:`voxcall.llm.local.serve`, over TCP).

What stays on voxcall's side: everything decided before the model runs (the request's
:class:`~voxcall.llm.local.plan.Plan`) and while it runs (:func:`~voxcall.llm.local.driver.reply_steps`), with the
model's :class:`~voxcall.llm.local.vocabulary.Vocabulary` read from the same GGUF file, so the token ids sent are
the server's.

How it answers the driver's steps, through ``POST /completion`` with token prompts and ``cache_prompt``:

- an opening's probability: one token with ``n_probs`` (the softmax of the raw logits), summed over the tokens
  that open a call; a few tokens' probabilities (a lift's), from the same answer, kept for the last prompts asked
  (:data:`KEPT_ANSWERS`);
- a run whose first token may not open a call: that token is the likeliest allowed one of the same answer
  (sampled among them at a temperature above 0), the rest streams from the prompt and that token;
- any other run streams, under its grammar, or with its banned tokens (``logit_bias``); a new run closes the
  stream of the one before (the server stops generating).

Slots: the server gives each request the idle slot whose cached prompt shares most with it (slot prompt
similarity) and keeps a prompt it has to evict in its host-memory prompt cache, so a session finds its prefix warm
across turns, sessions and replicas. Pinning sessions to slots from voxcall was not done: a replica cannot see the
other replicas' pins, and a pinned busy slot makes a request wait while others sit idle. With one slot that only
this engine uses, and a prompt cache (``sole_cached_slot``: the server in this process), a prompt the server would
answer from its slot while its cache holds more of it
(:meth:`~voxcall.llm.local.sent_prompts.SentPrompts.cache_missed`) is preceded by a one-token prompt that shares
nothing: the slot goes to the cache, and the prompt is restored from there.

A warm (:meth:`ServerEngine.warm`) evaluates a prefix ahead of time (``n_predict: 0``). The engine in this process,
whose two cores are all the machine has, warms in chunks of about a second, and a reply that starts
stops every warm after the chunk under way: the server notices a closed request only about once a second and
evaluates a whole prompt once it has it (a cancelled 2,500-token warm held the next request for 2.3 s on two busy
cores), so a warm sent whole would hold the reply that comes while it runs. What a warm evaluated stays in the
slot for the reply (or a later one) to reuse. The warms also measure the server's prompt speed, from which
:meth:`ServerEngine.pending_s` tells how long a prompt still has to be read: its tokens no prompt sent began with,
after the **backlog**, what the server still has to read of the prompts sent before. A request closed early is
part of it: the server reads a prompt it has whole. A hidden reply to the first half of "Why do cats purr?" (begun
at a pause inside it, dropped at the end of speech) held the server 2 s longer; the reply to the whole question,
counting none of that, said no phrase, and the first audio was the thinker's acknowledgement, 1.2 s after the end
of speech (0.75 s with the phrase).
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
import random
import time
from collections import OrderedDict
from collections.abc import AsyncGenerator, Awaitable, Callable
from typing import Any

import httpx2

from voxcall.llm.base import LLMError
from voxcall.llm.local.driver import Mask, Opening, Outcome, Run, Said, Step, Token, reply_steps
from voxcall.llm.local.engine import Finished, Sink
from voxcall.llm.local.lift import Likely, Weights
from voxcall.llm.local.plan import Plan
from voxcall.llm.local.sent_prompts import SentPrompts
from voxcall.llm.local.vocabulary import Vocabulary

log = logging.getLogger(__name__)

DECISION_CANDIDATES = 40
"""Top tokens the server reports for the call/answer decision (the opener's probability is summed over them)."""
FIRST_WARM_CHUNK = 128
"""Tokens of a chunked warm's first chunk, before any chunk has measured the server's speed."""
STRANGERS = (1000, 1001, 1002)
"""Token ids for a prompt that shares nothing with two others (one of three differs from both their first tokens)."""
KEPT_ANSWERS = 32
"""Prompts whose likeliest tokens a lift asked about are kept, the last so many: the prompts of words that ask for
nothing (:mod:`voxcall.llm.local.lift`) are the same for every reply offering the same tools."""
Kept = OrderedDict[tuple[int, ...], dict[int, float]]
"""Log-probabilities of the likeliest tokens after a prompt, by prompt, the last asked last."""
MIN_WARM_CHUNK = 32
"""The smallest chunk: fewer tokens evaluated means the prefix was cached already (one token is always evaluated
again, for the logits)."""


class ServerEngine:
    """The :class:`~voxcall.llm.local.engine.Engine` of a model served by llama.cpp's server that ``client``
    reaches, with ``n_ctx`` tokens of context per reply; ``vocabulary`` is the same GGUF's. ``warm_chunk_s``: warms
    go in chunks of about that many seconds each, and a reply that starts stops them (see the module's docstring;
    None: a warm is one request); ``sole_cached_slot``: the server has one slot and a prompt cache, and only this
    engine sends it prompts. ``on_close`` runs (on a worker thread) when the engine closes, after its connections:
    the in-process server stops there."""

    def __init__(self, client: httpx2.AsyncClient, vocabulary: Vocabulary, *, n_ctx: int,
                 warm_chunk_s: float | None = None, sole_cached_slot: bool = False,
                 on_close: Callable[[], None] | None = None) -> None:
        self.vocabulary = vocabulary
        self.n_ctx = n_ctx
        self._client = client
        self._chunk_s = warm_chunk_s
        self._speed: float | None = None  # prompt tokens a second, as the last warm that evaluated enough measured
        self._on_close = on_close
        self._warms: set[asyncio.Task[None]] = set()  # warms not yet over
        self._sent = SentPrompts(sole_cached_slot=sole_cached_slot)
        self._read_by = 0.0  # when (time.monotonic()) the server will have read every prompt sent, as estimated
        self._kept: Kept = OrderedDict()  # the likeliest tokens after the prompts lifts asked about last

    def start(self, plan: Plan, sink: Sink) -> asyncio.Future[None]:
        """Generate on the server, in a task that the stream cancels when it ends (which closes the request)."""
        if self._chunk_s is not None:
            for warming in self._warms:
                warming.cancel()
        return asyncio.ensure_future(self._generate(plan, sink))

    async def warm(self, tokens: list[int]) -> None:
        """Have the server evaluate ``tokens`` (``n_predict: 0``), in chunks when so made; stopped (by the caller,
        or by a reply that starts), the chunk under way is left to finish and the server keeps what it evaluated."""
        job = asyncio.ensure_future(self._warm(tokens))
        self._warms.add(job)
        try:
            await asyncio.wait({job})  # a warm a reply stopped returns here; a cancelled caller raises
        finally:
            self._warms.discard(job)
            job.cancel()
        if not job.cancelled() and (error := job.exception()) is not None:
            raise error

    async def _warm(self, tokens: list[int]) -> None:
        """Evaluate ``tokens`` on the server: at once, or chunk by chunk, each request the prefix so far (the server
        evaluates what its cache lacks), from the longest prefix the server was sent already (a request shorter
        than what a slot holds would cut the slot to it). Each chunk that evaluated sets the next one's size from
        its speed."""
        if self._chunk_s is None:
            await self._send(tokens)
            self._measure(await _complete(self._client, {"prompt": tokens, "n_predict": 0}))
            return
        end = self._sent.longest(tokens)
        while end < len(tokens) - 1:  # the last token is evaluated again by the request that follows anyway
            end = min(len(tokens), end + self._chunk())
            await self._send(tokens[:end])
            self._measure(await _complete(self._client, {"prompt": tokens[:end], "n_predict": 0}))

    def pending_s(self, prompt: list[int]) -> float | None:
        """About how long the server will read before it answers after ``prompt``: what it still has to read of
        the prompts sent before (the backlog, closed requests' too), then the tokens of ``prompt`` that none of them
        began with, at the speed warms measured (None before any did). The tokens of other replies the server may
        have to generate first are not counted."""
        if self._speed is None:
            return None
        backlog = max(0.0, self._read_by - time.monotonic())
        return backlog + (len(prompt) - self._sent.longest(prompt)) / self._speed

    async def _send(self, prompt: list[int]) -> None:
        """Before ``prompt`` is sent: the slot made to look in the prompt cache where it should (:func:`_reach`),
        the tokens no prompt sent began with added to the backlog, and ``prompt`` noted as sent."""
        await _reach(self._client, self._sent, prompt)
        new = len(prompt) - self._sent.longest(prompt)
        if self._speed is not None and new > 0:
            self._read_by = max(time.monotonic(), self._read_by) + new / self._speed
        self._sent.add(prompt)

    def _measure(self, answer: dict[str, Any]) -> None:
        """Note the server's prompt speed from a warm's ``answer``, when it evaluated enough tokens to tell (a
        prefix it held already is not evaluated again): the next warm chunk is sized by it."""
        timings = answer.get("timings") or {}
        speed = float(timings.get("prompt_per_second") or 0.0)
        if int(timings.get("prompt_n", 0)) >= MIN_WARM_CHUNK and speed > 0:
            self._speed = speed

    def _chunk(self) -> int:
        """Tokens of the next warm chunk: about ``warm_chunk_s`` of them at the speed measured last
        (:data:`FIRST_WARM_CHUNK` before any was)."""
        if self._speed is None or self._chunk_s is None:
            return FIRST_WARM_CHUNK
        return max(MIN_WARM_CHUNK, int(self._speed * self._chunk_s))

    async def aclose(self) -> None:
        """Stop the warms, close the connections to the server, then run ``on_close``."""
        for warming in self._warms:
            warming.cancel()
        await self._client.aclose()
        if self._on_close is not None:
            await asyncio.to_thread(self._on_close)

    async def _generate(self, plan: Plan, sink: Sink) -> None:
        """Drive the reply's steps for ``plan``, pushing its text and then :class:`Finished` (or the error)."""
        steps = reply_steps(plan, self.vocabulary)
        reply = _Exchange(self._client, self.vocabulary, plan, sink, self._send, self._kept)
        try:
            answer: float | Weights | Token | None = None
            while not sink.cancel.is_set():
                try:
                    step = steps.send(answer)
                except StopIteration as stop:
                    outcome: Outcome = stop.value
                    sink.put(Finished(outcome.reason, len(plan.prompt), reply.cached or 0, outcome.produced))
                    return
                answer = await reply.answer(step)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # handed to the stream, which raises it as LLMError
            sink.put(exc)
        finally:
            steps.close()
            await reply.close()


class _Exchange:
    """One reply's requests to the server: the answers to its steps, the open stream of the current run, and the
    prompt tokens the server said it had cached (the first time it says); ``send`` is awaited before each prompt
    goes (:meth:`ServerEngine._send`); ``kept``: the engine's answers to lifts, which this reply reads and adds to."""

    def __init__(self, client: httpx2.AsyncClient, vocabulary: Vocabulary, plan: Plan, sink: Sink,
                 send: Callable[[list[int]], Awaitable[None]], kept: Kept) -> None:
        self._client = client
        self._kept = kept
        self._send = send
        self._vocabulary = vocabulary
        self._plan = plan
        self._sink = sink
        self.cached: int | None = None
        self._top: tuple[list[int], list[tuple[int, float]]] | None = None  # an opening's prompt and top tokens
        self._stream: AsyncGenerator[dict[str, Any], None] | None = None  # the current run's stream
        self._deferred: dict[str, Any] | None = None  # the stream to open at the next token (after a first one)
        self._end: str | None = None  # the end a chunk announced along with its text

    async def answer(self, step: Step) -> float | Weights | Token | None:
        if isinstance(step, Said):
            self._sink.put(step.text)
            return None
        if isinstance(step, Opening):
            top = await self._top_tokens(step.prompt)
            return float(sum(math.exp(logprob) for token, logprob in top if step.openers[token]))
        if isinstance(step, Likely):
            key = tuple(step.prompt)
            likeliest = self._kept.pop(key, None) or dict(await self._top_tokens(step.prompt))
            self._kept[key] = likeliest
            while len(self._kept) > KEPT_ANSWERS:
                self._kept.popitem(last=False)
            return {token: math.exp(likeliest[token]) for token in step.tokens if token in likeliest}
        if isinstance(step, Run):
            await self.close()
            if step.first_banned is None:
                self._deferred = self._body(step.prompt, step.limit, step.grammar, step.banned, step.top)
            else:
                first = await self._first(step.prompt, step.first_banned)
                if first is None or (self._vocabulary.is_end(first) and first not in self._plan.text_tokens):
                    return Token(end="stop")
                self._deferred = self._body([*step.prompt, first], step.limit - 1, None, step.banned)
                special = first in self._plan.text_tokens
                return Token(self._vocabulary.piece(first, special=special).decode(errors="replace"))
        return await self._next()

    async def close(self) -> None:
        """Close the current run's stream (the server stops generating it)."""
        self._deferred, self._end = None, None
        if self._stream is not None:
            stream, self._stream = self._stream, None
            await stream.aclose()

    async def _top_tokens(self, prompt: list[int]) -> list[tuple[int, float]]:
        """The likeliest :data:`DECISION_CANDIDATES` tokens after ``prompt`` with their log-probabilities (asked
        once per prompt)."""
        if self._top is not None and self._top[0] == prompt:
            return self._top[1]
        await self._send(prompt)
        answer = await _complete(self._client,
                                 {"prompt": prompt, "n_predict": 1, "n_probs": DECISION_CANDIDATES})
        self._cached(answer)
        steps = answer.get("completion_probabilities") or [{}]
        top = [(int(entry["id"]), float(entry["logprob"])) for entry in steps[0].get("top_logprobs", [])]
        self._top = (prompt, top)
        return top

    async def _first(self, prompt: list[int], banned: Mask) -> int | None:
        """The token after ``prompt`` that ``banned`` does not name: the likeliest of the top tokens (sampled
        among them at a temperature above 0), or, when all of those are banned, the one the server samples with
        the banned tokens ruled out; None when the server's answer reports no token (its non-streamed answer drops
        the probabilities of what it stopped on; seen once in 95 requests of bench_local_tools, where it failed
        the reply): the reply ends."""
        temperature = self._plan.temperature
        allowed = [(token, logprob) for token, logprob in await self._top_tokens(prompt) if not banned[token]]
        if not allowed:
            body = {**self._body(prompt, 1, None, banned), "stream": False, "n_probs": 1}
            answer = await _complete(self._client, body)
            sampled = answer.get("completion_probabilities") or []
            return int(sampled[0]["id"]) if sampled else None
        if temperature <= 0:
            return allowed[0][0]
        best = allowed[0][1]
        weights = [math.exp((logprob - best) / temperature) for _, logprob in allowed]
        return random.choices([token for token, _ in allowed], weights)[0]

    async def _next(self) -> Token:
        """The current run's next token: the next chunk with text, or the end the stream announces."""
        if self._end is not None:
            return Token(end=self._end)
        if self._deferred is not None:
            await self._send(self._deferred["prompt"])
            self._stream, self._deferred = _chunks(self._client, self._deferred), None
        assert self._stream is not None, "a token asked for outside a run"
        async for chunk in self._stream:
            content = chunk.get("content") or ""
            end = ("length" if chunk.get("stop_type") == "limit" else "stop") if chunk.get("stop") else None
            self._cached(chunk)
            if content:
                self._end = end
                return Token(content, top=_top_of(chunk))
            if end is not None:
                return Token(end=end)
        raise LLMError("llama-server ended the stream without finishing the reply", code="incomplete_stream")

    def _body(self, prompt: list[int], limit: int, grammar: str | None, banned: Mask | None,
              top: int = 0) -> dict[str, Any]:
        """A streamed completion after ``prompt`` of at most ``limit`` tokens, sampled as in process (greedy at
        temperature 0, else among the 40 likeliest): under ``grammar``, or without the ``banned`` tokens; with
        ``top``, each token comes with that many likeliest tokens at its place (``n_probs``: the raw logits'
        softmax, before the grammar)."""
        body: dict[str, Any] = {"prompt": prompt, "n_predict": limit, "stream": True,
                                "temperature": self._plan.temperature, "top_k": 40, "top_p": 1.0, "min_p": 0.0,
                                "repeat_penalty": 1.0, "cache_prompt": True, "timings_per_token": True}
        if top:
            body["n_probs"] = top
        if grammar is not None:
            body["grammar"] = grammar
        elif banned is not None and banned.any():
            body["logit_bias"] = [[int(token), False] for token in banned.nonzero()[0]]
        return body

    def _cached(self, answer: dict[str, Any]) -> None:
        """Note the prompt tokens the server kept, from an answer or a chunk (each streamed chunk's timings say,
        so a run closed early still reports them)."""
        kept = (answer.get("timings") or {}).get("cache_n")  # not "tokens_cached": all the slot holds after it
        if self.cached is None and kept is not None:
            self.cached = int(kept)


def _top_of(chunk: dict[str, Any]) -> tuple[tuple[int, float], ...]:
    """The likeliest tokens at a streamed chunk's first token with their probabilities (none unless asked)."""
    places = chunk.get("completion_probabilities") or [{}]
    return tuple((int(entry["id"]), math.exp(float(entry["logprob"]))) for entry in places[0].get("top_logprobs", []))


async def _reach(client: httpx2.AsyncClient, sent: SentPrompts, prompt: list[int]) -> None:
    """Before ``prompt`` is sent: on a server whose one slot only this engine uses, where the slot would be kept
    although the cache holds more of ``prompt`` (:meth:`SentPrompts.cache_missed`), send first a prompt of one token
    that neither begins with, so that the server saves its slot and looks in its cache for ``prompt``."""
    if sent.cache_missed(prompt):
        stranger = next(token for token in STRANGERS if token not in (prompt[:1] + list(sent.slot[:1])))
        await _complete(client, {"prompt": [stranger], "n_predict": 0})
    sent.slot = tuple(prompt)


async def _complete(client: httpx2.AsyncClient, body: dict[str, Any]) -> dict[str, Any]:
    """One completion, not streamed: the server's answer."""
    sent = time.monotonic()
    try:
        response = await client.post("/completion", json={"cache_prompt": True, **body})
    except httpx2.TimeoutException as exc:
        raise LLMError("llama-server timed out", code="timeout") from exc
    except httpx2.HTTPError as exc:
        raise LLMError("llama-server is unavailable", code="unavailable") from exc
    _check(response.status_code, response.content)
    answer: dict[str, Any] = response.json()
    _log_request(body, answer, sent)
    return answer


async def _chunks(client: httpx2.AsyncClient, body: dict[str, Any]) -> AsyncGenerator[dict[str, Any], None]:
    """The chunks of one streamed completion (server-sent events)."""
    sent, last = time.monotonic(), None
    try:
        async with client.stream("POST", "/completion", json=body) as response:
            if response.status_code != 200:
                _check(response.status_code, await response.aread())
            async for line in response.aiter_lines():
                if line.startswith("data: "):
                    last = json.loads(line[len("data: "):])
                    yield last
    except httpx2.TimeoutException as exc:
        raise LLMError("llama-server timed out", code="timeout") from exc
    except httpx2.HTTPError as exc:
        raise LLMError("llama-server is unavailable", code="unavailable") from exc
    finally:
        if last is not None:  # also a stream closed early: its last chunk's timings are the server's so far
            _log_request(body, last, sent)


def _log_request(body: dict[str, Any], answer: dict[str, Any], sent: float) -> None:
    """A request's line of the engine's timeline, at DEBUG (``--log-level debug``): the prompt's tokens, those the
    server kept and those it read (with the time), the tokens generated (with the time), and the whole request's
    time as voxcall saw it. Where a fresh session's reply spends its time is read from these lines."""
    if not log.isEnabledFor(logging.DEBUG):
        return
    timings = answer.get("timings") or {}
    log.debug("llama request: %d prompt tokens, %d kept, %d read in %.0f ms; %d generated in %.0f ms "
              "(asked %s); %.0f ms in all", len(body.get("prompt") or ()), int(timings.get("cache_n", 0)),
              int(timings.get("prompt_n", 0)), float(timings.get("prompt_ms", 0.0)),
              int(timings.get("predicted_n", 0)), float(timings.get("predicted_ms", 0.0)),
              body.get("n_predict"), (time.monotonic() - sent) * 1000)


def _check(status: int, content: bytes) -> None:
    """Raise the ``LLMError`` for a refused request (the server's own words are not passed on)."""
    if status == 200:
        return
    try:
        error = json.loads(content).get("error", {})
        kind, message = str(error.get("type", "")), str(error.get("message", ""))
    except (ValueError, AttributeError):
        kind = message = ""
    if kind == "exceed_context_size_error":
        raise LLMError("the request is longer than the model's context", code="context_length_exceeded",
                       status=status)
    if status == 400 and "grammar" in message:  # a schema our grammar writer turned into one llama.cpp refuses
        raise LLMError("the tools' schemas gave an invalid grammar", code="invalid_request", status=status)
    raise LLMError(f"llama-server returned HTTP {status}", code="bad_request" if status < 500 else "backend_error",
                   status=status)
