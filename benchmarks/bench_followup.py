"""Speculative follow-up: latency from the client's ``response.create`` to the follow-up's first text delta, with
prefetch on and off.

The official ``openai`` SDK talks to two voxcall servers, each in its own process (scripted backend: 300 ms to first
token, 20 ms per token), one with prefetch on and one with it off. Rounds alternate between them (and which goes
first), so machine noise hits both alike. Each round is one tool round trip driven like a voice client:

1. user message ("weather N?") and ``response.create``: the reply is a spoken lead-in ("Let me check.") and a
   ``get_weather`` call;
2. the ``function_call_output`` goes out as soon as ``response.function_call_arguments.done`` arrives;
3. ``response.create`` (metadata only, so it may claim a speculation) goes out once the response is done *and* its
   lead-in has finished playing. Playback is simulated as ending ``--lead-in`` seconds after the response's first
   text delta, or at ``response.done`` if that is later;
4. measured: from sending that ``response.create`` to the first ``response.output_text.delta`` of the follow-up.

With the defaults the lead-in response ends about 60 ms after its first delta, so a speculation started then has
about 340 ms of playback to hide the 300 ms to first token in. Target: median with prefetch on <= 5 % of off.
The server's speculation counters must show one claim per round with prefetch on, and nothing started with it off.

    python benchmarks/bench_followup.py [--rounds 30] [--ttft 0.3] [--token-delay 0.02] [--lead-in 0.4]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import statistics
import time
from typing import Any

from openai import AsyncOpenAI
from openai.resources.realtime.realtime import AsyncRealtimeConnection

from _server import WEATHER_TOOL, ServerProcess, percentile, verdict

TARGET_RATIO = 0.05


async def open_session(stack: contextlib.AsyncExitStack, server: ServerProcess) -> AsyncRealtimeConnection:
    """A realtime connection to ``server`` offering the weather tool, text output only; closed with ``stack``."""
    client = AsyncOpenAI(base_url=server.base_url, api_key="bench")
    conn = await stack.enter_async_context(client.realtime.connect(model="bench"))
    await conn.session.update(session={"type": "realtime", "tools": [WEATHER_TOOL], "output_modalities": ["text"]})
    return conn


async def round_trip(conn: AsyncRealtimeConnection, n: int, lead_in: float) -> float:
    """One tool round trip; returns seconds from the follow-up's ``response.create`` to its first text delta."""
    await conn.conversation.item.create(item={"type": "message", "role": "user",
                                              "content": [{"type": "input_text", "text": f"weather {n}?"}]})
    await conn.response.create()
    first_delta: float | None = None
    async for ev in conn:
        if ev.type == "error":
            raise RuntimeError(f"server error: {ev.error.message}")
        if ev.type == "response.output_text.delta" and first_delta is None:
            first_delta = time.monotonic()
        elif ev.type == "response.function_call_arguments.done":
            await conn.conversation.item.create(item={"type": "function_call_output", "call_id": ev.call_id,
                                                      "output": f"sunny {n}"})
        elif ev.type == "response.done":
            break
    played = (first_delta or time.monotonic()) + lead_in
    await asyncio.sleep(max(0.0, played - time.monotonic()))

    sent = time.monotonic()
    await conn.response.create(response={"metadata": {"round": str(n)}})
    latency: float | None = None
    text = ""
    async for ev in conn:
        if ev.type == "error":
            raise RuntimeError(f"server error: {ev.error.message}")
        if ev.type == "response.output_text.delta":
            if latency is None:
                latency = time.monotonic() - sent
            text += ev.delta
        elif ev.type == "response.done":
            break
    if latency is None or not text.startswith(f"get_weather says sunny {n},"):
        raise RuntimeError(f"round {n}: unexpected follow-up {text!r}")
    return latency


async def measure(on: ServerProcess, off: ServerProcess, rounds: int, lead_in: float) -> dict[bool, list[float]]:
    """Latencies per prefetch setting, rounds interleaved between the two servers."""
    latencies: dict[bool, list[float]] = {True: [], False: []}
    async with contextlib.AsyncExitStack() as stack:
        conns = {True: await open_session(stack, on), False: await open_session(stack, off)}
        for n in range(rounds):
            for prefetch in ((True, False) if n % 2 == 0 else (False, True)):
                latencies[prefetch].append(await round_trip(conns[prefetch], n, lead_in))
    return latencies


def ms(seconds: float) -> str:
    """Seconds as milliseconds, for printing."""
    return f"{seconds * 1000:7.1f} ms"


def report(args: argparse.Namespace, latencies: dict[bool, list[float]], stats: dict[bool, dict[str, Any]]) -> None:
    """Print the figures and the verdict."""
    print(f"response.create -> first text delta of the follow-up, {args.rounds} rounds each "
          f"(ttft {args.ttft * 1000:.0f} ms, {args.token_delay * 1000:.0f} ms/token, "
          f"lead-in {args.lead_in * 1000:.0f} ms)")
    for prefetch in (True, False):
        values = latencies[prefetch]
        print(f"  prefetch {'on ' if prefetch else 'off'}: median {ms(statistics.median(values))}   "
              f"p95 {ms(percentile(values, 95))}   max {ms(max(values))}")
    median_ratio = statistics.median(latencies[True]) / statistics.median(latencies[False])
    p95_ratio = percentile(latencies[True], 95) / percentile(latencies[False], 95)
    print(f"  on/off: median {median_ratio:.1%}, p95 {p95_ratio:.1%}   "
          f"target median <= {TARGET_RATIO:.0%}: {verdict(median_ratio <= TARGET_RATIO)}")
    for prefetch in (True, False):
        print(f"  /healthz speculation, prefetch {'on ' if prefetch else 'off'}: {stats[prefetch]}")
    claimed = stats[True]["claimed"]
    print(f"  claimed with prefetch on: {claimed}/{args.rounds}: {verdict(claimed == args.rounds)}; "
          f"started with prefetch off: {stats[False]['started']}: {verdict(stats[False]['started'] == 0)}")


def main() -> None:
    """Run the benchmark and print its figures."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=30, help="tool round trips per prefetch setting")
    parser.add_argument("--ttft", type=float, default=0.3, help="scripted time to first token, seconds")
    parser.add_argument("--token-delay", type=float, default=0.02, help="scripted delay per token, seconds")
    parser.add_argument("--lead-in", type=float, default=0.4,
                        help="seconds the spoken lead-in plays after its first text delta")
    args = parser.parse_args()
    if args.rounds < 1:
        parser.error("--rounds must be at least 1")
    delays = {"ttft": args.ttft, "token_delay": args.token_delay}
    with ServerProcess(prefetch=True, **delays) as on, ServerProcess(prefetch=False, **delays) as off:
        latencies = asyncio.run(measure(on, off, args.rounds, args.lead_in))
        stats = {True: on.health()["speculation"], False: off.health()["speculation"]}
    report(args, latencies, stats)


if __name__ == "__main__":
    main()
