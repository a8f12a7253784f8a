"""A name its kind's word completes ("the laundry room", "Mexico City") is copied whole, not cut short of it."""

from __future__ import annotations

import pytest

from voxcall.llm.local.compounds import whole_names


@pytest.mark.parametrize(("name", "strings", "kept"), [
    ("room", ["laundry", "laundry room", "room"], ["laundry room", "room"]),  # the 0.5B thinker wrote 'laundry'
    ("room", ["kids", "kids' room", "the kids' room"], ["kids' room", "the kids' room"]),  # a plural's apostrophe
    ("city", ["Mexico", "Mexico City", "weather in Mexico City"], ["Mexico City", "weather in Mexico City"]),
    ("street", ["Baker", "Baker Street"], ["Baker Street"]),
    ("room", ["guest", "guest rooms"], ["guest rooms"]),  # the kind's word plural
    ("room", ["kitchen", "kitchen lights"], ["kitchen", "kitchen lights"]),  # no kind's word said after it
    ("mode", ["dry", "dry mode"], ["dry", "dry mode"]),  # a kind whose word classifies the name: "dry" is the mode
    ("song", ["Yesterday", "Yesterday song"], ["Yesterday", "Yesterday song"]),
    ("room_name", ["laundry", "laundry room"], ["laundry", "laundry room"]),  # named otherwise
])
def test_a_span_the_kinds_word_follows_is_cut_short(name: str, strings: list[str], kept: list[str]) -> None:
    assert whole_names(name, strings) == kept
