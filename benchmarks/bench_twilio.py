"""Phone latency beside the WebSocket path: end of the caller's speech → first answer audio sent back.

One ``voxcall serve --speech`` (its embedded models: Silero VAD → Whisper tiny.en → ``--llm`` → Piper) serves both
paths in the same run; each request is said once over each, the two paths taking turns, each in a fresh session:

- **websocket**: ``/v1/realtime``, 24 kHz PCM16 in 20 ms ``input_audio_buffer.append`` chunks (``bench_voice``'s
  client), first audio = the first ``response.output_audio.delta``;
- **twilio**: ``/v1/twilio/bench``, a signed fake Twilio (``tests/twilio/fake_twilio.py``: the documented frames,
  8 kHz µ-law in 20 ms ``media`` frames, the line's silence streamed between words), first audio = the first
  ``media`` frame sent back.

Both paths find the end of a turn alike (the server's own turn detection). **End of speech** is the send time of
the chunk holding the last speech sample, on this process's clock. The machine's load average is printed before
and after, since the figures depend on what else runs.

    python benchmarks/bench_twilio.py [--requests 8] [--llm scripted|default]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the fake Twilio client lives with the tests

from tests.twilio.fake_twilio import FakeTwilio, to_ulaw  # noqa: E402

from _server import VoxcallServe, percentile, transport_args  # noqa: E402
from bench_voice import measure, run_session  # noqa: E402
from voice_set import RATE, REQUESTS, Clip, spread, voices  # noqa: E402

TOKEN = "bench-twilio-token"
ANSWER_TIMEOUT_S = 60.0


def config(folder: Path) -> Path:
    """A ``voxcall.yaml`` with the ``bench`` agent profile (the server's own settings) and Twilio signatures
    checked."""
    path = folder / "voxcall.yaml"
    path.write_text(f"profiles:\n  bench: {{}}\ntwilio:\n  auth_token: {TOKEN}\n")
    return path


async def websocket_turn(url: str, clip: Clip) -> float | None:
    """One fresh ``/v1/realtime`` session: seconds from end of speech to first audio (None: no audio)."""
    outcome = await run_session(url, clip, "websocket", [], 20, 60, None)
    if outcome.error:
        print(f"  websocket error: {outcome.error}")
    return measure(outcome).first_audio


async def twilio_turn(url: str, clip: Clip) -> float | None:
    """One fresh call: seconds from end of speech to the first ``media`` frame back (None: none came)."""
    twilio = await FakeTwilio.call(url, auth_token=TOKEN)
    try:
        await twilio.silence(1.0)
        cut = clip.speech_end + 1
        ended = await twilio.say(to_ulaw(clip.pcm[:cut], RATE))
        tail = asyncio.ensure_future(twilio.say(to_ulaw(clip.pcm[cut:], RATE)))
        try:
            first = await twilio.wait_for("media", after=ended, timeout=ANSWER_TIMEOUT_S)
        except TimeoutError:
            return None
        finally:
            tail.cancel()
        await twilio.wait_played(0.3)
        return first - ended
    finally:
        await twilio.close()


def summary(name: str, figures: list[float | None]) -> None:
    got = [f for f in figures if f is not None]
    if not got:
        print(f"{name:10s} no answers")
        return
    print(f"{name:10s} n={len(got):2d}/{len(figures)}  median {statistics.median(got):.3f} s  "
          f"p90 {percentile(got, 90):.3f} s  min {min(got):.3f} s  max {max(got):.3f} s")


async def run(args: argparse.Namespace) -> None:
    clips = spread(REQUESTS, args.requests, voices(espeak=False))
    with tempfile.TemporaryDirectory() as folder:
        flags = ["--speech", "--config", str(config(Path(folder)))]
        server = VoxcallServe(*flags, *([] if args.llm == "default" else ["--llm", args.llm]))
        try:
            ws_url = server.url
            phone_url = ws_url.replace("/v1/realtime", "/v1/twilio/bench")
            print(f"server {ws_url}, llm {args.llm}, {len(clips)} requests per path, the server's turn detection; "
                  f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}")
            results: dict[str, list[float | None]] = {"websocket": [], "twilio": []}
            for n, clip in enumerate(clips):
                order = ["websocket", "twilio"] if n % 2 == 0 else ["twilio", "websocket"]
                for path in order:
                    start = time.perf_counter()
                    figure = await (websocket_turn(ws_url, clip) if path == "websocket"
                                    else twilio_turn(phone_url, clip))
                    results[path].append(figure)
                    shown = f"{figure:.3f} s" if figure is not None else "none"
                    print(f"  {path:9s} {clip.text[:40]:40s} first audio {shown}  "
                          f"(session {time.perf_counter() - start:.1f} s)")
            print(f"end of speech → first audio sent back (load average now {os.getloadavg()[0]:.2f}):")
            for path, figures in results.items():
                summary(path, figures)
        finally:
            server.stop()


def main() -> None:
    asyncio.run(run(transport_args(__doc__ or "")))


if __name__ == "__main__":
    main()
