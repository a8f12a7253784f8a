"""Four sessions with different tools sharing one local model: first-event time per turn, against one session alone.

Each session has its own instructions and tool set (drawn from ``bench_local_tools``'s everyday tools), declares
them first (a warm, as ``session.update`` does), then takes turns like a voice user: a short request, the reply,
1-3 s of thought (seeded), the next request, its conversation growing. Measured per turn: request sent -> first
event of the reply (words or a call). Variants, side by side in one run:

- **alone**: each session on its own, one after the other (the figure a lone session gets);
- **4 at once, prompt cache**: the in-process engine (one slot) with its host-memory prompt cache
  (``state_cache_bytes``, default);
- **4 at once, no cache**: the same with ``state_cache_bytes=0``: sessions evict each other's prompts;
- **4 at once, 2 slots**: the in-process engine with two slots (continuous batching), the cache on;
- **4 at once, llama-server**: ``LlamaServerBackend`` on llama.cpp's server with ``--parallel 4`` started here
  (``python -m voxcall.llm.local.serve``, the scale-out launcher).

The issue's target is a 4-session median at most 2x the lone one.

    python benchmarks/bench_shared_engine.py [--turns 4] [--seed 7]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import statistics
import subprocess
import sys
import time
import urllib.request
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from _server import percentile
from bench_local_tools import ask
from everyday_tools import TOOLS
from voxcall.llm import ChatItem, LlamaCppBackend, LlamaServerBackend, Message
from voxcall.llm.local import LocalBackend
from voxcall.llm.local.llamacpp import default_model_path
from voxcall.tools import Tool

ENGINE_PORT = 18_765
SESSIONS = [
    ("You are a kitchen assistant.", [4, 0, 5], ["Set a timer for 12 minutes.", "What is 7 times 8?",
                                                "What's the weather in Lyon?", "Thanks!"]),
    ("You are a music assistant at a party.", [1, 2, 3], ["Play some jazz.", "Turn the volume to 30.",
                                                          "Stop the music.", "Who are you?"]),
    ("You help at home.", [6, 3, 4, 1], ["Turn on the lights in the kitchen.", "Set a timer for 3 minutes.",
                                         "Play Bach.", "Good night."]),
    ("You are a travel helper.", [5, 0, 6, 2], ["What's the weather in Oslo?", "What is 120 divided by 8?",
                                                "Hello there.", "What's the weather in Rome?"]),
]
"""Per session: instructions, its tools (indices into ``TOOLS``), its requests in order."""


@dataclass
class Figures:
    """First-event times (seconds) of every turn, and the cached share of the prompts."""

    first: list[float] = field(default_factory=list)
    cached: list[float] = field(default_factory=list)

    def line(self, name: str, alone: float | None) -> str:
        median = statistics.median(self.first)
        ratio = f"{median / alone:5.1f}x" if alone else "   1x"
        return (f"{name:<30} {median * 1e3:8.0f} {percentile(self.first, 90) * 1e3:8.0f} {ratio}   "
                f"{100 * statistics.mean(self.cached):5.0f} %")


async def session(backend: LocalBackend, number: int, turns: int, rng: random.Random, figures: Figures) -> None:
    """One session's turns, timed into ``figures``."""
    instructions, indices, requests = SESSIONS[number]
    tools: list[Tool] = [TOOLS[i] for i in indices]
    history: list[ChatItem] = []
    await ask(backend, "", voice=True, history=[], tools=tools, instructions=instructions, warm=True)
    for request in requests[:turns]:
        outcome = await ask(backend, request, voice=True, history=history, tools=tools, instructions=instructions)
        figures.first.append(outcome.ttft)
        if outcome.usage is not None and outcome.usage.input_tokens:
            figures.cached.append(outcome.usage.cached_input_tokens / outcome.usage.input_tokens)
        reply = outcome.text.strip() or "Done."
        history += [Message("user", request), Message("assistant", reply)]
        await asyncio.sleep(rng.uniform(1.0, 3.0))


async def together(backend: LocalBackend, turns: int, seed: int) -> Figures:
    figures = Figures()
    rng = random.Random(seed)
    await asyncio.gather(*(session(backend, n, turns, random.Random(rng.random()), figures)
                           for n in range(len(SESSIONS))))
    return figures


async def alone(backend: LocalBackend, turns: int, seed: int) -> Figures:
    figures = Figures()
    rng = random.Random(seed)
    for number in range(len(SESSIONS)):
        await session(backend, number, turns, random.Random(rng.random()), figures)
    return figures


async def measured(make: Callable[[], LocalBackend],
                   run: Callable[[LocalBackend, int, int], Awaitable[Figures]], turns: int, seed: int) -> Figures:
    backend = await asyncio.to_thread(make)
    try:
        return await run(backend, turns, seed)
    finally:
        await backend.aclose()


def start_engine() -> subprocess.Popen[bytes]:
    """llama.cpp's server with 4 slots on :data:`ENGINE_PORT` (the scale-out launcher), once it answers."""
    engine = subprocess.Popen([sys.executable, "-m", "voxcall.llm.local.serve", "--model", str(default_model_path()),
                               "--port", str(ENGINE_PORT), "--parallel", "4", "--ctx-size", "2048", "--threads", "2"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{ENGINE_PORT}/health", timeout=1):
                return engine
        except OSError:
            time.sleep(0.3)
    engine.kill()
    raise SystemExit("llama.cpp's server did not start")


async def run(args: argparse.Namespace) -> None:
    print(f"{len(SESSIONS)} sessions x {args.turns} turns, think time 1-3 s; load average "
          f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    base = await measured(LlamaCppBackend, alone, args.turns, args.seed)
    rows = [("alone (in process)", base)]
    rows.append(("4 at once, prompt cache", await measured(LlamaCppBackend, together, args.turns, args.seed)))
    rows.append(("4 at once, no cache", await measured(lambda: LlamaCppBackend(state_cache_bytes=0), together,
                                                       args.turns, args.seed)))
    rows.append(("4 at once, 2 slots", await measured(lambda: LlamaCppBackend(slots=2), together, args.turns,
                                                      args.seed)))
    engine = start_engine()
    try:
        url = f"http://127.0.0.1:{ENGINE_PORT}"
        rows.append(("alone, llama-server", await measured(lambda: LlamaServerBackend(url), alone, args.turns,
                                                           args.seed)))
        rows.append(("4 at once, llama-server -np 4", await measured(lambda: LlamaServerBackend(url), together,
                                                                     args.turns, args.seed)))
    finally:
        engine.terminate()
        engine.wait(30)
    single = statistics.median(base.first)
    print(f"\n{'variant':<30} {'p50 ms':>8} {'p90 ms':>8} {'/alone':>6}   cached")
    for name, figures in rows:
        print(figures.line(name, single))
    print(f"(load average after: {os.getloadavg()[0]:.1f}; target: 4 at once <= 2x alone)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--turns", type=int, default=4, help="turns per session (at most 4)")
    parser.add_argument("--seed", type=int, default=7)
    asyncio.run(run(parser.parse_args()))


if __name__ == "__main__":
    main()
