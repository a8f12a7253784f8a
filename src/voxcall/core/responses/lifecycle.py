"""The response lifecycle of one session: the visible response, any hidden one, and the moves between them.

A session is in exactly one :class:`Phase` at a time:

- ``IDLE``: no response runs and nothing is hidden;
- ``VISIBLE``: a response the client sees streams (one at most);
- ``HIDDEN``: a hidden response (a :class:`~voxcall.core.responses.prefetch.Speculation`) runs or waits, finished, for
  its claim. Its :class:`HiddenKind` says what started it and what claims it: a ``FOLLOW_UP`` starts when every
  tool call of the last response has its output, and is claimed by a ``response.create`` whose effective settings
  are those it was generated with (restating the session's values changes nothing); an
  ``EAGER_TURN`` starts at a pause in the user's speech, answering what was said so far, and is claimed when the
  turn detector confirms that the turn is over (or discarded when the user speaks on). An eager turn may speak
  ahead (its audio waits in the gate) but, like a follow-up, runs no server tool before its claim.

The verbs, and the only moves:

- :meth:`start`: ``IDLE`` → ``VISIBLE``; :meth:`cancel`: ``VISIBLE`` → ``IDLE`` (the response ends with
  ``response.done``, status ``cancelled``, before the call returns);
- :meth:`speculate`: ``IDLE`` → ``HIDDEN`` when a follow-up is due and a provider slot is free;
  :meth:`answer_early`: ``IDLE`` → ``HIDDEN`` with an eager turn, when a provider slot is free;
- :meth:`claim`: ``HIDDEN`` → ``VISIBLE`` (still running) or ``IDLE`` (already finished); a claim whose parked
  work fails is a discard, and the caller generates normally;
- :meth:`discard`: ``HIDDEN`` → ``IDLE``, leaving no trace;
- a visible response that ends by itself: ``VISIBLE`` → ``IDLE``, and a follow-up may start.

Every move is decided with no ``await`` between reading the phase and changing it. Where the observer is told of a
response's end or a hidden one's fate, so is the response's turn in the trace (its
:attr:`~voxcall.core.responses.timing.ResponseTiming.trace`): a hidden turn stays open until it is claimed or
discarded.
"""

from __future__ import annotations

import asyncio
import enum
import logging
import time
from collections.abc import Callable

from voxcall.core.conversation.conversation import Conversation, overflow
from voxcall.core.conversation.images import holds_images, strip_images
from voxcall.core.conversation.items import Item, MessageItem
from voxcall.core.conversation.output_items import History
from voxcall.core.events import Emit, ItemDeleted
from voxcall.core.observer import Observer
from voxcall.core.responses.gate import OutputGate
from voxcall.core.responses.prefetch import DeferredHistory, ParkedWork, Speculation, SpeculationSlots
from voxcall.core.responses.response import CancelReason, ResponseRun
from voxcall.core.responses.timing import HeardTurn
from voxcall.core.settings import SessionSettings
from voxcall.core.tools.tool_ledger import ToolLedger

log = logging.getLogger(__name__)


class Phase(enum.Enum):
    """What the session's responses are doing."""

    IDLE = "idle"
    VISIBLE = "visible"
    HIDDEN = "hidden"


class HiddenKind(enum.Enum):
    """Why a hidden response runs, which decides what claims it."""

    FOLLOW_UP = "follow_up"  # after tool output; claimed by a response.create with the same effective settings
    EAGER_TURN = "eager_turn"  # at a pause in the user's speech; claimed when the turn is confirmed


NewRun = Callable[[History, list[Item], Emit, "HiddenKind", float | None], ResponseRun]
"""Builds a hidden response with the session's current settings: ``(history, context items, emit, kind, origin) ->
run``; ``origin`` (None: now) is the moment it is timed from (an eager turn's: the end of the user's speech)."""

Context = tuple[list[Item], list[ParkedWork]]
"""The items a response sees, and the irreversible work (history trimming, dropping images) to do before it runs."""


class ResponseLifecycle:
    """Owns the session's visible and hidden responses as one explicit :class:`Phase`."""

    def __init__(self, conversation: Conversation, emit: Emit, slots: SpeculationSlots, new_run: NewRun, *,
                 prefetch: bool, max_hidden_events: int, max_history_items: int, max_conversation_bytes: int,
                 observer: Observer, drop_images: bool = False, ledger: ToolLedger | None = None,
                 on_idle: Callable[[], None] = lambda: None) -> None:
        """``new_run`` builds a response with the session's settings of the moment (follow-ups use it); every
        response that ends, and every hidden one's fate, is counted in ``metrics``. ``drop_images``: the backend
        does not see images, so their data leaves the conversation before a response
        (:mod:`voxcall.core.conversation.images`). ``ledger`` (the session's tool calls) forgets the calls of a
        discarded hidden response; ``on_idle`` is told when a visible response ended and no other has started."""
        self.phase = Phase.IDLE
        self.visible: ResponseRun | None = None
        self.heard: ResponseRun | None = None  # the latest response the client was sent (started or claimed)
        self.hidden: Speculation | None = None
        self.hidden_kind: HiddenKind | None = None
        self.slots = slots
        self._observer = observer
        self._conversation = conversation
        self._emit = emit
        self._new_run = new_run
        self._prefetch = prefetch
        self._max_hidden_events = max_hidden_events
        self._max_history_items = max_history_items
        self._max_conversation_bytes = max_conversation_bytes
        self._drop_images = drop_images
        self._ledger = ledger
        self._on_idle = on_idle
        self._task: asyncio.Task[None] | None = None
        self._last_done: ResponseRun | None = None  # the last visible response that completed
        self._failed_follow_up_for: str | None = None  # never retry a follow-up that failed for that response

    def context(self) -> Context:
        """The items a response sees (the newest, at most ``max_history_items`` and ``max_conversation_bytes`` of
        JSON, a call never without its output: :func:`~voxcall.core.conversation.conversation.overflow`), and the
        irreversible work to do first, which a hidden response parks until its claim: trimming older items from
        the conversation, and, for a backend that does not see images, dropping their data (the model reads a note
        in their place either way: :func:`~voxcall.core.conversation.conversation.chat_message`)."""
        items = self._conversation.items
        old = overflow(items, max_items=self._max_history_items, max_bytes=self._max_conversation_bytes)
        gone = {item.id for item in old}
        kept = [item for item in items if item.id not in gone]
        unseen = [item for item in kept if self._drop_images and isinstance(item, MessageItem)
                  and holds_images(item.content)]
        work: list[ParkedWork] = []

        async def trim() -> None:
            for item in old:
                if self._conversation.get(item.id) is not None:
                    self._conversation.delete(item.id)
                    await self._emit(ItemDeleted(item.id))

        async def drop_images() -> None:
            for item in unseen:
                item.content[:] = strip_images(item.content)

        if old:
            work.append(trim)
        if unseen:
            work.append(drop_images)
        return kept, work

    # -- visible responses --------------------------------------------------------------------------------------

    def start(self, run: ResponseRun) -> None:
        """``IDLE`` → ``VISIBLE``: stream ``run`` to the client."""
        assert self.phase is Phase.IDLE, f"start while {self.phase}"
        self.phase, self.visible, self.heard = Phase.VISIBLE, run, run
        self._task = asyncio.create_task(self._drive(run), name=f"voxcall-response-{run.id}")

    async def _drive(self, run: ResponseRun) -> None:
        try:
            await run.run()
        finally:
            self._ended(run)

    def _ended(self, run: ResponseRun) -> None:
        """A visible (or claimed) response ended; runs inside its task, before the task completes."""
        if self.visible is run:
            self.phase, self.visible, self._task = Phase.IDLE, None, None
        client_calls = sum(1 for item in run.output if item.type == "function_call")
        self._observer.response_ended(run.status, run.usage.input_tokens, run.usage.output_tokens, run.timing,
                                     client_calls)
        run.timing.trace.end(status=run.status)
        if run.status == "completed" and run.history is self._conversation:
            self._last_done = run
            self.speculate()
        if self.phase is not Phase.VISIBLE:
            self._on_idle()

    async def settled(self) -> None:
        """Wait until no visible response runs (return at once when none does); cancelling the wait leaves the
        response running."""
        while self.phase is Phase.VISIBLE and self._task is not None:
            await asyncio.wait([self._task])

    async def cancel(self, reason: CancelReason) -> None:
        """``VISIBLE`` → ``IDLE``: the response ends with ``response.done`` (cancelled) before this returns."""
        run, task = self.visible, self._task
        if self.phase is not Phase.VISIBLE or run is None or task is None or task.done():
            return
        run.cancel_reason = reason
        task.cancel()
        await asyncio.wait([task])
        if not run.started:  # cancelled before its first step: its own code never ran
            await run.abandon()
            self._ended(run)

    # -- hidden responses ---------------------------------------------------------------------------------------

    def follow_up_due(self) -> bool:
        """Whether a hidden follow-up should start now: the last response made calls, all now answered, nothing
        else runs or waits, and it is not the one whose follow-up already failed."""
        last = self._last_done
        return (self._prefetch and self.phase is Phase.IDLE and last is not None and bool(last.calls)
                and last.id != self._failed_follow_up_for
                and all(self._conversation.has_output(c.call_id) for c in last.calls)
                and not self._conversation.unanswered_calls())

    def speculate(self) -> None:
        """``IDLE`` → ``HIDDEN`` with a follow-up, when one is due and a provider slot is free."""
        if self.follow_up_due() and self.slots.try_acquire():
            self._hide(HiddenKind.FOLLOW_UP, None, None)

    def answer_early(self, user_item: Item, speech_end: float) -> bool:
        """``IDLE`` → ``HIDDEN`` with an eager turn: the answer to ``user_item`` (not yet in the conversation), timed
        from ``speech_end``, when nothing else runs and a provider slot is free. False when it could not start."""
        if self.phase is not Phase.IDLE or not self.slots.try_acquire():
            return False
        self._hide(HiddenKind.EAGER_TURN, user_item, speech_end)
        return True

    def _hide(self, kind: HiddenKind, user_item: Item | None, origin: float | None) -> None:
        """Start a hidden response of ``kind`` (the caller holds a slot), timed from ``origin`` (None: now);
        ``user_item`` ends its context."""
        gate = OutputGate(self._emit, limit=self._max_hidden_events)
        history = DeferredHistory(self._conversation, after=user_item)
        context, parked = self.context()
        run = self._new_run(history, context if user_item is None else [*context, user_item], gate.emit, kind,
                            origin)
        run.released.clear()  # no server tool (and for a follow-up, no speech) before the claim
        run.speak_ahead = kind is HiddenKind.EAGER_TURN
        self.phase, self.hidden_kind = Phase.HIDDEN, kind
        self._observer.hidden(kind.value, "started")
        self.hidden = Speculation(run, gate, history, self._conversation, self.slots, parked,
                                  on_end=self._hidden_ended)

    def _hidden_ended(self, spec: Speculation) -> None:
        if spec.state == "claimed":
            self._ended(spec.run)
        elif spec.state == "discarded" and self.hidden is spec:  # it failed
            kind = self.hidden_kind
            self._count_discard(spec, f"the response {spec.run.status}")
            self._forget_hidden()
            if spec.run.status == "failed" and self._last_done is not None and kind is HiddenKind.FOLLOW_UP:
                self._failed_follow_up_for = self._last_done.id

    def _count_discard(self, spec: Speculation, reason: str, kind: HiddenKind | None = None) -> None:
        """The hidden ``spec`` (of ``kind``; None: the one hidden now) is discarded because of ``reason``: its calls
        are forgotten, the observer and the trace told."""
        if self._ledger is not None:
            self._ledger.forget(spec.run.id)
        kind = kind or self.hidden_kind or HiddenKind.FOLLOW_UP
        self._observer.hidden(kind.value, "discarded", input_tokens=spec.run.usage.input_tokens,
                             output_tokens=spec.run.usage.output_tokens)
        spec.run.timing.trace.discarded(reason=reason)

    def _forget_hidden(self) -> None:
        self.phase, self.hidden, self.hidden_kind = Phase.IDLE, None, None

    async def claim(self, metadata: dict[str, str] | None, *, settings: SessionSettings | None = None,
                    turn: HeardTurn | None = None) -> bool:
        """``HIDDEN`` → ``VISIBLE`` (or ``IDLE`` when it already finished). Without ``turn`` the client's
        ``response.create`` claims a follow-up generated with exactly its effective ``settings`` (the session's
        with the request's overrides applied: a field restated with the session's value, or null, is no
        difference); with ``turn`` the confirmed end of that user turn claims an eager answer. False when there is
        no such hidden response (a hidden one of the other kind, or one generated with other settings, stays
        hidden for the caller to discard; one that cannot be claimed is discarded)."""
        spec, kind = self.hidden, self.hidden_kind
        wanted = HiddenKind.FOLLOW_UP if turn is None else HiddenKind.EAGER_TURN
        if self.phase is not Phase.HIDDEN or spec is None or kind is not wanted:
            return False
        if turn is None and spec.run.settings != settings:
            return False
        self._forget_hidden()
        now = time.monotonic()
        if turn is None:
            spec.run.timing.rebase(now)  # timed from the client's request; a finished one's figures are patched
        else:
            spec.run.timing.confirmed(turn, now)
        if not spec.claimable:
            spec.run.timing.trace.discarded(reason="it failed before its claim")
            return False
        finished = spec.task.done()  # then its end was not yet booked as a visible response's
        if not finished:
            self.phase, self.visible, self._task = Phase.VISIBLE, spec.run, spec.task
        if await spec.claim(metadata):
            self._observer.hidden(wanted.value, "claimed")
            spec.run.timing.claimed(now)
            self.heard = spec.run
            if finished:
                self._ended(spec.run)
            return True
        self.phase, self.visible, self._task = Phase.IDLE, None, None
        self._count_discard(spec, "its claim failed", wanted)
        return False

    async def discard(self, reason: str) -> None:
        """``HIDDEN`` → ``IDLE``: abort the hidden response and forget it (nothing when none is hidden)."""
        spec = self.hidden
        if self.phase is not Phase.HIDDEN or spec is None:
            return
        self._count_discard(spec, reason)
        self._forget_hidden()
        await spec.discard(reason)

    async def close(self) -> None:
        """The session ends: discard what is hidden, cancel what is visible."""
        await self.discard("session closed")
        await self.cancel("client_cancelled")
