"""``LlamaServerBackend``: the local tool-calling path of :class:`~voxcall.llm.local.llamacpp.LlamaCppBackend`, with
llama.cpp's ``llama-server`` doing the inference.

Why: the in-process backend runs every session on one context and one thread of one process; ``llama-server``
decodes several sessions at once (``--parallel`` slots, continuous batching) and serves several voxcall replicas.

What stays as in process: everything decided before the model runs (the request's plan): the prompt rendered by
the model's chat template and fitted to a slot's context, the tools' stubs and the demonstrations, the grammar from
the session's tools, relayed results. For that this backend reads the vocabulary of the same GGUF file the server
loaded (``vocab_only``: no weights), so the token ids it sends are the server's; it checks that the two agree.

How a reply is generated, through ``POST /completion`` with token prompts and ``cache_prompt``:

1. ``tool_choice`` ``"auto"``: one token with ``n_probs`` decides. When the tokens that open a call hold at least
   the call threshold of the probability (the server's ``n_probs`` are the softmax of the raw logits, as in
   process), the reply is opened with the opener and written under the call grammar; otherwise its first token is
   the likeliest one that opens no call (sampled among them at a temperature above 0).
2. The rest streams. Free words are watched for the opener as in process: when it appears, the stream is closed
   (the server stops) and the rest is written under the call grammar, from the prompt and the reply so far.
3. When a call's block closes and the user listed a further value for it (:mod:`voxcall.llm.local.parallel`), the
   stream is closed and another block is written for that tool alone, as in process.
4. Spoken replies never get a backtick (``logit_bias``), the way into code fences.

Slots: the server gives each request the idle slot whose cached prompt shares most with it (``--slot-prompt-
similarity``) and keeps a prompt it has to evict in its RAM prompt cache (``--cache-ram``), so a session finds its
prefix warm across turns, sessions and replicas. Pinning sessions to slots from voxcall was not done: a replica
cannot see the other replicas' pins, and a pinned busy slot makes a request wait while others sit idle.
:meth:`LlamaServerBackend.warm` evaluates a prefix ahead of time (``n_predict: 0``).
"""

from __future__ import annotations

import asyncio
import json
import math
import os
import random
import shutil
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx2

from voxcall.llm.base import LLMError, LLMRequest
from voxcall.llm.local.llamacpp import LlamaCppBackend, _Finished, _listed_call, _Plan, _Reply, _Sink
from voxcall.llm.openai_client import DEFAULT_TIMEOUT
from voxcall.tools.codecalls.stream import CLOSE_TAG, OPEN_TAG

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


class LlamaServerBackend(LlamaCppBackend):
    """The :class:`LlamaCppBackend` tool-calling path against ``llama-server`` at ``base_url``.

    ``model_path`` is the GGUF file the server was started with (None: the packaged SmolLM2-135M); only its
    vocabulary is read. ``timeout`` bounds a request's silence. The other options are
    :class:`LlamaCppBackend`'s. Raises ``LLMError`` (``"unavailable"``) when the server does not answer or serves
    a model with another vocabulary.
    """

    def __init__(self, base_url: str, model_path: str | Path | None = None, *, timeout: float = DEFAULT_TIMEOUT,
                 api_key: str | None = None, **options: Any) -> None:
        root = base_url.rstrip("/").removesuffix("/v1")
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        props, served = _server_facts(root, headers, timeout)
        super().__init__(model_path, n_ctx=props, vocab_only=True, state_cache_bytes=0, **options)
        if served is not None and served != self._model.n_vocab:
            raise LLMError(f"llama-server serves a model with {served} tokens, {self.model_path.name} has "
                           f"{self._model.n_vocab}: start it with the same GGUF file", code="unavailable")
        self.name = f"llama-server:{self.model_path.stem}"
        self._client = httpx2.AsyncClient(base_url=root, headers=headers, timeout=httpx2.Timeout(timeout))
        self._no_backticks = [[int(token), False] for token in self._unspoken.nonzero()[0]]

    def _start(self, plan: _Plan, sink: _Sink) -> asyncio.Future[None]:
        """Generate on the server, in a task that the stream cancels when it ends (which closes the request)."""
        return asyncio.ensure_future(self._serve(plan, sink))

    async def warm(self, request: LLMRequest) -> None:
        """Have the server evaluate the prefix every continuation of ``request`` begins with (see
        :meth:`LlamaCppBackend.warm`); a failure is left for the real request to report."""
        if self._closed:
            return
        try:
            tokens = self._prefix(request)
            if tokens:
                await self._complete({"prompt": tokens, "n_predict": 0})
        except LLMError:
            return

    async def aclose(self) -> None:
        """End every open stream and close the connection to the server."""
        await super().aclose()
        await self._client.aclose()

    # -- generation ----------------------------------------------------------------------------------------------

    async def _serve(self, plan: _Plan, sink: _Sink) -> None:
        """Generate the reply for ``plan`` into ``sink``: text pieces, then :class:`_Finished` (or the error)."""
        try:
            if plan.complete:
                sink.put(_Finished("stop", len(plan.prompt), 0, 0))
                return
            reply = _Reply(sink, plan.prefill)
            prompt, grammar, cached = plan.prompt, plan.grammar, None
            if plan.call_threshold is not None:
                first, cached = await self._decide(plan)
                if first is None:
                    reply.say(self._opener)
                    prompt, grammar = plan.prompt + self._model.tokenize(self._opener), plan.call_grammar
                else:
                    if self._model.is_end(first) and first not in self._syntax_tokens:
                        sink.put(_Finished("stop", len(plan.prompt), cached, 1))
                        return
                    if reply.add(self._model.piece(first, special=first in self._syntax_tokens),
                                 until=self._opener):
                        grammar = plan.call_grammar
                    prompt = plan.prompt + self._model.tokenize(reply.text)
            reason = "length"
            while reply.produced < plan.max_tokens:
                watching = grammar is None and plan.call_grammar is not None
                body: dict[str, Any] = {"prompt": prompt, "n_predict": plan.max_tokens - reply.produced,
                                        "stream": True}
                if grammar is not None:
                    body["grammar"] = grammar
                elif plan.spoken and self._no_backticks:
                    body["logit_bias"] = self._no_backticks
                outcome, final = await self._stream(body, plan, reply, watching)
                cached = cached if cached is not None else int(final.get("tokens_cached", 0))
                if outcome == "opened":
                    prompt, grammar = plan.prompt + self._model.tokenize(reply.text), plan.call_grammar
                elif outcome == "listed" and (more := _listed_call(plan, reply.text)):
                    reply.say(OPEN_TAG)
                    prompt = plan.prompt + self._model.tokenize(reply.text[len(plan.prefill):])
                    grammar = self._listed_grammar(more)
                else:
                    reason = outcome
                    break
            sink.put(_Finished(reason, len(plan.prompt), cached or 0, reply.produced))
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # handed to the stream, which raises it as LLMError
            sink.put(exc)

    async def _decide(self, plan: _Plan) -> tuple[int | None, int]:
        """The call/answer decision of an ``"auto"`` reply: None when it opens a call, else its first token; and
        the prompt tokens the server had cached."""
        threshold = plan.call_threshold if plan.call_threshold is not None else math.inf
        answer = await self._complete({"prompt": plan.prompt, "n_predict": 1, "n_probs": DECISION_CANDIDATES})
        cached = int(answer.get("tokens_cached", 0))
        steps = answer.get("completion_probabilities") or [{}]
        top = [(int(entry["id"]), float(entry["logprob"])) for entry in steps[0].get("top_logprobs", [])]
        if sum(math.exp(logprob) for token, logprob in top if self._openers[token]) >= threshold:
            return None, cached
        words = [(token, logprob) for token, logprob in top
                 if not self._openers[token] and not (plan.spoken and self._unspoken[token])]
        if not words:  # every likely token opens a call, and the threshold says words: the likeliest word-ish one
            return top[0][0] if top else None, cached
        if plan.temperature <= 0:
            return words[0][0], cached
        best = words[0][1]
        weights = [math.exp((logprob - best) / plan.temperature) for _, logprob in words]
        return random.choices([token for token, _ in words], weights)[0], cached

    async def _stream(self, body: dict[str, Any], plan: _Plan, reply: _Reply,
                      watching: bool) -> tuple[str, dict[str, Any]]:
        """Stream one completion into ``reply``; returns how it ended (``"stop"``, ``"length"``; ``"opened"``
        when ``watching`` saw the opener, ``"listed"`` when a call's block closed and the user listed a further
        value for it: the request is then closed) and its last chunk."""
        body = {**self._sampling(plan), **body}
        closed = reply.text.count(CLOSE_TAG)
        listing = "grammar" in body and bool(plan.listed)
        async for chunk in self._chunks(body):
            content = chunk.get("content") or ""
            if content and reply.add(content.encode(), until=self._opener if watching else None):
                return "opened", chunk
            if listing and reply.text.count(CLOSE_TAG) > closed:
                if _listed_call(plan, reply.text):
                    return "listed", chunk
                closed = reply.text.count(CLOSE_TAG)
            if chunk.get("stop"):
                return ("length" if chunk.get("stop_type") == "limit" else "stop"), chunk
        raise LLMError("llama-server ended the stream without finishing the reply", code="incomplete_stream")

    def _sampling(self, plan: _Plan) -> dict[str, Any]:
        """The sampling the in-process path does: greedy at temperature 0, else among the 40 likeliest."""
        return {"temperature": plan.temperature, "top_k": 40, "top_p": 1.0, "min_p": 0.0, "repeat_penalty": 1.0,
                "cache_prompt": True}

    async def _complete(self, body: dict[str, Any]) -> dict[str, Any]:
        """One completion, not streamed: the server's answer."""
        try:
            response = await self._client.post("/completion", json={"cache_prompt": True, **body})
        except httpx2.TimeoutException as exc:
            raise LLMError("llama-server timed out", code="timeout") from exc
        except httpx2.HTTPError as exc:
            raise LLMError("llama-server is unavailable", code="unavailable") from exc
        _check(response.status_code, response.content)
        answer: dict[str, Any] = response.json()
        return answer

    async def _chunks(self, body: dict[str, Any]) -> AsyncIterator[dict[str, Any]]:
        """The chunks of one streamed completion (server-sent events)."""
        try:
            async with self._client.stream("POST", "/completion", json=body) as response:
                if response.status_code != 200:
                    _check(response.status_code, await response.aread())
                async for line in response.aiter_lines():
                    if line.startswith("data: "):
                        yield json.loads(line[len("data: "):])
        except httpx2.TimeoutException as exc:
            raise LLMError("llama-server timed out", code="timeout") from exc
        except httpx2.HTTPError as exc:
            raise LLMError("llama-server is unavailable", code="unavailable") from exc


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
