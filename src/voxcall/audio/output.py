"""The host's audio output, shared by music and the assistant's speech through one arbiter.

:class:`AudioOutput` plays music files to a sink in real time and arbitrates with speech: while the assistant speaks
the music is paused (or ducked) and afterwards it comes back, unless something else happened meanwhile. Whether
music sounds is computed from three independent facts rather than kept as a state that events flip:

- a track is loaded (``play`` loads one; ``stop`` and the end of the track unload it);
- the user paused it (``pause``; cleared by ``resume``, ``play`` and ``stop``);
- the assistant is speaking (``speech_started`` / ``speech_finished``).

So speech ending never undoes a user's pause, and never restarts music that was stopped while it spoke: those are
the races users of voice assistants hit ("music resumes after an interrupt").

Sinks are where the samples go: :class:`SoundDeviceSink` (a real output device), :class:`NullSink` (nowhere) and
:class:`RecordingSink` (a list, for tests). :func:`default_sink` picks the device when there is one.
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
import time
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any, Literal, Protocol

import numpy as np
import numpy.typing as npt

from voxcall.audio.codec import apply_gain
from voxcall.audio.decode import AudioFileError, AudioFileReader

__all__ = [
    "AudioOutput",
    "AudioSink",
    "NullSink",
    "PlaybackState",
    "PlayedChunk",
    "RecordingSink",
    "SoundDeviceSink",
    "SpeechPolicy",
    "default_sink",
]

log = logging.getLogger(__name__)

PCM = npt.NDArray[np.int16]
SpeechPolicy = Literal["pause", "duck"]
"""What assistant speech does to music: ``pause`` it, or ``duck`` it (play it on, quieter)."""
PlaybackState = Literal["stopped", "playing", "paused"]


# -- sinks ---------------------------------------------------------------------------------------------------


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


# -- the arbiter ---------------------------------------------------------------------------------------------


class AudioOutput:
    """Music playback on one sink, arbitrated with the assistant's speech (see the module docstring).

    ``speech_policy`` says what speech does to music: ``"pause"`` it or ``"duck"`` it to ``duck_gain`` times its
    volume. Use it from one event loop; a background task streams the track to the sink in ``chunk_ms`` chunks
    decoded in a worker thread, so pausing, ducking and volume changes are heard within a chunk.
    """

    def __init__(self, sink: AudioSink, *, speech_policy: SpeechPolicy = "pause", duck_gain: float = 0.2,
                 chunk_ms: int = 50) -> None:
        if speech_policy not in ("pause", "duck"):
            raise ValueError(f"speech_policy must be 'pause' or 'duck', got {speech_policy!r}")
        if not 0.0 <= duck_gain <= 1.0:
            raise ValueError(f"duck_gain must be within 0..1, got {duck_gain}")
        self.sink = sink
        self.speech_policy: SpeechPolicy = speech_policy
        self.duck_gain = duck_gain
        self.chunk_ms = chunk_ms
        self._volume = 1.0
        self._track: Path | None = None
        self._user_paused = False
        self._speaking = False
        self._audible = asyncio.Event()  # set while the loaded track may be heard
        self._task: asyncio.Task[None] | None = None
        self._switching = asyncio.Lock()  # play and stop replace the task one at a time

    # -- what is going on ------------------------------------------------------------------------------------

    @property
    def now_playing(self) -> Path | None:
        """The loaded track (playing or paused), or ``None``."""
        return self._track

    @property
    def state(self) -> PlaybackState:
        """``stopped`` (no track), ``paused`` (by the user or by speech) or ``playing`` (ducked or not)."""
        if self._track is None:
            return "stopped"
        return "playing" if self._audible.is_set() else "paused"

    @property
    def music_volume(self) -> float:
        """The music's volume, 0.0 (silent) to 1.0 (as recorded); ducking scales it further while speech plays."""
        return self._volume

    @music_volume.setter
    def music_volume(self, level: float) -> None:
        if not 0.0 <= level <= 1.0:
            raise ValueError(f"music volume must be within 0..1, got {level}")
        self._volume = level

    # -- music -----------------------------------------------------------------------------------------------

    async def play(self, track: str | os.PathLike[str]) -> None:
        """Play ``track`` from its start, replacing what was playing and clearing a user pause.

        Raises :class:`~voxcall.audio.decode.AudioFileError` (and leaves the current track playing) when the file
        cannot be played. While the assistant speaks under the ``pause`` policy the track starts when it stops.
        """
        async with self._switching:
            reader = await asyncio.to_thread(AudioFileReader, track, self.sink.rate, self.chunk_ms)
            try:
                await self._unload()
            except BaseException:  # cancelled while the old track stopped: the new one never starts
                reader.close()
                raise
            self._track = Path(track)
            self._user_paused = False
            self._update()
            self._task = asyncio.create_task(self._stream(reader), name=f"music: {self._track.name}")

    async def stop(self) -> None:
        """Stop the music and silence what the sink still holds. Idempotent; returns once the player task ended."""
        async with self._switching:
            await self._unload()

    def pause(self) -> None:
        """The user pauses the music; only :meth:`resume`, :meth:`play` or :meth:`stop` undo it (speech does not)."""
        if self._track is not None:
            self._user_paused = True
            self._update()

    def resume(self) -> None:
        """Undo the user's pause (the music stays paused while speech pauses it)."""
        self._user_paused = False
        self._update()

    async def wait(self) -> None:
        """Return when the current track has ended or been stopped (at once when nothing is loaded)."""
        if self._task is not None:
            await asyncio.wait({self._task})

    async def close(self) -> None:
        """Stop the music and close the sink."""
        await self.stop()
        self.sink.close()

    # -- speech ----------------------------------------------------------------------------------------------

    def speech_started(self) -> None:
        """The assistant started speaking: pause or duck the music. Calls are not counted (one voice speaks)."""
        self._speaking = True
        self._update()

    def speech_finished(self) -> None:
        """The assistant stopped speaking (or was interrupted): music that was paused or ducked for it comes back."""
        self._speaking = False
        self._update()

    # -- inside ----------------------------------------------------------------------------------------------

    def _gain(self) -> float:
        ducked = self._speaking and self.speech_policy == "duck"
        return self._volume * (self.duck_gain if ducked else 1.0)

    def _update(self) -> None:
        """Recompute whether music may be heard; when it just fell silent, drop what the sink still holds."""
        audible = (self._track is not None and not self._user_paused
                   and not (self._speaking and self.speech_policy == "pause"))
        if audible:
            self._audible.set()
        elif self._audible.is_set():
            self._audible.clear()
            self.sink.flush()

    async def _unload(self) -> None:
        """Cancel the player task, wait for it to end and silence the sink."""
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            await asyncio.wait({task})  # unlike awaiting the task, a cancellation of our own still propagates
        self._track = None
        self._user_paused = False
        self._audible.clear()
        self.sink.flush()

    async def _stream(self, reader: AudioFileReader) -> None:
        """The player task: decode chunk by chunk in a worker thread and write each to the sink when audible."""
        try:
            while (chunk := await asyncio.to_thread(reader.read)) is not None:
                await self._audible.wait()
                await self.sink.write(chunk, self._gain())
        except AudioFileError as exc:
            log.warning("music stopped: %s", exc)
        except Exception:  # the top of a background task: log what went wrong rather than lose it
            log.exception("music playback of %s failed", reader.path.name)
        finally:
            reader.close()
            if self._task is asyncio.current_task():  # ended by itself, not by play or stop
                self._task = None
                self._track = None
                self._user_paused = False
                self._audible.clear()  # the sink keeps the track's last chunks: let them play out
