"""The response lifecycle on its own: each phase, each verb, and the moves they may and may not make."""

from __future__ import annotations

import asyncio
from typing import Any

from tests.harness import ControlledBackend, Turn, run_inputs, wired
from voxcall.core.conversation.conversation import Conversation, to_chat_items
from voxcall.core.conversation.items import CallOutputItem, Item
from voxcall.core.conversation.output_items import History
from voxcall.core.events import Emit
from voxcall.core.responses.lifecycle import HiddenKind, Phase, ResponseLifecycle
from voxcall.core.responses.prefetch import SpeculationSlots
from voxcall.core.responses.response import ResponseRun
from voxcall.core.settings import SessionSettings
from voxcall.llm import LLMRequest
from voxcall.realtime.server_events import check_server_event
from voxcall.serving.metrics import Metrics
from voxcall.serving.outbox import Outbox


class Parts:
    """A lifecycle over a conversation whose events are recorded, answering with a controlled backend."""

    def __init__(self, *turns: Turn, prefetch: bool = True, slots: int = 4) -> None:
        self.events: list[dict[str, Any]] = []
        self.backend = ControlledBackend(*turns)
        self.conversation = Conversation()
        self.outbox: Outbox[dict[str, Any]] = Outbox(self._record)
        self.outbox.start()
        self.emit = wired(self.outbox.put)
        self.lifecycle = ResponseLifecycle(self.conversation, self.emit, SpeculationSlots(slots), self.new_run,
                                           prefetch=prefetch, max_hidden_events=64, max_history_items=100,
                                           max_conversation_bytes=1_000_000, observer=Metrics())

    async def _record(self, ev: dict[str, Any]) -> None:
        check_server_event(ev)
        self.events.append(ev)

    def new_run(self, history: History, context: list[Item], emit: Emit, kind: HiddenKind | None = None,
                origin: float | None = None) -> ResponseRun:
        return ResponseRun(run_inputs(self.backend, history, emit, request=LLMRequest(items=to_chat_items(context))))

    def visible(self) -> ResponseRun:
        return self.new_run(self.conversation, self.conversation.items, self.emit)

    async def settle(self) -> None:
        for _ in range(30):
            await asyncio.sleep(0)

    def of(self, kind: str) -> list[dict[str, Any]]:
        return [e for e in self.events if e["type"] == kind]

    async def answer_calls(self) -> None:
        for call in self.conversation.unanswered_calls():
            self.conversation.add(CallOutputItem(f"out_{call.call_id}", call.call_id, "ok"))

    async def close(self) -> None:
        await self.lifecycle.close()
        await self.outbox.close()


async def test_a_visible_response_runs_and_returns_to_idle() -> None:
    parts = Parts(Turn("Hello there."))
    assert parts.lifecycle.phase is Phase.IDLE
    run = parts.visible()
    parts.lifecycle.start(run)
    assert parts.lifecycle.phase is Phase.VISIBLE and parts.lifecycle.visible is run
    await parts.settle()
    assert parts.lifecycle.phase is Phase.IDLE and parts.lifecycle.visible is None
    assert run.status == "completed"
    await parts.close()
    assert len(parts.of("response.done")) == 1


async def test_cancel_ends_the_visible_response_before_it_returns() -> None:
    turn = Turn("Thinking", hold=True)
    parts = Parts(turn)
    run = parts.visible()
    parts.lifecycle.start(run)
    await asyncio.wait_for(turn.started.wait(), 5)
    await parts.lifecycle.cancel("turn_detected")
    assert parts.lifecycle.phase is Phase.IDLE
    assert run.status == "cancelled" and run.status_details == {"type": "cancelled", "reason": "turn_detected"}
    await parts.close()
    assert [e["response"]["status"] for e in parts.of("response.done")] == ["cancelled"]


async def test_cancel_before_the_task_ran_still_reports_created_and_done() -> None:
    parts = Parts(Turn("never"))
    parts.lifecycle.start(parts.visible())
    await parts.lifecycle.cancel("client_cancelled")  # no await point in between: the task never started
    assert parts.lifecycle.phase is Phase.IDLE
    await parts.close()
    assert len(parts.of("response.created")) == 1 and len(parts.of("response.done")) == 1


async def test_cancel_and_discard_do_nothing_in_the_wrong_phase() -> None:
    parts = Parts()
    await parts.lifecycle.cancel("client_cancelled")
    await parts.lifecycle.discard("nothing hidden")
    assert await parts.lifecycle.claim(None) is False
    assert parts.lifecycle.phase is Phase.IDLE
    await parts.close()
    assert parts.events == []


async def tool_turn(parts: Parts) -> None:
    """A visible response that calls a tool; the call is then answered, so a follow-up is due."""
    parts.lifecycle.start(parts.visible())
    await parts.settle()
    assert parts.lifecycle.phase is Phase.IDLE
    assert not parts.lifecycle.follow_up_due()  # the call still waits for its output
    await parts.answer_calls()
    assert parts.lifecycle.follow_up_due()


async def test_a_follow_up_is_hidden_then_claimed() -> None:
    parts = Parts(Turn("", [("get_weather", {"city": "Oslo"})]), Turn("It is cold."))
    await tool_turn(parts)
    parts.lifecycle.speculate()
    assert parts.lifecycle.phase is Phase.HIDDEN and parts.lifecycle.hidden_kind is HiddenKind.FOLLOW_UP
    hidden = parts.lifecycle.hidden
    assert hidden is not None
    await asyncio.wait_for(hidden.task, 5)
    assert parts.lifecycle.phase is Phase.HIDDEN  # finished, still waiting for its claim
    assert len(parts.of("response.created")) == 1  # only the visible one reached the client
    assert await parts.lifecycle.claim({"k": "v"}, settings=SessionSettings()) is True
    await parts.settle()
    assert parts.lifecycle.phase is Phase.IDLE  # it had already finished
    done = parts.of("response.done")
    assert len(done) == 2 and done[1]["response"]["metadata"] == {"k": "v"}
    assert parts.conversation.items[-1].text == "It is cold. "
    await parts.close()


async def test_a_running_follow_up_claimed_becomes_visible() -> None:
    follow = Turn("Still going", hold=True)
    parts = Parts(Turn("", [("get_weather", {"city": "Oslo"})]), follow)
    await tool_turn(parts)
    parts.lifecycle.speculate()
    await asyncio.wait_for(follow.started.wait(), 5)
    assert await parts.lifecycle.claim(None, settings=SessionSettings()) is True
    assert parts.lifecycle.phase is Phase.VISIBLE and parts.lifecycle.visible is not None
    follow.release.set()
    await parts.settle()
    assert parts.lifecycle.phase is Phase.IDLE
    await parts.close()


async def test_a_discarded_follow_up_leaves_no_trace() -> None:
    follow = Turn("Hidden words", hold=True)
    parts = Parts(Turn("", [("get_weather", {"city": "Oslo"})]), follow)
    await tool_turn(parts)
    before = [i.to_wire() for i in parts.conversation.items]
    events = len(parts.events)
    parts.lifecycle.speculate()
    await asyncio.wait_for(follow.started.wait(), 5)
    await parts.lifecycle.discard("the user spoke")
    assert parts.lifecycle.phase is Phase.IDLE and parts.lifecycle.hidden is None
    assert follow.closed  # the provider stream was aborted
    assert [i.to_wire() for i in parts.conversation.items] == before and len(parts.events) == events
    await parts.close()


async def test_no_follow_up_without_prefetch_or_a_free_slot() -> None:
    for parts in (Parts(Turn("", [("f", {})]), prefetch=False), Parts(Turn("", [("f", {})]), slots=0)):
        parts.lifecycle.start(parts.visible())
        await parts.settle()
        await parts.answer_calls()
        parts.lifecycle.speculate()
        assert parts.lifecycle.phase is Phase.IDLE and parts.lifecycle.hidden is None
        await parts.close()


async def test_a_failed_follow_up_is_not_retried_for_the_same_response() -> None:
    parts = Parts(Turn("", [("get_weather", {"city": "Oslo"})]), Turn("", fail="boom"))
    await tool_turn(parts)
    parts.lifecycle.speculate()
    hidden = parts.lifecycle.hidden
    assert hidden is not None
    await asyncio.wait_for(hidden.task, 5)
    assert parts.lifecycle.phase is Phase.IDLE  # a hidden failure is discarded at once
    assert not parts.lifecycle.follow_up_due()
    assert parts.of("response.done") and all(e["response"]["status"] != "failed" for e in parts.of("response.done"))
    await parts.close()
