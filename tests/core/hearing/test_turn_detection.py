"""``semantic_vad``'s silences: ordered by the verdict and by eagerness, longer than the pauses each must not
answer, and none of it for ``server_vad``, which stays as the client sets it."""

from __future__ import annotations

import pytest

from voxcall.core.hearing.turn_detection import EAGERNESS_SILENCE_MS, EAGERNESS_TURN_END, parse_turn_detection


@pytest.mark.parametrize("eagerness", ["low", "medium", "high", "auto"])
def test_a_finished_utterance_waits_least_and_an_unfinished_one_most(eagerness: str) -> None:
    silences = EAGERNESS_TURN_END[eagerness]
    assert silences.finished < silences.unsure < silences.unfinished
    assert silences.unsure == EAGERNESS_SILENCE_MS[eagerness]  # what is waited without a verdict
    assert 150 <= silences.finished <= (750 if eagerness == "low" else 300)


def test_a_lower_eagerness_waits_longer_at_every_verdict_and_auto_is_medium() -> None:
    low, medium, high = (EAGERNESS_TURN_END[e] for e in ("low", "medium", "high"))
    for verdict in ("finished", "unsure", "unfinished"):
        assert getattr(low, verdict) > getattr(medium, verdict) > getattr(high, verdict)
    assert EAGERNESS_TURN_END["auto"] == medium
    assert (low.unfinished, medium.unfinished, high.unfinished) == (8000, 4000, 2000)  # OpenAI's documented maxima


def test_an_unsure_verdict_outlasts_the_pauses_inside_a_sentence() -> None:
    # the benchmark's cut requests: a 400 ms pause under auto, 700 ms under low, must not end the turn
    assert EAGERNESS_TURN_END["auto"].unsure > 400 and EAGERNESS_TURN_END["low"].unsure > 700
    # low trusts no verdict inside a 700 ms pause: a sentence cut there can be heard as a whole one
    assert EAGERNESS_TURN_END["low"].finished > 700


def test_semantic_vad_has_turn_end_silences_and_server_vad_none() -> None:
    semantic = parse_turn_detection({"type": "semantic_vad", "eagerness": "high"}, where="turn_detection")
    server = parse_turn_detection({"type": "server_vad", "silence_duration_ms": 320}, where="turn_detection")
    assert semantic is not None and semantic.turn_end == EAGERNESS_TURN_END["high"]
    assert server is not None and server.turn_end is None and server.silence_duration_ms == 320
