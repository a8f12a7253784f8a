"""What the Realtime and the GPT-Live runs share: the link to the server as a conversation uses it.

A :class:`Channel` numbers the client events it sends (so that an ``error`` can name the one at fault), reads the
server's events in one task and hands each to the run, keeps the replies the run waits for (``session.created`` …),
the tasks the run starts (*busy* ones keep a turn from ending, *late* ones do not), and the first failure, which ends
every wait. Every event read and every task that ends sets :attr:`changed`, so a run waits on conditions with
:meth:`until` instead of polling.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable, Coroutine
from typing import Any

from voxcall.evaluation.connect import EvalError, Event, Link


class Channel:
    """The conversation's side of ``link``."""

    def __init__(self, link: Link) -> None:
        self.link = link
        self.failure: str | None = None
        self.changed = asyncio.Event()
        self.busy: set[asyncio.Task[None]] = set()
        self.late: set[asyncio.Task[None]] = set()
        self.replies: dict[str, asyncio.Future[Event]] = {}
        self._reader: asyncio.Task[None] | None = None
        self._count = 0

    def event_id(self) -> str:
        """A new client event id."""
        self._count += 1
        return f"eval_{self._count}"

    async def send(self, event: Event) -> None:
        """Send ``event`` with an id of its own."""
        await self.link.send({"event_id": self.event_id(), **event})

    def read(self, handle: Callable[[Event], None]) -> None:
        """Start reading: each server event goes to ``handle``; the end of the connection is a failure."""
        self._reader = asyncio.create_task(self._read(handle), name="eval-reader")

    def expect(self, key: str) -> asyncio.Future[Event]:
        """A reply to wait for under ``key`` (:meth:`answer` resolves it; a failure fails it)."""
        reply: asyncio.Future[Event] = asyncio.get_running_loop().create_future()
        self.replies[key] = reply
        return reply

    def answer(self, key: str | None, event: Event) -> bool:
        """Resolve the reply waited for under ``key`` with ``event``; False when none waits."""
        reply = self.replies.pop(key, None) if key is not None else None
        if reply is None or reply.done():
            return False
        reply.set_result(event)
        return True

    async def reply(self, reply: asyncio.Future[Event], what: str, timeout: float) -> Event:
        """Wait for ``reply``; an :class:`EvalError` naming ``what`` when it does not come in time."""
        try:
            return await asyncio.wait_for(asyncio.shield(reply), timeout)
        except TimeoutError:
            raise EvalError(f"the server sent no {what} within {timeout:g} s") from None

    def later(self, work: Coroutine[Any, Any, None], *, busy: bool) -> asyncio.Task[None]:
        """Run ``work`` beside the conversation (``busy``: the turn waits for it); its failure fails the run."""
        task = asyncio.create_task(work)
        tasks = self.busy if busy else self.late
        tasks.add(task)

        def done(task: asyncio.Task[None]) -> None:
            tasks.discard(task)
            if not task.cancelled() and (exc := task.exception()) is not None:
                self.fail(str(exc) if isinstance(exc, EvalError) else f"answering the server failed: {exc!r}")
            self.changed.set()

        task.add_done_callback(done)
        return task

    def fail(self, message: str) -> None:
        """The conversation cannot go on (the first reason is kept)."""
        self.failure = self.failure or message
        self.changed.set()

    async def until(self, ready: Callable[[], bool], timeout: float,
                    wake: Callable[[], float | None] = lambda: None) -> None:
        """Wait until ``ready()``, checked at each change and after ``wake()`` seconds when it gives a time (a
        condition that becomes true by the clock alone). TimeoutError after ``timeout`` seconds; an
        :class:`EvalError` when the conversation failed."""
        deadline = time.monotonic() + timeout
        while not ready():
            if self.failure is not None:
                raise EvalError(self.failure)
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError
            self.changed.clear()
            by_clock = wake()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.changed.wait(), remaining if by_clock is None
                                       else max(0.005, min(remaining, by_clock)))

    async def wait_late(self, timeout: float) -> None:
        """Wait for the late tasks (delayed tool results) to end."""
        late = [task for task in self.late if not task.done()]
        if late:
            await asyncio.wait_for(asyncio.gather(*late), timeout)

    async def close(self) -> None:
        """Stop reading and every task, and close the link."""
        tasks = [task for task in (self._reader, *self.busy, *self.late) if task is not None]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await self.link.close()

    async def _read(self, handle: Callable[[Event], None]) -> None:
        try:
            async for event in self.link.events():
                handle(event)
                self.changed.set()
            self.fail("the server closed the connection")
        except Exception as exc:  # an event of an unexpected shape: say so rather than hang
            self.fail(f"cannot follow the server's events ({type(exc).__name__}: {exc})")
        for reply in self.replies.values():
            if not reply.done():
                reply.set_exception(EvalError(self.failure or "the connection ended"))
