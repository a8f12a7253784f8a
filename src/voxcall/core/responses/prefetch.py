"""Speculative follow-ups: the response a ``response.create`` with the session's own settings would produce,
generated before it is asked for (claimed by any request whose effective settings are those).

A :class:`Speculation` is a transaction over a hidden :class:`~voxcall.core.responses.response.ResponseRun`:

- its events wait behind an :class:`~voxcall.core.responses.gate.OutputGate` (bounded: a full gate pauses the
  provider stream), and its items go to a :class:`DeferredHistory`, so the session's history is untouched;
- irreversible work (trimming history) is *parked* and runs only at claim;
- :meth:`Speculation.claim` runs the parked work, commits the items, stamps the caller's metadata (and the
  response's timing as it stands at the claim), and opens the gate: the client sees one ordinary response,
  already under way or finished;
- :meth:`Speculation.discard` aborts the provider stream and forgets everything; the history stays byte-identical
  to a session that never speculated. Tokens of discarded speculation are counted apart.

Claim and discard each decide with no ``await`` between the state check and the state change, so they cannot
both win. :class:`SpeculationSlots` bounds how many hidden provider streams run at once, process-wide.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from typing import Literal

from voxcall.core.conversation.conversation import Conversation
from voxcall.core.conversation.items import Item
from voxcall.core.events import ResponseCreated, ResponseDone, ResponseTimed
from voxcall.core.responses.gate import OutputGate
from voxcall.core.responses.response import ResponseRun

log = logging.getLogger(__name__)

ParkedWork = Callable[[], Awaitable[None]]
State = Literal["running", "finished", "claimed", "discarded"]


@dataclass
class SpeculationStats:
    """Process-wide counters, reported by ``GET /healthz``."""

    started: int = 0
    claimed: int = 0
    discarded: int = 0
    discarded_input_tokens: int = 0
    discarded_output_tokens: int = 0


class SpeculationSlots:
    """At most ``limit`` hidden follow-ups stream from providers at once, across all sessions of a process."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.in_use = 0
        self.stats = SpeculationStats()

    def try_acquire(self) -> bool:
        """Take a slot if one is free (never waits: a busy server simply does not speculate)."""
        if self.in_use >= self.limit:
            return False
        self.in_use += 1
        return True

    def release(self) -> None:
        """Give a slot back."""
        self.in_use = max(0, self.in_use - 1)


class DeferredHistory:
    """The conversation as a hidden response sees it: its own items are kept aside until the claim."""

    def __init__(self, conversation: Conversation, after: Item | None = None) -> None:
        """``after``: an item that will join the conversation just before the claim (an eager turn's user item)."""
        self._conversation = conversation
        self._after = after
        self.conversation_id: str | None = conversation.id
        self.added: list[Item] = []

    def add(self, item: Item) -> str | None:
        if self.added:
            previous: str | None = self.added[-1].id
        elif self._after is not None:
            previous = self._after.id
        else:
            previous = self._conversation.items[-1].id if len(self._conversation) else None
        self.added.append(item)
        return previous

    def remove(self, item: Item) -> None:
        self.added.remove(item)

    def commit(self) -> None:
        """Put the items into the conversation, in order."""
        for item in self.added:
            self._conversation.add(item)
        self.added = []


class Speculation:
    """One hidden follow-up and its fate."""

    def __init__(self, run: ResponseRun, gate: OutputGate, history: DeferredHistory, conversation: Conversation,
                 slots: SpeculationSlots, parked: list[ParkedWork], on_end: Callable[[Speculation], None]) -> None:
        """Start ``run`` hidden; the caller holds a slot from ``slots``. ``on_end`` is told when the run ends."""
        self.run = run
        self.gate = gate
        self.history = history
        self.conversation = conversation
        self.slots = slots
        self.parked = parked
        self.state: State = "running"
        self._on_end = on_end
        self._slot_held = True
        slots.stats.started += 1
        self.task = asyncio.create_task(self._body(), name=f"voxcall-speculation-{run.id}")

    async def _body(self) -> None:
        try:
            await self.run.run()
        finally:
            self._finished()

    def _finished(self) -> None:
        """The stream ended: free its provider slot; a hidden one that failed is discarded at once."""
        self._release_slot()
        if self.state == "running":
            self.state = "finished"
            if self.run.status == "failed":
                self._forget("it failed")
        self._on_end(self)

    @property
    def claimable(self) -> bool:
        """Still waiting for a claim, and not failed."""
        return self.state in ("running", "finished") and self.run.status != "failed"

    async def claim(self, metadata: dict[str, str] | None) -> bool:
        """Make the hidden response the client's; False (and discarded) when parked work fails."""
        if not self.claimable:
            return False
        self.state = "claimed"
        try:
            for work in self.parked:
                await work()
        except Exception:
            log.exception("speculation %s: parked work failed at claim; falling back", self.run.id)
            self.state = "running"
            await self.discard("parked work failed")
            return False
        self.history.commit()
        self.run.history = self.conversation
        self.run.metadata = metadata

        self.gate.patch_first(ResponseCreated, lambda ev: ResponseCreated(replace(ev.response, metadata=metadata)))
        self.gate.patch_first(ResponseDone, lambda ev: ResponseDone(replace(ev.response, metadata=metadata)))
        self.gate.patch_first(ResponseTimed, lambda ev: self.run.timing.report(ev.response_id))
        self.slots.stats.claimed += 1
        self._release_slot()
        await self.gate.open()
        self.run.released.set()
        return True

    async def discard(self, reason: str) -> bool:
        """Abort and forget the hidden response; False when it was already claimed or discarded."""
        if self.state not in ("running", "finished"):
            return False
        self._forget(reason)
        if not self.task.done():
            self.task.cancel()
            await asyncio.wait([self.task])
        self._release_slot()  # also when the task was cancelled before it ever ran
        return True

    def _forget(self, reason: str) -> None:
        self.state = "discarded"
        self.gate.drop()
        self.history.added = []
        stats = self.slots.stats
        stats.discarded += 1
        stats.discarded_input_tokens += self.run.usage.input_tokens
        stats.discarded_output_tokens += self.run.usage.output_tokens
        log.debug("speculation %s discarded: %s", self.run.id, reason)

    def _release_slot(self) -> None:
        if self._slot_held:
            self._slot_held = False
            self.slots.release()
