"""The agent's speech track: paced frames, started/stopped per response, and what was heard at a barge-in."""

from __future__ import annotations

import numpy as np

from voxcall.audio.formats import PCM24K
from voxcall.core.events import OutputAudio
from voxcall.webrtc.media import FRAME_SAMPLES, RATE, SpeechTrack


def audio(item: str, response: str, pcm: np.ndarray) -> OutputAudio:  # type: ignore[type-arg]
    return OutputAudio(response, item, 0, 0, pcm, PCM24K, 0, len(pcm) * 1000 // RATE)


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


async def frames(track: SpeechTrack, clock: Clock, count: int) -> list[np.ndarray]:
    out = []
    for _ in range(count):
        frame = await track.recv()
        assert frame.sample_rate == RATE and frame.samples == FRAME_SAMPLES
        out.append(frame.to_ndarray().reshape(-1))
        clock.now += FRAME_SAMPLES / RATE
    return out


async def test_a_response_is_heard_then_stops_and_silence_follows() -> None:
    clock, said = Clock(), []
    track = SpeechTrack(lambda r: said.append(("started", r)), lambda r: said.append(("stopped", r)), clock=clock)
    track.capture(audio("item_1", "resp_1", np.full(FRAME_SAMPLES * 2, 1000, np.int16)))
    played = await frames(track, clock, 1)
    assert said == [("started", "resp_1")] and track.speaking == "resp_1"
    track.flush("resp_1")
    played += await frames(track, clock, 2)
    assert said == [("started", "resp_1"), ("stopped", "resp_1")]
    assert [int(f.max()) for f in played] == [1000, 1000, 0]
    assert track.speaking is None


async def test_an_interruption_drops_the_rest_and_says_what_was_heard() -> None:
    clock = Clock()
    track = SpeechTrack(lambda r: None, lambda r: None, clock=clock)
    track.capture(audio("item_1", "resp_1", np.full(RATE, 500, np.int16)))  # one second
    await frames(track, clock, 10)  # 200 ms heard
    cleared = await track.clear()
    assert cleared is not None and cleared.response_id == "resp_1"
    assert [(h.item_id, h.response_id, h.audio_end_ms) for h in cleared.heard] == [("item_1", "resp_1", 200)]
    assert track.speaking is None
    assert int((await frames(track, clock, 1))[0].max()) == 0


async def test_the_next_response_stops_the_previous_one() -> None:
    clock, said = Clock(), []
    track = SpeechTrack(lambda r: said.append(("started", r)), lambda r: said.append(("stopped", r)), clock=clock)
    track.capture(audio("item_1", "resp_1", np.full(FRAME_SAMPLES // 2, 1, np.int16)))
    track.capture(audio("item_2", "resp_2", np.full(FRAME_SAMPLES // 2, 2, np.int16)))
    await frames(track, clock, 1)
    assert said == [("started", "resp_1"), ("stopped", "resp_1"), ("started", "resp_2")]
