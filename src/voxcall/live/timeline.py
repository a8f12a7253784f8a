"""The session timeline: milliseconds since the session started, on the event loop's clock.

Every ``*_ms`` a Live event carries (``offset_ms``, ``start_ms``, ``end_ms``) is a point on it.
"""

from __future__ import annotations

import asyncio


class Timeline:
    """Milliseconds since :meth:`start` (0 before it)."""

    def __init__(self) -> None:
        self._origin: float | None = None

    def start(self) -> None:
        self._origin = asyncio.get_running_loop().time()

    def now_ms(self) -> int:
        if self._origin is None:
            return 0
        return max(0, round((asyncio.get_running_loop().time() - self._origin) * 1000))

    def at(self, ms: int) -> float:
        """The loop time of timeline point ``ms``."""
        return (self._origin if self._origin is not None else asyncio.get_running_loop().time()) + ms / 1000
