"""``Duet``: a talker and a thinker behind one backend. The talker (small and fast) is the voice; the thinker
(stronger) decides.

A 135M model cannot be both the voice and the judge of which tool to call (right 21 % of the time on BFCL's
held-out requests). The frameworks split the two (pipecat's ``LLMWithBackend``, GPT-Live's delegation, LiveKit's
fillers while tools run); here the split is one backend, so every edge gets it and every call still goes through
the session's tool ledger:

- :func:`route` sends **small talk** (greetings, thanks, "how are you": :func:`~voxcall.llm.local.lexicon.
  is_small_talk`) in a language the talker speaks (its script gives it away: :func:`~voxcall.language.
  language_of`; SmolLM2 answered 你好，你今天怎么样？ with a row of emoji) and the words after **tool results** (the
  results, relayed) to the talker, without the tools:
  its prompt is the instructions and the conversation, the same for every session, so it answers within a few
  hundred milliseconds even in a session that declared tools no one declared before. Arithmetic without a tool for
  it is computed by the talker's planner (:mod:`voxcall.llm.local.arithmetic`).
- Everything else goes to the **thinker** with the whole request (tools, ``tool_choice``): which tool, which
  arguments, none, or an answer that needs knowledge. Its calls and words pass through unchanged, so the tool
  ledger runs (or hands the client) exactly the calls the thinker made; a response cancelled or discarded before
  the thinker finished (a barge-in, a speculation dropped) closes the thinker's stream, and no call it had not made
  yet ever exists.
- The voice never waits silently on the thinker: with no word from it ``acknowledge_after_s`` after the end of
  the user's speech (:attr:`~voxcall.llm.base.LLMRequest.heard_at`: the user's wait, which began before the
  request, with the turn's silence and its transcription; a request no speech ended: after the request), the reply
  opens with a short **acknowledgement** in the user's language ("One moment, I'm checking."), then the
  thinker's reply follows in the same response. A thinker still silent at ``deadline_s`` is stopped and the reply
  says a **spoken fallback**; so does a thinker that fails after the acknowledgement was said (before, its error
  is the response's), and one whose reply ends having said nothing and made no call (the 0.5B thinker's call cut by
  its token limit is rejected, and its reply was silence; a call the response will have the thinker write again,
  ``repairable``, is no such end).
- A new request while the thinker works for an earlier one: the earlier response was cancelled (barge-in) and with
  it its thinker request; requests of other sessions queue at the thinker's engine, bounded by the deadline.

A warm prepares both: the talker's prompt without the tools, then the thinker's with them. On two cores a
thinker's warm (seconds for a 1.5B model and a new tool set) would slow the talker's reply beside it, so a
talker's reply pauses it, and it goes on (from where it stopped) once that reply is over.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncGenerator, Callable
from dataclasses import dataclass, replace
from enum import Enum

from voxcall.config import ThinkerSettings
from voxcall.language import language_of
from voxcall.llm.base import (
    Done,
    FunctionOutputItem,
    LLMBackend,
    LLMError,
    LLMEvent,
    LLMRequest,
    Usage,
    answers,
    computes_here,
    warm,
    warm_shared,
)
from voxcall.llm.local.lexicon import is_small_talk
from voxcall.tools.codecalls.events import TextDelta
from voxcall.tools.codecalls.prompt import forced_tool_name

THINKER_DEFAULTS = ThinkerSettings()
"""The ``thinker:`` section's defaults, which :class:`DuetOptions` takes."""


class Route(Enum):
    """Who answers a request."""

    TALKER = "talker"
    THINKER = "thinker"


def route(request: LLMRequest, talker_languages: frozenset[str] | None = None) -> Route:
    """Who answers ``request`` (see the module's docstring): the talker for small talk in one of
    ``talker_languages`` (None: any), the words after tool results and a reply with no user words to answer; the
    thinker for the rest, and always for a required call."""
    if request.tool_choice == "required" or forced_tool_name(request.tool_choice) is not None:
        return Route.THINKER
    if request.items and isinstance(request.items[-1], FunctionOutputItem):
        return Route.TALKER
    said = request.last_user_text
    if not said.strip():
        return Route.TALKER
    language = language_of(said)
    if talker_languages is not None and language is not None and language not in talker_languages:
        return Route.THINKER
    return Route.TALKER if is_small_talk(said) else Route.THINKER


@dataclass(frozen=True, slots=True)
class DuetOptions:
    """When the voice speaks up while the thinker works (``acknowledge_after_s``), and when it gives up on it
    (``deadline_s``), the defaults being the ``thinker:`` section's; and the languages whose small talk the talker
    answers (``talker_languages``, ISO 639-1 codes as :func:`~voxcall.language.language_of` gives them; None: any).
    """

    acknowledge_after_s: float = THINKER_DEFAULTS.acknowledge_after_ms / 1000
    deadline_s: float = THINKER_DEFAULTS.deadline_s
    talker_languages: frozenset[str] | None = None


Phrase = Callable[[str], str]
"""What to say, given the user's last words (so it can be said in their language)."""


class _End:
    """The thinker's stream ended."""


Item = LLMEvent | LLMError | _End


class Duet:
    """The talker and the thinker as one :class:`~voxcall.llm.base.LLMBackend` (see the module's docstring);
    ``acknowledge`` and ``fallback`` give the phrases the voice says while it waits and when it gives up."""

    def __init__(self, talker: LLMBackend, thinker: LLMBackend, *, acknowledge: Phrase, fallback: Phrase,
                 options: DuetOptions | None = None) -> None:
        self.talker = talker
        self.thinker = thinker
        self.name = f"{talker.name}+{thinker.name}"
        self.computes_here = computes_here(talker) or computes_here(thinker)
        """Whether either model runs on this machine's CPU (:func:`~voxcall.llm.base.computes_here`)."""
        self.options = options or DuetOptions()
        self._acknowledge = acknowledge
        self._fallback = fallback
        self._warming: asyncio.Task[None] | None = None  # the thinker's warm, paused while the talker speaks
        self._warm_request: LLMRequest | None = None  # what it prepares, to go on with afterwards

    async def stream(self, request: LLMRequest) -> AsyncGenerator[LLMEvent, None]:
        """The talker's reply, or the thinker's behind an acknowledgement (see the module's docstring)."""
        if route(request, self.options.talker_languages) is Route.TALKER:
            paused = self._pause_warm()
            try:
                async for event in self.talker.stream(spoken(request)):
                    yield event
            finally:
                if paused:
                    self._resume_warm()
            return
        async for event in self._thought(request):
            yield event

    async def warm(self, request: LLMRequest) -> None:
        """Prepare the talker's prompt (no tools: short, shared by every session), then the thinker's; returns
        when both are ready (a pause by a talker's reply returns early: the thinker's goes on afterwards)."""
        await warm(self.talker, spoken(request))
        self._warm_request = request
        self._resume_warm()
        job = self._warming
        assert job is not None
        try:
            await asyncio.wait({job})
        except asyncio.CancelledError:  # the caller's newer preparation replaces this one
            job.cancel()
            raise

    async def warm_shared(self, request: LLMRequest) -> None:
        """Prepare the talker's prompt (no tools: the same for every session), then what every thinker's tools
        prompt shares."""
        await warm(self.talker, spoken(request))
        await warm_shared(self.thinker, request)

    async def aclose(self) -> None:
        self._pause_warm()
        await asyncio.gather(self.talker.aclose(), self.thinker.aclose())

    def _pause_warm(self) -> bool:
        """Stop the thinker's warm, if one runs (it keeps what it evaluated); whether one did."""
        running = self._warming is not None and not self._warming.done()
        if running:
            assert self._warming is not None
            self._warming.cancel()
        return running

    def _resume_warm(self) -> None:
        """(Re)start the thinker's warm of the last request warmed (it goes on from where the last one stopped)."""
        self._pause_warm()
        if self._warm_request is not None:
            self._warming = asyncio.ensure_future(warm(self.thinker, self._warm_request))

    async def _thought(self, request: LLMRequest) -> AsyncGenerator[LLMEvent, None]:
        """The thinker's events, behind an acknowledgement when it is slow, cut by the deadline."""
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[Item] = asyncio.Queue()
        pump = asyncio.ensure_future(_pump(self.thinker.stream(request), queue))
        said = request.last_user_text
        deadline = loop.time() + self.options.deadline_s
        acknowledge_at = loop.time() + self.options.acknowledge_after_s
        if request.heard_at is not None:  # a spoken turn: the user has waited since the end of their speech
            acknowledge_at -= time.monotonic() - request.heard_at
        acknowledged = False
        answered = False  # the thinker said words, made a call, or botched one the response will have it repair
        try:
            while True:
                wait = (deadline if acknowledged else min(deadline, acknowledge_at)) - loop.time()
                try:
                    item = await asyncio.wait_for(queue.get(), max(0.0, wait))
                except TimeoutError:
                    if loop.time() < deadline and not acknowledged:
                        acknowledged = True
                        yield TextDelta(self._acknowledge(said) + " ", filler=True)
                        continue
                    yield TextDelta(self._fallback(said))
                    yield Usage(0, 0)
                    yield Done("stop")
                    return
                if isinstance(item, _End):
                    return
                if isinstance(item, LLMError):
                    if not acknowledged:
                        raise item
                    yield TextDelta(self._fallback(said))
                    yield Usage(0, 0)
                    yield Done("stop")
                    return
                if isinstance(item, Done) and not answered:
                    yield TextDelta(self._fallback(said))
                answered = answered or answers(item)
                acknowledged = True  # the thinker spoke: no acknowledgement after its first words
                yield item
        finally:
            pump.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await pump


async def _pump(events: AsyncGenerator[LLMEvent, None], queue: asyncio.Queue[Item]) -> None:
    """Move ``events`` into ``queue``, then the end (or the error that ended them); closing the stream when
    cancelled, which stops the thinker."""
    try:
        async for event in events:
            queue.put_nowait(event)
        queue.put_nowait(_End())
    except LLMError as exc:
        queue.put_nowait(exc)
    finally:
        await events.aclose()


def spoken(request: LLMRequest) -> LLMRequest:
    """``request`` as the talker gets it: without the tools (the thinker holds them)."""
    return replace(request, tools=[], tool_choice="none")
