"""Lengths of time said (durations), and the unit of time a number parameter counts in (unit_of)."""

from __future__ import annotations

import pytest

from voxcall.llm.local.duration import durations, outside, unit_of


@pytest.mark.parametrize(("said", "seconds", "words"), [
    ("Set a timer for two hours.", 7200, "two hours"),
    ("Set a timer for an hour.", 3600, "an hour"),
    ("Ping me in half an hour.", 1800, "half an hour"),
    ("a quarter of an hour", 900, "a quarter of an hour"),
    ("Timer for 90 seconds", 90, "90 seconds"),
    ("a 90-second timer", 90, "90-second"),
    ("for 1.5 hours", 5400, "1.5 hours"),
    ("twenty five minutes", 1500, "twenty five minutes"),
    ("two and a half hours", 9000, "two and a half hours"),
    ("an hour and a half", 5400, "an hour and a half"),
    ("1 hour 30 minutes", 5400, "1 hour 30 minutes"),  # the parts of one length are one
    ("2 hours, 30 minutes and 3 seconds", 9003, "2 hours, 30 minutes and 3 seconds"),
    ("Forecast for the next 3 days", 259200, "3 days"),
    ("一个小时后提醒我", 3600, "一个小时"),
    ("一个半小时", 5400, "一个半小时"),
    ("请在半小时后提醒我", 1800, "半小时"),
    ("半个小时后", 1800, "半个小时"),
    ("三十分钟", 1800, "三十分钟"),
    ("一刻钟", 900, "一刻钟"),
    ("一小时零五分钟", 3900, "一小时零五分钟"),
])
def test_a_length_of_time_is_its_count_times_its_unit(said: str, seconds: float, words: str) -> None:
    [length] = durations(said)
    assert length.seconds == seconds and said[length.start:length.end] == words


def test_no_length_without_a_count_and_numbers_outside_stay() -> None:
    assert durations("今天天气怎么样？") == [] and durations("minutes matter, hours too") == []
    said = "Set the volume to 50 in 5 minutes"
    assert [d.seconds for d in durations(said)] == [300] and outside(said, durations(said)) == [50]
    # a larger unit after a smaller one is another length, not a part of it
    assert [d.seconds for d in durations("5 minutes and 2 hours")] == [300, 7200]


def test_a_length_counted_in_a_unit_is_whole_where_it_can_be() -> None:
    [hours] = durations("two hours")
    assert hours.counted_in(60) == 120 and isinstance(hours.counted_in(60), int)
    assert durations("90 seconds")[0].counted_in(60) == 1.5


def test_the_unit_a_parameter_counts_in_is_in_its_name_or_description() -> None:
    assert unit_of("minutes", None) == 60 and unit_of("delay_seconds", {}) == 1 and unit_of("days", None) == 86400
    assert unit_of("time", {"description": "The longest wait, specified in seconds."}) == 1
    assert unit_of("duration", {"description": "How long, in hours."}) == 3600
    assert unit_of("minutes", {"description": "In seconds."}) == 60  # the name first
    # no unit: a level, and an abbreviation that is as often a minimum
    assert unit_of("level", {"description": "Volume, 0 to 100."}) is None and unit_of("price_min", {}) is None
