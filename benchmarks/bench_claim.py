"""Speculative follow-ups per client shape: how often the hidden follow-up is claimed, and what the claim saves.

Framework clients restate the session in every ``response.create``: LiveKit Agents 1.8.9 (its OpenAI realtime
plugin) sends ``instructions: null``, ``tool_choice: "auto"`` and ``metadata``; pipecat 1.14 sends the session's own
``output_modalities``. A server that claimed only a bare request would waste every follow-up for them. This replays
those exact bodies (sent raw, nulls included, as the frameworks send them) against one voxcall server in its own
process (scripted backend: 300 ms to first token, 20 ms per token) over the official SDK's connection, and prints
per shape the claim rate (from the server's ``/healthz`` counters) and the median latency from ``response.create``
to the follow-up's first text delta. A body with a real difference (other instructions) must not claim.

Each round: user message and ``response.create`` (a lead-in and a ``get_weather`` call); the tool output as soon as
the call's arguments are done; the shape's ``response.create`` once the lead-in has played (``--lead-in`` seconds
after its first delta), as a voice client would.

    python benchmarks/bench_claim.py [--rounds 10] [--lead-in 0.4]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import statistics
import time
from typing import Any

from openai import AsyncOpenAI
from openai.resources.realtime.realtime import AsyncRealtimeConnection

from _server import WEATHER_TOOL, ServerProcess, verdict

SHAPES: dict[str, dict[str, Any]] = {
    "bare (metadata only)": {"metadata": {"round": "n"}},
    "LiveKit Agents 1.8.9": {"instructions": None, "metadata": {"client_event_id": "response_create_n"},
                             "tool_choice": "auto"},
    "pipecat 1.14": {"output_modalities": ["text"]},
    "real difference (instructions)": {"instructions": "Answer in French."},
}
"""The ``response`` body each client shape sends for the follow-up."""

EXPECTED = {"real difference (instructions)": 0.0}
"""The claim rate each shape should reach (1.0 where not listed)."""


async def round_trip(conn: AsyncRealtimeConnection, n: int, body: dict[str, Any], lead_in: float) -> float:
    """One tool round trip; seconds from the follow-up's ``response.create`` (``body``) to its first text delta."""
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
    await conn.send_raw(json.dumps({"type": "response.create", "response": body}))
    latency: float | None = None
    async for ev in conn:
        if ev.type == "error":
            raise RuntimeError(f"server error: {ev.error.message}")
        if ev.type == "response.output_text.delta" and latency is None:
            latency = time.monotonic() - sent
        elif ev.type == "response.done":
            break
    if latency is None:
        raise RuntimeError(f"round {n}: the follow-up said nothing")
    return latency


async def shape_rounds(server: ServerProcess, body: dict[str, Any], rounds: int, lead_in: float) -> list[float]:
    """``rounds`` round trips of one shape on a connection of its own."""
    async with contextlib.AsyncExitStack() as stack:
        client = AsyncOpenAI(base_url=server.base_url, api_key="bench")
        conn = await stack.enter_async_context(client.realtime.connect(model="bench"))
        await conn.session.update(session={"type": "realtime", "tools": [WEATHER_TOOL],
                                           "output_modalities": ["text"]})
        return [await round_trip(conn, n, body, lead_in) for n in range(rounds)]


def main() -> None:
    """Run every shape and print its claim rate and latency."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=10, help="tool round trips per client shape")
    parser.add_argument("--lead-in", type=float, default=0.4, help="seconds the lead-in plays after its first delta")
    args = parser.parse_args()
    if args.rounds < 1:
        parser.error("--rounds must be at least 1")
    print(f"hidden follow-up claims per client shape, {args.rounds} rounds each (ttft 300 ms, 20 ms/token)")
    with ServerProcess(prefetch=True, ttft=0.3, token_delay=0.02) as server:
        for name, body in SHAPES.items():
            before = server.health()["speculation"]
            latencies = asyncio.run(shape_rounds(server, body, args.rounds, args.lead_in))
            after = server.health()["speculation"]
            started, claimed = after["started"] - before["started"], after["claimed"] - before["claimed"]
            rate = claimed / started if started else 0.0
            expected = EXPECTED.get(name, 1.0)
            print(f"  {name:32s} claimed {claimed:3d}/{started:<3d} ({rate:6.1%})   "
                  f"create -> first delta median {statistics.median(latencies) * 1000:6.1f} ms   "
                  f"expected {expected:.0%}: {verdict(rate == expected)}")


if __name__ == "__main__":
    main()
