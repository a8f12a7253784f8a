"""The loop watchdog: a loop blocked on purpose is reported with the stack of the code that blocks it, the lag
lands in the histogram, reports are rate-limited, and stopping ends the thread."""

from __future__ import annotations

import asyncio
import logging
import threading
import time

import pytest
from prometheus_client import CollectorRegistry, generate_latest

from voxcall.telemetry.watchdog import LoopWatchdog


def sample(registry: CollectorRegistry, name: str) -> float:
    value = registry.get_sample_value(name)
    assert value is not None, name
    return value


def a_blocking_call_to_find(seconds: float) -> None:
    """Blocks the thread it runs on (the loop's, in these tests): the name the report must show."""
    time.sleep(seconds)


async def settle(watchdog: LoopWatchdog) -> None:
    """Let the heartbeat run a few times, so that the loop's thread is known."""
    await asyncio.sleep(0.05)


async def test_a_blocked_loop_is_reported_with_the_stack_of_the_blocking_code(
        caplog: pytest.LogCaptureFixture) -> None:
    registry = CollectorRegistry()
    watchdog = LoopWatchdog(registry, threshold_s=0.2, beat_s=0.02, check_s=0.01)
    watchdog.start(asyncio.get_running_loop())
    await settle(watchdog)
    with caplog.at_level(logging.WARNING, logger="voxcall.telemetry.watchdog"):
        a_blocking_call_to_find(0.6)
        await asyncio.sleep(0.05)  # the heartbeat runs again: the lag of the blocked beat is recorded
    watchdog.stop()
    reports = [r.getMessage() for r in caplog.records if "event loop has been blocked" in r.getMessage()]
    assert len(reports) == 1, reports
    assert "a_blocking_call_to_find" in reports[0] and "time.sleep(seconds)" in reports[0], reports[0]
    assert sample(registry, "voxcall_event_loop_stalls_total") == 1
    assert sample(registry, "voxcall_event_loop_lag_seconds_sum") >= 0.5  # the blocked beat's lag
    assert registry.get_sample_value("voxcall_event_loop_lag_seconds_bucket", {"le": "0.25"}) < sample(
        registry, "voxcall_event_loop_lag_seconds_count")  # one beat landed above 0.25 s
    assert b"voxcall_event_loop_lag_seconds_bucket" in generate_latest(registry)


async def test_a_loop_that_stalls_again_and_again_is_reported_once_per_period(
        caplog: pytest.LogCaptureFixture) -> None:
    registry = CollectorRegistry()
    watchdog = LoopWatchdog(registry, threshold_s=0.1, report_every_s=60, beat_s=0.02, check_s=0.01)
    watchdog.start(asyncio.get_running_loop())
    await settle(watchdog)
    with caplog.at_level(logging.WARNING, logger="voxcall.telemetry.watchdog"):
        for _ in range(3):
            a_blocking_call_to_find(0.3)
            await asyncio.sleep(0.05)
    watchdog.stop()
    reports = [r for r in caplog.records if "event loop has been blocked" in r.getMessage()]
    assert len(reports) == 1
    assert sample(registry, "voxcall_event_loop_stalls_total") == 3


async def test_a_healthy_loop_is_never_reported_and_its_lag_is_small(caplog: pytest.LogCaptureFixture) -> None:
    registry = CollectorRegistry()
    watchdog = LoopWatchdog(registry, threshold_s=0.3, beat_s=0.02, check_s=0.01)
    watchdog.start(asyncio.get_running_loop())
    with caplog.at_level(logging.WARNING, logger="voxcall.telemetry.watchdog"):
        for _ in range(20):
            await asyncio.sleep(0.01)
    watchdog.stop()
    assert not caplog.records
    assert sample(registry, "voxcall_event_loop_stalls_total") == 0
    assert sample(registry, "voxcall_event_loop_lag_seconds_count") >= 3
    assert registry.get_sample_value("voxcall_event_loop_lag_seconds_bucket", {"le": "0.25"}) == sample(
        registry, "voxcall_event_loop_lag_seconds_count")


async def test_stop_ends_the_thread_and_the_heartbeat_and_it_may_start_again() -> None:
    watchdog = LoopWatchdog(beat_s=0.02, check_s=0.01)
    loop = asyncio.get_running_loop()
    watchdog.start(loop)
    with pytest.raises(RuntimeError):
        watchdog.start(loop)
    await settle(watchdog)
    watchdog.stop()
    await asyncio.sleep(0)  # the heartbeat's cancellation runs
    assert not watchdog.running
    assert not [t for t in threading.enumerate() if t.name == "event-loop-watchdog"]
    assert not [t for t in asyncio.all_tasks() if t.get_name() == "event-loop-heartbeat" and not t.done()]
    watchdog.start(loop)
    assert watchdog.running
    watchdog.stop()


def test_it_watches_a_loop_running_in_another_thread(caplog: pytest.LogCaptureFixture) -> None:
    loop = asyncio.new_event_loop()
    runner = threading.Thread(target=loop.run_forever, daemon=True)
    runner.start()
    watchdog = LoopWatchdog(threshold_s=0.2, beat_s=0.02, check_s=0.01)
    try:
        watchdog.start(loop)
        time.sleep(0.05)
        with caplog.at_level(logging.WARNING, logger="voxcall.telemetry.watchdog"):
            asyncio.run_coroutine_threadsafe(asyncio.sleep(0), loop).result()
            loop.call_soon_threadsafe(a_blocking_call_to_find, 0.5)
            time.sleep(0.7)
        watchdog.stop()
    finally:
        loop.call_soon_threadsafe(loop.stop)
        runner.join()
        loop.close()
    assert any("a_blocking_call_to_find" in r.getMessage() for r in caplog.records)
