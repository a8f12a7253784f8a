"""Streaming ``<code>`` parser cost: µs per chunk, and linearity (time for 4x the input vs 1x).

Streams about 100k tokens (~400k characters) of mixed prose and tool calls through ``CodeCallStream`` in chunks of
1–4 characters, like a model's token stream, and prints the figures. Targets on a 2-core machine: <= 3 µs per chunk
and 4x input <= 4.5x time. Runs are interleaved and the best of several is kept, since the machine is noisy.

    python benchmarks/bench_codecalls.py [--tokens 100000] [--repeat 5]
"""

from __future__ import annotations

import argparse
import random
import time

from voxcall.tools import Tool, ToolCall
from voxcall.tools.codecalls import CodeCallStream, RejectedCall

TOOLS = [
    Tool("get_weather", "Get the weather.", {"type": "object", "properties": {
        "city": {"type": "string"}, "unit": {"type": "string", "enum": ["c", "f"]}}, "required": ["city"]}),
    Tool("calculator", "Arithmetic.", {"type": "object", "properties": {
        "op": {"type": "string", "enum": ["add", "sub", "mul", "div"]}, "a": {"type": "number"},
        "b": {"type": "number"}}, "required": ["op", "a", "b"]}),
    Tool("music_play", "Play a song.", {"type": "object", "properties": {"name": {"type": "string"}},
                                       "required": ["name"]}),
]
PROSE = ("Sure, here is what I found about that. The forecast looks mild for the weekend, with a little rain "
         "on Sunday. Would you like me to set a reminder? I can also play something relaxing while you wait. "
         "Prices are 3 < 5 and `inline` code stays text. ")
CALLS = [
    "<code>get_weather(city='Paris', unit='c')</code>",
    "<code>calculator(op='mul', a=12, b=8)</code>",
    "```python\nmusic_play(name='Blue in Green')\n```",
    "<code>get_weather(city='it</code>s (tricky)')\ncalculator('add', -1, +2.5)</code>",
    "<code>get_wether(city='Oslo')</code>",
]


def make_text(tokens: int, rng: random.Random) -> str:
    """About ``tokens`` tokens (4 characters each) of prose with a call block every few sentences."""
    parts: list[str] = []
    size = 0
    while size < tokens * 4:
        piece = PROSE if rng.random() < 0.8 else rng.choice(CALLS) + " "
        parts.append(piece)
        size += len(piece)
    return "".join(parts)


def make_chunks(text: str, rng: random.Random) -> list[str]:
    chunks: list[str] = []
    i = 0
    while i < len(text):
        n = rng.randint(1, 4)
        chunks.append(text[i:i + n])
        i += n
    return chunks


def run(chunks: list[str]) -> tuple[float, int, int]:
    """Seconds to stream ``chunks``, and the number of calls and rejections seen (to check the work was done)."""
    stream = CodeCallStream(TOOLS)
    calls = rejected = 0
    start = time.perf_counter()
    for chunk in chunks:
        for event in stream.feed(chunk):
            if isinstance(event, ToolCall):
                calls += 1
            elif isinstance(event, RejectedCall):
                rejected += 1
    stream.close()
    return time.perf_counter() - start, calls, rejected


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    rng = random.Random(7)
    small = make_chunks(make_text(args.tokens, rng), rng)
    large = make_chunks(make_text(args.tokens * 4, rng), rng)
    best_small = best_large = float("inf")
    for _ in range(args.repeat):  # interleaved, so both sizes see the same machine noise
        t_small, calls, rejected = run(small)
        t_large, _, _ = run(large)
        best_small, best_large = min(best_small, t_small), min(best_large, t_large)
    per_chunk = best_small / len(small) * 1e6
    ratio = best_large / best_small
    print(f"input: {args.tokens} tokens, {sum(map(len, small))} chars, {len(small)} chunks of 1-4 chars; "
          f"{calls} calls, {rejected} rejected")
    print(f"per chunk: {per_chunk:.2f} us (target <= 3 us)   "
          f"[1x: {best_small * 1e3:.0f} ms, 4x: {best_large * 1e3:.0f} ms, best of {args.repeat}]")
    print(f"4x input / 1x input time: {ratio:.2f} (target <= 4.5)")


if __name__ == "__main__":
    main()
