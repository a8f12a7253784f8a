"""The Realtime protocol's ``response.create`` rate (``session.responses_per_minute``) and its
``rate_limits.updated`` event.

A ``response.create`` over the limit is refused with a ``rate_limit_exceeded`` error saying when to retry; each one
accepted is reported to the client in ``rate_limits.updated`` (``requests``: the limit, what remains, and when the
bucket is full again). The bucket is :class:`~voxcall.serving.rate.TokenBucket`, as the client event rate's.
"""

from __future__ import annotations

import math
import time

from voxcall.core.errors import SessionError
from voxcall.serving.frames import Message, event
from voxcall.serving.rate import RATE_LIMITED, Clock, TokenBucket

__all__ = ["ResponseRate"]


class ResponseRate:
    """``session.responses_per_minute``: how many ``response.create`` a session may send."""

    def __init__(self, per_minute: int, clock: Clock = time.monotonic) -> None:
        self._bucket = TokenBucket(per_minute, 60.0, clock)

    def take(self) -> None:
        """Count one ``response.create``, or raise a ``rate_limit_exceeded`` protocol error when over the limit."""
        if not self._bucket.take():
            wait = math.ceil(self._bucket.next_token_seconds * 10) / 10
            raise SessionError(f"too many responses: this session may create {self._bucket.capacity} per minute "
                                f"(session.responses_per_minute); retry in {wait:.1f} s", code=RATE_LIMITED)

    def to_event(self) -> Message:
        """The ``rate_limits.updated`` event: the ``requests`` limit as it stands."""
        return event("rate_limits.updated", rate_limits=[{
            "name": "requests", "limit": self._bucket.capacity, "remaining": self._bucket.remaining,
            "reset_seconds": round(self._bucket.full_seconds, 3)}])
