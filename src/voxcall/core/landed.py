"""Results that land after their response ended, answered by a response of their own.

A slow server tool outlives its response (the response acknowledged it and ended); a client tool may never answer
(the ledger adds an output saying so). Either way the ledger hands the call here (:meth:`LandedResults.add`), and it
is answered as soon as nothing else runs: not while a command is being applied, a response is visible, the client owes
outputs, or the user is speaking (the response that follows any of these reads it too). A hidden response is
discarded first: it was generated without the result. The response that answers reads the results moved to the end of
its context (a user's question that came after them stays last); the conversation keeps every item where it is. That
response gives way to the user: a new turn cancels it (:attr:`LandedResults.reporting`).
"""

from __future__ import annotations

import asyncio
from typing import Protocol

from voxcall.core.conversation.conversation import Conversation
from voxcall.core.conversation.items import Item, MessageItem
from voxcall.core.conversation.output_items import History
from voxcall.core.events import Emit
from voxcall.core.hearing.heard_audio import HeardAudio
from voxcall.core.responses.lifecycle import Phase, ResponseLifecycle
from voxcall.core.responses.response import ResponseRun
from voxcall.core.responses.timing import ResponseTiming
from voxcall.core.settings import SessionSettings
from voxcall.core.tools.tool_ledger import LedgerCall
from voxcall.telemetry.tracing import Trigger


class Answering(Protocol):
    """What landed results need of their session (:class:`~voxcall.core.session.Session`)."""

    id: str
    settings: SessionSettings
    conversation: Conversation
    responses: ResponseLifecycle
    audio: HeardAudio
    emit: Emit
    closed: bool

    @property
    def handling(self) -> bool: ...

    def new_run(self, settings: SessionSettings, metadata: dict[str, str] | None, history: History,
                context: list[Item], emit: Emit, timing: ResponseTiming | None = None, *,
                hidden: str | None = None) -> ResponseRun: ...


class LandedResults:
    """The calls of one session that landed and await their answer."""

    def __init__(self, session: Answering) -> None:
        self._session = session
        self._unanswered: list[LedgerCall] = []  # landed results (and unanswered client calls) awaiting a response
        self.task: asyncio.Task[None] | None = None  # discarding a hidden response to answer them
        self._report: ResponseRun | None = None  # the latest response started to answer them

    @property
    def reporting(self) -> bool:
        """Whether the visible response is one that answers landed results."""
        visible = self._session.responses.visible
        return visible is not None and visible is self._report

    def add(self, call: LedgerCall) -> None:
        """The ledger has something new to answer: a detached tool's result, or a client tool that never
        answered."""
        self._unanswered.append(call)
        self.answer()

    def answer(self) -> None:
        """Answer what landed, unless something else runs (then the lifecycle calls again when it is idle)."""
        session = self._session
        responses = session.responses
        if not self._unanswered or session.handling or responses.phase is Phase.VISIBLE or session.closed:
            return
        if responses.phase is Phase.HIDDEN:
            if self.task is None or self.task.done():
                self.task = asyncio.create_task(self._discard_then_answer(), name=f"voxcall-answer-{session.id}")
            return
        if session.conversation.unanswered_calls() or session.audio.buffer.in_turn:
            return  # the client owes outputs, or the user is speaking: the response that follows answers it
        context, _ = responses.context()  # trimming, when due, waits for the next response
        run = session.new_run(session.settings, None, session.conversation, self.fold(context), session.emit,
                              ResponseTiming(trigger=Trigger.TOOL_OUTPUT))
        self._report = run
        responses.start(run)

    def fold(self, context: list[Item]) -> list[Item]:
        """What a response starting now reads: ``context`` with the results that landed since the last response
        moved to its end (a user's question that came after them stays last: they are kept for that answer),
        which are then answered."""
        landed = {call.item.id for call in self._unanswered if call.server}  # a client's output is already last
        self._unanswered = []
        last = context[-1] if context else None
        if not landed or (isinstance(last, MessageItem) and last.role == "user"):
            return context
        return [item for item in context if item.id not in landed] + [item for item in context if item.id in landed]

    async def _discard_then_answer(self) -> None:
        await self._session.responses.discard("a tool result landed")
        self.answer()
