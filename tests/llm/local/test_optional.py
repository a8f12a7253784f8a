"""Optional arguments (:mod:`voxcall.llm.local.optional`): where a call could close, and how the comma is weighed
against the close. The driver's part, against a scripted server, is in tests/llm/local/test_llama_server.py."""

from __future__ import annotations

import numpy as np
import pytest

from voxcall.llm.local.optional import OPTIONAL_SHARE, OptionalChoice, may_close
from voxcall.tools import Tool

TIMER = Tool("set_timer", "Start a countdown timer.",
             {"type": "object", "properties": {"minutes": {"type": "number"}, "label": {"type": "string"}},
              "required": ["minutes"]})
CLOCK = Tool("get_time", "The time now.", {"type": "object", "properties": {"zone": {"type": "string"}}})
PING = Tool("ping", "Ping.", {"type": "object", "properties": {"host": {"type": "string"}}, "required": ["host"]})


@pytest.mark.parametrize(("reply", "could"), [
    ("<code>set_timer(minutes=5", True),  # every required argument, an optional one left
    ("Sure. <code>set_timer(minutes=5", True),
    ("<code>get_time(", True),  # nothing required
    ("<code>set_timer(", False),  # the required minutes missing
    ("<code>set_timer(minutes=5, label='tea'", False),  # nothing optional left
    ("<code>set_timer(label='tea, now", False),  # inside a string
    ("<code>ping(host='a'", False),  # no optional argument at all
    ("<code>set_timer(minutes=5)</code>", False),  # closed already
    ("set_timer(minutes=5", False),  # no block opened
    ("<code>set_timers(minutes=5", False),  # no such tool
])
def test_a_call_could_close_once_it_holds_its_required_arguments(reply: str, could: bool) -> None:
    assert may_close(reply, [TIMER, CLOCK, PING]) is could


def choice() -> OptionalChoice:
    commas, closers = np.zeros(8, dtype=bool), np.zeros(8, dtype=bool)
    commas[[1, 2]], closers[3] = True, True
    return OptionalChoice(commas, closers)


@pytest.mark.parametrize(("top", "adds"), [
    ([(1, 0.488), (3, 0.442)], False),  # a near-tie closes the call (SmolLM2 on "timers for 5 and 10 minutes")
    ([(1, 0.5), (2, 0.3), (3, 0.1)], True),  # the comma tokens together hold 8/9
    ([(3, 0.9), (1, 0.05)], False),
    ([(5, 0.9), (6, 0.1)], True),  # neither among the likeliest: the sampled comma stands
    ([(1, OPTIONAL_SHARE), (3, 1 - OPTIONAL_SHARE)], True),  # the share exactly
])
def test_the_comma_needs_its_share_of_the_probability(top: list[tuple[int, float]], adds: bool) -> None:
    assert choice().adds(top) is adds
