"""The end-of-turn judge with the real packaged model: a complete request is finished, the same request cut where
a speaker pauses is not, also when Whisper has punctuated the cut one as a question."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import numpy as np
import pytest

from tests.requirements import require_smollm2
from voxcall.llm.local.turn_end import TurnEnd, TurnEndJudge


@pytest.fixture(scope="module")
def judge() -> Iterator[TurnEndJudge]:
    judge = TurnEndJudge(require_smollm2())
    yield judge
    judge.close()


@pytest.mark.parametrize(("complete", "cut"), [
    ("What's the weather in Paris?", "What's the weather in"),
    ("What is the capital of France?", "What is the capital of?"),  # Whisper's question mark after a cut
    ("Where do penguins live?", "Can you tell me how to?"),
])
async def test_a_complete_and_a_cut_off_utterance_get_opposite_decisions(judge: TurnEndJudge, complete: str,
                                                                         cut: str) -> None:
    finished, unfinished = await judge.judge(complete), await judge.judge(cut)
    assert finished.finished and not finished.unfinished
    assert unfinished.unfinished and not unfinished.finished
    assert finished.ends > unfinished.ends or finished.can_end > unfinished.can_end


def test_the_verdict_reads_the_words_not_the_prefix_cached_before_them(judge: TurnEndJudge) -> None:
    first = judge.judge_now("Set a timer for")
    judge.judge_now("What's the weather in Paris?")
    again = judge.judge_now("Set a timer for")  # the context kept from another call changes nothing
    assert (again.ends, again.can_end) == pytest.approx((first.ends, first.can_end), rel=1e-3, abs=1e-6)


def test_no_words_is_no_verdict_of_finished(judge: TurnEndJudge) -> None:
    assert judge.judge_now("...") == TurnEnd(ends=0.0, can_end=0.0)
    assert not judge.judge_now("").finished


@pytest.mark.parametrize(("ends", "can_end", "finished", "unfinished"), [
    (0.9, 0.5, True, False),
    (0.9, 0.01, False, False),  # punctuated as an ending, but the words do not end there: unsure
    (0.1, 0.5, False, False),
    (0.9, 0.001, False, True),  # the last word cannot end a sentence
])
def test_the_verdict_needs_both_readings(ends: float, can_end: float, finished: bool, unfinished: bool) -> None:
    verdict = TurnEnd(ends=ends, can_end=can_end)
    assert (verdict.finished, verdict.unfinished) == (finished, unfinished)


@pytest.mark.parametrize(("ends", "can_end", "sound", "finished"), [
    (0.05, 0.3, 0.9, True),  # "Set a timer for ten minutes.": the words rate its ending low, the sound high
    (0.05, 0.3, 0.4, False),  # the sound does not say so either: unsure
    (0.05, 0.01, 0.95, False),  # "Turn the volume down a": it sounds ended, but no sentence ends on "a"
    (0.9, 0.5, 0.1, True),  # the words alone suffice, whatever the sound
    (0.05, 0.3, None, False),  # no sound heard: the words alone
])
def test_the_sound_finishes_what_the_words_allow(ends: float, can_end: float, sound: float | None,
                                                 finished: bool) -> None:
    assert TurnEnd(ends=ends, can_end=can_end, sound=sound).finished == finished


async def test_the_sound_is_judged_with_the_words_and_a_failure_there_leaves_the_words(judge: TurnEndJudge) -> None:
    loop = asyncio.get_running_loop()
    heard: asyncio.Future[float] = loop.create_future()
    heard.set_result(0.9)
    verdict = await judge.judge("Set a timer for ten minutes.", heard)
    assert verdict.sound == 0.9 and verdict.finished
    failed: asyncio.Future[float] = loop.create_future()
    failed.set_exception(RuntimeError("the sound model broke"))
    alone = await judge.judge("Set a timer for ten minutes.", failed)
    assert alone.sound is None and (alone.ends, alone.can_end) == pytest.approx((verdict.ends, verdict.can_end))
    assert judge.listen(np.zeros(1_600, np.int16)) is None  # this judge has no sound model

