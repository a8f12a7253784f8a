"""Many sessions on one server: follow-up latency under load, and server memory per session.

One voxcall server runs in its own process (scripted backend: 50 ms to first token, 5 ms per token, prefetch on as
by default). Each session does ``--rounds`` tool round trips: user message and ``response.create`` → a lead-in and
a ``get_weather`` call → ``function_call_output`` as soon as the arguments are done → ``response.create`` (metadata
only) right after ``response.done`` → the follow-up, timed from that ``response.create`` to its first text delta and
to its ``response.done``.

First one session alone does ``--single-rounds`` round trips (the baseline; it also warms the server up). Then
``--sessions`` sessions connect, all of them open before any starts; each starts its first round at a random moment
within ``--spread`` seconds, like independent callers, and runs its rounds back to back. Targets: p95 with many
sessions <= 2x the single session's, and (server RSS with every session open and idle after its round trips − RSS
after the single session closed) / sessions <= 2 MB.

To keep the client from skewing the figures on a small machine:

- the sessions speak the protocol with ``websockets`` and ``json`` directly, the way the official SDK's transport
  does (no compression) but without building its pydantic model per event: that takes about 55 µs per event
  against 2.5 µs for ``json.loads`` (measured on the 2-core dev machine), more than the server spends producing the
  event;
- with two CPUs or more, the server is pinned to one CPU and this client to the others, so they never compete;
- the CPU each process used during the many-session phase is printed next to the figures.

    python benchmarks/bench_sessions.py [--sessions 100] [--rounds 3] [--single-rounds 30] [--ttft 0.05]
                                        [--token-delay 0.005] [--spread 1.0]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import time
from dataclasses import dataclass, field
from typing import Any

import websockets
from websockets.asyncio.client import ClientConnection

from _server import WEATHER_TOOL, ServerProcess, percentile, verdict

TARGET_LATENCY_RATIO = 2.0
TARGET_KIB_PER_SESSION = 2048
RUN_TIMEOUT_S = 300.0


@dataclass
class Latencies:
    """Follow-up latencies in seconds: to the first text delta, and to ``response.done``."""

    first_delta: list[float] = field(default_factory=list)
    done: list[float] = field(default_factory=list)


class Session:
    """One realtime session over a plain WebSocket, JSON frames in and out."""

    def __init__(self, ws: ClientConnection) -> None:
        self.ws = ws

    async def send(self, **ev: Any) -> None:
        """Send one client event."""
        await self.ws.send(json.dumps(ev))

    async def until(self, kind: str) -> dict[str, Any]:
        """Read events up to the first of type ``kind``; an ``error`` event raises."""
        while True:
            ev: dict[str, Any] = json.loads(await self.ws.recv())
            if ev["type"] == "error":
                raise RuntimeError(f"server error: {ev['error']['message']}")
            if ev["type"] == kind:
                return ev

    async def setup(self) -> None:
        """Wait for ``session.created``, then offer the weather tool with text output."""
        await self.until("session.created")
        await self.send(type="session.update", session={"type": "realtime", "tools": [WEATHER_TOOL],
                                                        "output_modalities": ["text"]})
        await self.until("session.updated")

    async def round_trip(self, n: int, into: Latencies) -> None:
        """One tool round trip; the follow-up's latencies go ``into``."""
        await self.send(type="conversation.item.create", item={
            "type": "message", "role": "user", "content": [{"type": "input_text", "text": f"weather {n}?"}]})
        await self.send(type="response.create")
        call = await self.until("response.function_call_arguments.done")
        await self.send(type="conversation.item.create",
                        item={"type": "function_call_output", "call_id": call["call_id"], "output": f"sunny {n}"})
        await self.until("response.done")
        sent = time.monotonic()
        await self.send(type="response.create", response={"metadata": {"round": str(n)}})
        await self.until("response.output_text.delta")
        into.first_delta.append(time.monotonic() - sent)
        done = await self.until("response.done")
        into.done.append(time.monotonic() - sent)
        if done["response"]["status"] != "completed":
            raise RuntimeError(f"round {n}: follow-up ended {done['response']['status']}")


async def single(server: ServerProcess, rounds: int) -> Latencies:
    """The baseline: one session alone, ``rounds`` round trips."""
    latencies = Latencies()
    async with websockets.connect(server.ws_url, compression=None) as ws:
        session = Session(ws)
        await session.setup()
        for n in range(rounds):
            await session.round_trip(n, latencies)
    return latencies


@dataclass
class LoadResult:
    """What the many-session phase measured."""

    latencies: Latencies
    idle_rss_kib: int
    idle_sessions: int
    wall_s: float
    client_cpu_s: float
    server_cpu_s: float


async def many(server: ServerProcess, sessions: int, rounds: int, spread: float) -> LoadResult:
    """``sessions`` sessions at once; RSS is read while all are open and idle after their round trips."""
    latencies = Latencies()
    connected = asyncio.Barrier(sessions + 1)
    finished = asyncio.Barrier(sessions + 1)
    release = asyncio.Event()
    rng = random.Random(1)

    async def one(start_delay: float) -> None:
        async with websockets.connect(server.ws_url, compression=None) as ws:
            session = Session(ws)
            await session.setup()
            await connected.wait()
            await asyncio.sleep(start_delay)
            for n in range(rounds):
                await session.round_trip(n, latencies)
            await finished.wait()
            await release.wait()

    async with asyncio.timeout(RUN_TIMEOUT_S), asyncio.TaskGroup() as tasks:
        for _ in range(sessions):
            tasks.create_task(one(rng.uniform(0, spread)))
        await connected.wait()
        started, client_cpu, server_cpu = time.monotonic(), time.process_time(), server.cpu_seconds()
        await finished.wait()
        wall_s = time.monotonic() - started
        client_cpu_s = time.process_time() - client_cpu
        server_cpu_s = server.cpu_seconds() - server_cpu
        idle_rss = server.rss_kib()
        idle_sessions = (await asyncio.to_thread(server.health))["sessions"]
        release.set()
    return LoadResult(latencies, idle_rss, idle_sessions, wall_s, client_cpu_s, server_cpu_s)


def pin_cpus() -> tuple[set[int] | None, str]:
    """Pin this process away from the last CPU and return that CPU for the server (None with a single CPU)."""
    available = sorted(os.sched_getaffinity(0))
    if len(available) < 2:
        return None, "one CPU only: client and server share it"
    server_cpu, client_cpus = available[-1], set(available[:-1])
    os.sched_setaffinity(0, client_cpus)
    return {server_cpu}, f"server pinned to CPU {server_cpu}, client to CPU(s) {sorted(client_cpus)}"


def ms(seconds: float) -> str:
    """Seconds as milliseconds, for printing."""
    return f"{seconds * 1000:6.1f} ms"


def report(args: argparse.Namespace, pinning: str, alone: Latencies, load: LoadResult, base_rss_kib: int,
           speculation: dict[str, Any]) -> None:
    """Print the figures and the verdicts."""
    print(f"follow-up latency and memory: 1 session vs {args.sessions} concurrent sessions x {args.rounds} tool round "
          f"trips (ttft {args.ttft * 1000:.0f} ms, {args.token_delay * 1000:.0f} ms/token, "
          f"starts spread over {args.spread:.1f} s)")
    print(f"  client: raw websockets + json, no compression; {pinning}")
    rows = (("1 session", alone), (f"{args.sessions} sessions", load.latencies))
    for metric in ("first_delta", "done"):
        label = "response.create -> first text delta" if metric == "first_delta" else "response.create -> done"
        print(f"  {label}:")
        for name, latencies in rows:
            values = getattr(latencies, metric)
            print(f"    {name:>13}: p50 {ms(percentile(values, 50))}   p95 {ms(percentile(values, 95))}   "
                  f"({len(values)} follow-ups)")
        ratio = percentile(getattr(load.latencies, metric), 95) / percentile(getattr(alone, metric), 95)
        print(f"    p95 ratio {ratio:.2f}x   target <= {TARGET_LATENCY_RATIO:.0f}x: "
              f"{verdict(ratio <= TARGET_LATENCY_RATIO)}")
    per_session = (load.idle_rss_kib - base_rss_kib) / args.sessions
    print(f"  server RSS: {base_rss_kib / 1024:.1f} MiB before, {load.idle_rss_kib / 1024:.1f} MiB with "
          f"{load.idle_sessions} sessions open and idle -> {per_session:.0f} KiB/session   "
          f"target <= {TARGET_KIB_PER_SESSION // 1024} MiB: {verdict(per_session <= TARGET_KIB_PER_SESSION)}")
    print(f"  CPU during the {load.wall_s:.1f} s load phase: server {load.server_cpu_s / load.wall_s:.0%} of a core, "
          f"client {load.client_cpu_s / load.wall_s:.0%}")
    print(f"  /healthz speculation: {speculation}")


def main() -> None:
    """Run the benchmark and print its figures."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sessions", type=int, default=100, help="concurrent sessions")
    parser.add_argument("--rounds", type=int, default=3, help="tool round trips per concurrent session")
    parser.add_argument("--single-rounds", type=int, default=30, help="round trips of the single-session baseline")
    parser.add_argument("--ttft", type=float, default=0.05, help="scripted time to first token, seconds")
    parser.add_argument("--token-delay", type=float, default=0.005, help="scripted delay per token, seconds")
    parser.add_argument("--spread", type=float, default=1.0,
                        help="seconds over which the concurrent sessions start their first round")
    args = parser.parse_args()
    if min(args.sessions, args.rounds, args.single_rounds) < 1:
        parser.error("--sessions, --rounds and --single-rounds must be at least 1")
    server_cpus, pinning = pin_cpus()
    with ServerProcess(prefetch=True, ttft=args.ttft, token_delay=args.token_delay, cpus=server_cpus) as server:
        alone = asyncio.run(single(server, args.single_rounds))
        base_rss_kib = server.rss_kib()
        load = asyncio.run(many(server, args.sessions, args.rounds, args.spread))
        speculation = server.health()["speculation"]
    report(args, pinning, alone, load, base_rss_kib, speculation)


if __name__ == "__main__":
    main()
