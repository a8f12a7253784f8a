"""Audio sinks: real-time pacing, the sound-device sink (against a fake PortAudio) and picking the default sink."""

from __future__ import annotations

import asyncio
import sys
import time
import types
from typing import Any

import numpy as np
import pytest

from voxcall.audio.sinks import NullSink, RecordingSink, SoundDeviceSink, default_sink


async def test_null_sink_takes_audio_at_real_time_pace() -> None:
    sink = NullSink(24000)
    started = time.monotonic()
    for _ in range(4):
        await sink.write(np.zeros(480, dtype=np.int16), 1.0)  # 20 ms each
    assert 0.075 <= time.monotonic() - started < 0.3


async def test_paced_sinks_do_not_rush_after_a_pause() -> None:
    sink = RecordingSink(24000)
    await sink.write(np.zeros(240, dtype=np.int16), 1.0)
    await asyncio.sleep(0.05)
    started = time.monotonic()
    await sink.write(np.zeros(480, dtype=np.int16), 1.0)
    assert time.monotonic() - started >= 0.015


async def test_unpaced_null_sink_returns_at_once() -> None:
    sink = NullSink(realtime=False)
    started = time.monotonic()
    for _ in range(100):
        await sink.write(np.zeros(2400, dtype=np.int16), 1.0)
    assert time.monotonic() - started < 0.1


class FakeStream:
    """Stands in for a PortAudio output stream: :meth:`pull` plays ``frames`` samples through the callback."""

    def __init__(self, *, callback: Any, **settings: Any) -> None:
        self.callback = callback
        self.settings = settings
        self.active = False
        self.closed = False

    def start(self) -> None:
        self.active = True

    def close(self) -> None:
        self.active, self.closed = False, True

    def pull(self, frames: int) -> np.ndarray[Any, Any]:
        out = np.full((frames, 1), 99, dtype=np.int16)
        self.callback(out, frames, None, None)
        return out[:, 0]


def fake_sounddevice(*, devices: bool = True, rates: tuple[int, ...] = (24000, 48000)) -> types.ModuleType:
    """A ``sounddevice`` module over a fake host with (or without) an output device taking ``rates``."""
    sd = types.ModuleType("sounddevice")
    streams: list[FakeStream] = []

    def query_devices(device: Any = None, kind: str | None = None) -> dict[str, Any]:
        if not devices:
            raise ValueError("No output device matching None")
        return {"name": "fake", "default_samplerate": float(rates[-1])}

    def check_output_settings(*, samplerate: int, **_: Any) -> None:
        if samplerate not in rates:
            raise ValueError("Invalid sample rate")

    def output_stream(**kwargs: Any) -> FakeStream:
        streams.append(FakeStream(**kwargs))
        return streams[-1]

    sd.query_devices = query_devices  # type: ignore[attr-defined]
    sd.check_output_settings = check_output_settings  # type: ignore[attr-defined]
    sd.OutputStream = output_stream  # type: ignore[attr-defined]
    sd.streams = streams  # type: ignore[attr-defined]
    return sd


async def test_sound_device_sink_plays_through_the_device_callback() -> None:
    sd = fake_sounddevice()
    sink = SoundDeviceSink(sd, buffer_ms=100)
    stream: FakeStream = sd.streams[0]
    assert sink.rate == 24000 and stream.settings["samplerate"] == 24000
    await sink.write(np.full(1000, 1000, dtype=np.int16), 0.5)
    assert stream.active
    heard = stream.pull(1500)
    np.testing.assert_array_equal(heard[:1000], 500)
    np.testing.assert_array_equal(heard[1000:], 0)  # silence once the queue runs dry
    await sink.write(np.full(1000, 1000, dtype=np.int16), 1.0)
    sink.flush()
    np.testing.assert_array_equal(stream.pull(100), 0)
    sink.close()
    assert stream.closed


async def test_sound_device_sink_keeps_only_its_buffer_queued() -> None:
    sd = fake_sounddevice()
    sink = SoundDeviceSink(sd, buffer_ms=10)  # 240 samples
    started = time.monotonic()
    await sink.write(np.zeros(240 + 1200, dtype=np.int16), 1.0)  # 50 ms beyond the buffer
    assert time.monotonic() - started >= 0.045


def test_sound_device_sink_falls_back_to_the_device_rate() -> None:
    assert SoundDeviceSink(fake_sounddevice(rates=(44100,))).rate == 44100


def test_default_sink_uses_the_device_when_there_is_one(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "sounddevice", fake_sounddevice())
    assert isinstance(default_sink(), SoundDeviceSink)


def test_default_sink_is_silent_without_a_device(monkeypatch: pytest.MonkeyPatch,
                                                 caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.setitem(sys.modules, "sounddevice", fake_sounddevice(devices=False))
    assert isinstance(default_sink(), NullSink)
    assert "no audio output device" in caplog.text


def test_default_sink_is_silent_without_sounddevice(monkeypatch: pytest.MonkeyPatch,
                                                    caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.setitem(sys.modules, "sounddevice", None)  # makes the import fail
    assert isinstance(default_sink(), NullSink)
    assert "sounddevice unavailable" in caplog.text
