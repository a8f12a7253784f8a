"""No dead air: the time from a slow server tool's start to the first audio of the agent's acknowledgement.

``voxcall serve`` runs in its own process with its real speech (Piper voice, the embedded VAD and Whisper), a
scripted model and a tool module whose ``slow_lookup`` takes ``--tool-seconds``; ``tools.acknowledge_after_ms`` is
the server's default. The official SDK asks "what's the forecast?" in text, with audio output; each round measures,
on the client's clock, from ``voxcall.tool_call.started`` (the tool begins) to the first ``response.output_audio.delta``
after it (the acknowledgement, "One moment, I'm checking.", spoken), and checks that the result is spoken later, in a
response of its own. Target: median <= 1.0 s on two cores.

    python benchmarks/bench_acknowledge.py [--rounds 5] [--tool-seconds 2.5]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml
from openai import AsyncOpenAI

from _server import VoxcallServe, http_base, percentile, verdict

TARGET_S = 1.0

TOOL_MODULE = """
import asyncio

from voxcall.tools import tool


@tool
async def slow_lookup(city: str) -> str:
    \"\"\"Look up tomorrow's forecast (slowly).\"\"\"
    await asyncio.sleep({seconds})
    return f"sunny in {{city}}"
"""


def write_config(folder: Path, tool_seconds: float) -> Path:
    """``voxcall.yaml`` for the benchmark server, with its script and tool module beside it."""
    (folder / "slow_tools.py").write_text(TOOL_MODULE.format(seconds=tool_seconds))
    (folder / "script.yaml").write_text(yaml.safe_dump({
        "rules": [{"match": "forecast", "calls": [{"name": "slow_lookup", "arguments": {"city": "Paris"}}]}],
        "after_tool": "The forecast: {output}."}))
    config = folder / "voxcall.yaml"
    config.write_text(yaml.safe_dump({
        "llm": "scripted", "script": str(folder / "script.yaml"),
        "session": {"prefetch": False}, "tools": {"modules": [str(folder / "slow_tools.py")]}}))
    return config


async def rounds(url: str, count: int) -> list[float]:
    """``count`` slow-tool turns; seconds from each tool's start to its acknowledgement's first audio."""
    client = AsyncOpenAI(base_url=f"{http_base(url)}/v1", api_key="bench")
    latencies: list[float] = []
    async with client.realtime.connect(model="bench") as conn:
        await conn.session.update(session={"type": "realtime", "output_modalities": ["audio"],
                                           "audio": {"input": {"turn_detection": None}}})
        for n in range(count):
            await conn.conversation.item.create(item={"type": "message", "role": "user", "content": [
                {"type": "input_text", "text": f"what's the forecast for day {n}?"}]})
            await conn.response.create()
            started: float | None = None
            acknowledged: float | None = None
            done = 0
            transcripts: list[str] = []
            async for ev in conn:
                kind: Any = ev.type
                if kind == "error":
                    raise RuntimeError(f"server error: {ev.error.message}")
                if kind == "voxcall.tool_call.started" and started is None:
                    started = time.monotonic()
                elif kind == "response.output_audio.delta" and started is not None and acknowledged is None:
                    acknowledged = time.monotonic()
                elif kind == "response.output_audio_transcript.done":
                    transcripts.append(ev.transcript)
                elif kind == "response.done":
                    done += 1
                    if done == 2:  # the acknowledgement's response, then the one that speaks the result
                        break
            if started is None or acknowledged is None or not transcripts[-1].startswith("The forecast: sunny"):
                raise RuntimeError(f"round {n}: no acknowledgement, or no result spoken ({transcripts})")
            latencies.append(acknowledged - started)
    return latencies


def main() -> None:
    """Start the server, run the rounds, print the figures."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=5, help="slow-tool turns")
    parser.add_argument("--tool-seconds", type=float, default=2.5, help="how long the slow tool takes")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        server = VoxcallServe("--config", str(write_config(Path(folder), args.tool_seconds)))
        try:
            latencies = asyncio.run(rounds(server.url, args.rounds))
        finally:
            server.stop()
    median = statistics.median(latencies)
    print(f"slow tool start -> acknowledgement's first audio, {args.rounds} rounds "
          f"(tool {args.tool_seconds:g} s, tools.acknowledge_after_ms default)")
    print(f"  median {median * 1000:6.0f} ms   p95 {percentile(latencies, 95) * 1000:6.0f} ms   "
          f"max {max(latencies) * 1000:6.0f} ms   target median <= {TARGET_S:g} s: {verdict(median <= TARGET_S)}")


if __name__ == "__main__":
    main()
