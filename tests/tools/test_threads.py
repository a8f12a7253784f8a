"""ToolThreads: sync tools run in daemon threads of their own; a timed-out one is abandoned there, counted, and
never holds a thread anything else (speech, asyncio's default executor) needs."""

import asyncio
import threading

import pytest

from voxcall.tools import ToolRegistry
from voxcall.tools.threads import ToolThreads, ToolThreadsBusy


async def test_a_call_runs_in_a_daemon_thread_and_returns_its_value() -> None:
    threads = ToolThreads(2)
    seen: list[threading.Thread] = []

    def work(x: int) -> int:
        seen.append(threading.current_thread())
        return x * 2

    assert await threads.run(work, x=21) == 42
    assert seen[0] is not threading.main_thread() and seen[0].daemon
    assert (threads.alive, threads.abandoned, threads.abandoned_total) == (0, 0, 0)


async def test_an_exception_reaches_the_caller() -> None:
    def fail() -> None:
        raise KeyError("x")

    with pytest.raises(KeyError):
        await ToolThreads(1).run(fail)


async def test_a_cancelled_call_is_abandoned_counted_and_released_when_it_ends() -> None:
    threads = ToolThreads(1)
    release = threading.Event()
    task = asyncio.create_task(threads.run(release.wait))
    while threads.alive == 0:
        await asyncio.sleep(0.001)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert (threads.alive, threads.abandoned, threads.abandoned_total) == (1, 1, 1)
    with pytest.raises(ToolThreadsBusy, match="1 abandoned"):  # its thread still holds the only place
        await threads.run(lambda: None)
    release.set()
    while threads.alive:
        await asyncio.sleep(0.001)
    assert (threads.abandoned, threads.abandoned_total) == (0, 1)
    assert await threads.run(lambda: "free again") == "free again"


async def test_hung_sync_tools_never_take_the_default_executor() -> None:
    """Six calls of a tool that hangs, cut off by their timeout: asyncio.to_thread (where speech runs) still
    answers, and the registry's threads say what happened."""
    registry = ToolRegistry(default_timeout=0.05, max_concurrency=8, threads=ToolThreads(16))
    hang = threading.Event()

    @registry.tool
    def stuck() -> str:
        """Never answers."""
        hang.wait()
        return "late"

    try:
        results = await asyncio.gather(*(registry.call("stuck") for _ in range(6)))
        assert all(r.timed_out and r.is_error for r in results)
        assert registry.threads.abandoned == 6
        loop = asyncio.get_running_loop()
        speech = asyncio.gather(*(loop.run_in_executor(None, lambda: "spoken") for _ in range(6)))
        assert set(await asyncio.wait_for(speech, 5)) == {"spoken"}  # 2 cores: the default executor has 6
    finally:
        hang.set()
