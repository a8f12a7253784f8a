"""A xiaozhi device for the tests: the unmodified ``xiaozhi-sdk`` client (PyPI), whose messages and audio are recorded.

:class:`SdkDevice` connects an ``XiaoZhiWebsocket`` to a server, serves the MCP tools it is given (the SDK answers
``initialize``, ``tools/list`` and ``tools/call`` itself), and keeps every JSON message it receives with the number of
audio samples it had received by then, so a test can tell which audio came with which reply.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from tests.requirements import require_module

require_module("xiaozhi_sdk")
from xiaozhi_sdk import XiaoZhiWebsocket  # noqa: E402  (after the check: it patches libopus's loader on import)

RATE = 16_000
"""The rate the SDK speaks and hears at in these tests."""

MAC = "02:00:00:00:00:01"


@dataclass
class Received:
    """A JSON message the device received, when, and how many audio samples it had received before it."""

    message: dict[str, Any]
    at: float
    samples: int


@dataclass
class SdkDevice:
    """A connected xiaozhi-sdk client and what it received."""

    client: XiaoZhiWebsocket
    received: list[Received] = field(default_factory=list)
    changed: asyncio.Event = field(default_factory=asyncio.Event)
    replied: int = 0
    """The index of the message after the ``tts``/``stop`` of the last reply :meth:`reply` returned."""

    @classmethod
    async def connect(cls, url: str | None = None, *, mode: str = "auto", tools: list[dict[str, Any]] | None = None,
                      frame_ms: int = 60, mac: str = MAC, ota_url: str | None = None) -> SdkDevice:
        """Connect (``hello``, then ``listen``/``start`` in ``mode``) with ``tools`` served; ``ota_url``: find the
        server through its OTA endpoint instead of ``url``."""
        device = cls(XiaoZhiWebsocket(None, url=url, ota_url=ota_url, audio_sample_rate=RATE,
                                      audio_frame_duration=frame_ms))
        device.client.message_handler_callback = device._on_message
        device.client.mode = mode
        await device.client.set_mcp_tool(tools or [])
        assert await device.client.init_connection(mac), "the SDK could not connect"
        return device

    async def _on_message(self, message: dict[str, Any]) -> None:
        self.received.append(Received(message, time.perf_counter(), self.samples))
        self.changed.set()

    @property
    def samples(self) -> int:
        """Audio samples received so far (at :data:`RATE`)."""
        return sum(len(frame) for frame in self.client.output_audio_queue)

    def audio(self, start: int = 0, end: int | None = None) -> npt.NDArray[np.int16]:
        """The audio received between two sample counts."""
        frames = list(self.client.output_audio_queue)
        pcm = np.concatenate([np.asarray(frame, np.int16).reshape(-1) for frame in frames]) if frames else \
            np.zeros(0, np.int16)
        return pcm[start:end]

    def of(self, kind: str, state: str | None = None, *, after: int = 0) -> list[Received]:
        """The messages of ``type`` ``kind`` (and ``state``) received, from the ``after``-th on."""
        return [r for r in self.received[after:] if r.message.get("type") == kind
                and (state is None or r.message.get("state") == state)]

    async def wait_for(self, kind: str, state: str | None = None, *, after: int = 0, timeout: float = 30,
                       where: Callable[[dict[str, Any]], bool] = lambda message: True) -> Received:
        """The first such message from the ``after``-th on, waiting for it."""
        async with asyncio.timeout(timeout):
            while True:
                found = [r for r in self.of(kind, state, after=after) if where(r.message)]
                if found:
                    return found[0]
                self.changed.clear()
                await self.changed.wait()

    async def reply(self, after: int, timeout: float = 60) -> tuple[list[str], npt.NDArray[np.int16]]:
        """The next reply from the ``after``-th message on: its sentences and its audio, once ``tts``/``stop``."""
        start = await self.wait_for("tts", "start", after=after, timeout=timeout)
        stop = await self.wait_for("tts", "stop", after=self.received.index(start), timeout=timeout)
        first, last = self.received.index(start), self.received.index(stop)
        self.replied = last + 1
        sentences = [r.message["text"] for r in self.received[first:last]
                     if r.message.get("type") == "tts" and r.message.get("state") == "sentence_start"]
        return sentences, self.audio(start.samples, stop.samples)

    async def say(self, pcm: npt.NDArray[np.int16], *, frame_ms: int = 60, silence_s: float = 1.2) -> None:
        """Send ``pcm`` (16 kHz) as the microphone would, one packet per call, then ``silence_s`` of silence."""
        step = RATE * frame_ms // 1000
        padded = np.concatenate([pcm, np.zeros(-len(pcm) % step + round(silence_s * RATE), np.int16)])
        for start in range(0, len(padded), step):
            await self.client.send_audio(padded[start:start + step].astype(np.int16).tobytes())
            await asyncio.sleep(0.005)

    async def close(self) -> None:
        await self.client.close()
