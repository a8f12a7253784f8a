"""Server-tool costs: registry call overhead, MCP stdio round trip, and a 3-round tool turn beyond the model's time.

1. ``ToolRegistry.call`` against calling the function itself (validation, limits, result normalisation; a sync
   tool also pays a worker-thread hop). Target: <= 50 µs above the function.
2. An MCP stdio call round trip to a local MCP server (the repo's demo server), median of 50 calls.
3. A session turn in which the scripted model calls three server tools in three rounds: the turn's time beyond
   the model's own streaming time (tool runs, item bookkeeping, events), median of 10 turns.

    python benchmarks/bench_tools.py
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from collections.abc import AsyncGenerator
from pathlib import Path

from voxcall.config import SessionOptions
from voxcall.core.commands import AddItem, Respond
from voxcall.core.conversation.items import MessageItem
from voxcall.core.events import CallState, Event, ResponseDone, ToolCallMoved
from voxcall.core.parts import SessionParts
from voxcall.core.session import Session
from voxcall.core.tools.toolbox import Toolbox
from voxcall.llm import LLMEvent, LLMRequest, ScriptedBackend
from voxcall.tools import ToolRegistry

DEMO_SERVER = Path(__file__).resolve().parent.parent / "tests" / "tools" / "mcp" / "demo_server.py"


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


async def add_async(a: int, b: int) -> int:
    """Add two integers (async)."""
    return a + b


async def registry_overhead(calls: int, batches: int) -> None:
    registry = ToolRegistry()
    registry.register(add)
    registry.register(add_async)
    direct, sync, asynchronous = [], [], []
    for _ in range(batches):  # interleaved so both see the same machine
        start = time.perf_counter()
        for _ in range(calls):
            add(2, 3)
        direct.append((time.perf_counter() - start) / calls)
        start = time.perf_counter()
        for _ in range(calls):
            await registry.call("add", {"a": 2, "b": 3})
        sync.append((time.perf_counter() - start) / calls)
        start = time.perf_counter()
        for _ in range(calls):
            await registry.call("add_async", {"a": 2, "b": 3})
        asynchronous.append((time.perf_counter() - start) / calls)
    base = statistics.median(direct)
    for label, samples in (("async tool", asynchronous), ("sync tool (worker thread)", sync)):
        over = (statistics.median(samples) - base) * 1e6
        print(f"  registry overhead, {label:26s}: {over:7.1f} µs per call   target <= 50 µs: "
              f"{'PASS' if over <= 50 else 'MISS'}")


async def mcp_round_trip(calls: int) -> None:
    from voxcall.tools.mcp import MCPManager, parse_mcp_config

    config = parse_mcp_config({"servers": {"demo": {"command": sys.executable, "args": [str(DEMO_SERVER)]}}})
    manager = MCPManager(config)
    await manager.start()
    registry = ToolRegistry()
    manager.register(registry)
    name = next(t.name for t in registry.tools if t.name.endswith("add"))
    try:
        await registry.call(name, {"a": 1, "b": 2})  # warm
        times = []
        for _ in range(calls):
            start = time.perf_counter()
            result = await registry.call(name, {"a": 1, "b": 2})
            times.append(time.perf_counter() - start)
            assert not result.is_error, result.output
    finally:
        await manager.close()
    print(f"  MCP stdio call round trip: median {statistics.median(times) * 1e3:.2f} ms, "
          f"p95 {sorted(times)[int(0.95 * len(times))] * 1e3:.2f} ms ({calls} calls)")


class TimedBackend:
    """A scripted backend that adds up the time spent inside its streams (the model's own time)."""

    name = "timed"

    def __init__(self, inner: ScriptedBackend) -> None:
        self.inner = inner
        self.model_time = 0.0

    async def stream(self, request: LLMRequest) -> AsyncGenerator[LLMEvent, None]:
        start = time.perf_counter()
        async for ev in self.inner.stream(request):
            self.model_time += time.perf_counter() - start
            yield ev
            start = time.perf_counter()
        self.model_time += time.perf_counter() - start

    async def aclose(self) -> None:
        return None


SCRIPT = {"rules": [
    {"match": "go", "reply": "Working.", "calls": [{"name": "add", "arguments": {"a": 1, "b": 2}}]},
    {"after": "add", "match": "/^3$/", "calls": [{"name": "add_async", "arguments": {"a": 3, "b": 4}}]},
    {"after": "add_async", "calls": [{"name": "add", "arguments": {"a": 10, "b": 20}}]},
], "after_tool": "All done: {output}."}


async def three_round_turns(turns: int, ttft: float, token_delay: float) -> None:
    registry = ToolRegistry()
    registry.register(add)
    registry.register(add_async)
    extra: list[float] = []
    for _ in range(turns):
        backend = TimedBackend(ScriptedBackend(SCRIPT, ttft=ttft, token_delay=token_delay))
        done = asyncio.Event()
        rounds: list[int] = []

        async def emit(ev: Event, done: asyncio.Event = done, rounds: list[int] = rounds) -> None:
            if isinstance(ev, ToolCallMoved) and ev.state is CallState.DONE and ev.round is not None:
                rounds.append(ev.round)
            if isinstance(ev, ResponseDone):
                done.set()

        session = Session(SessionParts(backend, SessionOptions(prefetch=False),
                                       toolbox=Toolbox(registry, max_rounds=5)), emit)
        await session.apply(AddItem(MessageItem.of_text("user", "go")))
        start = time.perf_counter()
        await session.apply(Respond())
        await done.wait()
        total = time.perf_counter() - start
        await session.close()
        assert rounds == [1, 2, 3], rounds
        extra.append(total - backend.model_time)
    print(f"  3-round server-tool turn beyond the model's time: median {statistics.median(extra) * 1e3:.2f} ms, "
          f"max {max(extra) * 1e3:.2f} ms ({turns} turns; model: {ttft * 1e3:.0f} ms TTFT, "
          f"{token_delay * 1e3:.0f} ms/token)")


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--batches", type=int, default=5)
    parser.add_argument("--mcp-calls", type=int, default=50)
    parser.add_argument("--turns", type=int, default=10)
    args = parser.parse_args()
    print("server-tool costs")
    await registry_overhead(args.calls, args.batches)
    await mcp_round_trip(args.mcp_calls)
    await three_round_turns(args.turns, ttft=0.05, token_delay=0.005)


if __name__ == "__main__":
    asyncio.run(main())
