"""Words that ask nothing: a statement, whose call needs the thinker sure of it."""

from __future__ import annotations

import pytest

from voxcall.llm.local.statements import states


@pytest.mark.parametrize("said", [
    "I turned the lights off before leaving.",  # the 0.5B thinker called set_lights at 0.81
    "I just got back from a concert, it was amazing.",  # play_music(query='concert')
    "My kitchen is a mess.",  # get_weather(city='kitchen')
    "I'm going to play football later.",
    "It is cold in Moscow and my friend is there",
])
def test_words_that_tell_something_state_it(said: str) -> None:
    assert states(said)


@pytest.mark.parametrize("said", [
    "I had 40 cookies and ate 7. How many are left?",  # a question
    "It's too dark in the cellar, turn the lights on.",  # a clause that opens with a verb
    "I need a countdown of 8 minutes.",  # what the speaker wants
    "I'd like some smooth jazz.",
    "I wanna hear Coldplay.",
    "I'm in the mood for classical music.",
    "I've had enough music for today, stop it please.",
    "I wonder what the weather is in Rome.",
    "Lights off in the office.",  # no subject: an order
    "The Beatles.",  # a name may be all a request says
    "我想听摇滚乐。",  # a language with no subjects listed states nothing
    "",
])
def test_a_question_an_order_or_a_wish_asks(said: str) -> None:
    assert not states(said)
