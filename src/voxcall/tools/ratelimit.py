"""Rate limits for tools: at most so many calls in any window of so many seconds (a sliding window).

The registry (:mod:`voxcall.tools.registry`) keeps one :class:`RateLimiter` per tool registered with a
``rate_limit``; a call over the limit becomes an error result telling the model when to retry.
"""

from __future__ import annotations

import collections
import time

__all__ = ["RateLimiter"]


class RateLimiter:
    """A sliding-window limit: at most ``calls`` calls in any ``per`` seconds."""

    def __init__(self, calls: int, per: float) -> None:
        if calls < 1 or per <= 0:
            raise ValueError(f"rate_limit must be (calls >= 1, per_seconds > 0), got ({calls}, {per})")
        self.calls = calls
        self.per = per
        self._times: collections.deque[float] = collections.deque()

    def acquire(self) -> float | None:
        """Count a call and return ``None``, or return the seconds to wait when the window is full."""
        now = time.monotonic()
        while self._times and self._times[0] <= now - self.per:
            self._times.popleft()
        if len(self._times) >= self.calls:
            return self._times[0] + self.per - now
        self._times.append(now)
        return None
