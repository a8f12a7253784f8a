"""Voice latency, as a new user meets it: end of the user's speech → first answer audio on the socket.

``voxcall serve`` runs in its own process with its embedded defaults (Silero VAD → Whisper tiny.en → the default
LLM, or ``--llm scripted`` → Piper), or ``--url`` names a server that already runs. This process plays the users.
Every request is said in a **fresh session** (a new WebSocket): it sends ``session.update``, waits for
``session.updated``, streams silence for about a second, then the spoken request, in real time, in 20–40 ms
``input_audio_buffer.append`` chunks (each chunk is sent when its last sample would have been recorded), and keeps
streaming silence until the answer is done. The sets (``voice_set.py``):

- **tools**: ≥ 20 requests, each session declaring 3–4 client tools with names and schemas unique to it;
- **no tools**: the same requests, sessions without tools;
- **paused**: sentences said in two halves with a 300–450 ms silence between: an answer started early (a
  ``response.created`` or any audio before the second half ended) is counted;
- **server tool**: a second server started with ``tools: {builtin: [calculator]}``; spoken arithmetic; tool result
  → first audio of the words that follow.

``--models A,B`` compares local models instead: a server per model, one at a time, the same requests said to each in
fresh sessions with 3-4 client tools; per model, end of speech → first audio with its stages (and the first call's
arguments done: "call decided"), CPU and memory. ``TALKER+THINKER`` names a pair (``--model`` and ``--thinker``).
``--same-tools`` gives every session the same tools (sessions whose tools the server saw before).
``--live-cost N`` measures instead what live transcription (partial transcripts while the user speaks,
``session.live_transcript_ms``) costs: two servers side by side, one with it on (the default) and one with
``live_transcript_ms: 0``, each request said to both in turn; per server, end of speech → transcript and → first
audio, partial transcripts received, and the server's CPU seconds per session.

**End of speech** is the wall time at which the chunk holding the utterance's last speech sample was sent (this
process's clock); the server's ``speech_stopped.audio_end_ms`` is recorded beside it. Per-stage figures come from the
server's ``voxcall.response.timing`` event when it sends one, else from the protocol events; "answer words" is when
the first words after an acknowledgement came (a reply whose prompt was not ready opens with one). Also printed:
word error rate of the transcripts per voice, discarded hidden responses (``/healthz`` speculation counters,
``/metrics``), the server's peak memory (``VmHWM``), and each target PASS/MISS.

    python benchmarks/bench_voice.py [--requests 20] [--llm scripted|default] [--quick] [--url ws://…/v1/realtime]
    python benchmarks/bench_voice.py --live-cost 10 [--llm scripted]
    python benchmarks/bench_voice.py --models smollm2-135m,qwen2.5-coder-0.5b [--requests 20]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import re
import secrets
import statistics
import tempfile
import time
import urllib.request
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from _server import VoxcallServe, cpu_seconds, http_base, peak_rss_bytes, percentile, verdict
from voice_set import ARITHMETIC, PAUSED, RATE, REQUESTS, Clip, speak_paused, spread, voices, word_errors
from voxcall.audio.codec import encode_audio
from voxcall.audio.formats import PCM24K
from voxcall.client.transport import WebSocketTransport
from voxcall.config.thinker import THINKER_OFF
from voxcall.language import LANGUAGES
from voxcall.serving.frames import Message

TARGET_MEDIAN_S = 0.8
TARGET_P90_S = 1.0
TARGET_TOOL_AUDIO_S = 0.3
TARGET_PEAK_BYTES = 1 << 30
LEAD_IN_S = 1.0
"""Silence streamed between ``session.updated`` and the first word."""
ANSWER_TIMEOUT_S = 90.0
GRACE_S = 1.0
"""After a finished answer, how long to wait for another response (or the timing event) before closing."""
CHUNK_MS = (20, 30, 40)

TOOL_TEMPLATES: list[tuple[str, str, dict[str, str]]] = [
    ("lookup_order", "Look up the status of a customer's order", {"order_number": "string"}),
    ("set_reminder", "Set a reminder for the user", {"text": "string", "minutes_from_now": "integer"}),
    ("check_stock", "Check whether a product is in stock at a store", {"product": "string", "store": "string"}),
    ("book_table", "Book a table at a restaurant", {"restaurant": "string", "people": "integer"}),
    ("convert_currency", "Convert an amount between currencies", {"amount": "number", "to": "string"}),
    ("find_recipe", "Find a recipe that uses the given ingredients", {"ingredients": "string"}),
    ("send_message", "Send a text message to a contact", {"contact": "string", "body": "string"}),
]
"""Client tools a session may declare; each session renames them and varies their schemas."""


# --- the server ----------------------------------------------------------------------------------------------------

def voice_server(llm: str, config: Path | None = None, model: str | None = None) -> VoxcallServe:
    """``voxcall serve --speech`` with ``llm`` (``default``: the server's own choice), a settings file and a
    model (a catalog name: ``voxcall models``, alone: no thinker; ``TALKER+THINKER``: a talker with a thinker;
    None: the server's default, a pair when its catalog entry names one)."""
    talker, _, thinker = (model or "").partition("+")
    return VoxcallServe("--speech", *([] if llm == "default" else ["--llm", llm]),
                        *([] if config is None else ["--config", str(config)]),
                        *([] if not talker else ["--model", talker, "--thinker", thinker or THINKER_OFF]))


def speculation(ws_url: str) -> dict[str, int]:
    """The ``speculation`` counters of ``GET /healthz`` (empty when absent)."""
    try:
        with urllib.request.urlopen(http_base(ws_url) + "/healthz", timeout=5) as reply:
            body: dict[str, Any] = json.load(reply)
    except OSError:
        return {}
    counters = body.get("speculation") or {}
    return {name: int(value) for name, value in counters.items() if isinstance(value, int | float)}


def metrics_lines(ws_url: str, pattern: str = r"specul|discard") -> list[str] | None:
    """The samples of ``GET /metrics`` whose name matches ``pattern``; None when the server has no ``/metrics``."""
    try:
        with urllib.request.urlopen(http_base(ws_url) + "/metrics", timeout=5) as reply:
            text = reply.read().decode()
    except OSError:
        return None
    return [line for line in text.splitlines() if line and not line.startswith("#") and re.search(pattern, line)]


def calculator_config(folder: Path) -> Path:
    """A ``voxcall.yaml`` in ``folder`` that switches the built-in calculator on."""
    path = folder / "voxcall.yaml"
    path.write_text("tools:\n  builtin: [calculator]\n")
    return path


def live_off_config(folder: Path) -> Path:
    """A ``voxcall.yaml`` in ``folder`` that switches live transcription off."""
    path = folder / "live-off.yaml"
    path.write_text("session:\n  live_transcript_ms: 0\n")
    return path


# --- one session ---------------------------------------------------------------------------------------------------

def session_tools(rng: random.Random, including: str | None = None) -> list[dict[str, Any]]:
    """3–4 client tools with names, descriptions and schemas no other session uses; ``including`` the template of
    that base name (in a random place among them)."""
    token = secrets.token_hex(3)
    tools = []
    count = rng.randint(3, 4)
    chosen = [t for t in TOOL_TEMPLATES if t[0] == including]
    chosen += rng.sample([t for t in TOOL_TEMPLATES if t[0] != including], count - len(chosen))
    rng.shuffle(chosen)
    for name, description, params in chosen:
        properties: dict[str, Any] = {key: {"type": kind, "description": f"the {key.replace('_', ' ')}"}
                                      for key, kind in params.items()}
        properties[f"note_{token}"] = {"type": "string", "description": f"optional note for desk {token}"}
        tools.append({"type": "function", "name": f"{name}_{token}",
                      "description": f"{description} (desk {token}, v{rng.randint(1, 99)}).",
                      "parameters": {"type": "object", "properties": properties, "required": list(params)}})
    return tools


@dataclass
class Outcome:
    """Everything one session saw: the clip, when its parts ended on this clock, and every event, timestamped."""

    clip: Clip
    kind: str
    part_ends: list[float]
    audio_end_ms: float
    """The utterance's last speech sample, in ms of the session's input audio stream."""
    events: list[tuple[float, Message]] = field(default_factory=list)
    client_calls: int = 0
    error: str | None = None

    @property
    def end(self) -> float:
        """End of speech (``time.perf_counter()``): the send time of the chunk with the last speech sample."""
        return self.part_ends[-1]


class Microphone:
    """Streams chunks of ``chunk_ms`` paced by the clock: the queued clip, else silence."""

    def __init__(self, transport: WebSocketTransport, chunk_ms: int) -> None:
        self._transport = transport
        self._chunk = RATE * chunk_ms // 1000
        self._pending: deque[tuple[Clip, list[asyncio.Future[float]]]] = deque()
        self.samples_sent = 0

    def say(self, clip: Clip) -> tuple[list[asyncio.Future[float]], int]:
        """Queue ``clip``: futures for the send time of each part's last speech sample, and the stream offset at
        which the clip will start (in samples, assuming nothing else is queued)."""
        loop = asyncio.get_running_loop()
        sent: list[asyncio.Future[float]] = [loop.create_future() for _ in clip.speech_ends]
        self._pending.append((clip, sent))
        return sent, self.samples_sent

    async def run(self) -> None:
        """Stream until cancelled; each chunk is sent once its last sample would have been recorded."""
        loop = asyncio.get_running_loop()
        start, number, offset = loop.time(), 0, 0
        silence = np.zeros(self._chunk, np.int16)
        while True:
            number += 1
            await asyncio.sleep(max(0.0, start + number * self._chunk / RATE - loop.time()))
            if not self._pending:
                await self._send(silence)
                continue
            clip, sent = self._pending[0]
            chunk = clip.pcm[offset:offset + self._chunk]
            await self._send(np.pad(chunk, (0, self._chunk - len(chunk))))
            now = time.perf_counter()
            for end, future in zip(clip.speech_ends, sent, strict=True):
                if offset <= end < offset + self._chunk:
                    future.set_result(now)
            offset += self._chunk
            if offset >= len(clip.pcm):
                self._pending.popleft()
                offset = 0

    async def _send(self, pcm: npt.NDArray[np.int16]) -> None:
        self.samples_sent += len(pcm)  # first: a clip queued during this send starts after this chunk
        await self._transport.send({"type": "input_audio_buffer.append", "audio": encode_audio(pcm, PCM24K)})


class Listener:
    """Timestamps every server event."""

    def __init__(self, transport: WebSocketTransport, log: list[tuple[float, Message]]) -> None:
        self._transport = transport
        self.log = log
        self.changed = asyncio.Event()

    async def run(self) -> None:
        """Read events until the socket closes."""
        async for ev in self._transport.events():
            self.log.append((time.perf_counter(), ev))
            self.changed.set()

    async def wait_for(self, kind: str, after: int = 0, timeout: float = ANSWER_TIMEOUT_S) -> Message:
        """The first event of type ``kind`` at log index ≥ ``after``."""
        async with asyncio.timeout(timeout):
            while True:
                for _, ev in self.log[after:]:
                    if ev["type"] == "error":
                        raise RuntimeError(f"server error: {ev['error'].get('message')}")
                    if ev["type"] == kind:
                        return ev
                self.changed.clear()
                await self.changed.wait()

    def count(self, kind: str) -> int:
        """How many events of type ``kind`` arrived so far."""
        return sum(1 for _, ev in self.log if ev["type"] == kind)


async def run_session(url: str, clip: Clip, kind: str, tools: list[dict[str, Any]], chunk_ms: int,
                      max_tokens: int, turn_detection: dict[str, Any] | None) -> Outcome:
    """One fresh session: declare ``tools`` (and ``turn_detection``, None: the server's), say ``clip`` ~1 s after
    ``session.updated``, wait for the answer."""
    transport = await WebSocketTransport.connect(url)
    outcome = Outcome(clip, kind, [], 0.0)
    listener = Listener(transport, outcome.events)
    reading = asyncio.create_task(listener.run())
    streaming: asyncio.Task[None] | None = None
    try:
        await listener.wait_for("session.created")
        mark = len(listener.log)
        await transport.send({"type": "session.update", "session": session_fields(tools, max_tokens, turn_detection)})
        await listener.wait_for("session.updated", mark)
        mic = Microphone(transport, chunk_ms)
        streaming = asyncio.create_task(mic.run())
        await asyncio.sleep(LEAD_IN_S)
        sent, start = mic.say(clip)
        outcome.part_ends = list(await asyncio.gather(*sent))
        outcome.audio_end_ms = (start + clip.speech_end) * 1000 / RATE
        outcome.client_calls = await await_answer(transport, listener)
    except (TimeoutError, RuntimeError) as exc:
        outcome.error = str(exc) or type(exc).__name__
    finally:
        if streaming is not None:
            streaming.cancel()
        reading.cancel()
        await transport.close()
    return outcome


def session_fields(tools: list[dict[str, Any]], max_tokens: int,
                   turn_detection: dict[str, Any] | None) -> dict[str, Any]:
    """The ``session`` of the ``session.update`` a benchmark session sends."""
    fields: dict[str, Any] = {"type": "realtime", "output_modalities": ["audio"], "max_output_tokens": max_tokens}
    if tools:
        fields |= {"tools": tools, "tool_choice": "auto"}
    if turn_detection is not None:
        fields["audio"] = {"input": {"turn_detection": turn_detection}}
    return fields


async def await_answer(transport: WebSocketTransport, listener: Listener) -> int:
    """Wait until every response is done and none follows within :data:`GRACE_S`; answer client tool calls.

    Returns how many client tool calls were answered.
    """
    calls, seen = 0, 0
    deadline = time.monotonic() + ANSWER_TIMEOUT_S
    while time.monotonic() < deadline:
        done = await listener.wait_for("response.done", seen, deadline - time.monotonic())
        seen = next(i for i, (_, ev) in enumerate(listener.log) if ev is done) + 1
        pending = [item for item in done["response"].get("output", []) if item.get("type") == "function_call"]
        for item in pending:
            await transport.send({"type": "conversation.item.create", "item": {
                "type": "function_call_output", "call_id": item["call_id"], "output": json.dumps({"ok": True})}})
        if pending:
            calls += len(pending)
            await transport.send({"type": "response.create"})
            continue
        await asyncio.sleep(GRACE_S)
        if listener.count("response.created") <= listener.count("response.done"):
            return calls
    raise TimeoutError("no finished answer")


# --- measuring -----------------------------------------------------------------------------------------------------

@dataclass
class Measure:
    """The figures of one session, in seconds from end of speech (None: the milestone never came)."""

    kind: str
    voice: str
    text: str
    transcript: str
    answer: str
    first_audio: float | None
    milestones: dict[str, float]
    server: dict[str, float]
    vad_offset_ms: float | None
    early: bool
    early_audio: bool
    discarded_audio: int
    """Audio deltas of responses that did not finish (cancelled or failed): audio of an abandoned attempt."""
    tool_to_audio: list[float]
    client_calls: int
    error: str | None
    partials: int
    """Partial transcripts (``input_audio_transcription.delta`` events) received before end of speech."""


ACKNOWLEDGED = tuple(phrase for language in LANGUAGES.values()
                     for phrase in (*language.acknowledgements, *language.thinking))
"""What the voice says before an answer that is late (a server tool running, a prompt not yet read)."""


def _first(events: list[tuple[float, Message]], kind: str, after: float,
           where: Callable[[Message], bool] = lambda ev: True) -> tuple[float, Message] | None:
    return next(((t, ev) for t, ev in events if ev["type"] == kind and t >= after and where(ev)), None)


def answer_words(events: list[tuple[float, Message]], end: float) -> float | None:
    """Seconds from ``end`` to the first words of the answer proper: the first transcript delta that goes beyond
    an acknowledgement the reply opened with ("One moment, I'm checking."; without one, the first delta)."""
    said = ""
    for t, ev in events:
        if ev["type"] == "response.output_audio_transcript.delta" and t >= end:
            said += ev["delta"]
            if not any(phrase.startswith(said.strip()) for phrase in ACKNOWLEDGED):
                return t - end
    return None


def acknowledged(answer: str) -> bool:
    """Whether ``answer`` opens with an acknowledgement."""
    return any(answer.strip().startswith(phrase) for phrase in ACKNOWLEDGED)


def measure(outcome: Outcome) -> Measure:
    """Read one session's figures from its event log."""
    events, end = outcome.events, outcome.end if outcome.part_ends else float("inf")
    audio = _first(events, "response.output_audio.delta", end)
    milestones = {}
    for label, kind in [("speech_stopped", "input_audio_buffer.speech_stopped"),
                        ("transcript", "conversation.item.input_audio_transcription.completed"),
                        ("response.created", "response.created"),
                        ("llm first token", "response.output_audio_transcript.delta"),
                        ("first audio", "response.output_audio.delta"),
                        ("call decided", "response.function_call_arguments.done")]:
        if (hit := _first(events, kind, end)) is not None:
            milestones[label] = hit[0] - end
    if (words := answer_words(events, end)) is not None:
        milestones["answer words"] = words
    stopped = [ev for _, ev in events if ev["type"] == "input_audio_buffer.speech_stopped"]
    vad_offset = stopped[-1]["audio_end_ms"] - outcome.audio_end_ms if stopped and outcome.part_ends else None
    response_id = audio[1].get("response_id") if audio else None
    return Measure(
        kind=outcome.kind, voice=outcome.clip.voice, text=outcome.clip.text,
        transcript=" ".join(ev.get("transcript", "") for _, ev in events
                            if ev["type"] == "conversation.item.input_audio_transcription.completed").strip(),
        answer="".join(ev["delta"] for t, ev in events
                       if ev["type"] == "response.output_audio_transcript.delta" and t >= end),
        first_audio=audio[0] - end if audio else None, milestones=milestones,
        server=server_timing(events, response_id), vad_offset_ms=vad_offset,
        early=any(ev["type"] == "response.created" and t < end for t, ev in events),
        early_audio=any(ev["type"] == "response.output_audio.delta" and t < end for t, ev in events),
        discarded_audio=discarded_audio(events), tool_to_audio=tool_to_audio(events, response_id),
        client_calls=outcome.client_calls, error=outcome.error,
        partials=sum(ev["type"] == "conversation.item.input_audio_transcription.delta" and t < end
                     for t, ev in events))


def discarded_audio(events: list[tuple[float, Message]]) -> int:
    """How many audio deltas belong to a response whose ``response.done`` status was neither completed nor
    incomplete."""
    abandoned = {ev["response"]["id"] for _, ev in events
                 if ev["type"] == "response.done" and ev["response"]["status"] not in ("completed", "incomplete")}
    return sum(1 for _, ev in events
               if ev["type"] == "response.output_audio.delta" and ev.get("response_id") in abandoned)


def server_timing(events: list[tuple[float, Message]], response_id: str | None) -> dict[str, float]:
    """The ``timings_ms`` of the ``voxcall.response.timing`` event of ``response_id``, in seconds ({} if none)."""
    for _, ev in events:
        if ev["type"] == "voxcall.response.timing" and ev.get("response_id") == response_id:
            return {name: value / 1000 for name, value in (ev.get("timings_ms") or {}).items()
                    if isinstance(value, int | float)}
    return {}


def tool_to_audio(events: list[tuple[float, Message]], response_id: str | None) -> list[float]:
    """Seconds from each server tool's result to the next audio: ``to_audio_ms`` of the timing event when the
    server sends one, else ``voxcall.tool_call.completed`` → the next ``response.output_audio.delta``."""
    for _, ev in events:
        if ev["type"] == "voxcall.response.timing" and ev.get("tools"):
            return [tool["to_audio_ms"] / 1000 for tool in ev["tools"] if tool.get("to_audio_ms") is not None]
    found = []
    for t, ev in events:
        if ev["type"] == "voxcall.tool_call.completed" and (
                audio := _first(events, "response.output_audio.delta", t)) is not None:
            found.append(audio[0] - t)
    return found


# --- running the sets ----------------------------------------------------------------------------------------------

async def run_set(url: str, clips: list[Clip], kind: str, args: argparse.Namespace,
                  rng: random.Random) -> list[Measure]:
    """Each clip in a fresh session, one after another; prints a line per session."""
    measures = []
    for clip in clips:
        tools = (args.shared_tools or session_tools(rng)) if kind == "tools" else []
        turns = None if args.silence_ms is None else {"type": "server_vad", "silence_duration_ms": args.silence_ms}
        outcome = await run_session(url, clip, kind, tools, rng.choice(CHUNK_MS), args.max_tokens, turns)
        measures.append(m := measure(outcome))
        print_line(m)
    return measures


def print_line(m: Measure) -> None:
    """One session's line: first audio, the voice, what was heard and answered (and when a call was decided)."""
    total = f"{m.first_audio:5.2f} s" if m.first_audio is not None else " none  "
    decided = m.milestones.get("call decided")
    flags = "".join([" EARLY" if m.early else "", f" calls={m.client_calls}" if m.client_calls else "",
                     f" decided={decided:.2f} s" if decided is not None else "",
                     f" error={m.error}" if m.error else ""])
    print(f"  [{m.kind}] {total}  {m.voice:18} {m.transcript!r} → {m.answer[:50]!r}{flags}", flush=True)


def paused_clips(count: int, all_voices: list[Any], rng: random.Random) -> list[Clip]:
    """``count`` two-half sentences, pauses drawn from 300–450 ms, voices taking turns."""
    return [speak_paused(*PAUSED[n % len(PAUSED)], rng.randint(300, 450), all_voices[n % len(all_voices)])
            for n in range(count)]


# --- reporting -----------------------------------------------------------------------------------------------------

def median(values: list[float]) -> float:
    """The median, NaN for no values."""
    return statistics.median(values) if values else float("nan")


def report_latency(name: str, measures: list[Measure]) -> list[bool]:
    """End of speech → first audio and its stages for one set; the verdicts of its two targets."""
    totals = [m.first_audio for m in measures if m.first_audio is not None]
    missing = len(measures) - len(totals)
    if not totals:
        print(f"{name}: no answer audio in {len(measures)} sessions   MISS")
        return [False, False]
    med, p90 = median(totals), percentile(totals, 90)
    ok_med, ok_p90 = med <= TARGET_MEDIAN_S and not missing, p90 <= TARGET_P90_S and not missing
    print(f"{name}: end of speech → first audio over {len(totals)} sessions"
          + (f" ({missing} without answer audio)" if missing else ""))
    print(f"  median {med:.3f} s  target ≤ {TARGET_MEDIAN_S} s  {verdict(ok_med)}   "
          f"p90 {percentile(totals, 90):.3f} s  target ≤ {TARGET_P90_S} s  {verdict(ok_p90)}")
    print("  protocol events, s after end of speech (median / p90):")
    for label in ["speech_stopped", "transcript", "response.created", "llm first token", "first audio",
                  "answer words", "call decided"]:
        values = [m.milestones[label] for m in measures if label in m.milestones]
        if values:
            print(f"    {label:18} {median(values):6.3f} / {percentile(values, 90):6.3f}")
    if spoken_first := sum(acknowledged(m.answer) for m in measures):
        print(f"  answers that opened with an acknowledgement: {spoken_first} of {len(measures)} "
              "(\"answer words\": the first words after it)")
    offsets = [m.vad_offset_ms for m in measures if m.vad_offset_ms is not None]
    if offsets:
        print(f"    speech_stopped.audio_end_ms − our end of speech: median {median(offsets):.0f} ms")
    report_server_stages(measures)
    if abandoned := sum(m.discarded_audio > 0 for m in measures):
        print(f"  sessions that received audio of a cancelled response: {abandoned}")
    calls = sum(m.client_calls for m in measures)
    if calls:
        print(f"  client tool calls answered: {calls} (their round trips are inside first audio)")
    return [ok_med, ok_p90]


def report_server_stages(measures: list[Measure]) -> None:
    """The stages of ``voxcall.response.timing`` (from the server's end of speech), when the server sends it."""
    timed = [m.server for m in measures if m.server]
    if not timed:
        print("  server stages: no voxcall.response.timing event (stages above are from protocol events)")
        return
    print(f"  server stages (voxcall.response.timing, {len(timed)} sessions), median / p90:")
    for label in ["end_of_turn", "transcript", "llm_first_token", "first_audio"]:
        values = [t[label] for t in timed if label in t]
        if values:
            print(f"    {label:18} {median(values):6.3f} / {percentile(values, 90):6.3f}")


def report_paused(measures: list[Measure]) -> bool:
    """Early answers of the paused set; the verdict."""
    early = sum(m.early for m in measures)
    early_audio = sum(m.early_audio for m in measures)
    unanswered = sum(m.first_audio is None for m in measures)
    abandoned = sum(m.discarded_audio > 0 for m in measures)
    ok = early == 0 and early_audio == 0 and abandoned == 0
    print(f"paused sentences: early answers {early}/{len(measures)}   audio before the end of the sentence "
          f"{early_audio}/{len(measures)}   audio of a cancelled response {abandoned}/{len(measures)}   "
          f"no answer after the sentence {unanswered}/{len(measures)}   target 0 early   {verdict(ok)}")
    totals = [m.first_audio for m in measures if m.first_audio is not None]
    if totals:
        print(f"  end of sentence → first audio median {median(totals):.3f} s")
    return ok


def report_server_tool(measures: list[Measure]) -> bool:
    """Tool result → first audio of the server-tool set; the verdict."""
    gaps = [gap for m in measures for gap in m.tool_to_audio]
    ran = sum(bool(m.tool_to_audio) for m in measures)
    if not gaps:
        print(f"server tool: no calculator call seen in {len(measures)} sessions (the LLM answered without it; "
              "--tool-llm scripted always calls it)   MISS")
        return False
    ok = median(gaps) <= TARGET_TOOL_AUDIO_S
    print(f"server tool: tool result → first audio after it, median {median(gaps):.3f} s  p90 "
          f"{percentile(gaps, 90):.3f} s over {len(gaps)} calls ({ran}/{len(measures)} sessions ran the tool)   "
          f"target ≤ {TARGET_TOOL_AUDIO_S} s   {verdict(ok)}")
    totals = [m.first_audio for m in measures if m.first_audio is not None]
    if totals:
        print(f"  end of speech → first audio (lead-in words) median {median(totals):.3f} s")
    return ok


def report_wer(measures: list[Measure]) -> None:
    """Word error rate per voice, over every session with a transcript."""
    by_voice: dict[str, list[int]] = {}
    for m in measures:
        errors, words = word_errors(m.text, m.transcript)
        tally = by_voice.setdefault(m.voice, [0, 0, 0])
        tally[0], tally[1], tally[2] = tally[0] + errors, tally[1] + words, tally[2] + 1
    print("word error rate of the transcripts (normalised):")
    for voice, (errors, words, count) in by_voice.items():
        print(f"  {voice:18} {errors / max(words, 1):6.1%}  ({errors} errors / {words} words, {count} utterances)")
    errors, words = sum(t[0] for t in by_voice.values()), sum(t[1] for t in by_voice.values())
    print(f"  {'all':18} {errors / max(words, 1):6.1%}")


def report_memory(peaks: dict[str, int | None]) -> bool:
    """Peak memory of each server process; the verdict."""
    known = {name: peak for name, peak in peaks.items() if peak is not None}
    if not known:
        print("peak server memory: unknown (--url without --server-pid)")
        return True
    ok = max(known.values()) <= TARGET_PEAK_BYTES
    shown = ", ".join(f"{name} {peak / 2**20:.0f} MB" for name, peak in known.items())
    print(f"peak server memory (VmHWM): {shown}   target ≤ 1 GB   {verdict(ok)}")
    return ok


def report_speculation(before: dict[str, int], after: dict[str, int], metrics: list[str] | None) -> None:
    """Hidden responses started / claimed / discarded during the run (``/healthz``), and ``/metrics`` samples."""
    if after:
        delta = ", ".join(f"{name} {after[name] - before.get(name, 0)}" for name in after)
        print(f"hidden responses (/healthz speculation, this run): {delta}")
    else:
        print("hidden responses: the server reports no speculation counters")
    if metrics is None:
        print("  /metrics: not served")
    else:
        for line in metrics:
            print(f"  /metrics {line}")


# --- main ----------------------------------------------------------------------------------------------------------

def parse_args() -> argparse.Namespace:
    """The command line."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--requests", type=int, default=20, help="sessions in each of the tools / no-tools sets")
    parser.add_argument("--paused", type=int, default=5, help="sessions in the pause-inside-the-sentence set")
    parser.add_argument("--arithmetic", type=int, default=6, help="sessions in the server-tool set")
    parser.add_argument("--llm", default="default", choices=["default", "scripted"],
                        help="the server's backend: its embedded default, or the scripted demo")
    parser.add_argument("--tool-llm", choices=["default", "scripted"],
                        help="the backend of the calculator server (default: --llm); the scripted demo always "
                        "calls the calculator for 'a times b', a small local model may answer without it")
    parser.add_argument("--quick", action="store_true", help="a smoke run: 3 requests, 2 paused, 2 arithmetic")
    parser.add_argument("--url", help="attack this running server (ws://host:port/v1/realtime) instead of starting "
                        "one; the server-tool set then runs against it too (give it the calculator)")
    parser.add_argument("--server-pid", type=int, help="with --url: the server's pid, for its peak memory")
    parser.add_argument("--no-espeak", action="store_true", help="Piper only, even when espeak-ng exists")
    parser.add_argument("--silence-ms", type=int, help="the sessions' silence_duration_ms (default: the server's)")
    parser.add_argument("--max-tokens", type=int, default=48, help="max_output_tokens of each answer")
    parser.add_argument("--seed", type=int, default=9, help="seed of chunk sizes, pauses and tool choices")
    parser.add_argument("--live-cost", type=int, metavar="N", help="only measure what live transcription costs: "
                        "N requests, each said to a server with it on and to one with it off")
    parser.add_argument("--same-tools", action="store_true", help="every session declares the same tools (the "
                        "server saw them before), instead of tools unique to it")
    parser.add_argument("--models", metavar="A,B", help="only compare local models: a server per model (catalog "
                        "names; TALKER+THINKER a pair), one at a time, --requests requests said to each in fresh "
                        "sessions with 3-4 client tools")
    args = parser.parse_args()
    args.tool_llm = args.tool_llm or args.llm
    if args.quick:
        args.requests, args.paused, args.arithmetic = 3, 2, 2
    if min(args.requests, args.paused, args.arithmetic) < 1:
        parser.error("each set needs at least one request")
    return args


async def run_main_sets(url: str, args: argparse.Namespace, all_voices: list[Any],
                        rng: random.Random) -> dict[str, list[Measure]]:
    """A warm-up session, then the tools, no-tools and paused sets against ``url``."""
    requests = spread(REQUESTS, args.requests, all_voices)
    print(f"talking to {url}: a warm-up session, then {len(requests)} with tools, {len(requests)} without, "
          f"{args.paused} paused", flush=True)
    await run_set(url, requests[:1], "warm-up", args, rng)
    return {"tools": await run_set(url, requests, "tools", args, rng),
            "no tools": await run_set(url, requests, "no tools", args, rng),
            "paused": await run_set(url, paused_clips(args.paused, all_voices, rng), "paused", args, rng)}


async def run_tool_set(url: str, args: argparse.Namespace, all_voices: list[Any],
                       rng: random.Random) -> list[Measure]:
    """A warm-up, then the spoken arithmetic against ``url`` (a server with the built-in calculator)."""
    clips = spread(ARITHMETIC, args.arithmetic, all_voices[:1])  # Piper: its digits are read reliably
    print(f"talking to {url} (built-in calculator): a warm-up session, then {len(clips)}", flush=True)
    await run_set(url, clips[:1], "warm-up", args, rng)
    return await run_set(url, clips, "server tool", args, rng)


async def run_live_pairs(servers: dict[str, VoxcallServe], clips: list[Clip], args: argparse.Namespace,
                         rng: random.Random) -> tuple[dict[str, list[Measure]], dict[str, float]]:
    """A warm-up on each server, then each clip said to every server in turn (fresh sessions, no tools); the
    measures and the CPU seconds each server used for them."""
    for server in servers.values():
        await run_set(server.url, clips[:1], "warm-up", args, rng)
    measures: dict[str, list[Measure]] = {label: [] for label in servers}
    cpu = {label: 0.0 for label in servers}
    for clip in clips:
        for label, server in servers.items():
            before = cpu_seconds(server.pid)
            measures[label] += await run_set(server.url, [clip], label, args, rng)
            cpu[label] += cpu_seconds(server.pid) - before
    return measures, cpu


def compare_models(args: argparse.Namespace, all_voices: list[Any], rng: random.Random) -> None:
    """Say ``--requests`` requests, with client tools, to a server per model of ``--models``, one server at a time
    (two models on two cores would slow each other), in one run; print each model's latency side by side."""
    clips = spread(REQUESTS, args.requests, all_voices)
    models = [name.strip() for name in args.models.split(",") if name.strip()]
    measures: dict[str, list[Measure]] = {}
    notes: dict[str, str] = {}
    for model in models:
        server = voice_server("llamacpp", model=model)
        try:
            print(f"--- {model}: a warm-up session, then {len(clips)} with 3-4 new client tools each", flush=True)
            before = cpu_seconds(server.pid)
            measures[model] = asyncio.run(run_tools_sets(server.url, clips, args, rng))
            cpu = (cpu_seconds(server.pid) - before) / len(clips)
            peak = server.peak_rss_bytes()
            notes[model] = f"CPU {cpu:.2f} s/session" + (f", peak memory {peak / 2**20:.0f} MiB" if peak else "")
        finally:
            server.stop()
    print(f"\n=== local models side by side (load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs) ===")
    for model, ms in measures.items():
        print(f"--- {model}: {notes[model]}")
        report_latency("with 3-4 new client tools per session", ms)


async def run_tools_sets(url: str, clips: list[Clip], args: argparse.Namespace,
                         rng: random.Random) -> list[Measure]:
    """A warm-up session, then ``clips`` in fresh sessions with client tools."""
    await run_set(url, clips[:1], "warm-up", args, rng)
    return await run_set(url, clips, "tools", args, rng)


def live_cost(args: argparse.Namespace, all_voices: list[Any], rng: random.Random) -> None:
    """Say ``--live-cost`` requests to a server with live transcription and to one without; print the cost."""
    clips = spread(REQUESTS, args.live_cost, all_voices)
    with tempfile.TemporaryDirectory() as folder:
        servers = {"live on": voice_server(args.llm), "live off": voice_server(args.llm, live_off_config(Path(folder)))}
        try:
            print(f"live transcription cost: {len(clips)} requests, each to {' and '.join(servers)}", flush=True)
            measures, cpu = asyncio.run(run_live_pairs(servers, clips, args, rng))
        finally:
            for server in servers.values():
                server.stop()
    print(f"\n=== live transcription cost (llm {args.llm}; load average {os.getloadavg()[0]:.1f} on "
          f"{os.cpu_count()} CPUs) ===")
    print("server     partials/session  transcript (median / p90)  first audio (median / p90)  CPU s/session")
    for label, ms in measures.items():
        transcripts = [m.milestones["transcript"] for m in ms if "transcript" in m.milestones]
        audio = [m.first_audio for m in ms if m.first_audio is not None]
        print(f"{label:10} {statistics.mean(m.partials for m in ms):16.1f}  "
              f"{median(transcripts):8.3f} / {percentile(transcripts, 90):6.3f} s      "
              f"{median(audio):8.3f} / {percentile(audio, 90):6.3f} s     {cpu[label] / len(ms):8.2f}")


def main() -> None:
    """Run the benchmark and print its figures."""
    args = parse_args()
    os.environ["HF_HUB_OFFLINE"] = "1"
    rng = random.Random(args.seed)
    args.shared_tools = session_tools(random.Random(args.seed)) if args.same_tools else None
    all_voices = voices(espeak=not args.no_espeak)
    print("voices: " + ", ".join(name for name, _ in all_voices), flush=True)
    if args.live_cost:
        live_cost(args, all_voices, rng)
        return
    if args.models:
        compare_models(args, all_voices, rng)
        return
    peaks: dict[str, int | None] = {}
    if args.url:
        before = speculation(args.url)
        sets = asyncio.run(run_main_sets(args.url, args, all_voices, rng))
        sets["server tool"] = asyncio.run(run_tool_set(args.url, args, all_voices, rng))
        after, metrics = speculation(args.url), metrics_lines(args.url)
        peaks["server"] = peak_rss_bytes(args.server_pid) if args.server_pid else None
    else:
        server = voice_server(args.llm)
        try:
            before = speculation(server.url)
            sets = asyncio.run(run_main_sets(server.url, args, all_voices, rng))
            after, metrics = speculation(server.url), metrics_lines(server.url)
            peaks["server"] = server.peak_rss_bytes()
        finally:
            server.stop()
        with tempfile.TemporaryDirectory() as folder:
            calc = voice_server(args.tool_llm, calculator_config(Path(folder)))
            try:
                sets["server tool"] = asyncio.run(run_tool_set(calc.url, args, all_voices, rng))
                peaks["calculator server"] = calc.peak_rss_bytes()
            finally:
                calc.stop()
    report(args, sets, peaks, before, after, metrics)


def report(args: argparse.Namespace, sets: dict[str, list[Measure]], peaks: dict[str, int | None],
           before: dict[str, int], after: dict[str, int], metrics: list[str] | None) -> None:
    """Print every figure and target verdict."""
    print(f"\n=== voice benchmark (llm {args.llm}, calculator server llm {args.tool_llm}"
          f"{', quick' if args.quick else ''}; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs) ===")
    verdicts = report_latency("with 3-4 new client tools per session", sets["tools"])
    verdicts += report_latency("without tools", sets["no tools"])
    verdicts.append(report_paused(sets["paused"]))
    verdicts.append(report_server_tool(sets["server tool"]))
    report_wer([m for ms in sets.values() for m in ms])
    verdicts.append(report_memory(peaks))
    report_speculation(before, after, metrics)
    print(f"targets met: {sum(verdicts)}/{len(verdicts)}")


if __name__ == "__main__":
    main()
