"""Audio sinks: where music is played, as mono int16 samples written at the pace they are heard.

:class:`AudioSink` is the protocol the music player (:class:`~voxcall.audio.output.AudioOutput`) writes to.
:class:`SoundDeviceSink` plays on a real output device, :class:`NullSink` nowhere (at real-time pace, as a device
would take it), :class:`RecordingSink` into a list, for tests. :func:`default_sink` picks the device when there is one.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections import deque
from dataclasses import dataclass
from types import ModuleType
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from voxcall.audio.codec import apply_gain

__all__ = ["AudioSink", "NullSink", "PlayedChunk", "RecordingSink", "SoundDeviceSink", "default_sink"]

log = logging.getLogger(__name__)

PCM = npt.NDArray[np.int16]


class AudioSink(Protocol):
    """Where music is played: mono int16 at :attr:`rate`, written at the pace it is heard."""

    @property
    def rate(self) -> int:
        """The sample rate the sink plays at; music is decoded straight to it."""
        ...

    async def write(self, pcm: PCM, gain: float) -> None:
        """Play ``pcm`` scaled by ``gain``; return when the sink is ready for more (real-time pace)."""
        ...

    def flush(self) -> None:
        """Drop audio written but not heard yet, so that a pause is heard at once."""
        ...

    def close(self) -> None:
        """Release the device, if any."""
        ...


class _Pacer:
    """Real-time pacing for sinks without a device clock: each write waits until its audio would have played.

    The clock restarts after a gap (a pause), so audio written after a pause is not rushed out to catch up.
    """

    def __init__(self, rate: int) -> None:
        self._rate = rate
        self._played_until = 0.0

    async def wait(self, samples: int) -> None:
        now = time.monotonic()
        self._played_until = max(self._played_until, now) + samples / self._rate
        await asyncio.sleep(self._played_until - now)


class NullSink:
    """Discards audio, at real-time pace (as a device would take it) or, with ``realtime=False``, at once."""

    def __init__(self, rate: int = 24000, *, realtime: bool = True) -> None:
        self._rate = rate
        self._pacer = _Pacer(rate) if realtime else None

    @property
    def rate(self) -> int:
        return self._rate

    async def write(self, pcm: PCM, gain: float) -> None:
        await (self._pacer.wait(len(pcm)) if self._pacer else asyncio.sleep(0))

    def flush(self) -> None:
        return None

    def close(self) -> None:
        return None


@dataclass(frozen=True)
class PlayedChunk:
    """One write to a :class:`RecordingSink`: when (``time.monotonic()``), what (before gain) and at which gain."""

    at: float
    pcm: PCM
    gain: float


class RecordingSink:
    """Keeps every chunk written to it, for tests: what was played, when, and at which gain.

    ``fast=True`` skips real-time pacing (each write only yields to the event loop), so a test runs in
    milliseconds; :meth:`wait_for_chunks` lets it wait for playback to reach a point without polling.
    """

    def __init__(self, rate: int = 24000, *, fast: bool = False) -> None:
        self._rate = rate
        self._pacer = None if fast else _Pacer(rate)
        self.chunks: list[PlayedChunk] = []
        self.flushes = 0
        self.closed = False
        self._written = asyncio.Event()

    @property
    def rate(self) -> int:
        return self._rate

    async def write(self, pcm: PCM, gain: float) -> None:
        self.chunks.append(PlayedChunk(time.monotonic(), pcm, gain))
        self._written.set()
        await (self._pacer.wait(len(pcm)) if self._pacer else asyncio.sleep(0))

    def flush(self) -> None:
        self.flushes += 1

    def close(self) -> None:
        self.closed = True

    def audio(self) -> PCM:
        """Everything played, gain applied, as one array."""
        if not self.chunks:
            return np.zeros(0, dtype=np.int16)
        return np.concatenate([apply_gain(chunk.pcm, chunk.gain) for chunk in self.chunks])

    async def wait_for_chunks(self, count: int) -> None:
        """Return once at least ``count`` chunks have been written."""
        while len(self.chunks) < count:
            self._written.clear()
            await self._written.wait()


class SoundDeviceSink:
    """The host's output device through ``sounddevice`` (PortAudio).

    PortAudio pulls audio from a small queue on its own thread; :meth:`write` keeps about ``buffer_ms`` queued,
    sleeping for the excess, so the device's clock sets the pace and :meth:`flush` silences it within a callback.
    The device plays at 24 kHz when it takes that rate, else at its default rate (music is decoded to it).
    """

    def __init__(self, sd: ModuleType, *, device: int | str | None = None, buffer_ms: int = 150) -> None:
        sd.query_devices(device, kind="output")  # raises when there is no such (or no) output device
        self._rate = _device_rate(sd, device, 24000)
        self._buffer = self._rate * buffer_ms // 1000
        self._queue: deque[PCM] = deque()
        self._queued = 0
        self._lock = threading.Lock()
        self._stream = sd.OutputStream(samplerate=self._rate, channels=1, dtype="int16", device=device,
                                       callback=self._fill)

    @property
    def rate(self) -> int:
        return self._rate

    async def write(self, pcm: PCM, gain: float) -> None:
        if not self._stream.active:
            self._stream.start()
        with self._lock:
            self._queue.append(apply_gain(pcm, gain))
            self._queued += len(pcm)
            excess = self._queued - self._buffer
        if excess > 0:
            await asyncio.sleep(excess / self._rate)

    def flush(self) -> None:
        with self._lock:
            self._queue.clear()
            self._queued = 0

    def close(self) -> None:
        self._stream.close()
        self.flush()

    def _fill(self, outdata: Any, frames: int, time_info: Any, status: Any) -> None:
        """PortAudio's callback (its own thread): fill ``outdata`` from the queue, silence where it runs dry."""
        out = outdata[:, 0]
        filled = 0
        with self._lock:
            while filled < frames and self._queue:
                head = self._queue[0]
                take = min(len(head), frames - filled)
                out[filled:filled + take] = head[:take]
                filled += take
                if take == len(head):
                    self._queue.popleft()
                else:
                    self._queue[0] = head[take:]
            self._queued -= filled
        out[filled:] = 0


def _device_rate(sd: ModuleType, device: int | str | None, wanted: int) -> int:
    """``wanted`` when the output device takes it, else the device's default rate."""
    try:
        sd.check_output_settings(device=device, samplerate=wanted, channels=1, dtype="int16")
    except Exception:  # PortAudioError or ValueError: the device does not take that rate
        return int(sd.query_devices(device, kind="output")["default_samplerate"])
    return wanted


def default_sink() -> AudioSink:
    """A :class:`SoundDeviceSink` on the default output device when ``sounddevice`` and a device are there, else a
    real-time :class:`NullSink` (music then plays silently); the choice is logged."""
    try:
        import sounddevice  # type: ignore[import-not-found, import-untyped, unused-ignore]  # optional
    except (ImportError, OSError) as exc:  # not installed, or the PortAudio library is missing
        log.warning("no audio output (sounddevice unavailable: %s); music will play silently", exc)
        return NullSink()
    try:
        sink = SoundDeviceSink(sounddevice)
    except Exception as exc:  # PortAudioError, ValueError: no usable output device
        log.warning("no audio output device (%s); music will play silently", exc)
        return NullSink()
    log.info("music plays on the default output device at %d Hz", sink.rate)
    return sink
