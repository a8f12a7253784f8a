"""Soak: many sessions for a long time against a real ``voxcall serve``; the server's memory, open files and asyncio
tasks must stay flat, and no turn may fail.

``voxcall serve`` runs in its own process (scripted backend, the built-in ``calculator`` as a server tool, speech
when the speech models are installed). ``--sessions`` users talk to it for ``--minutes``; each user connects,
offers the client tool ``get_weather``, and takes turns with a pause of about ``--think`` seconds between them,
reconnecting after ``--turns-per-session`` turns (so sessions open and close all along). A turn is one of:

- **text**: a user message and ``response.create``; a text answer;
- **client tool**: "what is the weather": a lead-in and a ``get_weather`` call; the user sends its output and asks
  for the follow-up (``response.create`` with metadata only: it claims the speculative follow-up);
- **server tool**: "what is 12 times 8": the server runs ``calculator`` inside the response; its result is spoken of;
- **audio** (when the server speaks): the session switches its output to audio, the user says a sentence (Piper
  audio made by this process, sent at once, then silence); server VAD ends the turn, Whisper transcribes it and the
  answer is spoken; the output goes back to text.

A turn fails on an ``error`` event, a response that does not complete, a missing piece (no call, no tool result, no
audio), a dropped connection or ``--turn-timeout`` seconds without its end. Every ``--sample`` seconds the server's
resident memory (``VmRSS``), open files (``/proc/PID/fd``) and asyncio tasks (``voxcall_asyncio_tasks`` of
``GET /metrics``) are read and printed with the turns so far. Growth after the warm-up (``--warmup`` minutes; a
third of the run when the run is shorter) is the least-squares line through the samples after it, from its start to
its end, as a share of its start: in-flight turns make single samples noisy, a leak makes the line climb.
Also printed: the idle server before the first and after the last session (tasks and files should match).

Exit status 1 when any figure grew more than 5 % or any turn failed.

    python benchmarks/bench_soak.py [--sessions 100] [--minutes 10] [--think 10] [--turns-per-session 20]
                                    [--warmup 2] [--sample 10] [--text-only]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import sys
import tempfile
import time
import urllib.request
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import websockets
from websockets.asyncio.client import ClientConnection

from _server import WEATHER_TOOL, VoxcallServe, http_base, verdict

TARGET_GROWTH = 0.05
SCRIPT: dict[str, Any] = {
    "rules": [
        {"match": "weather", "reply": "Let me check.", "calls": [{"name": "get_weather",
                                                                  "arguments": {"city": "Paris"}}]},
        {"match": "/what is (?P<a>\\d+) times (?P<b>\\d+)/", "requires_tool": "calculator",
         "reply": "Let me work that out.", "calls": [{"name": "calculator",
                                                      "arguments": {"op": "mul", "a": "{a}", "b": "{b}"}}]},
    ],
    "after_tool": "{name} says {output}.",
    "default": "I can tell you the weather, and I can multiply.",
}
SPOKEN = "Please tell me something nice about today"  # no pause inside: one turn
CHUNK_MS = 100
RATE = 24_000


class TurnFailed(Exception):
    """A turn did not end as it should."""


@dataclass
class Tally:
    """Turns done and failed, by kind, and the first few reasons for failure."""

    done: Counter[str] = field(default_factory=Counter)
    failed: Counter[str] = field(default_factory=Counter)
    reasons: list[str] = field(default_factory=list)

    def fail(self, kind: str, reason: str) -> None:
        self.failed[kind] += 1
        if len(self.reasons) < 10:
            self.reasons.append(f"{kind}: {reason}")


class Client:
    """One session over a plain WebSocket (JSON frames; no SDK models, to keep this process light)."""

    def __init__(self, ws: ClientConnection, clip: list[str] | None) -> None:
        self.ws = ws
        self.clip = clip  # the spoken sentence in base64 chunks, then silence; None: no audio turns

    async def send(self, **ev: Any) -> None:
        await self.ws.send(json.dumps(ev))

    async def until(self, kind: str) -> dict[str, Any]:
        """Read events up to the first of type ``kind``; an ``error`` event fails the turn."""
        while True:
            ev: dict[str, Any] = json.loads(await self.ws.recv())
            if ev["type"] == "error":
                raise TurnFailed(f"error event: {ev['error'].get('code')}: {ev['error'].get('message')}")
            if ev["type"] == kind:
                return ev

    async def setup(self) -> None:
        await self.until("session.created")
        await self.send(type="session.update", session={"type": "realtime", "tools": [WEATHER_TOOL],
                                                        "output_modalities": ["text"]})
        await self.until("session.updated")

    async def say(self, text: str) -> None:
        await self.send(type="conversation.item.create", item={
            "type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]})

    async def completed(self, **response: Any) -> dict[str, Any]:
        """``response.create``; its ``response.done``, which must be completed."""
        await self.send(type="response.create", **({"response": response} if response else {}))
        return completed(await self.until("response.done"))

    async def turn(self, kind: str) -> None:
        await {"text": self.text, "client tool": self.client_tool, "server tool": self.server_tool,
               "audio": self.audio}[kind]()

    async def text(self) -> None:
        await self.say("tell me something nice")
        answer(await self.completed())

    async def client_tool(self) -> None:
        await self.say("what is the weather in Paris")
        await self.send(type="response.create")
        call = await self.until("response.function_call_arguments.done")
        await self.send(type="conversation.item.create", item={"type": "function_call_output",
                                                               "call_id": call["call_id"], "output": "sunny"})
        completed(await self.until("response.done"))
        if "sunny" not in answer(await self.completed(metadata={"turn": "follow-up"})):
            raise TurnFailed("the follow-up does not use the tool's output")

    async def server_tool(self) -> None:
        await self.say("what is 12 times 8")
        done = await self.completed()
        calls = [item for item in done["response"]["output"] if item["type"] == "mcp_call"]
        if not calls or calls[0].get("output") != "96":
            raise TurnFailed(f"no calculator result in {[item['type'] for item in done['response']['output']]}")

    async def audio(self) -> None:
        assert self.clip is not None
        await self.send(type="session.update", session={"type": "realtime", "output_modalities": ["audio"]})
        await self.until("session.updated")
        for chunk in self.clip:
            await self.send(type="input_audio_buffer.append", audio=chunk)
        await self.until("input_audio_buffer.speech_stopped")
        done = completed(await self.until("response.done"))
        parts = [part["type"] for item in done["response"]["output"] for part in item.get("content") or []]
        if "output_audio" not in parts:
            raise TurnFailed(f"no spoken answer (parts {parts})")
        await self.send(type="session.update", session={"type": "realtime", "output_modalities": ["text"]})
        await self.until("session.updated")


def completed(done: dict[str, Any]) -> dict[str, Any]:
    """``done`` when its response completed; else the turn fails."""
    response = done["response"]
    if response["status"] != "completed":
        raise TurnFailed(f"response {response['status']}: {response.get('status_details')}")
    return done


def answer(done: dict[str, Any]) -> str:
    """The text of a completed response's last message (the turn fails without one)."""
    messages = [item for item in done["response"]["output"] if item["type"] == "message"]
    text = "".join(part.get("text") or part.get("transcript") or "" for part in messages[-1]["content"]) \
        if messages else ""
    if not text:
        raise TurnFailed("the answer is empty")
    return text


async def user(url: str, clip: list[str] | None, kinds: list[str], until: float, tally: Tally,
               rng: random.Random, args: argparse.Namespace) -> None:
    """One user: sessions of ``--turns-per-session`` turns, back to back, until the deadline."""
    await asyncio.sleep(rng.uniform(0, args.think))  # users arrive spread out
    while time.monotonic() < until:
        try:
            async with websockets.connect(url, compression=None, max_size=None) as ws:
                client = Client(ws, clip)
                await asyncio.wait_for(client.setup(), args.turn_timeout)
                for _ in range(args.turns_per_session):
                    if time.monotonic() >= until:
                        return
                    kind = rng.choice(kinds)
                    try:
                        await asyncio.wait_for(client.turn(kind), args.turn_timeout)
                    except (TurnFailed, TimeoutError, websockets.ConnectionClosed) as exc:
                        tally.fail(kind, f"{type(exc).__name__}: {exc}")
                        break  # the session's state is unknown now: start a new one
                    tally.done[kind] += 1
                    await asyncio.sleep(min(rng.uniform(0.5, 1.5) * args.think, max(0.0, until - time.monotonic())))
        except (OSError, TimeoutError, TurnFailed, websockets.ConnectionClosed, websockets.InvalidHandshake) as exc:
            tally.fail("connect", f"{type(exc).__name__}: {exc}")
            await asyncio.sleep(1)


# --- the server's figures ----------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Sample:
    """The server's figures at one moment, and the turns so far."""

    t: float  # seconds since the load started
    rss_kib: int
    files: int
    tasks: int
    sessions: int
    done: int
    failed: int


def rss_kib(pid: int) -> int:
    """``VmRSS`` of process ``pid``, KiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError("no VmRSS in /proc status")


def get(url: str) -> str:
    with urllib.request.urlopen(url, timeout=30) as reply:
        return str(reply.read().decode())


def server_figures(server: VoxcallServe) -> tuple[int, int, int, int]:
    """RSS (KiB), open files, asyncio tasks and open sessions of the server now (blocking)."""
    base = http_base(server.url)
    tasks = next(int(float(line.split()[-1])) for line in get(base + "/metrics").splitlines()
                 if line.startswith("voxcall_asyncio_tasks "))
    sessions = int(json.loads(get(base + "/healthz"))["sessions"])
    return rss_kib(server.pid), len(os.listdir(f"/proc/{server.pid}/fd")), tasks, sessions


async def sample(server: VoxcallServe, started: float, tally: Tally) -> Sample:
    rss, files, tasks, sessions = await asyncio.to_thread(server_figures, server)
    return Sample(time.monotonic() - started, rss, files, tasks, sessions, sum(tally.done.values()),
                  sum(tally.failed.values()))


def growth(samples: list[Sample], figure: str) -> float:
    """The least-squares line of ``figure`` over ``samples``: its rise from the first sample's time to the last's,
    as a share of its value at the first."""
    t = np.array([s.t for s in samples])
    y = np.array([float(getattr(s, figure)) for s in samples])
    slope, intercept = np.polyfit(t, y, 1)
    start = intercept + slope * t[0]
    return float(slope * (t[-1] - t[0]) / start)


def print_row(s: Sample) -> None:
    print(f"{s.t:7.0f} s {s.rss_kib / 1024:9.1f} {s.files:7d} {s.tasks:7d} {s.sessions:9d} {s.done:8d} {s.failed:7d}",
          flush=True)


# --- the run -------------------------------------------------------------------------------------------------------

def spoken_clip() -> list[str]:
    """:data:`SPOKEN` said by the packaged Piper voice, then 1.5 s of silence, as 24 kHz PCM16 base64 chunks."""
    from voice_set import piper_voice  # loads Piper: only when the server speaks
    from voxcall.audio.codec import encode_audio
    from voxcall.audio.formats import PCM24K

    _, say = piper_voice()
    pcm: npt.NDArray[np.int16] = np.concatenate([say(SPOKEN), np.zeros(RATE * 3 // 2, np.int16)])
    step = RATE * CHUNK_MS // 1000
    return [encode_audio(pcm[i:i + step], PCM24K) for i in range(0, len(pcm), step)]


async def soak(server: VoxcallServe, clip: list[str] | None, args: argparse.Namespace,
               ) -> tuple[list[Sample], Tally]:
    kinds = ["text", "text", "client tool", "client tool", "server tool", "server tool"]
    kinds += ["audio"] if clip is not None else []
    tally = Tally()
    rng = random.Random(args.seed)
    started = time.monotonic()
    until = started + args.minutes * 60
    print(f"{'time':>9} {'RSS MiB':>9} {'files':>7} {'tasks':>7} {'sessions':>9} {'turns':>8} {'failed':>7}")
    users = [asyncio.create_task(user(server.url, clip, kinds, until, tally, random.Random(rng.random()), args))
             for _ in range(args.sessions)]
    samples: list[Sample] = []
    at = started + args.sample
    while at < until:  # samples while every user is still at it
        await asyncio.sleep(max(0.0, at - time.monotonic()))
        samples.append(await sample(server, started, tally))
        print_row(samples[-1])
        at += args.sample
    await asyncio.sleep(max(0.0, until - time.monotonic()))
    await asyncio.wait(users, timeout=args.turn_timeout + 5)  # the turns under way finish
    for task in users:
        task.cancel()
    await asyncio.gather(*users, return_exceptions=True)
    return samples, tally


def idle(server: VoxcallServe) -> tuple[int, int]:
    """Tasks and open files of the server once no session is open (waits up to 30 s for the last to close)."""
    deadline = time.monotonic() + 30
    while True:
        _, files, tasks, sessions = server_figures(server)
        if sessions == 0 or time.monotonic() > deadline:
            return tasks, files
        time.sleep(0.5)


def report(args: argparse.Namespace, samples: list[Sample], tally: Tally, speech: bool, warmup_min: float,
           before: tuple[int, int], after: tuple[int, int]) -> bool:
    """Print the figures and verdicts; whether every target was met."""
    print(f"\n=== soak: {args.sessions} sessions, {args.minutes:g} min, think ~{args.think:g} s, "
          f"{'with' if speech else 'without'} audio turns; load average {os.getloadavg()[0]:.1f} on "
          f"{os.cpu_count()} CPUs ===")
    for kind in sorted(set(tally.done) | set(tally.failed)):
        print(f"  {kind:>12}: {tally.done[kind]:6d} done, {tally.failed[kind]:4d} failed")
    failed = sum(tally.failed.values())
    for reason in tally.reasons:
        print(f"    {reason}")
    after_warmup = [s for s in samples if s.t >= warmup_min * 60]
    ok = failed == 0
    if len(after_warmup) < 2:
        print(f"  growth: fewer than 2 samples after the {warmup_min * 60:.0f} s warm-up: not measured (MISS)")
        ok = False
    else:
        print(f"  growth after the {warmup_min * 60:.0f} s warm-up ({len(after_warmup)} samples, least-squares line), "
              f"target <= {TARGET_GROWTH:.0%}:")
        for figure, label in (("rss_kib", "RSS"), ("files", "open files"), ("tasks", "asyncio tasks")):
            rise = growth(after_warmup, figure)
            ok = ok and rise <= TARGET_GROWTH
            print(f"    {label:>13}: {rise:+6.1%}  ({getattr(after_warmup[0], figure)} -> "
                  f"{getattr(after_warmup[-1], figure)})  {verdict(rise <= TARGET_GROWTH)}")
    print(f"  idle server before / after: {before[0]} / {after[0]} tasks, {before[1]} / {after[1]} open files")
    print(f"  failed turns: {failed}  target 0: {verdict(failed == 0)}")
    print(f"overall: {verdict(ok)}")
    return ok


def main() -> None:
    """Run the soak and print its figures; exit 1 when a target is missed."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sessions", type=int, default=100, help="users talking at once")
    parser.add_argument("--minutes", type=float, default=10.0, help="length of the run")
    parser.add_argument("--think", type=float, default=10.0, help="mean pause between a user's turns, seconds")
    parser.add_argument("--turns-per-session", type=int, default=20, help="turns before a user reconnects")
    parser.add_argument("--warmup", type=float, default=2.0, help="minutes left out of the growth figures")
    parser.add_argument("--sample", type=float, default=10.0, help="seconds between samples of the server")
    parser.add_argument("--turn-timeout", type=float, default=120.0, help="seconds a turn may take")
    parser.add_argument("--text-only", action="store_true", help="no audio turns (and no speech models loaded)")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    if min(args.sessions, args.minutes, args.think, args.turns_per_session, args.sample) <= 0:
        parser.error("--sessions, --minutes, --think, --turns-per-session and --sample must be positive")
    warmup_min = args.warmup if args.warmup < args.minutes / 2 else args.minutes / 3
    os.environ["HF_HUB_OFFLINE"] = "1"
    with tempfile.TemporaryDirectory() as folder:
        script, config = Path(folder) / "script.json", Path(folder) / "voxcall.yaml"
        script.write_text(json.dumps(SCRIPT))
        config.write_text("tools:\n  builtin: [calculator]\n")
        # Room above --sessions: a user's reconnect may reach the server before its old session has closed.
        flags = ["--llm", "scripted", "--script", str(script), "--config", str(config),
                 "--max-sessions", str(2 * args.sessions)]
        server = VoxcallServe(*flags, *(["--no-speech"] if args.text_only else []))
        try:
            speech = bool(json.loads(get(http_base(server.url) + "/healthz"))["speech"])
            clip = spoken_clip() if speech else None
            print(f"voxcall serve (pid {server.pid}) at {server.url}; speech {'on' if speech else 'off'}; "
                  f"warm-up {warmup_min * 60:.0f} s", flush=True)
            before = idle(server)
            samples, tally = asyncio.run(soak(server, clip, args))
            after = idle(server)
        finally:
            server.stop()
    sys.exit(0 if report(args, samples, tally, speech, warmup_min, before, after) else 1)


if __name__ == "__main__":
    main()
