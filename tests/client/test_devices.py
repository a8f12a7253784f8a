"""The speaker queue: plays items in order, stops at once on barge-in and knows how much was heard."""

from __future__ import annotations

import numpy as np

from voxcall.client.devices import Player


def test_plays_in_order_then_silence() -> None:
    player = Player(24000, 24000)
    player.feed("a", np.full(300, 1, np.int16))
    player.feed("b", np.full(300, 2, np.int16))
    out = np.full(480, 9, np.int16)
    player.fill(out)
    assert list(out[:300]) == [1] * 300 and list(out[300:]) == [2] * 180
    player.fill(out)
    assert list(out[:120]) == [2] * 120 and not out[120:].any()


def test_interrupt_returns_what_was_heard_of_the_item_cut_short() -> None:
    player = Player(24000, 24000)
    player.feed("a", np.ones(24000, np.int16))
    out = np.zeros(4800, np.int16)
    player.fill(out)
    assert player.interrupt() == ("a", 200)
    player.fill(out)
    assert not out.any()  # nothing left to play
    assert player.interrupt() is None  # nothing was cut short this time


def test_resamples_to_the_device_rate() -> None:
    player = Player(48000, 24000)
    player.feed("a", np.ones(2400, np.int16) * 1000)
    out = np.zeros(48000, np.int16)
    player.fill(out)
    assert abs(np.count_nonzero(out) - 4800) < 10  # 100 ms at 48 kHz, none of it held back
