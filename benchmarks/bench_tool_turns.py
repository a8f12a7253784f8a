"""Tool turns by voice, as a new app meets them: fresh sessions that each declare 3–4 client tools no session
declared before and ask, aloud, for one of them.

The issue's targets for a tool turn: the call decided ≤ 2.5 s median after the end of speech, and something heard
(an acknowledgement, or the answer) within 1.0 s. Each session (``bench_voice.run_session``) sends
``session.update`` with its tools, says one request of ``voice_set.TOOL_REQUESTS`` about a second later, answers
the call it gets (``{"ok": true}``) and waits for the words after it. Printed per model of ``--models``, one server
at a time: end of speech → first audio and its stages ("call decided": the call's arguments done; "answer words":
the first words after an opening phrase), the calls made, and how many named the tool asked for (latency is
measured here; the choice of tool and arguments is ``bench_local_tools.py``'s and ``bench_bfcl.py``'s to judge).

    python benchmarks/bench_tool_turns.py [--models smollm2-135m,smollm2-135m+qwen2.5-coder-0.5b] [--requests 7]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
from typing import Any

from _server import percentile
from bench_voice import (
    CHUNK_MS,
    Measure,
    measure,
    median,
    print_line,
    report_latency,
    run_session,
    session_tools,
    voice_server,
)
from voice_set import TOOL_REQUESTS, Clip, speak, voices
from voxcall.llm.catalog import CATALOG, DEFAULT_MODEL

TARGET_DECIDED_S = 2.5
"""The call decided (its arguments done) this long after the end of speech, median."""

DEFAULT_PAIR = f"{DEFAULT_MODEL}+{CATALOG[DEFAULT_MODEL].thinker}" if CATALOG[DEFAULT_MODEL].thinker else DEFAULT_MODEL
"""What a server runs by default: the default model and the thinker its catalog entry pairs it with."""


def called(events: list[tuple[float, dict[str, Any]]]) -> list[str]:
    """The names of the client tools a session's responses called, in order."""
    return [item["name"] for _, ev in events if ev["type"] == "response.done"
            for item in ev["response"].get("output", []) if item.get("type") == "function_call"]


async def run_turns(url: str, asked: list[tuple[str, Clip]], args: argparse.Namespace,
                    rng: random.Random) -> list[tuple[Measure, str, list[str]]]:
    """A warm-up session, then each (tool, clip) of ``asked`` in a fresh session declaring that tool among 3–4."""
    results = []
    for n, (tool, clip) in enumerate([asked[0], *asked]):
        tools = session_tools(rng, including=tool)
        outcome = await run_session(url, clip, "warm-up" if n == 0 else "tool turn", tools, rng.choice(CHUNK_MS),
                                    args.max_tokens, None)
        m = measure(outcome)
        print_line(m)
        if n:
            results.append((m, tool, called(outcome.events)))
    return results


def report(results: list[tuple[Measure, str, list[str]]]) -> None:
    """First audio and its stages, the calls and the call-decided target of one model."""
    measures = [m for m, _, _ in results]
    report_latency("asking for one of 3-4 new client tools", measures)
    decided = [m.milestones["call decided"] for m in measures if "call decided" in m.milestones]
    right = sum(bool(names) and names[0].startswith(f"{tool}_") for _, tool, names in results)
    print(f"  calls made in {len(decided)} of {len(results)} sessions; the tool asked for first in {right}")
    if decided:
        ok = median(decided) <= TARGET_DECIDED_S
        print(f"  call decided: median {median(decided):.3f} s  p90 {percentile(decided, 90):.3f} s  "
              f"target median ≤ {TARGET_DECIDED_S} s  {'PASS' if ok else 'MISS'}")


def main() -> None:
    """Run the tool turns for each model of ``--models``; print the figures side by side."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", default=DEFAULT_PAIR, help="local models (catalog names, alone; "
                        "TALKER+THINKER a pair), a server each, one at a time (default: the server's default pair)")
    parser.add_argument("--requests", type=int, default=len(TOOL_REQUESTS), help="sessions per model")
    parser.add_argument("--max-tokens", type=int, default=48, help="max_output_tokens of each answer")
    parser.add_argument("--seed", type=int, default=9, help="seed of chunk sizes and tool choices")
    parser.add_argument("--no-espeak", action="store_true", help="Piper only, even when espeak-ng exists")
    args = parser.parse_args()
    all_voices = voices(espeak=not args.no_espeak)
    names = list(TOOL_REQUESTS)
    asked = [(names[n % len(names)], speak(TOOL_REQUESTS[names[n % len(names)]], all_voices[n % len(all_voices)]))
             for n in range(args.requests)]
    results = {}
    for model in [name.strip() for name in args.models.split(",") if name.strip()]:
        server = voice_server("llamacpp", model=model)
        try:
            print(f"--- {model}: a warm-up session, then {len(asked)} tool turns", flush=True)
            results[model] = asyncio.run(run_turns(server.url, asked, args, random.Random(args.seed)))
        finally:
            server.stop()
    print(f"\n=== tool turns in fresh sessions (load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs) ===")
    for model, rows in results.items():
        print(f"--- {model}")
        report(rows)


if __name__ == "__main__":
    main()
