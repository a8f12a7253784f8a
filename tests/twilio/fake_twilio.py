"""Twilio's side of a Media Stream, for tests and the benchmark: it "calls" a voxcall server with the frames
Twilio's documentation shows (``connected``, ``start``, ``media``, ``mark``, ``dtmf``, ``stop``), signs the upgrade
as Twilio does, streams the caller's line in real time (20 ms µ-law frames: what is said, else silence) and
plays what it is sent at real speed: a ``mark`` goes back once the audio before it has been played, and a
``clear`` drops the audio not yet played and returns its marks at once.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import itertools
import json
import time
from collections import deque
from typing import Any

import numpy as np
import numpy.typing as npt
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

from voxcall.audio.codec import resample
from voxcall.audio.g711 import ulaw_decode, ulaw_encode
from voxcall.twilio.signature import signature

RATE = 8000
FRAME = RATE * 20 // 1000  # samples in one 20 ms media frame, as Twilio sends them
SILENCE = bytes([0xFF]) * FRAME  # µ-law silence, one frame


def to_ulaw(pcm: npt.NDArray[np.int16], rate: int) -> bytes:
    """PCM at ``rate`` as the µ-law bytes of a phone line (8 kHz)."""
    return ulaw_encode(resample(pcm, rate, RATE)).tobytes()


class FakeTwilio:
    """One call; every frame received is kept in :attr:`received` with its arrival time (``perf_counter``)."""

    def __init__(self, ws: ClientConnection, stream_sid: str) -> None:
        self.ws = ws
        self.stream_sid = stream_sid
        self.received: list[tuple[float, dict[str, Any]]] = []
        self.changed = asyncio.Event()
        self.closed = asyncio.Event()
        self._sequence = 0
        self._chunk = 0
        self._played_until = 0.0  # loop time at which the audio received so far will have been played
        self._marks: dict[str, asyncio.TimerHandle] = {}
        self._returning: set[asyncio.Future[None]] = set()
        self._queued: deque[tuple[bytes, asyncio.Future[float] | None]] = deque()
        self._reading = asyncio.create_task(self._read())
        self._streaming: asyncio.Task[None] | None = None

    @classmethod
    async def call(cls, url: str, *, auth_token: str | None = None, stream_sid: str = "MZ0123456789abcdef",
                   call_sid: str = "CA0123456789abcdef", encoding: str = "audio/x-mulaw") -> FakeTwilio:
        """Open the stream (signed with ``auth_token`` when given) and send ``connected`` and ``start``."""
        headers = {"X-Twilio-Signature": signature(auth_token, url)} if auth_token is not None else {}
        ws = await connect(url, additional_headers=headers)
        twilio = cls(ws, stream_sid)
        await twilio._send({"event": "connected", "protocol": "Call", "version": "1.0.0"}, numbered=False)
        await twilio._send({"event": "start", "streamSid": stream_sid, "start": {
            "accountSid": "AC0123456789abcdef", "streamSid": stream_sid, "callSid": call_sid, "tracks": ["inbound"],
            "mediaFormat": {"encoding": encoding, "sampleRate": RATE, "channels": 1}, "customParameters": {}}})
        twilio._streaming = asyncio.create_task(twilio._line())
        return twilio

    async def say(self, ulaw: bytes) -> float:
        """Say ``ulaw`` (after what is queued); returns when its last frame was sent (``perf_counter``)."""
        done: asyncio.Future[float] = asyncio.get_running_loop().create_future()
        frames = [ulaw[i:i + FRAME] for i in range(0, len(ulaw), FRAME)]
        self._queued.extend((frame, done if n == len(frames) - 1 else None) for n, frame in enumerate(frames))
        return await done

    async def silence(self, seconds: float) -> None:
        """Wait ``seconds`` while the line carries silence, as a phone line does between words."""
        await self.say(SILENCE * int(seconds * 50))

    async def _line(self) -> None:
        """Stream the queued audio, else silence, one 20 ms frame every 20 ms, as Twilio does for a call."""
        loop = asyncio.get_running_loop()
        start = loop.time()
        for n in itertools.count():
            await asyncio.sleep(max(0.0, start + n * 0.02 - loop.time()))
            frame, done = self._queued.popleft() if self._queued else (SILENCE, None)
            self._chunk += 1
            await self._send({"event": "media", "streamSid": self.stream_sid, "media": {
                "track": "inbound", "chunk": str(self._chunk), "timestamp": str(self._chunk * 20),
                "payload": base64.b64encode(frame).decode()}})
            if done is not None:
                done.set_result(time.perf_counter())

    async def press(self, digit: str) -> None:
        """The caller presses a key."""
        await self._send({"event": "dtmf", "streamSid": self.stream_sid,
                          "dtmf": {"track": "inbound_track", "digit": digit}})

    async def hang_up(self) -> None:
        """The caller hangs up: ``stop``; then wait for the server to close the stream."""
        if self._streaming is not None:
            self._streaming.cancel()
        await self._send({"event": "stop", "streamSid": self.stream_sid,
                          "stop": {"accountSid": "AC0123456789abcdef", "callSid": "CA0123456789abcdef"}})
        await asyncio.wait_for(self.closed.wait(), 10)

    async def close(self) -> None:
        """Drop the connection (whatever state it is in)."""
        for task in (self._reading, self._streaming):
            if task is not None:
                task.cancel()
        await self.ws.close()

    def of(self, event: str, after: float = 0.0) -> list[dict[str, Any]]:
        """The frames of kind ``event`` received at or after ``after``."""
        return [frame for t, frame in self.received if frame.get("event") == event and t >= after]

    def heard(self, after: float = 0.0) -> npt.NDArray[np.int16]:
        """The agent's audio received at or after ``after``, as 8 kHz PCM."""
        chunks = [np.frombuffer(base64.b64decode(f["media"]["payload"]), np.uint8) for f in self.of("media", after)]
        return ulaw_decode(np.concatenate(chunks)) if chunks else np.zeros(0, np.int16)

    async def wait_for(self, event: str, after: float = 0.0, timeout: float = 60.0) -> float:
        """Wait for a frame of kind ``event`` received at or after ``after``; its arrival time."""
        async with asyncio.timeout(timeout):
            while True:
                hit = next((t for t, f in self.received if f.get("event") == event and t >= after), None)
                if hit is not None:
                    return hit
                self.changed.clear()
                await self.changed.wait()

    async def wait_played(self, seconds: float = 0.5, timeout: float = 60.0) -> None:
        """Wait until the agent's audio has all been played and no more came for ``seconds``."""
        loop = asyncio.get_running_loop()
        async with asyncio.timeout(timeout):
            while True:
                last = max((t for t, f in self.received if f.get("event") == "media"), default=0.0)
                if last and not self._marks and loop.time() >= self._played_until + seconds:
                    return
                await asyncio.sleep(0.05)

    async def _send(self, frame: dict[str, Any], numbered: bool = True) -> None:
        if numbered:
            self._sequence += 1
            frame = {"sequenceNumber": str(self._sequence), **frame}
        await self.ws.send(json.dumps(frame))

    async def _read(self) -> None:
        loop = asyncio.get_running_loop()
        try:
            async for text in self.ws:
                frame = json.loads(text)
                self.received.append((time.perf_counter(), frame))
                self.changed.set()
                if frame["event"] == "media":
                    samples = len(base64.b64decode(frame["media"]["payload"]))
                    self._played_until = max(self._played_until, loop.time()) + samples / RATE
                elif frame["event"] == "mark":
                    name = frame["mark"]["name"]
                    self._marks[name] = loop.call_at(self._played_until, self._return_mark, name)
                elif frame["event"] == "clear":
                    self._played_until = loop.time()
                    for name, handle in list(self._marks.items()):
                        handle.cancel()
                        self._return_mark(name)
        finally:
            self.closed.set()
            self.changed.set()

    def _return_mark(self, name: str) -> None:
        self._marks.pop(name, None)
        frame = {"event": "mark", "streamSid": self.stream_sid, "mark": {"name": name}}
        self._returning.add(task := asyncio.ensure_future(self._send_quietly(frame)))
        task.add_done_callback(self._returning.discard)

    async def _send_quietly(self, frame: dict[str, Any]) -> None:
        with contextlib.suppress(ConnectionClosed):
            await self._send(frame)
