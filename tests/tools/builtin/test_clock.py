"""The ``clock`` built-in: the time as people read it, zones by IANA name or city, and nothing else accepted."""

from __future__ import annotations

import re
from datetime import datetime
from zoneinfo import ZoneInfo

import pytest

from voxcall.tools import ToolError, ToolRegistry
from voxcall.tools.builtin import register_builtins
from voxcall.tools.builtin.clock import describe_time, zone_named

PARIS = ZoneInfo("Europe/Paris")


@pytest.fixture
def registry() -> ToolRegistry:
    registry = ToolRegistry()
    register_builtins(registry, ["clock"])
    return registry


@pytest.mark.parametrize(("moment", "read"), [
    (datetime(2026, 12, 2, 14, 5, tzinfo=PARIS), "2:05 PM on Wednesday, December 2, 2026 (Europe/Paris)"),
    (datetime(2026, 1, 1, 0, 0, tzinfo=PARIS), "12:00 AM on Thursday, January 1, 2026 (Europe/Paris)"),
    (datetime(2026, 7, 4, 12, 30, tzinfo=PARIS), "12:30 PM on Saturday, July 4, 2026 (Europe/Paris)"),
    (datetime(2026, 7, 4, 9, 59, tzinfo=PARIS), "9:59 AM on Saturday, July 4, 2026 (Europe/Paris)"),
])
def test_the_time_is_read_as_people_say_it(moment: datetime, read: str) -> None:
    assert describe_time(moment, "Europe/Paris") == read


@pytest.mark.parametrize(("name", "zone"), [
    ("Europe/Paris", "Europe/Paris"), ("europe/paris", "Europe/Paris"), ("Paris", "Europe/Paris"),
    ("new york", "America/New_York"), ("New_York", "America/New_York"), ("America/New_York", "America/New_York"),
    ("UTC", "UTC"), (" utc ", "UTC"), ("Asia/Tokyo", "Asia/Tokyo"), ("tokyo", "Asia/Tokyo"),
])
def test_a_zone_is_an_iana_name_or_a_city_that_names_one(name: str, zone: str) -> None:
    assert str(zone_named(name)) == zone


@pytest.mark.parametrize("name", ["", "Mars/Olympus", "../../etc/passwd", "/etc/localtime", "America",
                                  "Europe/../Europe/Paris", "x" * 100, "Paris; rm -rf /"])
def test_anything_else_is_an_error_naming_what_is_accepted(name: str) -> None:
    with pytest.raises(ToolError, match=r"unknown time zone .*IANA name such as 'Europe/Paris'"):
        zone_named(name)


async def test_current_time_in_a_zone_is_now_there(registry: ToolRegistry) -> None:
    tokyo = ZoneInfo("Asia/Tokyo")
    before = describe_time(datetime.now(tokyo), "Asia/Tokyo")
    result = await registry.call("current_time", {"timezone": "Asia/Tokyo"})
    after = describe_time(datetime.now(tokyo), "Asia/Tokyo")
    assert not result.is_error and result.output in (before, after)


async def test_current_time_without_a_zone_is_the_local_time(registry: ToolRegistry) -> None:
    result = await registry.call("current_time", {})
    local = datetime.now().astimezone()
    assert not result.is_error
    assert re.fullmatch(rf"\d{{1,2}}:\d\d [AP]M on \w+, \w+ \d{{1,2}}, \d{{4}} \({local.tzname()}\)", result.output)


async def test_bad_zones_are_error_results(registry: ToolRegistry) -> None:
    unknown = await registry.call("current_time", {"timezone": "Atlantis"})
    assert unknown.is_error and "unknown time zone 'Atlantis'" in unknown.output
    not_a_name = await registry.call("current_time", {"timezone": 5})
    assert not_a_name.is_error and "invalid arguments" in not_a_name.output


def test_the_model_sees_one_optional_timezone() -> None:
    registry = ToolRegistry()
    register_builtins(registry, ["clock"])
    (tool,) = registry.tools
    assert tool.name == "current_time" and tool.parameters["required"] == []
    assert set(tool.parameters["properties"]) == {"timezone"}
