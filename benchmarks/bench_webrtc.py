"""Browser-call latency beside the WebSocket path: end of the user's speech → first answer audio heard.

One ``voxcall serve --speech`` (Silero VAD → Whisper tiny.en → ``--llm`` → Piper) serves both paths in the same run;
each request is said once over each, the two paths taking turns, each in a fresh session:

- **websocket**: ``/v1/realtime``, 24 kHz PCM16 in 20 ms ``input_audio_buffer.append`` chunks (``bench_voice``'s
  client), first audio = the first ``response.output_audio.delta``;
- **webrtc**: ``POST /v1/realtime/calls`` with an aiortc peer (``tests/webrtc/peer.py``): the speech as a
  microphone track (Opus, 20 ms frames in real time). Two figures: **sent**, when ``output_audio_buffer.started``
  arrives (the server puts the answer's first frame on the track: the same point as the WebSocket's first delta),
  and **audible**, the first frame decoded from the call's track that is louder than silence (later by the
  answer's leading silence, Opus both ways and the jitter buffers).

**End of speech** is when the frame holding the last speech sample is sent, on this process's clock. The load
average is printed before and after.

    python benchmarks/bench_webrtc.py [--requests 8] [--llm scripted|default]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the WebRTC peer lives with the tests

from tests.webrtc.peer import Peer  # noqa: E402

from _server import VoxcallServe, transport_args  # noqa: E402
from bench_twilio import summary, websocket_turn  # noqa: E402
from voice_set import RATE, REQUESTS, Clip, spread, voices  # noqa: E402

ANSWER_TIMEOUT_S = 60.0


async def webrtc_turn(url: str, clip: Clip) -> tuple[float | None, float | None]:
    """One fresh call: seconds from end of speech to the answer's first frame sent, and to the first audible
    frame heard (None: none came)."""
    peer = Peer()
    try:
        reply = await peer.call(url)
        if reply.status_code != 201:
            print(f"  webrtc refused: {reply.status_code} {reply.text}")
            return None, None
        await peer.wait_for("session.created")
        peer.microphone.say(np.zeros(RATE, np.int16))
        cut = clip.speech_end + 1
        ended = peer.microphone.say(clip.pcm[:cut])
        peer.microphone.say(clip.pcm[cut:])
        peer.microphone.say(np.zeros(RATE * 2, np.int16))
        sent = audible = None
        deadline = time.perf_counter() + ANSWER_TIMEOUT_S
        while time.perf_counter() < deadline and audible is None:
            started = [at for at, ev in peer.events if ev["type"] == "output_audio_buffer.started" and at > ended]
            heard = [at for at, _ in peer.heard if at > ended]
            sent = started[0] - ended if started else sent
            audible = heard[0] - ended if heard else None
            await asyncio.sleep(0.01)
        return sent, audible
    finally:
        await peer.close()


async def run(args: argparse.Namespace) -> None:
    clips = spread(REQUESTS, args.requests, voices(espeak=False))
    server = VoxcallServe("--speech", *([] if args.llm == "default" else ["--llm", args.llm]))
    try:
        ws_url = server.url
        calls_url = ws_url.replace("ws://", "http://").replace("/v1/realtime", "/v1/realtime/calls")
        print(f"server {ws_url}, llm {args.llm}, {len(clips)} requests per path, the server's turn detection; "
              f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}")
        results: dict[str, list[float | None]] = {"websocket": [], "webrtc sent": [], "webrtc audible": []}
        for n, clip in enumerate(clips):
            for path in (["websocket", "webrtc"] if n % 2 == 0 else ["webrtc", "websocket"]):
                if path == "websocket":
                    results["websocket"].append(figure := await websocket_turn(ws_url, clip))
                    shown = f"{figure:.3f} s" if figure is not None else "none"
                else:
                    sent, audible = await webrtc_turn(calls_url, clip)
                    results["webrtc sent"].append(sent)
                    results["webrtc audible"].append(audible)
                    shown = " / ".join(f"{f:.3f} s" if f is not None else "none" for f in (sent, audible))
                print(f"  {path:9s} {clip.text[:40]:40s} first audio {shown}")
        print(f"end of speech → first answer audio (load average now {os.getloadavg()[0]:.2f}):")
        for path, figures in results.items():
            summary(path, figures)
    finally:
        server.stop()


def main() -> None:
    asyncio.run(run(transport_args(__doc__ or "")))


if __name__ == "__main__":
    main()
