"""The caller's sound: the speaker knows what was heard and which item plays, the microphone sends every sample
in 20 ms chunks (silence between utterances on a live line), and the end of an utterance is where its voice ends."""

from __future__ import annotations

import asyncio

import numpy as np
import pytest

from voxcall.evaluation.audio import RATE, Microphone, Speaker, tail_seconds
from voxcall.evaluation.connect import EvalError, endpoint
from voxcall.evaluation.scenario import Protocol

SECOND = RATE


def test_the_speaker_plays_chunks_one_after_another_from_their_arrival() -> None:
    speaker = Speaker()
    speaker.play("item_a", 0, SECOND, now=100.0)  # plays 100.0 → 101.0
    speaker.play("item_a", 0, SECOND, now=100.2)  # queued: 101.0 → 102.0
    speaker.play("item_b", 1, SECOND // 2, now=103.0)  # the speaker was quiet: 103.0 → 103.5
    assert speaker.heard_ms(0, 100.5) == 500 and speaker.heard_ms(0, 101.5) == 1500
    assert speaker.heard_ms(0, 200.0) == 2000 and speaker.queued_ms(0) == 2000
    assert speaker.playing(101.25) == ("item_a", 1250, 0)
    assert speaker.playing(102.5) is None  # a gap between the answers
    assert speaker.playing(103.1) == ("item_b", 100, 1)
    assert speaker.quiet_at() == pytest.approx(103.5)


def test_speaking_over_the_answer_drops_what_has_not_played() -> None:
    speaker = Speaker()
    speaker.play("item_a", 0, 3 * SECOND, now=10.0)
    speaker.stop(11.2)
    assert speaker.heard_ms(0, 20.0) == 1200 and speaker.queued_ms(0) == 1200
    assert speaker.playing(11.5) is None and speaker.quiet_at() == pytest.approx(11.2)


def test_the_end_of_speech_is_where_the_voice_ends() -> None:
    voice = np.full(SECOND // 2, 8000, np.int16)
    quiet = np.full(SECOND // 4, 20, np.int16)  # below the voice level: a voice's trailing hiss
    assert tail_seconds(np.concatenate([voice, quiet])) == pytest.approx(0.25)
    assert tail_seconds(voice) == 0 and tail_seconds(np.zeros(SECOND, np.int16)) == 1.0


def recording_microphone(*, live: bool) -> tuple[Microphone, list[np.ndarray]]:
    """A started microphone whose chunks land in the list."""
    sent: list[np.ndarray] = []

    async def send(pcm: np.ndarray) -> None:
        sent.append(pcm)

    mic = Microphone(send, live=live)
    mic.start()
    return mic, sent


async def test_the_microphone_sends_each_utterance_in_chunks_and_silence_between() -> None:
    mic, sent = recording_microphone(live=True)
    speech = np.arange(1, 1201, dtype=np.int16)  # 50 ms: two full chunks and a part
    ended = await mic.say(speech)
    await asyncio.sleep(0.1)
    await mic.stop()
    voiced = [n for n, chunk in enumerate(sent) if chunk.any()]
    assert np.array_equal(np.concatenate([sent[n] for n in voiced]), speech)
    assert [len(sent[n]) for n in voiced] == [480, 480, 240] and voiced == list(range(voiced[0], voiced[0] + 3))
    assert len(sent) > voiced[-1] + 1 and not sent[-1].any()  # silence after it: a live line
    assert ended > 0


async def test_a_push_to_talk_microphone_sends_nothing_between_utterances() -> None:
    mic, sent = recording_microphone(live=False)
    await asyncio.sleep(0.1)
    assert sent == []
    await mic.say(np.ones(480, np.int16))
    await asyncio.sleep(0.1)
    await mic.stop()
    assert len(sent) == 1


def test_the_url_says_the_protocol_and_the_sdk_base() -> None:
    realtime = endpoint("ws://127.0.0.1:8765/v1/realtime?model=gpt-realtime-mini")
    assert realtime == type(realtime)(Protocol.REALTIME, "ws://127.0.0.1:8765/v1", "gpt-realtime-mini")
    live = endpoint("wss://example.test/v1/live/sessions/")
    assert (live.protocol, live.base_url, live.model) == (Protocol.LIVE, "wss://example.test/v1", None)
    for wrong in ("http://127.0.0.1:8765/v1/realtime", "ws://127.0.0.1:8765/v1/chat", "127.0.0.1:8765"):
        with pytest.raises(EvalError):
            endpoint(wrong)
