"""xiaozhi device latency beside the WebSocket path: end of the user's speech → first answer audio packet.

One ``voxcall serve --speech`` (its embedded models: Silero VAD → Whisper tiny.en → ``--llm`` → Piper) serves both
paths in the same run; each request is said once over each, the two paths taking turns, each in a fresh session:

- **websocket**: ``/v1/realtime``, 24 kHz PCM16 in 20 ms ``input_audio_buffer.append`` chunks (``bench_voice``'s
  client), first audio = the first ``response.output_audio.delta``;
- **xiaozhi**: ``/xiaozhi/v1/``, a device as the firmware is one (``hello``, here without MCP tools;
  ``listen``/``start`` in auto mode; the microphone as 16 kHz Opus in 60 ms packets, one every 60 ms, silence
  streamed before and after the words), first audio = the first binary frame (a 60 ms Opus packet, after
  ``tts``/``start``); the session ends after the answer's ``tts``/``stop``.

Both paths find the end of a turn alike (the server's own turn detection). **End of speech** is the send time of
the chunk (or packet) holding the last speech sample, on this process's clock. The machine's load average is printed
before and after, since the figures depend on what else runs.

    python benchmarks/bench_xiaozhi.py [--requests 8] [--llm scripted|default]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import time
from collections.abc import Awaitable, Callable
from functools import partial
from itertools import count

import numpy as np
from websockets.asyncio.client import ClientConnection, connect

from _server import VoxcallServe, transport_args
from bench_twilio import summary, websocket_turn
from voice_set import RATE, REQUESTS, Clip, spread, voices
from voxcall.audio.codec import resample
from voxcall.xiaozhi.messages import DEVICE_RATE, PACKET_MS
from voxcall.xiaozhi.opus import Packetizer

ANSWER_TIMEOUT_S = 60.0


def is_stop(message: str | bytes) -> bool:
    """Whether ``message`` is ``tts``/``stop``: the device has been sent the whole answer."""
    return isinstance(message, str) and json.loads(message) == {"type": "tts", "state": "stop"}
LEAD_IN_S = 1.0
HELLO = {"type": "hello", "version": 1, "transport": "websocket", "features": {"mcp": False},
         "audio_params": {"format": "opus", "sample_rate": DEVICE_RATE, "channels": 1, "frame_duration": PACKET_MS}}


async def microphone(ws: ClientConnection, packets: list[bytes], silence: bytes, speech_end: int,
                     ended: asyncio.Future[float]) -> None:
    """Stream ``packets``, then silence, one packet every 60 ms until cancelled; ``ended`` is the send time of
    packet ``speech_end``, the one holding the last speech sample."""
    loop = asyncio.get_running_loop()
    start = loop.time()
    for n in count():
        await asyncio.sleep(max(0.0, start + n * PACKET_MS / 1000 - loop.time()))
        await ws.send(packets[n] if n < len(packets) else silence)
        if n == speech_end:
            ended.set_result(time.perf_counter())


async def xiaozhi_turn(url: str, clip: Clip) -> float | None:
    """One fresh device session: seconds from end of speech to the first audio packet (None: none came)."""
    pcm = resample(clip.pcm, RATE, DEVICE_RATE)
    packetizer = Packetizer(DEVICE_RATE)
    lead = np.zeros(round(LEAD_IN_S * DEVICE_RATE), np.int16)
    packets = packetizer.feed(np.concatenate([lead, pcm])) + packetizer.flush()
    silence = Packetizer(DEVICE_RATE).feed(np.zeros(DEVICE_RATE * PACKET_MS // 1000, np.int16))[0]
    last_speech = (len(lead) + clip.speech_end * DEVICE_RATE // RATE) // (DEVICE_RATE * PACKET_MS // 1000)
    headers = {"Device-Id": "02:00:00:00:be:0c", "Client-Id": "bench", "Protocol-Version": "1"}
    async with connect(url, additional_headers=headers) as ws:
        await ws.send(json.dumps(HELLO))
        while not isinstance(message := await ws.recv(), str) or json.loads(message).get("type") != "hello":
            pass
        await ws.send(json.dumps({"type": "listen", "state": "start", "mode": "auto"}))
        ended: asyncio.Future[float] = asyncio.get_running_loop().create_future()
        speaking = asyncio.create_task(microphone(ws, packets, silence, last_speech, ended))
        try:
            async with asyncio.timeout(ANSWER_TIMEOUT_S):
                while not isinstance(await ws.recv(), bytes):
                    pass
                heard = time.perf_counter()
                while not is_stop(await ws.recv()):  # the whole answer, as the WebSocket path waits for it: no
                    pass                             # work of this session is left to slow the next one down
            return heard - ended.result() if ended.done() else None
        except TimeoutError:
            return None
        finally:
            speaking.cancel()


async def run(args: argparse.Namespace) -> None:
    clips = spread(REQUESTS, args.requests, voices(espeak=False))
    server = VoxcallServe("--speech", *([] if args.llm == "default" else ["--llm", args.llm]))
    try:
        device_url = server.url.replace("/v1/realtime", "/xiaozhi/v1/")
        turns: dict[str, Callable[[Clip], Awaitable[float | None]]] = {
            "websocket": partial(websocket_turn, server.url), "xiaozhi": partial(xiaozhi_turn, device_url)}
        print(f"server {server.url}, llm {args.llm}, {len(clips)} requests per path, the server's turn detection; "
              f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}")
        figures: dict[str, list[float | None]] = {path: [] for path in turns}
        for n, clip in enumerate(clips):
            for path in sorted(turns, reverse=n % 2 == 1):  # the paths take turns at going first
                figures[path].append(seconds := await turns[path](clip))
                print(f"  {path:9s} {clip.text[:40]:40s} first audio "
                      + (f"{seconds:.3f} s" if seconds is not None else "none"))
        print(f"end of speech → first answer audio (load average now {os.getloadavg()[0]:.2f}):")
        for path in turns:
            summary(path, figures[path])
    finally:
        server.stop()


if __name__ == "__main__":
    asyncio.run(run(transport_args(__doc__ or "")))
