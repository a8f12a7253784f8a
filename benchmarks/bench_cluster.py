"""Text turns through the cluster (HAProxy + replicas, ``deploy/cluster.py``) against the same load on one process.

N sessions at once each do T text turns (a user message, ``response.create``, wait for ``response.done``), with
the scripted backend, speech off: what is measured is voxcall's own cost per turn (protocol, conversation,
events), which is what replicas spread over cores. Both sides run the real ``voxcall serve`` with
``deploy/replica.yaml``. Printed per side: turns per second, p50/p95 first token (``response.create`` sent →
first ``response.output_text.delta``) and p50/p95 turn time; then the cluster's speed-up.

    python benchmarks/bench_cluster.py [--sessions 40] [--turns 5] [--replicas 2]

Voice turns are not measured here: with the scripted backend there is no shared engine to measure, and the speech
models' cost is per replica (``bench_voice.py`` measures one process).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import websockets
import yaml

from _server import percentile

DEPLOY = Path(__file__).resolve().parents[1] / "deploy"
REPLY = " ".join(f"word{n}" for n in range(30))
"""Every turn's answer: 30 words, streamed as 30 deltas."""
START_TIMEOUT_S = 120


def free_port(span: int) -> int:
    """A port P with P … P+span-1 free now (on this quiet machine, good enough for a benchmark)."""
    while True:
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            base = int(probe.getsockname()[1])
        if base + span < 65_000 and all(_free(base + offset) for offset in range(span)):
            return base


def _free(port: int) -> bool:
    with socket.socket() as probe:
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return False
        return True


def wait_healthy(url: str, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline and process.poll() is None:
        try:
            with urllib.request.urlopen(url, timeout=2) as answer:
                if answer.status == 200:
                    return
        except OSError:
            time.sleep(0.2)
    raise SystemExit(f"{url} never answered")


@contextmanager
def served(folder: Path, replicas: int) -> Iterator[str]:
    """The WebSocket URL of one ``voxcall serve`` (``replicas`` 0) or of a cluster of ``replicas``, until the end."""
    config = yaml.safe_load((DEPLOY / "replica.yaml").read_text())
    (folder / "script.yaml").write_text(yaml.safe_dump({"default": REPLY}))
    config.update({"script": str(folder / "script.yaml"), "speech": {"enabled": False},
                   "session": {"prefetch": False}, "log_level": "warning", "max_sessions": 1000})
    (folder / "replica.yaml").write_text(yaml.safe_dump(config))
    port = free_port(replicas + 1)
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("VOXCALL_")}, "HF_HUB_OFFLINE": "1"}
    if replicas:
        argv = [sys.executable, str(DEPLOY / "cluster.py"), "--port", str(port), "--replicas", str(replicas),
                "--llm", "scripted", "--config", str(folder / "replica.yaml")]
    else:
        argv = [sys.executable, "-m", "voxcall", "serve", "--config", str(folder / "replica.yaml"),
                "--port", str(port), "--llm", "scripted"]
    process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, env=env)
    try:
        wait_healthy(f"http://127.0.0.1:{port}/healthz", process)
        if replicas:  # the balancer answers once the first replica is up: wait for the last one too
            wait_healthy(f"http://127.0.0.1:{port + replicas}/healthz", process)
        yield f"ws://127.0.0.1:{port}/v1/realtime"
    finally:
        process.send_signal(signal.SIGINT)
        process.wait(60)


async def session(url: str, turns: int, first_tokens: list[float], turn_times: list[float]) -> None:
    async with websockets.connect(url, max_size=None) as ws:
        assert json.loads(await ws.recv())["type"] == "session.created"
        for turn in range(turns):
            await ws.send(json.dumps({"type": "conversation.item.create", "item": {
                "type": "message", "role": "user", "content": [{"type": "input_text", "text": f"turn {turn}"}]}}))
            sent = time.perf_counter()
            await ws.send(json.dumps({"type": "response.create"}))
            first: float | None = None
            while True:
                event: dict[str, Any] = json.loads(await ws.recv())
                if event["type"] == "response.output_text.delta" and first is None:
                    first = time.perf_counter() - sent
                elif event["type"] == "response.done":
                    assert event["response"]["status"] == "completed", event
                    break
            assert first is not None
            first_tokens.append(first)
            turn_times.append(time.perf_counter() - sent)


async def load(url: str, sessions: int, turns: int) -> dict[str, float]:
    first_tokens: list[float] = []
    turn_times: list[float] = []
    started = time.perf_counter()
    await asyncio.gather(*(session(url, turns, first_tokens, turn_times) for _ in range(sessions)))
    elapsed = time.perf_counter() - started
    return {"turns/s": len(turn_times) / elapsed,
            "ft p50 ms": 1000 * percentile(first_tokens, 50), "ft p95 ms": 1000 * percentile(first_tokens, 95),
            "turn p50 ms": 1000 * percentile(turn_times, 50), "turn p95 ms": 1000 * percentile(turn_times, 95)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--sessions", type=int, default=40)
    parser.add_argument("--turns", type=int, default=5)
    parser.add_argument("--replicas", type=int, default=2)
    args = parser.parse_args()
    print(f"{args.sessions} sessions × {args.turns} text turns, scripted backend, {os.cpu_count()} CPU(s)")
    results = {}
    with tempfile.TemporaryDirectory() as folder:
        for name, replicas in (("one process", 0), (f"{args.replicas} replicas + HAProxy", args.replicas)):
            with served(Path(folder), replicas) as url:
                results[name] = asyncio.run(load(url, args.sessions, args.turns))
            figures = "  ".join(f"{key} {value:7.1f}" for key, value in results[name].items())
            print(f"{name:<26} {figures}", flush=True)
    one, many = results.values()
    print(f"cluster / one process: throughput ×{many['turns/s'] / one['turns/s']:.2f}, "
          f"first-token p95 ×{many['ft p95 ms'] / one['ft p95 ms']:.2f}")


if __name__ == "__main__":
    main()
