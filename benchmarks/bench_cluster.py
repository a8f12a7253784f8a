"""Sessions through the cluster (HAProxy + replicas, ``deploy/cluster.py``) against the same load on one process.

Two modes, each a run of the real ``voxcall serve`` with ``deploy/replica.yaml`` (plus a few keys written by this
script):

**Scripted** (the default): N sessions at once each do T text turns (a user message, ``response.create``, wait for
``response.done``) with the scripted backend, speech off: what is measured is voxcall's own cost per turn
(protocol, conversation, events), which is what replicas spread over cores. Sides: one process, then R replicas
behind HAProxy.

**Engine** (``--engine``): the replicas think with the shared ``llama-server`` (``cluster.py --llm llama-server``,
the packaged SmolLM2-135M, 4 slots) and speech is on. Sides: one replica of that cluster, reached directly (one
voxcall process on the engine); R replicas behind HAProxy on the same engine; with ``--llamacpp``, one process with
the in-process ``llamacpp`` backend. On each side:

- **text**: N sessions at once, each declaring ``get_weather`` and asking T short questions, some about the
  weather (the model may then answer with a ``function_call``, whose output the session adds before its next
  question); text output only, so the speech models are idle;
- **voice**: for each K of ``--voice-levels``, K sessions at once, each a fresh session saying one spoken question
  (Piper / espeak-ng, ``voice_set.py``) streamed in real time with server VAD, as ``bench_voice.py`` does, until
  ``--voice-turns`` turns were measured at that level.

Printed per side: turns per second, p50/p95 first token (text: ``response.create`` sent → first text or
function-call delta; voice: end of speech → first ``response.output_audio_transcript.delta``), p50/p95 end of
speech → first ``response.output_audio.delta``, and the CPU each process used, in cores (CPU seconds / wall
seconds: replicas, engine, this client), with a line saying which of them holds the machine's cores. The load
average before each side is printed: the machine may be shared.

    python benchmarks/bench_cluster.py [--sessions 40] [--turns 5] [--replicas 2]
    python benchmarks/bench_cluster.py --engine [--sessions 4] [--turns 3] [--voice-levels 1,2,4]
                                                [--voice-turns 4] [--replicas 2] [--llamacpp]
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import random
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import websockets
import yaml

from _server import WEATHER_TOOL, cpu_seconds, percentile
from bench_voice import CHUNK_MS, measure, run_session, session_fields
from voice_set import REQUESTS, Clip, spread, voices

DEPLOY = Path(__file__).resolve().parents[1] / "deploy"
REPLY = " ".join(f"word{n}" for n in range(30))
"""Every scripted turn's answer: 30 words, streamed as 30 deltas."""
START_TIMEOUT_S = 120
DEFAULTS = {"scripted": {"sessions": 40, "turns": 5}, "engine": {"sessions": 4, "turns": 3}}
"""Text sessions at once and turns each, per mode: the engine's turns cost a model's decoding, so fewer."""
QUESTIONS = [
    "What is the weather in Paris today?",
    "What is the capital of Italy?",
    "Is it raining in London right now?",
    "Name a fruit that is yellow.",
    "How warm is it in Madrid?",
    "How many days are in a week?",
]
"""The engine's text questions, taken in turn: every other one is about the weather (``get_weather`` declared)."""
MAX_TOKENS = 48
"""``max_output_tokens`` of every engine answer, text and voice (``bench_voice.py``'s default)."""


@dataclass
class Deployment:
    """A running side: the WebSocket URL the sessions use, and the processes whose CPU is counted."""

    url: str
    replicas: list[int]
    engine: int | None = None


PORTS = range(20_000, 32_000)
"""Where servers listen: below Linux's ephemeral ports (32768 and up), so that a health check polling a port nobody
listens on yet cannot connect to itself (the kernel may pick that very port as the check's own source port)."""


def free_port(span: int) -> int:
    """A port P with P … P+span-1 free now (on this quiet machine, good enough for a benchmark)."""
    while True:
        base = random.randrange(PORTS.start, PORTS.stop - span)
        if all(_free(base + offset) for offset in range(span)):
            return base


def _free(port: int) -> bool:
    with socket.socket() as probe:
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return False
        return True


def wait_healthy(url: str, process: subprocess.Popen[bytes]) -> dict[str, Any]:
    """The ``/healthz`` body at ``url`` once it answers 200; SystemExit when ``process`` exits or it takes too long."""
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline and process.poll() is None:
        try:
            with urllib.request.urlopen(url, timeout=2) as answer:
                if answer.status == 200:
                    body: dict[str, Any] = json.load(answer)
                    return body
        except OSError:
            time.sleep(0.2)
    raise SystemExit(f"{url} never answered")


def engine_pid(cluster: int) -> int | None:
    """The pid of the engine child (``python -m voxcall.llm.local.serve``) of the cluster process ``cluster`` (None
    when it has none)."""
    children = Path(f"/proc/{cluster}/task/{cluster}/children").read_text().split()
    return next((int(pid) for pid in children
                 if b"voxcall.llm.local.serve" in Path(f"/proc/{pid}/cmdline").read_bytes()), None)


@contextmanager
def served(folder: Path, replicas: int, llm: str, *, speech: bool = False, direct: bool = False
           ) -> Iterator[Deployment]:
    """One ``voxcall serve`` (``replicas`` 0) or a cluster of ``replicas`` (``direct``: the sessions go to the first
    replica, not the balancer), with ``llm`` (``scripted``: the 30-word :data:`REPLY`; ``llama-server``: the
    cluster's engine; ``llamacpp``: in process), until the end."""
    config = yaml.safe_load((DEPLOY / "replica.yaml").read_text())
    config.update({"log_level": "warning", "max_sessions": 1000, "speech": {"enabled": speech}})
    if llm == "scripted":
        (folder / "script.yaml").write_text(yaml.safe_dump({"default": REPLY}))
        config.update({"script": str(folder / "script.yaml"), "session": {"prefetch": False}})
    (folder / "replica.yaml").write_text(yaml.safe_dump(config))
    port = free_port(replicas + 2)
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("VOXCALL_")}, "HF_HUB_OFFLINE": "1"}
    if replicas:
        argv = [sys.executable, str(DEPLOY / "cluster.py"), "--port", str(port), "--replicas", str(replicas),
                "--llm", llm, "--config", str(folder / "replica.yaml")]
    else:
        argv = [sys.executable, "-m", "voxcall", "serve", "--config", str(folder / "replica.yaml"),
                "--port", str(port), "--llm", llm]
    process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, env=env)
    try:
        wait_healthy(f"http://127.0.0.1:{port}/healthz", process)
        # the balancer answers once the first replica is up, and replicas start after the engine: ask each one
        pids = [int(wait_healthy(f"http://127.0.0.1:{port + n}/healthz", process)["pid"])
                for n in range(1, replicas + 1)] or [process.pid]
        url_port = port + 1 if direct else port
        yield Deployment(f"ws://127.0.0.1:{url_port}/v1/realtime", pids, engine_pid(process.pid) if replicas else None)
    finally:
        process.send_signal(signal.SIGINT)
        process.wait(60)


# --- text sessions -------------------------------------------------------------------------------------------------

@dataclass
class Tally:
    """What the text turns of one load saw."""

    first_tokens: list[float] = field(default_factory=list)
    turn_times: list[float] = field(default_factory=list)
    tool_calls: int = 0


async def session(url: str, questions: list[str], setup: dict[str, Any] | None, tally: Tally) -> None:
    """One session asking ``questions`` one after another (after ``setup``, a ``session.update``'s session, when
    given); a ``function_call`` answer gets an output before the next question."""
    async with websockets.connect(url, max_size=None) as ws:
        assert json.loads(await ws.recv())["type"] == "session.created"
        if setup is not None:
            await ws.send(json.dumps({"type": "session.update", "session": setup}))
            while json.loads(await ws.recv())["type"] != "session.updated":
                pass
        for question in questions:
            await ws.send(json.dumps({"type": "conversation.item.create", "item": {
                "type": "message", "role": "user", "content": [{"type": "input_text", "text": question}]}}))
            sent = time.perf_counter()
            await ws.send(json.dumps({"type": "response.create"}))
            first: float | None = None
            while True:
                event: dict[str, Any] = json.loads(await ws.recv())
                if event["type"] in ("response.output_text.delta", "response.function_call_arguments.delta"):
                    first = first or time.perf_counter() - sent
                elif event["type"] == "response.done":
                    assert event["response"]["status"] in ("completed", "incomplete"), event
                    break
            assert first is not None
            tally.first_tokens.append(first)
            tally.turn_times.append(time.perf_counter() - sent)
            for item in event["response"]["output"]:
                if item["type"] == "function_call":
                    tally.tool_calls += 1
                    await ws.send(json.dumps({"type": "conversation.item.create", "item": {
                        "type": "function_call_output", "call_id": item["call_id"],
                        "output": json.dumps({"temperature_c": 18, "sky": "clear"})}}))


async def load(url: str, sessions: int, turns: int, engine: bool) -> tuple[Tally, float]:
    """``sessions`` sessions at once, ``turns`` turns each; what they saw and the wall seconds it took."""
    tally = Tally()
    if engine:
        setup: dict[str, Any] | None = session_fields([WEATHER_TOOL], MAX_TOKENS, None)
        setup = {**setup, "output_modalities": ["text"]}
        asked = [[QUESTIONS[(n + turn) % len(QUESTIONS)] for turn in range(turns)] for n in range(sessions)]
    else:
        setup, asked = None, [[f"turn {turn}" for turn in range(turns)]] * sessions
    started = time.perf_counter()
    await asyncio.gather(*(session(url, questions, setup, tally) for questions in asked))
    return tally, time.perf_counter() - started


def text_figures(tally: Tally, elapsed: float) -> dict[str, float]:
    """Turns per second, first-token and turn-time percentiles (ms) of one load."""
    return {"turns/s": len(tally.turn_times) / elapsed,
            "ft p50 ms": 1000 * percentile(tally.first_tokens, 50),
            "ft p95 ms": 1000 * percentile(tally.first_tokens, 95),
            "turn p50 ms": 1000 * percentile(tally.turn_times, 50),
            "turn p95 ms": 1000 * percentile(tally.turn_times, 95)}


# --- CPU -----------------------------------------------------------------------------------------------------------

class CpuMeter:
    """CPU seconds the deployment's replicas, its engine and this client use between :meth:`start` and
    :meth:`cores`, as cores (CPU seconds / wall seconds)."""

    def __init__(self, deployment: Deployment) -> None:
        self.pids = {"replicas": deployment.replicas, "engine": [deployment.engine] if deployment.engine else [],
                     "client": [os.getpid()]}
        self.start()

    def _now(self) -> dict[str, float]:
        return {name: sum(cpu_seconds(pid) for pid in pids) for name, pids in self.pids.items() if pids}

    def start(self) -> None:
        self._since, self._before = time.perf_counter(), self._now()

    def cores(self) -> dict[str, float]:
        """Cores each group used since :meth:`start`."""
        wall = time.perf_counter() - self._since
        return {name: (spent - self._before[name]) / wall for name, spent in self._now().items()}


def cpu_text(cores: dict[str, float]) -> str:
    """``replicas 0.93 engine 0.41 client 0.05 = 1.39 of 2 cores``."""
    return " ".join(f"{name} {value:.2f}" for name, value in cores.items()) + \
        f" = {sum(cores.values()):.2f} of {os.cpu_count()} cores"


def limit_line(cores: dict[str, float]) -> str:
    """Which group holds the cores, and whether the machine is the limit."""
    total, busiest = sum(cores.values()), max(cores, key=lambda name: cores[name])
    share = cores[busiest] / total if total else 0.0
    machine = "the machine's cores are the limit" if total >= 0.8 * (os.cpu_count() or 1) else \
        "the cores are not saturated (latency, not CPU, bounds it)"
    return f"{machine}; {busiest} use {share:.0%} of the CPU spent"


# --- voice sessions ------------------------------------------------------------------------------------------------

async def voice_level(url: str, clips: Iterator[Clip], concurrent: int, turns: int, rng: random.Random
                      ) -> tuple[list[float], list[float], int, float]:
    """Rounds of ``concurrent`` fresh voice sessions at once until ``turns`` were said: end of speech → first
    audio and → first token of each answered turn, how many got no audio, and the wall seconds."""
    audio, tokens, silent = [], [], 0
    started = time.perf_counter()
    for _ in range(-(-turns // concurrent)):
        outcomes = await asyncio.gather(*(run_session(url, next(clips), "voice", [], rng.choice(CHUNK_MS),
                                                      MAX_TOKENS, None) for _ in range(concurrent)))
        for outcome in outcomes:
            figures = measure(outcome)
            if figures.first_audio is None:
                silent += 1
                print(f"    no answer audio: {figures.text!r} heard as {figures.transcript!r} "
                      f"({figures.error or 'no error'})", flush=True)
                continue
            audio.append(figures.first_audio)
            tokens.append(figures.milestones.get("llm first token", figures.first_audio))
    return audio, tokens, silent, time.perf_counter() - started


# --- the two modes -------------------------------------------------------------------------------------------------

def scripted(args: argparse.Namespace) -> None:
    """Text turns of the scripted backend: one process, then the cluster; the speed-up."""
    print(f"{args.sessions} sessions × {args.turns} text turns, scripted backend, {os.cpu_count()} CPU(s), "
          f"load average {os.getloadavg()[0]:.1f}")
    results = {}
    with tempfile.TemporaryDirectory() as folder:
        for name, replicas in (("one process", 0), (f"{args.replicas} replicas + HAProxy", args.replicas)):
            with served(Path(folder), replicas, "scripted") as deployment:
                results[name] = text_figures(*asyncio.run(load(deployment.url, args.sessions, args.turns, False)))
            figures = "  ".join(f"{key} {value:7.1f}" for key, value in results[name].items())
            print(f"{name:<26} {figures}", flush=True)
    one, many = results.values()
    print(f"cluster / one process: throughput ×{many['turns/s'] / one['turns/s']:.2f}, "
          f"first-token p95 ×{many['ft p95 ms'] / one['ft p95 ms']:.2f}")


def engine(args: argparse.Namespace) -> None:
    """Text and voice turns on the shared engine: one replica, the cluster, and optionally in-process llama.cpp."""
    rng = random.Random(9)
    all_voices = voices()
    clips = itertools.cycle(spread(REQUESTS, max(args.voice_turns, *args.voice_levels), all_voices))
    sides = [("one process → llama-server", 1, "llama-server", True),
             (f"{args.replicas} replicas + HAProxy → llama-server", args.replicas, "llama-server", False)]
    if args.llamacpp:
        sides.append(("one process, in-process llamacpp", 0, "llamacpp", False))
    print(f"engine mode: SmolLM2-135M, {args.sessions} text sessions × {args.turns} turns, voice levels "
          f"{args.voice_levels} ({args.voice_turns} turns each), voices {', '.join(name for name, _ in all_voices)}; "
          f"{os.cpu_count()} CPU(s)", flush=True)
    with tempfile.TemporaryDirectory() as folder:
        for name, replicas, llm, direct in sides:
            print(f"\n== {name} (load average {os.getloadavg()[0]:.1f}) ==", flush=True)
            with served(Path(folder), replicas, llm, speech=True, direct=direct) as deployment:
                warm = max(replicas, 1)  # sessions at once that reach every replica (least connections)
                asyncio.run(load(deployment.url, warm, 1, True))  # warm-up: the engine's first prompts
                meter = CpuMeter(deployment)
                tally, elapsed = asyncio.run(load(deployment.url, args.sessions, args.turns, True))
                cores = meter.cores()
                text = text_figures(tally, elapsed)
                print(f"  text   {args.sessions:2} at once  {text['turns/s']:5.2f} turns/s  first token p50/p95 "
                      f"{text['ft p50 ms']:5.0f} / {text['ft p95 ms']:5.0f} ms  turn p50/p95 {text['turn p50 ms']:5.0f}"
                      f" / {text['turn p95 ms']:5.0f} ms  tool calls {tally.tool_calls}/{len(tally.turn_times)}  "
                      f"CPU {cpu_text(cores)}", flush=True)
                print(f"         {limit_line(cores)}")
                asyncio.run(voice_level(deployment.url, clips, warm, warm, rng))  # warm-up of the speech models
                for level in args.voice_levels:
                    meter.start()
                    audio, tokens, silent, wall = asyncio.run(
                        voice_level(deployment.url, clips, level, args.voice_turns, rng))
                    cores = meter.cores()
                    said = len(audio) + silent
                    print(f"  voice  {level:2} at once  {said / wall:5.2f} turns/s  end of speech → first token "
                          f"p50/p95 {1000 * percentile(tokens, 50):5.0f} / {1000 * percentile(tokens, 95):5.0f} ms"
                          f"  → first audio {1000 * percentile(audio, 50):5.0f} / {1000 * percentile(audio, 95):5.0f}"
                          f" ms  ({len(audio)}/{said} answered)  CPU {cpu_text(cores)}", flush=True)
                    print(f"         {limit_line(cores)}")
    print(f"\nload average at the end {' '.join(f'{value:.1f}' for value in os.getloadavg())}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--engine", action="store_true", help="text and voice turns on the shared llama-server")
    parser.add_argument("--sessions", type=int, help="text sessions at once (scripted 40, engine 4)")
    parser.add_argument("--turns", type=int, help="text turns per session (scripted 5, engine 3)")
    parser.add_argument("--replicas", type=int, default=2)
    parser.add_argument("--voice-levels", default="1,2,4", help="engine: voice sessions at once, comma-separated")
    parser.add_argument("--voice-turns", type=int, default=4, help="engine: voice turns measured per level")
    parser.add_argument("--llamacpp", action="store_true", help="engine: also one process with in-process llama.cpp")
    args = parser.parse_args()
    mode = "engine" if args.engine else "scripted"
    for name, value in DEFAULTS[mode].items():
        if getattr(args, name) is None:
            setattr(args, name, value)
    args.voice_levels = [int(level) for level in args.voice_levels.split(",")]
    os.environ["HF_HUB_OFFLINE"] = "1"
    (engine if args.engine else scripted)(args)


if __name__ == "__main__":
    main()
