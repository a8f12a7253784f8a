"""Speculative follow-ups: when they start, every claim and discard path, races, and what they leave behind."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from tests.harness import WEATHER, ControlledBackend, Harness, Turn
from voxcall.core.responses.prefetch import SpeculationSlots


async def tool_turn(h: Harness, *, answer: bool = True) -> str:
    """A user asks, the model calls get_weather; the client answers (when ``answer``). Returns the call id."""
    await h.send(type="session.update", session={"type": "realtime", "tools": [WEATHER]})
    await h.say("weather in Paris?")
    await h.send(type="response.create")
    done = await h.wait("response.function_call_arguments.done")
    await h.wait("response.done")
    if answer:
        await h.output(done["call_id"], '{"temp": 21}')
    return str(done["call_id"])


def snapshot(h: Harness) -> str:
    return json.dumps([i.to_wire() for i in h.session.conversation.items], sort_keys=True)


async def test_speculation_starts_when_all_outputs_are_in_and_is_claimed() -> None:
    backend = ControlledBackend(Turn("Let me check.", [("get_weather", {"city": "Paris"})]), Turn("It is 21 degrees."))
    async with Harness(backend) as h:
        await tool_turn(h)
        spec = h.session.responses.hidden
        assert spec is not None
        await asyncio.wait_for(spec.task, 5)  # it runs to the end hidden
        assert len(h.of("response.created")) == 1  # nothing of it reached the client
        assert len(backend.requests) == 2
        await h.send(type="response.create", response={"metadata": {"turn": "2"}})
        done = await h.wait("response.done", 2)
        assert done["response"]["status"] == "completed"
        assert done["response"]["metadata"] == {"turn": "2"}
        created = h.of("response.created")[1]
        assert created["response"]["metadata"] == {"turn": "2"}
        assert created["response"]["id"] == done["response"]["id"]
        assert len(backend.requests) == 2  # the claim generated nothing new
        texts = [e["delta"] for e in h.of("response.output_text.delta")]
        assert "".join(texts).strip().endswith("21 degrees.")
        assert h.session.conversation.items[-1].text.strip() == "It is 21 degrees."
        assert h.session.responses.slots.stats.claimed == 1


async def test_claim_while_running_streams_the_rest_live() -> None:
    follow = Turn("It is warm", hold=True)
    backend = ControlledBackend(Turn("", [("get_weather", {"city": "Paris"})]), follow)
    async with Harness(backend) as h:
        await tool_turn(h)
        await asyncio.wait_for(follow.started.wait(), 5)
        await h.send(type="response.create")
        await h.wait("response.created", 2)
        assert h.session.responses.visible is not None
        follow.release.set()
        done = await h.wait("response.done", 2)
        assert done["response"]["status"] == "completed"
        assert h.session.responses.visible is None
        # the deltas of the claimed response come between its created and done events
        kinds = [e["type"] for e in h.events]
        start = [i for i, k in enumerate(kinds) if k == "response.created"][1]
        assert "response.output_text.delta" in kinds[start:]


async def test_no_speculation_while_a_call_awaits_output() -> None:
    backend = ControlledBackend(Turn("", [("get_weather", {"city": "A"}), ("get_weather", {"city": "B"})]))
    async with Harness(backend) as h:
        await h.send(type="session.update", session={"type": "realtime", "tools": [WEATHER]})
        await h.say("both")
        await h.send(type="response.create")
        await h.wait("response.done")
        first, second = h.of("response.function_call_arguments.done")
        await h.output(first["call_id"], "x")
        assert h.session.responses.hidden is None
        await h.output(second["call_id"], "y")
        assert h.session.responses.hidden is not None


async def test_function_call_output_never_starts_a_visible_response() -> None:
    async with Harness(ControlledBackend(Turn("", [("get_weather", {"city": "A"})])), prefetch=False) as h:
        await tool_turn(h)
        await h.settle()
        assert len(h.of("response.created")) == 1
        assert h.session.responses.hidden is None


async def discard_case(action: str) -> tuple[Harness, ControlledBackend, str, str]:
    follow = Turn("Hidden words", hold=True)
    backend = ControlledBackend(Turn("", [("get_weather", {"city": "Paris"})]), follow)
    h = Harness(backend, prefetch=True)
    await h.__aenter__()
    await tool_turn(h)
    before = snapshot(h)
    spec = h.session.responses.hidden
    assert spec is not None
    await asyncio.wait_for(follow.started.wait(), 5)
    if action == "session.update":
        await h.send(type="session.update", session={"type": "realtime", "instructions": "Be brief."})
    elif action == "item.create":
        await h.say("actually, never mind")
    elif action == "item.delete":
        await h.send(type="conversation.item.delete", item_id=h.session.conversation.items[0].id)
    elif action == "cancel":
        await h.send(type="response.cancel")
    elif action == "override":
        backend.queue(Turn("Fresh answer."))
        await h.send(type="response.create", response={"instructions": "Answer in French."})
    assert spec.state == "discarded"
    assert follow.closed  # the provider stream was aborted
    return h, backend, before, action


async def test_discard_paths_abort_and_leave_no_trace() -> None:
    for action in ("session.update", "item.create", "item.delete", "cancel", "override"):
        h, backend, before, _ = await discard_case(action)
        try:
            assert not any("Hidden" in e.get("delta", "") for e in h.of("response.output_text.delta")), action
            if action == "cancel":
                assert snapshot(h) == before  # byte-identical history
                assert h.of("error")[-1]["error"]["code"] == "response_cancel_not_active"
            if action == "override":
                done = await h.wait("response.done", 2)
                assert done["response"]["status"] == "completed"
                assert backend.requests[-1].instructions == "Answer in French."
        finally:
            await h.__aexit__()


async def test_discarded_speculation_history_matches_a_session_without_prefetch() -> None:
    async def run(prefetch: bool) -> list[dict[str, Any]]:
        backend = ControlledBackend(Turn("Let me see.", [("get_weather", {"city": "Paris"})]), Turn("Hidden."))
        async with Harness(backend, prefetch=prefetch) as h:
            await tool_turn(h)
            if prefetch:
                assert h.session.responses.hidden is not None
                await asyncio.wait_for(h.session.responses.hidden.task, 5)
            await h.send(type="session.update", session={"type": "realtime", "instructions": "New rules."})
            await h.settle()
            return h.history()

    assert await run(True) == await run(False)


async def test_claim_after_session_update_respeculates_with_new_settings() -> None:
    backend = ControlledBackend(Turn("", [("get_weather", {"city": "Paris"})]), Turn("Old."), Turn("New."))
    async with Harness(backend) as h:
        await tool_turn(h)
        first = h.session.responses.hidden
        await h.send(type="session.update", session={"type": "realtime", "instructions": "Be brief."})
        second = h.session.responses.hidden
        assert first is not None and first.state == "discarded"
        assert second is not None and second is not first
        await h.send(type="response.create")
        await h.wait("response.done", 2)
        assert backend.requests[-1].instructions == "Be brief."
        assert "New." in "".join(e["delta"] for e in h.of("response.output_text.delta"))


async def test_failed_speculation_is_discarded_and_a_plain_request_generates_normally() -> None:
    backend = ControlledBackend(Turn("", [("get_weather", {"city": "Paris"})]), Turn("Oops", fail="boom"),
                                Turn("Recovered."))
    async with Harness(backend) as h:
        await tool_turn(h)
        await h.settle()
        stats = h.session.responses.slots.stats
        assert (stats.started, stats.discarded) == (1, 1)  # it ran hidden, failed, and was discarded at once
        assert h.session.responses.hidden is None
        await h.send(type="response.create")
        done = await h.wait("response.done", 2)
        assert done["response"]["status"] == "completed"
        assert not h.of("error")
        assert "Recovered." in "".join(e["delta"] for e in h.of("response.output_text.delta"))
        assert h.session.responses.slots.stats.discarded == 1


async def test_claim_whose_parked_work_fails_falls_back_to_a_normal_generation() -> None:
    backend = ControlledBackend(Turn("", [("get_weather", {"city": "Paris"})]), Turn("Hidden."), Turn("Normal."))
    async with Harness(backend, max_history_items=2) as h:
        await tool_turn(h)
        spec = h.session.responses.hidden
        assert spec is not None and spec.parked  # history is over the limit: trimming is parked

        async def broken() -> None:
            raise RuntimeError("trim failed")

        spec.parked = [broken]
        await asyncio.wait_for(spec.task, 5)
        await h.send(type="response.create")
        done = await h.wait("response.done", 2)
        assert done["response"]["status"] == "completed"
        deltas = "".join(e["delta"] for e in h.of("response.output_text.delta"))
        assert "Normal." in deltas and "Hidden." not in deltas
        assert spec.state == "discarded"


async def test_parked_trim_runs_only_at_claim() -> None:
    backend = ControlledBackend(Turn("Hi.", [("get_weather", {"city": "Paris"})]), Turn("Sunny."))
    async with Harness(backend, max_history_items=2) as h:
        await tool_turn(h)
        count = len(h.session.conversation)
        assert h.session.responses.hidden is not None
        await asyncio.wait_for(h.session.responses.hidden.task, 5)
        assert len(h.session.conversation) == count  # nothing trimmed yet
        assert len(backend.requests[-1].items) <= 2  # but the hidden request already saw the trimmed view
        await h.send(type="response.create")
        await h.wait("response.done", 2)
        assert h.of("conversation.item.deleted")
        assert len(h.session.conversation) <= 3


async def test_discard_while_claiming_cannot_win() -> None:
    backend = ControlledBackend(Turn("", [("get_weather", {"city": "Paris"})]), Turn("Claimed."))
    async with Harness(backend) as h:
        await tool_turn(h)
        spec = h.session.responses.hidden
        assert spec is not None
        claim = asyncio.create_task(spec.claim(None))
        await asyncio.sleep(0)
        assert await spec.discard("late") is False
        assert await claim is True
        assert spec.state == "claimed"


async def test_response_create_while_speculation_runs_is_not_an_active_response_error() -> None:
    follow = Turn("Thinking", hold=True)
    backend = ControlledBackend(Turn("", [("get_weather", {"city": "Paris"})]), follow)
    async with Harness(backend) as h:
        await tool_turn(h)
        await h.send(type="response.create")
        assert not h.of("error")
        await h.send(type="response.create")
        assert h.of("error")[-1]["error"]["code"] == "conversation_already_has_active_response"
        follow.release.set()
        await h.wait("response.done", 2)


async def test_slot_limit_is_process_wide() -> None:
    slots = SpeculationSlots(1)
    holds = [Turn("a", hold=True), Turn("b", hold=True)]
    b1 = ControlledBackend(Turn("", [("get_weather", {"city": "A"})]), holds[0])
    b2 = ControlledBackend(Turn("", [("get_weather", {"city": "B"})]), holds[1])
    async with Harness(b1, slots=slots) as h1, Harness(b2, slots=slots) as h2:
        await tool_turn(h1)
        await tool_turn(h2)
        assert h1.session.responses.hidden is not None
        assert h2.session.responses.hidden is None  # no slot free
        assert slots.in_use == 1
        await h1.send(type="session.update", session={"type": "realtime", "instructions": "x"})
        holds[0].release.set()
    assert slots.in_use == 0


async def test_gate_is_bounded_and_pauses_the_provider() -> None:
    long_text = " ".join(f"w{i}" for i in range(200))
    backend = ControlledBackend(Turn("", [("get_weather", {"city": "Paris"})]), Turn(long_text))
    async with Harness(backend, max_hidden_events=10) as h:
        await tool_turn(h)
        spec = h.session.responses.hidden
        assert spec is not None
        await h.settle()
        assert not spec.task.done()  # paused on the full gate
        assert len(spec.gate.buffered) <= 10
        await h.send(type="response.create")
        done = await h.wait("response.done", 2)
        assert done["response"]["status"] == "completed"
        assert len(h.of("response.output_text.delta")) == 200


async def test_discarded_usage_is_counted_apart() -> None:
    backend = ControlledBackend(Turn("", [("get_weather", {"city": "Paris"})]), Turn("Hidden.", usage=(40, 7)))
    async with Harness(backend) as h:
        await tool_turn(h)
        assert h.session.responses.hidden is not None
        await asyncio.wait_for(h.session.responses.hidden.task, 5)
        await h.say("something else")
        stats = h.session.responses.slots.stats
        assert (stats.discarded, stats.discarded_input_tokens, stats.discarded_output_tokens) == (1, 40, 7)


async def test_close_discards_speculation_and_leaks_no_task() -> None:
    follow = Turn("Hidden", hold=True)
    backend = ControlledBackend(Turn("", [("get_weather", {"city": "Paris"})]), follow)
    h = Harness(backend)
    await h.__aenter__()
    await tool_turn(h)
    spec = h.session.responses.hidden
    assert spec is not None
    await h.__aexit__()
    assert spec.task.done() and follow.closed
    names = {t.get_name() for t in asyncio.all_tasks()}
    assert not any(n.startswith("voxcall-") for n in names)


LIVEKIT_BODY: dict[str, Any] = {"instructions": None, "metadata": {"client_event_id": "response_create_8zQ3mX"},
                                "tool_choice": "auto"}
"""livekit-plugins-openai 1.8.9 (``RealtimeSession.generate_reply``): the session restated, as null and its default."""

PIPECAT_BODY: dict[str, Any] = {"output_modalities": ["text"]}
"""pipecat 1.14 (``OpenAIRealtimeLLMService._create_response``): the session's own modalities, every time."""


async def claimed_by(body: dict[str, Any], **session: Any) -> tuple[Harness, ControlledBackend]:
    """A tool turn, its hidden follow-up run to the end, then ``response.create`` with ``body`` (the harness is
    open: the caller closes it)."""
    backend = ControlledBackend(Turn("", [("get_weather", {"city": "Paris"})]), Turn("It is 21 degrees."),
                                Turn("Fresh answer."))
    h = Harness(backend)
    await h.__aenter__()
    if session:
        await h.send(type="session.update", session={"type": "realtime", **session})
    await tool_turn(h)
    spec = h.session.responses.hidden
    assert spec is not None
    await asyncio.wait_for(spec.task, 5)
    await h.send(type="response.create", response=body)
    await h.wait("response.done", 2)
    return h, backend


async def test_livekit_body_claims_the_follow_up() -> None:
    h, backend = await claimed_by(LIVEKIT_BODY)
    try:
        stats = h.session.responses.slots.stats
        assert (stats.claimed, stats.discarded) == (1, 0)
        assert len(backend.requests) == 2  # the claim generated nothing new
        done = h.of("response.done")[1]["response"]
        assert done["metadata"] == {"client_event_id": "response_create_8zQ3mX"}
        assert "21 degrees" in "".join(e["delta"] for e in h.of("response.output_text.delta"))
    finally:
        await h.__aexit__()


async def test_pipecat_body_claims_the_follow_up() -> None:
    h, backend = await claimed_by(PIPECAT_BODY)
    try:
        assert h.session.responses.slots.stats.claimed == 1 and len(backend.requests) == 2
    finally:
        await h.__aexit__()


async def test_restated_session_values_claim_the_follow_up() -> None:
    body = {"instructions": "Be kind.", "tool_choice": "auto", "temperature": None, "max_output_tokens": None,
            "conversation": "auto", "tools": [WEATHER], "output_modalities": ["text"]}
    h, backend = await claimed_by(body, instructions="Be kind.")
    try:
        assert h.session.responses.slots.stats.claimed == 1 and len(backend.requests) == 2
    finally:
        await h.__aexit__()


async def test_a_real_difference_discards_the_follow_up() -> None:
    for body in ({**LIVEKIT_BODY, "tool_choice": "none"}, {**PIPECAT_BODY, "instructions": "Answer in French."},
                 {"temperature": 0.2}, {"conversation": "none"}):
        h, backend = await claimed_by(body)
        try:
            stats = h.session.responses.slots.stats
            assert (stats.claimed, stats.discarded) == (0, 1), body
            assert len(backend.requests) == 3, body  # generated anew, with the request's settings
            assert "Fresh answer." in "".join(e["delta"] for e in h.of("response.output_text.delta")), body
            assert "21 degrees" not in "".join(e["delta"] for e in h.of("response.output_text.delta")), body
        finally:
            await h.__aexit__()
