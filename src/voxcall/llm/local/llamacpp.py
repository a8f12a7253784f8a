"""``LlamaCppBackend``: a GGUF model run in process by llama.cpp, on the local path (:mod:`voxcall.llm.local`).

The model is loaded once (:class:`~voxcall.llm.local.model.LocalModel`) and shared by every session; one worker
thread runs all inference (:class:`InProcessEngine`), so requests queue in order and a session costs nothing but
its conversation. The worker drives a reply's :func:`~voxcall.llm.local.driver.reply_steps`, answering each step
with the model, and bridges the text to the event loop through the stream's :class:`~voxcall.llm.local.engine.
Sink`; closing a stream sets a flag the worker checks between steps (and between prompt chunks).

The context keeps the evaluated tokens, and a new turn evaluates only what follows the longest prefix it shares
with the last prompt (reported as ``Usage.cached_input_tokens``).

A warm (:meth:`InProcessEngine.warm`) runs on the same worker, between requests, and gives way to them: each
reply sets the cancel flag of every warm not yet over, so a warm already running stops at its next prompt chunk
and one still queued does nothing, and the reply waits for at most one chunk. What a stopped warm evaluated stays
in the context, for the reply to reuse.
"""

from __future__ import annotations

import asyncio
import codecs
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from voxcall.llm import catalog
from voxcall.llm.base import LLMError
from voxcall.llm.local.backend import LocalBackend
from voxcall.llm.local.driver import Mask, Opening, Outcome, Run, Said, Step, Token, reply_steps
from voxcall.llm.local.engine import Finished, Sink
from voxcall.llm.local.model import GrammarState, LocalModel
from voxcall.llm.local.plan import LOCAL_DEFAULTS, Plan, ReplyOptions


def default_model_path() -> Path:
    """The GGUF of the catalog's default model (:data:`voxcall.llm.catalog.DEFAULT_MODEL`).

    Raises :class:`~voxcall.llm.catalog.ModelError` (an ``LLMError``, code ``"unavailable"``) when it is not
    installed; the message says how to install it.
    """
    return catalog.resolve(None)


class _Cancelled(Exception):
    """The stream's cancel flag was set while the worker evaluated: the context is incomplete."""


class InProcessEngine:
    """The :class:`~voxcall.llm.local.engine.Engine` of a model loaded in this process (``model``), all of its
    work done by one worker thread."""

    def __init__(self, model: LocalModel) -> None:
        self.model = model
        self.vocabulary = model
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="llamacpp")
        self._warms: set[threading.Event] = set()  # the cancel flags of warms not yet over

    def start(self, plan: Plan, sink: Sink) -> asyncio.Future[None]:
        """Generate on the worker thread; a running warm stops at its next chunk (real work first)."""
        for warming in self._warms:
            warming.set()
        return asyncio.get_running_loop().run_in_executor(self._executor, self._generate, plan, sink)

    async def warm(self, tokens: list[int]) -> None:
        """Preload ``tokens`` on the worker (see the module's docstring); cancelling the awaiting task stops the
        work at the next prompt chunk."""
        cancel = threading.Event()
        self._warms.add(cancel)
        job = asyncio.get_running_loop().run_in_executor(self._executor, self.model.preload, tokens, cancel)
        try:
            await asyncio.shield(job)  # a cancelled caller must not cancel the job: only its flag stops it
        except asyncio.CancelledError:
            cancel.set()
            if not job.cancelled():  # aclose() dropped the queued job: nothing to report
                raise
        finally:
            self._warms.discard(cancel)

    async def aclose(self) -> None:
        """Stop the warms, wait for the worker, and free the model."""
        for warming in self._warms:
            warming.set()
        await asyncio.to_thread(self._executor.shutdown, wait=True, cancel_futures=True)
        self.model.close()

    def _generate(self, plan: Plan, sink: Sink) -> None:
        """Drive the reply's steps for ``plan``, pushing its text and then :class:`Finished` (or the error)."""
        if sink.cancel.is_set():
            return
        steps = reply_steps(plan, self.model.tokenize)
        reply = _Generation(self.model, plan, sink)
        try:
            answer: float | Token | None = None
            while not sink.cancel.is_set():
                try:
                    answer = reply.answer(steps.send(answer))
                except StopIteration as stop:
                    outcome: Outcome = stop.value
                    sink.put(Finished(outcome.reason, len(plan.prompt), reply.cached, outcome.produced))
                    return
            sink.put(Finished("cancelled", len(plan.prompt), reply.cached, 0))
        except _Cancelled:
            sink.put(Finished("cancelled", len(plan.prompt), reply.cached, 0))
        except Exception as exc:  # handed to the stream, which raises it as LLMError
            sink.put(exc)
        finally:
            steps.close()
            reply.close()


class _Generation:
    """One reply on the worker: the model's answers to its steps, and where sampling stands (the grammar state,
    the last token picked, which the next step evaluates before picking again)."""

    def __init__(self, model: LocalModel, plan: Plan, sink: Sink) -> None:
        self.model = model
        self.plan = plan
        self.sink = sink
        self.cached = 0  # the prompt tokens the first evaluation kept
        self._evaluated = False
        self._at: list[int] | None = None  # the prompt the next token follows, when nothing was picked after it
        self._grammar: GrammarState | None = None
        self._banned = plan.banned
        self._picked: int | None = None
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")

    def answer(self, step: Step) -> float | Token | None:
        if isinstance(step, Said):
            self.sink.put(step.text)
            return None
        if isinstance(step, Opening):
            self._evaluate(step.prompt)
            return self.model.probability(step.openers)
        if isinstance(step, Run):
            self._evaluate(step.prompt)
            self.close()
            self._grammar = self.model.grammar(step.grammar) if step.grammar else None
            self._banned = step.banned
            return self._pick(step.first_banned if step.first_banned is not None else step.banned)
        assert self._picked is not None
        self.model.advance(self._picked)
        return self._pick(self._banned)

    def close(self) -> None:
        if self._grammar is not None:
            self._grammar.close()
            self._grammar = None

    def _evaluate(self, prompt: list[int]) -> None:
        """Bring the context to ``prompt`` (nothing to do when it is there, with nothing picked since)."""
        if prompt == self._at:
            return
        kept = self.model.evaluate(prompt, self.sink.cancel)
        if self.sink.cancel.is_set():
            raise _Cancelled
        if not self._evaluated:
            self.cached, self._evaluated = kept, True
        self._at = prompt

    def _pick(self, banned: Mask | None) -> Token:
        """The next token, or the end: a full context, or an end-of-turn token that is no tool-format marker."""
        self._at = None
        if self.model.n_tokens >= self.model.n_ctx:
            return Token(end="length")
        token = self.model.pick(self.plan.temperature, self._grammar, banned if self._grammar is None else None)
        text_token = token in self.plan.text_tokens
        if self.model.is_end(token) and not text_token:
            return Token(end="stop")
        self._picked = token
        return Token(self._decoder.decode(self.model.piece(token, special=text_token)))


class LlamaCppBackend(LocalBackend):
    """A local GGUF model run in this process.

    ``model_path`` defaults to :func:`default_model_path`. ``n_threads`` evaluate prompts and ``decode_threads``
    generate (one suits a small model: see :class:`~voxcall.llm.local.model.LocalModel`). ``state_cache_bytes``
    bounds the saved context states that spare sessions with different prompts evaluating their prefix again each
    turn (0: none; see :mod:`voxcall.llm.local.model`). ``options`` plan the replies. ``llama_options`` go to
    ``llama_cpp.Llama``. Raises ``LLMError`` when the model cannot be loaded.
    """

    def __init__(self, model_path: str | Path | None = None, *, n_ctx: int = LOCAL_DEFAULTS.n_ctx,
                 n_threads: int = LOCAL_DEFAULTS.threads, decode_threads: int = 1,
                 state_cache_bytes: int = LOCAL_DEFAULTS.state_cache_bytes, options: ReplyOptions | None = None,
                 **llama_options: Any) -> None:
        path = Path(model_path) if model_path is not None else default_model_path()
        try:
            model = LocalModel(path, n_ctx=n_ctx, n_threads=n_threads, decode_threads=decode_threads,
                               state_cache_bytes=state_cache_bytes, **llama_options)
        except (ValueError, OSError) as exc:
            raise LLMError(f"cannot load the model {path.name}", code="unavailable") from exc
        self.model = model
        """The loaded model."""
        super().__init__(InProcessEngine(model), name=f"llamacpp:{path.stem}", model_path=path,
                         options=options or ReplyOptions())
