"""Turn detection over a live stream: one start and one stop per utterance, at sensible times, cheaply."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest

from voxcall.core.hearing.turn_detection import TurnDetection
from voxcall.speech import VAD, SileroModel, SileroVAD, SpeechStarted, SpeechStopped, TurnDetector, TurnEvent, WebRtcVAD
from voxcall.speech.turns import SpeechPaused, SpeechResumed

pytestmark = pytest.mark.usefixtures("speech_models")  # the [local] extra

RATE = 16000
SERVER_VAD: dict[str, Any] = {key: getattr(TurnDetection(), key) for key in ("threshold", "prefix_padding_ms")}
"""Server VAD as a session that sets nothing has it (the silence that ends a turn: :data:`SILENCE_MS`)."""
SILENCE_MS = TurnDetection().silence_duration_ms
CHUNK = 320  # 20 ms, as clients send it


@pytest.fixture(params=["silero", "webrtc"])
def make_vad(request: pytest.FixtureRequest, silero: SileroModel) -> Callable[[], VAD]:
    if request.param == "silero":
        return lambda: SileroVAD(silero)
    return WebRtcVAD


def silence(seconds: float) -> npt.NDArray[np.int16]:
    return np.zeros(int(RATE * seconds), dtype=np.int16)


def stream(detector: TurnDetector, pcm: npt.NDArray[np.int16], chunk: int = CHUNK) -> list[TurnEvent]:
    events: list[TurnEvent] = []
    for i in range(0, len(pcm), chunk):
        events += detector.feed(pcm[i:i + chunk])
    return events


def speech_span_ms(speech: npt.NDArray[np.int16]) -> tuple[float, float]:
    """Where the audible part of ``speech`` begins and ends (above 1 % of full scale)."""
    loud = np.nonzero(np.abs(speech.astype(np.int32)) > 328)[0]
    return loud[0] * 1000 / RATE, loud[-1] * 1000 / RATE


def test_silence_makes_no_events(make_vad: Callable[[], VAD]) -> None:
    detector = TurnDetector(make_vad(), **SERVER_VAD, silence_duration_ms=SILENCE_MS)
    assert stream(detector, silence(3)) == []
    assert not detector.in_speech
    assert detector.position_ms == 3000


def test_one_utterance_is_one_start_then_one_stop(make_vad: Callable[[], VAD],
                                                  question_16k: npt.NDArray[np.int16]) -> None:
    detector = TurnDetector(make_vad(), **SERVER_VAD, silence_duration_ms=SILENCE_MS)
    events = stream(detector, np.concatenate([silence(0.5), question_16k, silence(1.0)]))
    assert [type(e) for e in events] == [SpeechStarted, SpeechStopped]
    started, stopped = events
    assert isinstance(started, SpeechStarted) and isinstance(stopped, SpeechStopped)
    onset, end = speech_span_ms(question_16k)
    onset, end = onset + 500, end + 500
    assert abs(started.audio_start_ms - (onset - 300)) <= 150  # prefix padding reaches back 300 ms
    assert end + 400 <= stopped.audio_end_ms <= end + 500 + 300  # after the 500 ms of silence
    assert not detector.in_speech


def test_chunk_size_does_not_change_the_events(silero: SileroModel, question_16k: npt.NDArray[np.int16]) -> None:
    pcm = np.concatenate([silence(0.5), question_16k, silence(1.0)])
    in_20ms = stream(TurnDetector(SileroVAD(silero), **SERVER_VAD, silence_duration_ms=SILENCE_MS), pcm)
    at_once = TurnDetector(SileroVAD(silero), **SERVER_VAD, silence_duration_ms=SILENCE_MS).feed(pcm)
    odd_sizes = stream(TurnDetector(SileroVAD(silero), **SERVER_VAD, silence_duration_ms=SILENCE_MS), pcm,
                       chunk=777)
    assert in_20ms == at_once == odd_sizes


def test_in_speech_while_the_user_talks(silero: SileroModel, question_16k: npt.NDArray[np.int16]) -> None:
    detector = TurnDetector(SileroVAD(silero), **SERVER_VAD, silence_duration_ms=SILENCE_MS)
    half = len(question_16k) // 2
    assert [type(e) for e in detector.feed(np.concatenate([silence(0.5), question_16k[:half]]))] == [SpeechStarted]
    assert detector.in_speech
    assert [type(e) for e in detector.feed(np.concatenate([question_16k[half:], silence(1)]))] == [SpeechStopped]


def test_the_prefix_padding_is_clamped_at_the_stream_start(silero: SileroModel,
                                                           question_16k: npt.NDArray[np.int16]) -> None:
    events = TurnDetector(SileroVAD(silero), **SERVER_VAD, silence_duration_ms=SILENCE_MS).feed(
        np.concatenate([question_16k, silence(1)]))
    assert events[0] == SpeechStarted(audio_start_ms=0)


def test_silence_duration_sets_when_the_turn_ends(silero: SileroModel, question_16k: npt.NDArray[np.int16]) -> None:
    pcm = np.concatenate([silence(0.5), question_16k, silence(2)])
    quick = TurnDetector(SileroVAD(silero), **SERVER_VAD, silence_duration_ms=200).feed(pcm)[-1]
    patient = TurnDetector(SileroVAD(silero), **SERVER_VAD, silence_duration_ms=1200).feed(pcm)[-1]
    assert isinstance(quick, SpeechStopped) and isinstance(patient, SpeechStopped)
    assert 900 <= patient.audio_end_ms - quick.audio_end_ms <= 1100


def test_megabytes_of_silence_are_cheap(silero: SileroModel) -> None:
    detector = TurnDetector(SileroVAD(silero), **SERVER_VAD, silence_duration_ms=SILENCE_MS)
    started = time.perf_counter()
    assert detector.feed(silence(250)) == []  # 8 MB of digital silence
    assert time.perf_counter() - started < 2.0
    quiet_noise = np.random.default_rng(2).normal(0, 30, RATE * 30).astype(np.int16)  # ~ -60 dBFS hiss
    assert detector.feed(quiet_noise) == []  # this one runs the model on every frame
    assert detector.position_ms == 280_000


def test_reset_ends_a_turn_but_keeps_the_clock(silero: SileroModel, question_16k: npt.NDArray[np.int16]) -> None:
    detector = TurnDetector(SileroVAD(silero), **SERVER_VAD, silence_duration_ms=SILENCE_MS)
    detector.feed(np.concatenate([silence(0.5), question_16k[:8000], silence(0.01)]))
    assert detector.in_speech
    position = detector.position_ms
    detector.reset()
    assert not detector.in_speech
    assert detector.position_ms == position
    assert detector.feed(silence(1)) == []


def test_feed_wants_int16_samples(silero: SileroModel) -> None:
    with pytest.raises(TypeError, match="int16"):
        TurnDetector(SileroVAD(silero), **SERVER_VAD, silence_duration_ms=SILENCE_MS).feed(
            np.zeros(512, dtype=np.float32))


def test_a_pause_is_reported_before_the_stop(make_vad: Callable[[], VAD],
                                            question_16k: npt.NDArray[np.int16]) -> None:
    detector = TurnDetector(make_vad(), **SERVER_VAD, silence_duration_ms=500, pause_ms=200)
    events = stream(detector, np.concatenate([silence(0.5), question_16k, silence(1.0)]))
    assert [type(e) for e in events] == [SpeechStarted, SpeechPaused, SpeechStopped]
    _, paused, stopped = events
    assert isinstance(paused, SpeechPaused) and isinstance(stopped, SpeechStopped)
    assert paused.audio_end_ms - paused.speech_end_ms >= 200
    assert 280 <= stopped.audio_end_ms - paused.audio_end_ms <= 320  # the rest of the 500 ms silence
    assert abs(paused.speech_end_ms - (stopped.audio_end_ms - 500)) <= 32  # within a VAD frame


def test_speech_after_a_pause_resumes_the_turn(make_vad: Callable[[], VAD],
                                               question_16k: npt.NDArray[np.int16]) -> None:
    detector = TurnDetector(make_vad(), **SERVER_VAD, silence_duration_ms=600, pause_ms=200)
    events = stream(detector, np.concatenate([silence(0.5), question_16k, silence(0.35), question_16k,
                                              silence(1.0)]))
    kinds = [type(e) for e in events]
    assert kinds[0] is SpeechStarted and kinds[-1] is SpeechStopped and kinds.count(SpeechStopped) == 1
    assert SpeechResumed in kinds and kinds.index(SpeechPaused) < kinds.index(SpeechResumed)
    assert kinds[-2] is SpeechPaused  # the final silence pauses, then stops


def test_no_pause_events_unless_asked(make_vad: Callable[[], VAD], question_16k: npt.NDArray[np.int16]) -> None:
    for pause_ms in (None, 500, 800):  # none asked, or not shorter than the silence that ends the turn
        detector = TurnDetector(make_vad(), **SERVER_VAD, silence_duration_ms=500, pause_ms=pause_ms)
        events = stream(detector, np.concatenate([silence(0.5), question_16k, silence(1.0)]))
        assert [type(e) for e in events] == [SpeechStarted, SpeechStopped]


def test_silence_ms_counts_the_closing_silence_of_a_turn(silero: SileroModel,
                                                         question_16k: npt.NDArray[np.int16]) -> None:
    detector = TurnDetector(SileroVAD(silero), **{**SERVER_VAD, "silence_duration_ms": 500})
    stream(detector, np.concatenate([silence(0.5), question_16k]))
    assert detector.in_speech and detector.silence_ms < 200  # still (or just) speaking
    stream(detector, silence(0.3))
    assert detector.in_speech and 250 <= detector.silence_ms <= 500
    stream(detector, silence(0.5))
    assert not detector.in_speech and detector.silence_ms == 0  # the turn ended


def test_end_after_ends_the_paused_turn_after_the_silence_it_sets(make_vad: Callable[[], VAD],
                                                                  question_16k: npt.NDArray[np.int16]) -> None:
    detector = TurnDetector(make_vad(), **SERVER_VAD, silence_duration_ms=4000, pause_ms=100)
    events = stream(detector, np.concatenate([silence(0.5), question_16k, silence(0.3)]))
    assert [type(e) for e in events] == [SpeechStarted, SpeechPaused]  # 4 s of silence would end it: not yet
    pause = events[1]
    assert isinstance(pause, SpeechPaused)
    detector.end_after(200)  # the silence so far is already longer: the next frame ends the turn
    fed_ms = detector.position_ms
    stopped = stream(detector, silence(0.1))
    assert len(stopped) == 1 and isinstance(stopped[0], SpeechStopped) and not stopped[0].cut
    assert pause.audio_end_ms < stopped[0].audio_end_ms <= fed_ms + 64  # a frame or two: not 4 s
    assert not detector.in_speech


def test_end_after_is_forgotten_when_speech_resumes(make_vad: Callable[[], VAD],
                                                    question_16k: npt.NDArray[np.int16]) -> None:
    detector = TurnDetector(make_vad(), **SERVER_VAD, silence_duration_ms=1500, pause_ms=100)
    stream(detector, np.concatenate([silence(0.5), question_16k, silence(0.15)]))
    detector.end_after(1000)  # a verdict on the first words ...
    events = stream(detector, np.concatenate([question_16k, silence(1.2)]))  # ... that the user spoke on from
    assert [type(e) for e in events] == [SpeechResumed, SpeechPaused]  # the next pause waits the full 1.5 s again
    assert [type(e) for e in stream(detector, silence(0.5))] == [SpeechStopped]


def test_end_after_outside_a_pause_does_nothing(make_vad: Callable[[], VAD],
                                                question_16k: npt.NDArray[np.int16]) -> None:
    detector = TurnDetector(make_vad(), **SERVER_VAD, silence_duration_ms=500)
    detector.end_after(50)  # no turn yet
    events = stream(detector, np.concatenate([silence(0.5), question_16k, silence(1.0)]))
    assert [type(e) for e in events] == [SpeechStarted, SpeechStopped]
    _, end = speech_span_ms(question_16k)
    assert isinstance(events[1], SpeechStopped) and events[1].audio_end_ms >= end + 500 + 400
