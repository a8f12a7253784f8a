"""``LlamaServerBackend``: the local path (:mod:`voxcall.llm.local`) with llama.cpp's ``llama-server`` doing the
inference.

Why: the in-process backend runs every session on one context and one thread of one process; ``llama-server``
decodes several sessions at once (``--parallel`` slots, continuous batching) and serves several voxcall replicas.

What stays as in process: everything decided before the model runs (the request's
:class:`~voxcall.llm.local.plan.Plan`) and while it runs (:func:`~voxcall.llm.local.driver.reply_steps`). For
that this backend reads the vocabulary of the same GGUF file the server loaded (``vocab_only``: no weights), so
the token ids it sends are the server's; it checks that the two agree.

How :class:`ServerEngine` answers the driver's steps, through ``POST /completion`` with token prompts and
``cache_prompt``:

- an opening's probability: one token with ``n_probs`` (the server's ``n_probs`` are the softmax of the raw
  logits, as in process), summed over the tokens that open a call;
- a run whose first token may not open a call: that token is the likeliest allowed one of the same answer
  (sampled among them at a temperature above 0), the rest streams from the prompt and that token;
- any other run streams, under its grammar, or with its banned tokens (``logit_bias``); a new run closes the
  stream of the one before (the server stops generating).

Slots: the server gives each request the idle slot whose cached prompt shares most with it (``--slot-prompt-
similarity``) and keeps a prompt it has to evict in its RAM prompt cache (``--cache-ram``), so a session finds its
prefix warm across turns, sessions and replicas. Pinning sessions to slots from voxcall was not done: a replica
cannot see the other replicas' pins, and a pinned busy slot makes a request wait while others sit idle. A warm
evaluates a prefix ahead of time (``n_predict: 0``).
"""

from __future__ import annotations

import asyncio
import json
import math
import os
import random
import shutil
from collections.abc import AsyncGenerator
from pathlib import Path
from typing import Any

import httpx2

from voxcall.llm.base import LLMError
from voxcall.llm.local.backend import LocalBackend
from voxcall.llm.local.driver import Mask, Opening, Outcome, Run, Said, Step, Token, reply_steps
from voxcall.llm.local.engine import Finished, Sink
from voxcall.llm.local.llamacpp import default_model_path
from voxcall.llm.local.model import LocalModel
from voxcall.llm.local.plan import Plan, ReplyOptions
from voxcall.llm.openai_client import DEFAULT_TIMEOUT

DECISION_CANDIDATES = 40
"""Top tokens the server reports for the call/answer decision (the opener's probability is summed over them)."""

LLAMA_SERVER_CACHE = Path(os.environ.get("VOXCALL_LLAMA_SERVER_CACHE")
                          or Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
                          / "voxcall" / "llama-server")
"""Where ``deploy/build-llama-server.sh`` puts its builds: ``<llama-cpp-python version>-<flavor>/llama-server``."""


def find_llama_server() -> Path | None:
    """A built ``llama-server``: ``$LLAMA_SERVER``, else the newest build in :data:`LLAMA_SERVER_CACHE`, else one
    on ``PATH``; None when there is none."""
    if os.environ.get("LLAMA_SERVER"):
        return Path(os.environ["LLAMA_SERVER"])
    built = sorted(LLAMA_SERVER_CACHE.glob("*/llama-server"), key=lambda path: path.stat().st_mtime)
    on_path = shutil.which("llama-server")
    return built[-1] if built else Path(on_path) if on_path else None


class ServerEngine:
    """The :class:`~voxcall.llm.local.engine.Engine` of a model ``llama-server`` runs at ``root`` (requests with
    ``headers``, a silence of ``timeout`` seconds at most); ``vocabulary`` is the same GGUF's, read alone."""

    def __init__(self, root: str, vocabulary: LocalModel, *, headers: dict[str, str], timeout: float) -> None:
        self.vocabulary = vocabulary
        self._client = httpx2.AsyncClient(base_url=root, headers=headers, timeout=httpx2.Timeout(timeout))

    def start(self, plan: Plan, sink: Sink) -> asyncio.Future[None]:
        """Generate on the server, in a task that the stream cancels when it ends (which closes the request)."""
        return asyncio.ensure_future(self._generate(plan, sink))

    async def warm(self, tokens: list[int]) -> None:
        """Have the server evaluate ``tokens`` (``n_predict: 0``)."""
        await _complete(self._client, {"prompt": tokens, "n_predict": 0})

    async def aclose(self) -> None:
        """Close the connection to the server and free the vocabulary."""
        await self._client.aclose()
        self.vocabulary.close()

    async def _generate(self, plan: Plan, sink: Sink) -> None:
        """Drive the reply's steps for ``plan``, pushing its text and then :class:`Finished` (or the error)."""
        steps = reply_steps(plan, self.vocabulary.tokenize)
        reply = _Exchange(self._client, self.vocabulary, plan, sink)
        try:
            answer: float | Token | None = None
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
    prompt tokens the server said it had cached (the first time it says)."""

    def __init__(self, client: httpx2.AsyncClient, vocabulary: LocalModel, plan: Plan, sink: Sink) -> None:
        self._client = client
        self._vocabulary = vocabulary
        self._plan = plan
        self._sink = sink
        self.cached: int | None = None
        self._top: tuple[list[int], list[tuple[int, float]]] | None = None  # an opening's prompt and top tokens
        self._stream: AsyncGenerator[dict[str, Any], None] | None = None  # the current run's stream
        self._deferred: dict[str, Any] | None = None  # the stream to open at the next token (after a first one)
        self._end: str | None = None  # the end a chunk announced along with its text

    async def answer(self, step: Step) -> float | Token | None:
        if isinstance(step, Said):
            self._sink.put(step.text)
            return None
        if isinstance(step, Opening):
            top = await self._top_tokens(step.prompt)
            return sum(math.exp(logprob) for token, logprob in top if step.openers[token])
        if isinstance(step, Run):
            await self.close()
            if step.first_banned is None:
                self._deferred = self._body(step.prompt, step.limit, step.grammar, step.banned)
            else:
                first = await self._first(step.prompt, step.first_banned)
                if self._vocabulary.is_end(first) and first not in self._plan.text_tokens:
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
        answer = await _complete(self._client,
                                 {"prompt": prompt, "n_predict": 1, "n_probs": DECISION_CANDIDATES})
        self._cached(answer)
        steps = answer.get("completion_probabilities") or [{}]
        top = [(int(entry["id"]), float(entry["logprob"])) for entry in steps[0].get("top_logprobs", [])]
        self._top = (prompt, top)
        return top

    async def _first(self, prompt: list[int], banned: Mask) -> int:
        """The token after ``prompt`` that ``banned`` does not name: the likeliest of the top tokens (sampled
        among them at a temperature above 0), or, when all of those are banned, the one the server samples with
        the banned tokens ruled out."""
        temperature = self._plan.temperature
        allowed = [(token, logprob) for token, logprob in await self._top_tokens(prompt) if not banned[token]]
        if not allowed:
            body = {**self._body(prompt, 1, None, banned), "stream": False, "n_probs": 1}
            answer = await _complete(self._client, body)
            return int((answer.get("completion_probabilities") or [{}])[0]["id"])
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
            self._stream, self._deferred = _chunks(self._client, self._deferred), None
        assert self._stream is not None, "a token asked for outside a run"
        async for chunk in self._stream:
            content = chunk.get("content") or ""
            end = ("length" if chunk.get("stop_type") == "limit" else "stop") if chunk.get("stop") else None
            self._cached(chunk)
            if content:
                self._end = end
                return Token(content)
            if end is not None:
                return Token(end=end)
        raise LLMError("llama-server ended the stream without finishing the reply", code="incomplete_stream")

    def _body(self, prompt: list[int], limit: int, grammar: str | None, banned: Mask | None) -> dict[str, Any]:
        """A streamed completion after ``prompt`` of at most ``limit`` tokens, sampled as in process (greedy at
        temperature 0, else among the 40 likeliest): under ``grammar``, or without the ``banned`` tokens."""
        body: dict[str, Any] = {"prompt": prompt, "n_predict": limit, "stream": True,
                                "temperature": self._plan.temperature, "top_k": 40, "top_p": 1.0, "min_p": 0.0,
                                "repeat_penalty": 1.0, "cache_prompt": True, "timings_per_token": True}
        if grammar is not None:
            body["grammar"] = grammar
        elif banned is not None and banned.any():
            body["logit_bias"] = [[int(token), False] for token in banned.nonzero()[0]]
        return body

    def _cached(self, answer: dict[str, Any]) -> None:
        """Note the prompt tokens the server kept, from an answer or a chunk (each streamed chunk's timings say,
        so a run closed early still reports them)."""
        kept = answer.get("tokens_cached", (answer.get("timings") or {}).get("cache_n"))
        if self.cached is None and kept is not None:
            self.cached = int(kept)


async def _complete(client: httpx2.AsyncClient, body: dict[str, Any]) -> dict[str, Any]:
    """One completion, not streamed: the server's answer."""
    try:
        response = await client.post("/completion", json={"cache_prompt": True, **body})
    except httpx2.TimeoutException as exc:
        raise LLMError("llama-server timed out", code="timeout") from exc
    except httpx2.HTTPError as exc:
        raise LLMError("llama-server is unavailable", code="unavailable") from exc
    _check(response.status_code, response.content)
    answer: dict[str, Any] = response.json()
    return answer


async def _chunks(client: httpx2.AsyncClient, body: dict[str, Any]) -> AsyncGenerator[dict[str, Any], None]:
    """The chunks of one streamed completion (server-sent events)."""
    try:
        async with client.stream("POST", "/completion", json=body) as response:
            if response.status_code != 200:
                _check(response.status_code, await response.aread())
            async for line in response.aiter_lines():
                if line.startswith("data: "):
                    yield json.loads(line[len("data: "):])
    except httpx2.TimeoutException as exc:
        raise LLMError("llama-server timed out", code="timeout") from exc
    except httpx2.HTTPError as exc:
        raise LLMError("llama-server is unavailable", code="unavailable") from exc


class LlamaServerBackend(LocalBackend):
    """The local path against ``llama-server`` at ``base_url``.

    ``model_path`` is the GGUF file the server was started with (None: :func:`~voxcall.llm.local.llamacpp.
    default_model_path`); only its vocabulary is read. ``timeout`` bounds a request's silence; ``options`` plan the
    replies. Raises ``LLMError`` (``"unavailable"``) when the server does not answer or serves a model with
    another vocabulary.
    """

    def __init__(self, base_url: str, model_path: str | Path | None = None, *, timeout: float = DEFAULT_TIMEOUT,
                 api_key: str | None = None, options: ReplyOptions | None = None) -> None:
        root = base_url.rstrip("/").removesuffix("/v1")
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        n_ctx, served = _server_facts(root, headers, timeout)
        path = Path(model_path) if model_path is not None else default_model_path()
        try:
            vocabulary = LocalModel(path, n_ctx=n_ctx, n_threads=1, decode_threads=1, state_cache_bytes=0,
                                    vocab_only=True)
        except (ValueError, OSError) as exc:
            raise LLMError(f"cannot load the vocabulary of {path.name}", code="unavailable") from exc
        if served is not None and served != vocabulary.n_vocab:
            vocabulary.close()
            raise LLMError(f"llama-server serves a model with {served} tokens, {path.name} has "
                           f"{vocabulary.n_vocab}: start it with the same GGUF file", code="unavailable")
        super().__init__(ServerEngine(root, vocabulary, headers=headers, timeout=timeout),
                         name=f"llama-server:{path.stem}", model_path=path, options=options or ReplyOptions())


def _check(status: int, content: bytes) -> None:
    """Raise the ``LLMError`` for a refused request (the server's own words are not passed on)."""
    if status == 200:
        return
    try:
        kind = str(json.loads(content).get("error", {}).get("type", ""))
    except (ValueError, AttributeError):
        kind = ""
    if kind == "exceed_context_size_error":
        raise LLMError("the request is longer than the model's context", code="context_length_exceeded",
                       status=status)
    raise LLMError(f"llama-server returned HTTP {status}", code="bad_request" if status < 500 else "backend_error",
                   status=status)


def _server_facts(root: str, headers: dict[str, str], timeout: float) -> tuple[int, int | None]:
    """A slot's context size, and the vocabulary size of the served model when the server says (at start-up)."""
    try:
        with httpx2.Client(base_url=root, headers=headers, timeout=timeout) as client:
            props = client.get("/props")
            props.raise_for_status()
            models = client.get("/v1/models")
    except httpx2.HTTPError as exc:
        raise LLMError(f"llama-server at {root} does not answer", code="unavailable") from exc
    n_ctx = int(props.json()["default_generation_settings"]["n_ctx"])
    try:
        served = int(models.json()["data"][0]["meta"]["n_vocab"])
    except (ValueError, KeyError, IndexError, TypeError):
        served = None
    return n_ctx, served
