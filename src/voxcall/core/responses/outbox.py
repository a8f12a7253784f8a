"""The way out to the socket: one writer task per session, and the gate that holds back hidden output.

Every server event of a session goes through one :class:`Outbox` queue and one writer task, so events keep their
order and a cancelled response can never tear a frame half-written. In tests and when debugging it checks every
event against the SDK's models first (:mod:`voxcall.core.server_events`). An :class:`OutputGate` sits in front of it
for a speculative response: while closed it buffers (up to a bound, then the producer waits); opening it flushes
the buffer in order and lets later events straight through; dropping it forgets everything.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import deque
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from voxcall.core.events import Emit, Event
from voxcall.core.protocol import to_beta
from voxcall.core.server_events import check_server_event, validation_enabled

log = logging.getLogger(__name__)

Send = Callable[[dict[str, Any]], Awaitable[None]]
"""Writes one server event (a GA dict) to the socket."""

E = TypeVar("E", bound=Event)


class Outbox:
    """Orders a session's server events onto its socket through a single writer task.

    ``validate`` checks each event against the SDK's models as it is queued (None: as ``VOXCALL_VALIDATE_EVENTS``
    says), raising :class:`~voxcall.core.server_events.InvalidServerEvent` in the code that built it.
    """

    def __init__(self, send: Send, *, beta: bool = False, maxsize: int = 4096, validate: bool | None = None) -> None:
        self._send = send
        self._beta = beta
        self._validate = validation_enabled() if validate is None else validate
        self._queue: asyncio.Queue[dict[str, Any] | None] = asyncio.Queue(maxsize)
        self._writer: asyncio.Task[None] | None = None
        self.closed = False

    def start(self) -> None:
        """Start the writer task."""
        self._writer = asyncio.create_task(self._write(), name="voxcall-outbox")

    async def put(self, ev: dict[str, Any]) -> None:
        """Queue an event for the socket (waits while the client is slow to read). Dropped once closed."""
        if self._validate:
            check_server_event(ev)
        if not self.closed:
            await self._queue.put(ev)

    async def _write(self) -> None:
        while (ev := await self._queue.get()) is not None:
            out = to_beta(ev) if self._beta else ev
            if out is None:
                continue
            try:
                await self._send(out)
            except Exception as exc:  # the client went away: stop writing, the reader ends the session
                log.debug("outbox: send failed (%s); writer stops", type(exc).__name__)
                self.closed = True
                return

    async def close(self, *, flush: bool = True) -> None:
        """Stop the writer, after writing what is queued when ``flush`` (for at most 5 s: a client may have stopped
        reading). Cancelling the call still stops the writer."""
        writer, self._writer = self._writer, None
        if writer is None:
            return
        try:
            if flush and not self.closed:
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(self._write_out(writer), timeout=5)
        finally:
            self.closed = True
            writer.cancel()
        await asyncio.wait([writer])

    async def _write_out(self, writer: asyncio.Task[None]) -> None:
        """Queue the end mark and wait for ``writer`` to reach it."""
        await self._queue.put(None)
        await asyncio.shield(writer)


class OutputGate:
    """Holds a hidden response's events until it is claimed (``open``) or discarded (``drop``)."""

    def __init__(self, emit: Emit, *, limit: int = 2048) -> None:
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
