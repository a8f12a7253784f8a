"""A session's rate limits: client events per second, response.create per minute, on a clock the test steps."""

from __future__ import annotations

import pytest

from tests.harness import ControlledBackend, Harness
from voxcall.serving.rate import EventFate, EventRate, TokenBucket


class FakeClock:
    """A monotonic clock that moves only when told."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_a_bucket_allows_a_burst_then_the_sustained_rate() -> None:
    clock = FakeClock()
    bucket = TokenBucket(4, 2.0, clock)  # 4 at once, then 2 per second
    assert [bucket.take() for _ in range(5)] == [True] * 4 + [False]
    assert bucket.remaining == 0 and bucket.next_token_seconds == pytest.approx(0.5)
    clock.now += 0.5
    assert bucket.take() and not bucket.take()
    assert bucket.full_seconds == pytest.approx(2.0)
    clock.now += 100
    assert bucket.remaining == 4  # never more than its capacity


def test_one_error_per_burst_of_dropped_events() -> None:
    clock = FakeClock()
    rate = EventRate(2, clock)
    assert [rate.admit() for _ in range(5)] == [EventFate.ACCEPTED, EventFate.ACCEPTED, EventFate.REFUSED,
                                                EventFate.DROPPED, EventFate.DROPPED]
    clock.now += 0.5
    assert [rate.admit() for _ in range(2)] == [EventFate.ACCEPTED, EventFate.REFUSED]  # a new burst, a new error


def note(text: str, event_id: str) -> dict[str, object]:
    return {"type": "conversation.item.create", "event_id": event_id,
            "item": {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}}


async def test_events_over_the_rate_are_dropped_with_one_error_naming_the_limit() -> None:
    clock = FakeClock()
    async with Harness(ControlledBackend(), events_per_second=5, clock=clock) as h:
        for n in range(8):
            await h.send(**note(f"note {n}", f"evt_{n}"))
        assert len(h.of("conversation.item.added")) == 5
        [error] = h.of("error")
        assert error["error"]["code"] == "rate_limit_exceeded" and error["error"]["event_id"] == "evt_5"
        assert "session.events_per_second" in error["error"]["message"]
        assert error["error"]["type"] == "invalid_request_error"
        assert len(h.session.conversation) == 5  # the dropped events did nothing
        clock.now += 0.2  # one event's worth
        await h.send(**note("later", "evt_8"))
        assert len(h.of("conversation.item.added")) == 6
        await h.send(**note("too soon", "evt_9"))
        assert [e["error"]["event_id"] for e in h.of("error")] == ["evt_5", "evt_9"]


async def test_a_dropped_frame_that_is_not_json_still_gets_the_rate_error() -> None:
    clock = FakeClock()
    async with Harness(ControlledBackend(), events_per_second=1, clock=clock) as h:
        await h.send(**note("one", "evt_1"))
        await h.connection.handle_frame("{not json")
        await h.settle()
        [error] = h.of("error")
        assert error["error"]["code"] == "rate_limit_exceeded" and error["error"]["event_id"] is None


async def test_responses_over_the_rate_are_refused_and_each_one_reports_what_is_left() -> None:
    clock = FakeClock()
    async with Harness(ControlledBackend(), responses_per_minute=2, clock=clock) as h:
        await h.say("hi")
        for n in range(2):
            await h.send(type="response.create", event_id=f"evt_{n}")
            await h.wait("response.done", n + 1)
        limits = [e["rate_limits"] for e in h.of("rate_limits.updated")]
        assert [[(r["name"], r["limit"], r["remaining"]) for r in rl] for rl in limits] == [
            [("requests", 2, 1)], [("requests", 2, 0)]]
        assert limits[-1][0]["reset_seconds"] == pytest.approx(60.0)
        await h.send(type="response.create", event_id="evt_2")
        [error] = h.of("error")
        assert error["error"]["code"] == "rate_limit_exceeded" and error["error"]["event_id"] == "evt_2"
        assert "session.responses_per_minute" in error["error"]["message"]
        assert "retry in 30.0 s" in error["error"]["message"]
        assert len(h.of("response.created")) == 2
        clock.now += 30  # one response's worth
        await h.send(type="response.create", event_id="evt_3")
        await h.wait("response.done", 3)
        assert h.of("rate_limits.updated")[-1]["rate_limits"][0]["remaining"] == 0


async def test_a_refused_response_create_costs_nothing() -> None:
    clock = FakeClock()
    async with Harness(ControlledBackend(), responses_per_minute=1, clock=clock) as h:
        await h.send(type="response.create", response={"output_modalities": ["video"]})  # invalid: refused first
        assert h.of("error") and not h.of("rate_limits.updated")
        await h.send(type="response.create")
        await h.wait("response.done")
        assert h.of("rate_limits.updated")[-1]["rate_limits"][0]["remaining"] == 0
