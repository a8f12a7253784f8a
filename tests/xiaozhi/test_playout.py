"""The device's paced speech: the order of what a device is sent, the lead over its speaker, ``tts``/``stop`` after
the drain, and what was heard when the speech is cleared, reckoned on the device speaker's clock."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import numpy as np

from voxcall.audio.formats import PCM24K
from voxcall.core.events import OutputAudio
from voxcall.core.playout import Cleared, Heard
from voxcall.xiaozhi import messages
from voxcall.xiaozhi.opus import packet_ms
from voxcall.xiaozhi.playout import DRAIN_MARGIN_MS, LEAD_PACKETS, DeviceSpeech

RATE = 24_000


class Device:
    """What a device is sent, each with the time (``time.perf_counter``) it was sent."""

    def __init__(self) -> None:
        self.sent: list[tuple[float, Any]] = []

    async def send(self, frame: Any) -> None:
        self.sent.append((time.perf_counter(), frame))

    @property
    def frames(self) -> list[Any]:
        return [frame for _, frame in self.sent]

    def packets(self) -> list[tuple[float, bytes]]:
        return [(at, frame) for at, frame in self.sent if isinstance(frame, bytes)]


class Listener:
    def __init__(self) -> None:
        self.moves: list[tuple[str, Any]] = []

    def playback_started(self, response_id: str) -> None:
        self.moves.append(("started", response_id))

    def playback_finished(self, response_id: str, position_ms: int, interrupted: bool) -> None:
        self.moves.append(("finished", (response_id, position_ms, interrupted)))


def chunk(ms: int, *, start_ms: int = 0, item: str = "item_1", response: str = "resp_1") -> OutputAudio:
    pcm = (np.sin(np.arange(RATE * ms // 1000) / 5) * 5000).astype(np.int16)
    return OutputAudio(response, item, 0, 0, pcm, PCM24K, start_ms, ms)


async def drained(device: Device, stops: int = 1, timeout: float = 10) -> None:
    async with asyncio.timeout(timeout):
        while device.frames.count(messages.tts("stop")) < stops:
            await asyncio.sleep(0.01)


async def test_a_response_is_framed_by_tts_start_and_stop_with_its_words_before_its_audio() -> None:
    device, listener = Device(), Listener()
    speech = DeviceSpeech(device.send, RATE)
    speech.watch(listener)
    speech.start()
    try:
        speech.begin("resp_1")
        speech.say("resp_1", messages.sentence_start("Hello there."))
        for n in range(5):
            speech.capture(chunk(100, start_ms=100 * n))
        speech.flush("resp_1")
        await drained(device)
        frames = device.frames
        assert frames[0] == messages.tts("start") and frames[1] == messages.sentence_start("Hello there.")
        assert frames[-1] == messages.tts("stop")
        packets = frames[2:-1]
        assert len(packets) == 9 and all(isinstance(p, bytes) and packet_ms(p) == 60 for p in packets)  # 500 ms
        assert listener.moves == [("started", "resp_1"), ("finished", ("resp_1", 540, False))]
    finally:
        await speech.close()


async def test_packets_leave_in_real_time_and_stop_follows_the_drain() -> None:
    """No packet leaves more than the lead ahead of the device's speaker (lower bounds only: a loaded machine may
    send later, never earlier); ``tts``/``stop`` waits until the speaker has played everything, and the margin."""
    device = Device()
    speech = DeviceSpeech(device.send, RATE)
    speech.start()
    try:
        speech.begin("resp_1")
        speech.capture(chunk(1200))
        speech.flush("resp_1")
        await drained(device)
        packets = device.packets()
        assert len(packets) == 20
        first = packets[0][0]
        for n, (at, _) in enumerate(packets):
            assert at >= first + (n - LEAD_PACKETS) * 0.060 - 0.005, f"packet {n} left early"
        stop_at = device.sent[-1][0]
        assert stop_at >= first + 20 * 0.060 + DRAIN_MARGIN_MS / 1000 - 0.005
    finally:
        await speech.close()


async def test_clearing_reports_what_the_devices_speaker_played_and_stops_at_once() -> None:
    now = [0.0]
    device, listener = Device(), Listener()
    speech = DeviceSpeech(device.send, RATE, clock=lambda: now[0])
    speech.watch(listener)
    speech.start()
    try:
        speech.begin("resp_1")
        speech.capture(chunk(600, item="item_a"))
        speech.capture(chunk(600, item="item_b"))
        await asyncio.sleep(0.1)  # the writer sends what is due at 0: the lead
        now[0] = 0.15  # the speaker played 2.5 packets of item_a
        cleared = await speech.clear()
        assert cleared == Cleared("resp_1", (Heard("item_a", "resp_1", 150), Heard("item_b", "resp_1", 0)))
        assert device.frames[-1] == messages.tts("stop")
        assert listener.moves[-1] == ("finished", ("resp_1", 150, True))
        sent = len(device.frames)
        speech.capture(chunk(300, item="item_b", start_ms=600))  # still on its way from the cleared response
        speech.flush("resp_1")
        now[0] = 10.0
        await asyncio.sleep(0.1)
        assert len(device.frames) == sent, "nothing of a cleared response is sent after its tts/stop"
        assert await speech.clear() is None, "nothing plays"
    finally:
        await speech.close()


async def test_a_response_that_begins_while_another_drains_waits_its_turn() -> None:
    device = Device()
    speech = DeviceSpeech(device.send, RATE)
    speech.start()
    try:
        speech.begin("resp_1")
        speech.capture(chunk(300, response="resp_1"))
        speech.flush("resp_1")
        speech.begin("resp_2")
        speech.say("resp_2", messages.sentence_start("Second."))
        speech.capture(chunk(300, response="resp_2", item="item_2"))
        speech.flush("resp_2")
        await drained(device, stops=2)
        kinds = ["audio" if isinstance(f, bytes) else f.get("state") for f in device.frames]
        assert kinds == ["start", *["audio"] * 5, "stop", "start", "sentence_start", *["audio"] * 5, "stop"]
    finally:
        await speech.close()


async def test_a_16_khz_device_is_sent_16_khz_packets() -> None:
    device = Device()
    speech = DeviceSpeech(device.send, 16_000)
    speech.start()
    try:
        speech.begin("resp_1")
        speech.capture(chunk(600))
        speech.flush("resp_1")
        await drained(device)
        packets = [p for _, p in device.packets()]
        assert len(packets) == 10 and {packet_ms(p) for p in packets} == {60.0}
    finally:
        await speech.close()
