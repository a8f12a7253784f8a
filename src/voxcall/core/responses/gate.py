"""The gate that holds back a hidden response's output.

An :class:`OutputGate` sits in front of a session's ``emit`` for a speculative response: while closed it buffers (up
to a bound, then the producer waits); opening it flushes the buffer in order and lets later events straight through;
dropping it forgets everything.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable
from typing import TypeVar

from voxcall.core.events import Emit, Event

E = TypeVar("E", bound=Event)


class OutputGate:
    """Holds a hidden response's events until it is claimed (``open``) or discarded (``drop``)."""

    def __init__(self, emit: Emit, *, limit: int) -> None:
        """``limit``: the events it holds before the producer waits (``session.max_hidden_events``)."""
        self._emit = emit
        self._limit = limit
        self._buffer: deque[Event] = deque()
        self._is_open = False
        self._dropped = False
        self._room = asyncio.Event()

    @property
    def buffered(self) -> list[Event]:
        """The events held back so far (a copy)."""
        return list(self._buffer)

    async def emit(self, ev: Event) -> None:
        """Pass ``ev`` on when open; otherwise buffer it, waiting while the buffer is full."""
        while not self._is_open and not self._dropped and len(self._buffer) >= self._limit:
            self._room.clear()
            await self._room.wait()
        if self._dropped:
            return
        if self._is_open:
            await self._emit(ev)
        else:
            self._buffer.append(ev)

    def patch_first(self, kind: type[E], update: Callable[[E], E]) -> None:
        """Replace the first buffered event of type ``kind`` with ``update(event)`` (a claim sets the caller's
        metadata, and the timing as it stands)."""
        for n, ev in enumerate(self._buffer):
            if isinstance(ev, kind):
                self._buffer[n] = update(ev)
                return

    async def open(self) -> None:
        """Flush the buffer in order, then let events through directly."""
        while self._buffer:
            await self._emit(self._buffer.popleft())
        self._is_open = True  # no await between the last check of the buffer and this
        self._room.set()

    def drop(self) -> None:
        """Forget the buffer; later events vanish too."""
        self._dropped = True
        self._buffer.clear()
        self._room.set()
