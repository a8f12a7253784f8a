"""Voice latency: from the end of the user's speech to the first audio of the answer, over the offline pipeline.

``voxcall serve`` runs in its own process with its defaults: Silero VAD → Whisper tiny.en → the in-process LLM
(``--llm llamacpp``, SmolLM2-135M; or ``--llm scripted``) → Piper joe. This process plays a microphone: it streams
20 ms chunks of 24 kHz PCM paced by the clock, without pause, silence between the questions. Each question is spoken
by Piper (in this process, before the run). A first turn warms the server up and is reported apart; then every
turn is timed from **end of speech** (the moment the chunk holding the question's last speech sample was sent) to:

- ``input_audio_buffer.speech_stopped``: the VAD hangover (the server's ``silence_duration_ms`` and detection);
- ``conversation.item.input_audio_transcription.completed``: speech to text;
- the first ``response.output_audio_transcript.delta``: the LLM's first token;
- the first ``response.output_audio.delta``: the total. The step before it ("TTS first chunk") is the rest of the
  first clause being written by the LLM, then spoken by Piper (speech starts clause by clause).

Also printed: the speech-to-text real-time factor (transcription time / utterance length, from the server's events),
the text-to-speech real-time factor (Piper on the answers' transcripts, in this process after the run), and the
server's peak resident memory (``VmHWM``). Targets on a 2-core CPU: median total ≤ 1.0 s, peak memory ≤ 1 GB.

    python benchmarks/bench_voice.py [--turns 10] [--llm llamacpp|scripted] [--silence-ms 500] [--max-tokens 48]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import signal
import statistics
import subprocess
import sys
import threading
import time
from collections import deque
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from _server import percentile, verdict
from voxcall.audio.codec import encode_audio, resample
from voxcall.audio.formats import PCM24K
from voxcall.client.transport import WebSocketTransport
from voxcall.realtime.protocol import Event
from voxcall.speech import PiperTTS, get_piper

QUESTIONS = [
    "What is the capital of France?",
    "How many days are there in a week?",
    "Tell me a fun fact about the moon.",
    "What color is the sky?",
    "Can you recommend a good book?",
    "How do I boil an egg?",
    "What is your name?",
    "Why do cats purr?",
    "What should I cook for dinner tonight?",
    "How far away is the sun?",
    "What is a good name for a dog?",
    "Where do penguins live?",
]
"""Everyday questions, spoken by Piper; the warm-up turn uses the first, the timed turns cycle through the rest."""

TARGET_TOTAL_S = 1.0
TARGET_PEAK_BYTES = 1 << 30
RATE = PCM24K.rate
CHUNK = RATE * 20 // 1000  # 20 ms
SPEECH_LEVEL = 500  # |sample| above this counts as speech when finding where the question ends
PAUSE_S = 1.0  # silence streamed after an answer before the next question
TURN_TIMEOUT_S = 120.0
_RUNNING = re.compile(r"Uvicorn running on http://127\.0\.0\.1:(\d+)")


@dataclass
class Question:
    """A spoken question at 24 kHz, and the index of its last speech sample."""

    text: str
    pcm: npt.NDArray[np.int16]
    speech_end: int


@dataclass
class Turn:
    """The seconds from end of speech to each milestone of one turn, and what was said."""

    stopped: float
    transcribed: float
    first_token: float
    first_audio: float
    speech_s: float
    transcript: str
    answer: str


def speak(piper: PiperTTS, text: str) -> Question:
    """``text`` spoken by Piper, resampled to the wire rate."""
    pcm = resample(np.concatenate(list(piper.synthesize(text))), piper.sample_rate, RATE)
    loud = np.flatnonzero(np.abs(pcm.astype(np.int32)) > SPEECH_LEVEL)
    return Question(text, pcm, int(loud[-1]) if loud.size else len(pcm) - 1)


class Server:
    """``voxcall serve`` in a child process on a free loopback port; its log is drained by a thread."""

    def __init__(self, llm: str) -> None:
        env = {name: value for name, value in os.environ.items() if not name.startswith("VOXCALL_")}
        self.process = subprocess.Popen([sys.executable, "-m", "voxcall", "serve", "--port", "0", "--llm", llm,
                                         "--speech"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                        env=env)
        self.url = ""
        self.summary: list[str] = []
        self._log: list[str] = []
        started = threading.Event()
        threading.Thread(target=self._drain, args=(started,), daemon=True).start()
        threading.Thread(target=self._read_summary, daemon=True).start()
        if not started.wait(120) or not self.url:
            self.stop()
            raise RuntimeError("voxcall serve did not start:\n" + "".join(self._log))

    def _drain(self, started: threading.Event) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            self._log.append(line)
            if (match := _RUNNING.search(line)) is not None:
                self.url = f"ws://127.0.0.1:{match.group(1)}/v1/realtime"
                started.set()
        started.set()

    def _read_summary(self) -> None:
        assert self.process.stdout is not None
        self.summary.extend(line.rstrip() for line in self.process.stdout)

    def peak_rss_bytes(self) -> int:
        """The server's peak resident set size (``VmHWM`` of ``/proc/PID/status``)."""
        for line in Path(f"/proc/{self.process.pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
        raise RuntimeError("no VmHWM line in /proc status")

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


class Microphone:
    """Streams 20 ms chunks paced by the clock, forever: the queued question, else silence."""

    def __init__(self, transport: WebSocketTransport) -> None:
        self._transport = transport
        self._pending: deque[tuple[Question, asyncio.Future[float]]] = deque()

    def say(self, question: Question) -> asyncio.Future[float]:
        """Queue ``question``; the future gets the time its last speech sample was sent."""
        sent: asyncio.Future[float] = asyncio.get_running_loop().create_future()
        self._pending.append((question, sent))
        return sent

    async def run(self) -> None:
        loop = asyncio.get_running_loop()
        start, number, offset = loop.time(), 0, 0
        silence = np.zeros(CHUNK, np.int16)
        while True:
            await asyncio.sleep(max(0.0, start + number * CHUNK / RATE - loop.time()))
            number += 1
            if not self._pending:
                await self._send(silence)
                continue
            question, sent = self._pending[0]
            chunk = question.pcm[offset:offset + CHUNK]
            await self._send(np.pad(chunk, (0, CHUNK - len(chunk))))
            if offset <= question.speech_end < offset + CHUNK:
                sent.set_result(time.perf_counter())
            offset += CHUNK
            if offset >= len(question.pcm):
                self._pending.popleft()
                offset = 0

    async def _send(self, pcm: npt.NDArray[np.int16]) -> None:
        await self._transport.send({"type": "input_audio_buffer.append", "audio": encode_audio(pcm, PCM24K)})


class Listener:
    """Timestamps every server event; hands each finished response to whoever waits for one."""

    def __init__(self, transport: WebSocketTransport) -> None:
        self._transport = transport
        self.log: list[tuple[float, Event]] = []
        self.done: asyncio.Queue[Event] = asyncio.Queue()
        self.updated: asyncio.Queue[Event] = asyncio.Queue()

    async def run(self) -> None:
        async for ev in self._transport.events():
            self.log.append((time.perf_counter(), ev))
            if ev["type"] == "error":
                raise RuntimeError(f"server error: {ev['error'].get('message')}")
            if ev["type"] == "response.done":
                self.done.put_nowait(ev)
            elif ev["type"] in ("session.created", "session.updated"):
                self.updated.put_nowait(ev)


async def one_turn(mic: Microphone, listener: Listener, question: Question) -> Turn:
    """Say ``question`` and wait for its spoken answer; the milestones are read from the event log."""
    mark = len(listener.log)
    end = await mic.say(question)
    while True:  # a response cut short by the user (a VAD split of the question) is not the answer
        done = (await asyncio.wait_for(listener.done.get(), TURN_TIMEOUT_S))["response"]
        if done["status"] == "failed":
            raise RuntimeError(f"the response failed: {done['status_details']}")
        if done["status"] in ("completed", "incomplete"):  # incomplete: max_output_tokens reached
            break
    events = listener.log[mark:]

    def last(kind: str) -> tuple[float, Event]:
        return [(t, ev) for t, ev in events if ev["type"] == kind][-1]

    def first_after(kind: str, after: float) -> float:
        return next(t for t, ev in events if ev["type"] == kind and t >= after)

    stopped, _ = last("input_audio_buffer.speech_stopped")
    transcribed, completed = last("conversation.item.input_audio_transcription.completed")
    first_token = first_after("response.output_audio_transcript.delta", transcribed)
    first_audio = first_after("response.output_audio.delta", transcribed)
    answer = "".join(ev["delta"] for t, ev in events
                     if ev["type"] == "response.output_audio_transcript.delta" and t >= transcribed)
    await asyncio.sleep(PAUSE_S)
    return Turn(stopped - end, transcribed - end, first_token - end, first_audio - end,
                float(completed["usage"]["seconds"]), completed["transcript"], answer)


async def converse(url: str, warm_up: Question, questions: list[Question], silence_ms: int,
                   max_tokens: int) -> list[Turn]:
    """The warm-up turn, then one turn per question, on one session."""
    transport = await WebSocketTransport.connect(url)
    mic, listener = Microphone(transport), Listener(transport)
    reading = asyncio.create_task(listener.run())
    try:
        await listener.updated.get()  # session.created
        await transport.send({"type": "session.update", "session": {
            "type": "realtime", "output_modalities": ["audio"], "max_output_tokens": max_tokens,
            "audio": {"input": {"turn_detection": {"type": "server_vad", "silence_duration_ms": silence_ms}}}}})
        await listener.updated.get()
        streaming = asyncio.create_task(mic.run())
        turns = []
        for question in [warm_up, *questions]:
            turns.append(await one_turn(mic, listener, question))
            print(f"  {turns[-1].first_audio:5.2f} s  {turns[-1].transcript!r} → {turns[-1].answer[:60]!r}",
                  flush=True)
        streaming.cancel()
        return turns
    finally:
        reading.cancel()
        await transport.close()


def tts_rtf(piper: PiperTTS, texts: list[str]) -> float:
    """Piper's real-time factor on ``texts``: synthesis time / audio length, summed over them."""
    spent = spoken = 0.0
    for text in texts:
        started = time.perf_counter()
        samples = sum(len(chunk) for chunk in piper.synthesize(text))
        spent += time.perf_counter() - started
        spoken += samples / piper.sample_rate
    return spent / spoken if spoken else float("nan")


def report(args: argparse.Namespace, server: Server, cold: Turn, turns: list[Turn], tts: float, peak: int) -> None:
    def median(values: list[float]) -> float:
        return statistics.median(values)

    total = [t.first_audio for t in turns]
    stt = [t.transcribed - t.stopped for t in turns]
    print()
    for line in server.summary:
        print(f"server: {line}")
    print(f"end of speech → first audio, median of {len(turns)} turns (silence_duration_ms {args.silence_ms}):")
    print(f"  total              {median(total):6.3f} s   p90 {percentile(total, 90):.3f} s   "
          f"(cold first turn {cold.first_audio:.3f} s)   target ≤ {TARGET_TOTAL_S:.1f} s   "
          f"{verdict(median(total) <= TARGET_TOTAL_S)}")
    print(f"  VAD hangover       {median([t.stopped for t in turns]):6.3f} s")
    print(f"  STT                {median(stt):6.3f} s   real-time factor "
          f"{median([s / t.speech_s for s, t in zip(stt, turns, strict=True)]):.2f}")
    print(f"  LLM first token    {median([t.first_token - t.transcribed for t in turns]):6.3f} s")
    print(f"  TTS first chunk    {median([t.first_audio - t.first_token for t in turns]):6.3f} s   real-time factor "
          f"{tts:.3f}")
    print(f"peak server memory   {peak / 2**20:6.0f} MB   target ≤ {TARGET_PEAK_BYTES / 2**30:.0f} GB   "
          f"{verdict(peak <= TARGET_PEAK_BYTES)}")


def main() -> None:
    """Run the benchmark and print its figures."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--turns", type=int, default=10, help="timed turns (after one warm-up turn)")
    parser.add_argument("--llm", default="llamacpp", choices=["llamacpp", "scripted"], help="the server's backend")
    parser.add_argument("--silence-ms", type=int, default=500, help="server VAD silence_duration_ms")
    parser.add_argument("--max-tokens", type=int, default=48, help="max_output_tokens of each answer")
    args = parser.parse_args()
    if args.turns < 1:
        parser.error("--turns must be at least 1")
    os.environ["HF_HUB_OFFLINE"] = "1"
    piper = get_piper()
    spoken = [speak(piper, text) for text in QUESTIONS]
    questions = [spoken[1 + n % (len(spoken) - 1)] for n in range(args.turns)]
    server = Server(args.llm)
    try:
        print(f"talking to {server.url} ({args.llm}), one warm-up turn then {args.turns}:", flush=True)
        turns = asyncio.run(converse(server.url, spoken[0], questions, args.silence_ms, args.max_tokens))
        peak = server.peak_rss_bytes()
    finally:
        server.stop()
    tts = tts_rtf(piper, [turn.answer for turn in turns if turn.answer.strip()])
    report(args, server, turns[0], turns[1:], tts, peak)


if __name__ == "__main__":
    main()
