"""A session's input rate: client events per second (``session.events_per_second``), as a token bucket.

A :class:`TokenBucket` holds up to ``capacity`` tokens and regains ``capacity`` of them every ``period`` seconds,
continuously; an action takes one token or is refused. So a session may burst up to one period's worth, then keeps
to the sustained rate. Time comes from an injectable clock (the monotonic one by default), so tests step it.

:class:`EventRate` decides each client event's fate: an event over the limit is dropped. The first event dropped in a
burst is answered with a ``rate_limit_exceeded`` error naming it; the events dropped after it in the same burst are
not, so that a flood does not earn a flood of errors (the error says so). The next accepted event ends the burst.
Every JSON edge counts its client's events with it.
"""

from __future__ import annotations

import enum
import math
import time
from collections.abc import Callable

from voxcall.core.errors import SessionError

__all__ = ["RATE_LIMITED", "Clock", "EventFate", "EventRate", "TokenBucket"]

Clock = Callable[[], float]
"""Seconds on a clock that never goes back (``time.monotonic``)."""

RATE_LIMITED = "rate_limit_exceeded"
"""The ``error.code`` of a client event refused by a rate limit."""


class TokenBucket:
    """Up to ``capacity`` actions at once, and ``capacity`` more every ``period`` seconds, refilled continuously."""

    def __init__(self, capacity: int, period: float, clock: Clock = time.monotonic) -> None:
        if capacity < 1 or period <= 0:
            raise ValueError(f"a token bucket needs capacity >= 1 and period > 0, got ({capacity}, {period})")
        self.capacity = capacity
        self._per_second = capacity / period
        self._clock = clock
        self._tokens = float(capacity)
        self._at = clock()

    def take(self) -> bool:
        """Take one token: True, or False when none is left (nothing is taken)."""
        self._refill()
        if self._tokens < 1:
            return False
        self._tokens -= 1
        return True

    @property
    def remaining(self) -> int:
        """Whole tokens left now."""
        self._refill()
        return math.floor(self._tokens)

    @property
    def next_token_seconds(self) -> float:
        """Seconds until one token is there (0 when one is)."""
        self._refill()
        return max(0.0, (1 - self._tokens) / self._per_second)

    @property
    def full_seconds(self) -> float:
        """Seconds until the bucket is full again."""
        self._refill()
        return (self.capacity - self._tokens) / self._per_second

    def _refill(self) -> None:
        now = self._clock()
        self._tokens = min(self.capacity, self._tokens + max(0.0, now - self._at) * self._per_second)
        self._at = now


class EventFate(enum.Enum):
    """What :meth:`EventRate.admit` decides for a client event."""

    ACCEPTED = "accepted"
    REFUSED = "refused"  # dropped, and answered with an error: the first of a burst
    DROPPED = "dropped"  # dropped silently: the burst's error was already sent


class EventRate:
    """``session.events_per_second``: which client events a session handles, and which it drops."""

    def __init__(self, per_second: int, clock: Clock = time.monotonic) -> None:
        self._bucket = TokenBucket(per_second, 1.0, clock)
        self._in_burst = False  # events are being dropped and the client was told

    def admit(self) -> EventFate:
        """Count one client event and decide its fate."""
        if self._bucket.take():
            self._in_burst = False
            return EventFate.ACCEPTED
        if self._in_burst:
            return EventFate.DROPPED
        self._in_burst = True
        return EventFate.REFUSED

    def error(self) -> SessionError:
        """The error for the first event dropped in a burst."""
        return SessionError(
            f"too many events: this session may send {self._bucket.capacity} per second "
            "(session.events_per_second); this event and those that follow it until the rate falls below the limit "
            "are dropped, with no further error", code=RATE_LIMITED)
