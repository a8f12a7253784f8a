"""``semantic_vad`` in a session, with the real speech models and a judge whose verdicts the test chooses: the
verdict on the words at a pause sets the silence that ends the turn; ``server_vad`` never asks the judge; nothing
of an answer to half a sentence reaches the client."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Awaitable
from typing import Any

import pytest

from tests.core.hearing.test_eager_turn import eager, live, said
from tests.harness import ControlledBackend, Harness, Turn
from tests.realtime.test_voice import voice  # noqa: F401  (the shared speech models)
from voxcall.audio.codec import PCM
from voxcall.llm.local.turn_end import TurnEnd
from voxcall.speech.voice import Voice

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

FINISHED = TurnEnd(ends=0.9, can_end=0.5)
UNFINISHED = TurnEnd(ends=0.1, can_end=0.0001)


class Judge:
    """Says ``verdict`` of everything (``until``: of words without that one; then finished), and remembers what it
    was asked."""

    def __init__(self, verdict: TurnEnd, until: str | None = None) -> None:
        self.verdict = verdict
        self.until = until
        self.heard: list[str] = []
        self.listened: list[int] = []  # samples of each pause's audio it was given to hear
        self.sounds: list[float | None] = []  # the sound each judgment was handed

    def listen(self, pcm16k: PCM) -> asyncio.Future[float]:
        self.listened.append(len(pcm16k))
        sound: asyncio.Future[float] = asyncio.get_running_loop().create_future()
        sound.set_result(0.5)
        return sound

    async def judge(self, text: str, sound: Awaitable[float] | None = None) -> TurnEnd:
        self.heard.append(text)
        self.sounds.append(None if sound is None else await sound)
        return FINISHED if self.until is not None and self.until in text.lower() else self.verdict


def judged(voice: Voice, judge: Judge) -> Voice:  # noqa: F811
    return dataclasses.replace(voice, turn_end=judge)  # type: ignore[arg-type]


async def turn_detection(h: Harness, **turns: Any) -> None:
    await h.send(type="session.update", session={"type": "realtime", "audio": {"input": {"turn_detection": turns}}})


async def test_a_finished_sounding_request_ends_the_turn_after_a_short_silence(voice: Voice) -> None:  # noqa: F811
    judge = Judge(FINISHED)
    backend = ControlledBackend(Turn("It is sunny."))
    async with Harness(backend, voice=judged(voice, judge)) as h:
        await turn_detection(h, type="semantic_vad", eagerness="auto")
        await live(h, said(voice, 0.3, "What's the weather in Paris?", 1.0))
        done = await h.wait("response.done", timeout=30)
        assert done["response"]["status"] == "completed" and judge.heard
        assert "weather" in judge.heard[0].lower()
        # It heard the sound of the turn up to the pause (0.3 s of silence, the words, the start of the pause),
        # and judged with it.
        assert judge.listened and judge.listened[0] > 16_000 and judge.sounds[0] == 0.5
        timing = await h.wait("voxcall.response.timing")
        assert timing["timings_ms"]["end_of_turn"] < 500  # the finished silence (200 ms), not the unsure 500
        assert eager(h, "claimed") == 1


async def test_an_unfinished_request_waits_through_a_pause_longer_than_any_fixed_silence(
        voice: Voice) -> None:  # noqa: F811
    judge = Judge(UNFINISHED, until="minutes")
    backend = ControlledBackend(Turn("A timer for ten minutes."), default="A timer for ten minutes.")
    async with Harness(backend, voice=judged(voice, judge)) as h:
        await turn_detection(h, type="semantic_vad", eagerness="auto")
        await live(h, said(voice, 0.3, "Set a timer for", 1.5))
        assert not h.of("input_audio_buffer.speech_stopped")  # 1.5 s of silence after "for", and no turn end
        assert not h.of("response.created")  # nothing of an answer to "set a timer for" reached the client
        await live(h, said(voice, "ten minutes.", 1.0))
        await h.wait("response.done", timeout=30)
        assert len(h.of("input_audio_buffer.speech_stopped")) == 1 and len(h.of("response.created")) == 1
        assert "minutes" in backend.requests[-1].items[-1].text.lower()  # the whole sentence was answered


async def test_server_vad_never_asks_the_judge_and_waits_its_own_silence(voice: Voice) -> None:  # noqa: F811
    judge = Judge(FINISHED)
    backend = ControlledBackend(Turn("It is noon."))
    async with Harness(backend, voice=judged(voice, judge)) as h:
        await turn_detection(h, type="server_vad", silence_duration_ms=700)
        await live(h, said(voice, 0.3, "What time is it?", 1.2))
        await h.wait("response.done", timeout=30)
        assert judge.heard == []
        timing = await h.wait("voxcall.response.timing")
        assert timing["timings_ms"]["end_of_turn"] == 700


async def test_without_create_response_the_verdict_still_ends_the_turn_and_nothing_answers(
        voice: Voice) -> None:  # noqa: F811
    judge = Judge(FINISHED)
    backend = ControlledBackend(Turn("Unexpected."))
    async with Harness(backend, voice=judged(voice, judge)) as h:
        await turn_detection(h, type="semantic_vad", eagerness="low", create_response=False)
        await live(h, said(voice, 0.3, "What time is it?", 0.9))  # low: 1.2 s when unsure, 300 ms when finished
        await h.wait("conversation.item.input_audio_transcription.completed", timeout=30)
        assert len(h.of("input_audio_buffer.speech_stopped")) == 1 and judge.heard
        assert not h.of("response.created") and backend.requests == []
