"""The user's transcript on the Live edge: what a final transcript adds to the partial deltas already sent."""

from __future__ import annotations

import pytest

from voxcall.core.hearing.partials import next_delta


@pytest.mark.parametrize(("sent", "final", "rest"), [
    ("What is", "What is 12 times 8?", " 12 times 8?"),  # the deltas were a prefix: the rest, as is
    ("What is 12 times 8?", "What is 12 times 8?", ""),  # all sent already
    ("What is 12", "What is twelve times eight?", " times eight?"),  # a revised word is not sent twice
    ("", "Hello there.", "Hello there."),  # no partial at all
    ("one two three", "one two", ""),  # the final is shorter: nothing to add
])
def test_missing_words(sent: str, final: str, rest: str) -> None:
    assert next_delta(sent, final, final=True, catch_up=True) == rest
