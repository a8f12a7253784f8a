"""The ``clock`` built-in: the date and time now, here or in any IANA time zone, so the model never guesses them.

``current_time(timezone=None)``: without a zone, the server's own local time; with one, that zone's. A zone is an
IANA name (``Europe/Paris``, ``America/New_York``, ``UTC``), matched case-insensitively; a city that names exactly one
zone (``Paris``, ``new york``) stands for it, since that is what a model passes on from "what time is it in Paris?".
Anything else is an error naming what is accepted: the name is only ever looked up in the installed time zone
database, never used as a path. Reading the clock changes nothing.
"""

from __future__ import annotations

import functools
import zoneinfo
from collections.abc import Mapping
from datetime import datetime, tzinfo

from voxcall.tools.registry import ToolError, ToolRegistry

__all__ = ["current_time", "describe_time", "register", "zone_named"]

_MAX_NAME = 64
"""Longer than any IANA zone name: a longer argument is not one."""


@functools.cache
def _zones() -> Mapping[str, str]:
    """Every installed zone's name, and every city that names exactly one zone, casefolded, to the zone's name
    (read once: listing the database takes ~0.1 s)."""
    names = sorted(zoneinfo.available_timezones())
    cities: dict[str, list[str]] = {}
    for name in names:
        cities.setdefault(name.rsplit("/", 1)[-1].replace("_", " ").casefold(), []).append(name)
    unique = {city: found[0] for city, found in cities.items() if len(found) == 1}
    return {**unique, **{name.casefold(): name for name in names}}


def zone_named(name: str) -> tzinfo:
    """The time zone ``name`` stands for (an IANA name or a city, see the module docstring); :class:`ToolError`
    naming what is accepted when it stands for none."""
    key, zones = " ".join(name.split()).casefold(), _zones()
    spellings = (key, key.replace(" ", "_"), key.replace("_", " "))  # "America/New York", "New_York"
    found = next((zones[spelling] for spelling in spellings if spelling in zones), None)
    if len(name) > _MAX_NAME or found is None:
        raise ToolError(f"unknown time zone {name[:_MAX_NAME]!r}: use an IANA name such as 'Europe/Paris', "
                        "'America/New_York' or 'UTC', or leave it out for the server's local time")
    return zoneinfo.ZoneInfo(found)


def describe_time(moment: datetime, zone: str) -> str:
    """``moment`` as a person reads it, with the name of its ``zone``: "2:05 PM on Wednesday, December 2, 2026
    (Europe/Paris)"."""
    hour = moment.hour % 12 or 12
    return (f"{hour}:{moment:%M} {'AM' if moment.hour < 12 else 'PM'} on {moment:%A, %B} {moment.day}, "
            f"{moment.year} ({zone})")


async def current_time(timezone: str | None = None) -> str:
    """Get the current date and time. Use it whenever the user asks what time it is, or the day or the date.

    Args:
        timezone: An IANA time zone such as "Europe/Paris" (a city name also works); leave it out for local time.

    Returns:
        The time, the date and the time zone.
    """
    if timezone is None or not timezone.strip():
        moment = datetime.now().astimezone()
        return describe_time(moment, moment.tzname() or "local time")
    zone = zone_named(timezone)
    return describe_time(datetime.now(zone), str(zone))


def register(registry: ToolRegistry) -> None:
    """Register :func:`current_time` on ``registry`` (async: reading the clock needs no worker thread)."""
    registry.register(current_time)
