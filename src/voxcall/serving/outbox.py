"""The way out to a connection: one writer task per session, so its messages keep their order.

Every message of a session (its events, as its edge encoded them, and the edge's own) goes through one
:class:`Outbox` queue and one writer task, so a cancelled response can never tear a frame half-written and a slow
client makes the producers wait (the queue is bounded) instead of piling messages up in memory.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from typing import Generic, TypeVar

log = logging.getLogger(__name__)

M = TypeVar("M")


class Outbox(Generic[M]):
    """Writes a session's messages with ``write``, in order, from a single writer task."""

    def __init__(self, write: Callable[[M], Awaitable[None]], *, maxsize: int = 4096) -> None:
        self._write_one = write
        self._queue: asyncio.Queue[M | None] = asyncio.Queue(maxsize)
        self._writer: asyncio.Task[None] | None = None
        self.closed = False

    def start(self) -> None:
        """Start the writer task."""
        self._writer = asyncio.create_task(self._write(), name="voxcall-outbox")

    async def put(self, message: M) -> None:
        """Queue a message (waits while the client is slow to read). Dropped once closed."""
        if not self.closed:
            await self._queue.put(message)

    async def _write(self) -> None:
        while (message := await self._queue.get()) is not None:
            try:
                await self._write_one(message)
            except Exception as exc:  # the client went away: stop writing, the reader ends the session
                log.debug("outbox: write failed (%s); writer stops", type(exc).__name__)
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
