"""A WebRTC client for the tests, built on aiortc as a browser would behave: it posts its SDP offer to
``/v1/realtime/calls``, speaks from a queue of PCM (24 kHz, paced in real time as a microphone is), records
what it hears, and reads and writes the Realtime events on the ``oai-events`` data channel."""

from __future__ import annotations

import asyncio
import fractions
import json
import time
from collections import deque
from typing import Any

import httpx2 as httpx
import numpy as np
import numpy.typing as npt
from aiortc import MediaStreamTrack, RTCConfiguration, RTCPeerConnection, RTCSessionDescription
from aiortc.mediastreams import MediaStreamError
from av import AudioFrame

from voxcall.webrtc.media import Microphone as Ear

RATE = 24_000
FRAME = RATE // 50
PCM = npt.NDArray[np.int16]


class Microphone(MediaStreamTrack):
    """Says what :meth:`say` is given, 20 ms at a time in real time; silence otherwise."""

    kind = "audio"

    def __init__(self) -> None:
        super().__init__()
        self._pending: deque[PCM] = deque()
        self._start: float | None = None
        self._pts = 0
        self.said_until = 0.0  # perf_counter when the last samples queued have been sent

    def say(self, pcm: PCM) -> float:
        """Queue ``pcm``; returns the perf_counter time its last sample will have been sent."""
        queued = sum(p.size for p in self._pending)
        self._pending.append(pcm)
        self.said_until = time.perf_counter() + (queued + pcm.size) / RATE
        return self.said_until

    async def recv(self) -> AudioFrame:
        if self.readyState != "live":
            raise MediaStreamError
        now = time.monotonic()
        if self._start is None:
            self._start = now
        due = self._start + self._pts / RATE
        if due > now:
            await asyncio.sleep(due - now)
        out = np.zeros(FRAME, np.int16)
        filled = 0
        while filled < FRAME and self._pending:
            head = self._pending[0]
            take = min(FRAME - filled, head.size)
            out[filled:filled + take] = head[:take]
            filled += take
            if take == head.size:
                self._pending.popleft()
            else:
                self._pending[0] = head[take:]
        frame = AudioFrame.from_ndarray(out.reshape(1, -1), format="s16", layout="mono")
        frame.sample_rate, frame.pts, frame.time_base = RATE, self._pts, fractions.Fraction(1, RATE)
        self._pts += FRAME
        return frame


class Peer:
    """One call to a voxcall server, from the client's side."""

    def __init__(self) -> None:
        self.pc = RTCPeerConnection(RTCConfiguration(iceServers=[]))
        self.microphone = Microphone()
        self.pc.addTrack(self.microphone)
        self.channel = self.pc.createDataChannel("oai-events")
        self.events: list[tuple[float, dict[str, Any]]] = []
        self.heard: list[tuple[float, PCM]] = []  # (perf_counter, 24 kHz mono) per non-silent frame
        self.location: str | None = None
        self._opened = asyncio.Event()
        self._arrived = asyncio.Event()
        self._tasks: list[asyncio.Task[None]] = []
        self.channel.on("open", self._opened.set)
        self.channel.on("message", self._message)
        self.pc.on("track", lambda track: self._tasks.append(asyncio.create_task(self._listen(track))))

    async def call(self, url: str, key: str | None = None, **extra: Any) -> httpx.Response:
        """Post the offer to ``url`` (``…/v1/realtime/calls``) with ``key``; set the answer when it is one."""
        await self.pc.setLocalDescription(await self.pc.createOffer())
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        async with httpx.AsyncClient() as client:
            if extra:
                reply = await client.post(url, headers=headers, files={
                    "sdp": (None, self.pc.localDescription.sdp),
                    **{name: (None, json.dumps(value)) for name, value in extra.items()}})
            else:
                reply = await client.post(url, content=self.pc.localDescription.sdp,
                                          headers={**headers, "Content-Type": "application/sdp"})
        if reply.status_code == 201:
            self.location = reply.headers["location"]
            await self.pc.setRemoteDescription(RTCSessionDescription(reply.text, "answer"))
            await asyncio.wait_for(self._opened.wait(), 20)
        return reply

    def send(self, ev: dict[str, Any]) -> None:
        self.channel.send(json.dumps(ev))

    async def wait_for(self, kind: str, *, after: float = 0.0, timeout: float = 60.0) -> dict[str, Any]:
        """The first event of type ``kind`` received after ``after`` (perf_counter)."""
        async with asyncio.timeout(timeout):
            while True:
                for at, ev in self.events:
                    if ev["type"] == kind and at >= after:
                        return ev
                self._arrived.clear()
                await self._arrived.wait()

    def of(self, kind: str) -> list[dict[str, Any]]:
        return [ev for _, ev in self.events if ev["type"] == kind]

    def heard_after(self, after: float) -> PCM:
        parts = [pcm for at, pcm in self.heard if at >= after]
        return np.concatenate(parts) if parts else np.zeros(0, np.int16)

    async def close(self) -> None:
        for task in self._tasks:
            task.cancel()
        await self.pc.close()

    def _message(self, data: str | bytes) -> None:
        self.events.append((time.perf_counter(), json.loads(data)))
        self._arrived.set()

    async def _listen(self, track: MediaStreamTrack) -> None:
        ear = Ear()  # the server's own reader of received frames, here on the caller's side
        while True:
            try:
                frame = await track.recv()
            except MediaStreamError:
                return
            pcm = ear.pcm(frame)
            if np.abs(pcm.astype(np.int32)).max(initial=0) > 300:
                self.heard.append((time.perf_counter(), pcm))
