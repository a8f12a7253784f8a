"""The microphone and speaker of ``voxcall talk``, through ``sounddevice`` (PortAudio), imported only when used.

Both run at the wire's 24 kHz when the device takes it, else at the device's own rate with resampling. The speaker
plays from a queue that :class:`Player` fills and empties at once on barge-in, remembering how much of the
assistant's message was actually heard, so the client can truncate the conversation to it.
"""

from __future__ import annotations

import asyncio
import threading
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from types import ModuleType
from typing import Any

import numpy as np
import numpy.typing as npt

from voxcall.audio.codec import StreamResampler, resample
from voxcall.client.transport import ClientError

PCM = npt.NDArray[np.int16]


def import_sounddevice() -> ModuleType:
    """The ``sounddevice`` module, or a :class:`ClientError` saying how to get it (or to do without)."""
    try:
        import sounddevice  # type: ignore[import-not-found, import-untyped, unused-ignore]  # optional
    except ImportError:
        raise ClientError("the microphone and speaker need the sounddevice package (pip install sounddevice); "
                          "without them, use --wav IN.wav --out OUT.wav or --text") from None
    except OSError as exc:  # sounddevice is there, the PortAudio library is not
        raise ClientError(f"sounddevice cannot load PortAudio ({exc}); install it (libportaudio2 on "
                          "Debian/Ubuntu) or use --wav / --text") from None
    module: ModuleType = sounddevice
    return module


class Player:
    """Output audio waiting for the speaker, at the device's rate; thread-safe (the speaker pulls from its own
    thread)."""

    def __init__(self, rate: int, wire_rate: int) -> None:
        self.rate = rate
        self._wire_rate = wire_rate
        self._queue: deque[tuple[str, PCM]] = deque()
        self._lock = threading.Lock()
        self._playing: str | None = None
        self._heard: dict[str, int] = {}  # samples played per item

    def feed(self, item_id: str, pcm: PCM) -> None:
        """Queue ``pcm`` (at the wire rate) of the assistant item ``item_id``.

        Each chunk is resampled on its own: a streaming resampler would hold the end of every message back until
        the next one arrives.
        """
        audio = resample(pcm, self._wire_rate, self.rate)
        with self._lock:
            self._queue.append((item_id, audio))

    def fill(self, out: PCM) -> None:
        """Fill the speaker's buffer ``out`` from the queue, with silence where it runs dry."""
        filled = 0
        with self._lock:
            while filled < len(out) and self._queue:
                item_id, audio = self._queue[0]
                take = min(len(audio), len(out) - filled)
                out[filled:filled + take] = audio[:take]
                filled += take
                self._playing = item_id
                self._heard[item_id] = self._heard.get(item_id, 0) + take
                if take == len(audio):
                    self._queue.popleft()
                else:
                    self._queue[0] = (item_id, audio[take:])
        out[filled:] = 0

    def interrupt(self) -> tuple[str, int] | None:
        """Stop at once. Returns the item that was cut short and the milliseconds of it that were heard."""
        with self._lock:
            cut_short = self._playing is not None and any(item == self._playing for item, _ in self._queue)
            self._queue.clear()
            if not cut_short or self._playing is None:
                return None
            return self._playing, self._heard.get(self._playing, 0) * 1000 // self.rate


def _device_rate(sd: ModuleType, kind: str, wanted: int) -> int:
    """``wanted`` when the default ``kind`` device takes it, else the device's default rate."""
    check = sd.check_input_settings if kind == "input" else sd.check_output_settings
    try:
        check(samplerate=wanted, channels=1, dtype="int16")
    except Exception:  # PortAudioError or ValueError: the device does not take that rate
        return int(sd.query_devices(kind=kind)["default_samplerate"])
    return wanted


@contextmanager
def open_devices(sd: ModuleType, loop: asyncio.AbstractEventLoop, chunk_ms: int, wire_rate: int
                 ) -> Iterator[tuple[asyncio.Queue[PCM], Player]]:
    """Open the default microphone and speaker: microphone chunks of ``chunk_ms`` arrive on the queue (resampled to
    ``wire_rate``), and the speaker plays what the :class:`Player` is fed."""
    mic_rate = _device_rate(sd, "input", wire_rate)
    speaker_rate = _device_rate(sd, "output", wire_rate)
    heard: asyncio.Queue[PCM] = asyncio.Queue()
    to_wire = StreamResampler(mic_rate, wire_rate)
    player = Player(speaker_rate, wire_rate)

    def on_mic(indata: Any, frames: int, time: Any, status: Any) -> None:
        loop.call_soon_threadsafe(heard.put_nowait, to_wire.process(indata[:, 0].copy()))

    def on_speaker(outdata: Any, frames: int, time: Any, status: Any) -> None:
        player.fill(outdata[:, 0])

    mic = sd.InputStream(samplerate=mic_rate, channels=1, dtype="int16", blocksize=mic_rate * chunk_ms // 1000,
                         callback=on_mic)
    speaker = sd.OutputStream(samplerate=speaker_rate, channels=1, dtype="int16", callback=on_speaker)
    with mic, speaker:
        yield heard, player
