"""relayed_reply: a tool's output said in words, as the follow-up of a local model."""

from __future__ import annotations

import pytest

from voxcall.llm.local.relay import MAX_RELAYED_CHARS, relayed_reply


@pytest.mark.parametrize(("outputs", "said"), [
    (["Rainy, 12 degrees"], "Rainy, 12 degrees."),
    (["96"], "It's 96."),
    (["timer set for 5 minutes."], "Timer set for 5 minutes."),
    (['{"temperature": 12, "condition": "rain", "wind": null}'], "Temperature 12, condition rain."),
    (['{"is_open": true}'], "Is open yes."),
    (['["Paris", "Rome"]'], "Paris, Rome."),
    (["Sunny", "Cloudy, 8 degrees"], "It's Sunny. Cloudy, 8 degrees."),
    (["**Done** `ok`"], "Done ok."),
    (["", "  "], ""),
    (["晴，28度"], "晴，28度。"),  # no "It's", and its own full stop
    (["晴", "多云"], "晴。多云。"),
    (["맑음"], "맑음."),
])
def test_outputs_are_said_as_sentences(outputs: list[str], said: str) -> None:
    assert relayed_reply(outputs) == said


def test_a_long_output_is_cut_at_a_sentence() -> None:
    output = "First part is here. " * 30
    reply = relayed_reply([output])
    assert len(reply) <= MAX_RELAYED_CHARS
    assert reply.startswith("First part is here.") and reply.endswith("here.")


def test_an_unreadable_json_like_output_is_said_as_text() -> None:
    assert relayed_reply(["{not json"]) == "Not json."
