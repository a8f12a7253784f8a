"""The session host: the one place that builds a session, feeds it, keeps it alive while it is used, and closes it.

Every edge opens its sessions here (:meth:`SessionHost.open`) with a :class:`Codec`, the edge's own part: how each of
the session's events becomes the edge's message (``encode``, called where the event is made, so a bad one fails in
the code that made it) and how a message is written (``write``, from the one writer task of the session's
:class:`~voxcall.serving.outbox.Outbox`). What a :class:`Hosted` session does besides:

- builds the core :class:`~voxcall.core.session.Session` from the process's parts (:class:`SessionParts`), the
  server tools (or the edge's choice of them) and the settings, and counts it in ``/metrics``;
- opens its trace (a ``voxcall.session`` span naming the edge's protocol and the model the session reports), which
  the session ends when it closes;
- feeds it: :meth:`Hosted.run` applies commands and edge work from one source, one at a time and in order; an edge
  whose commands come from several places (callbacks, timers) :meth:`Hosted.submit` them to the session's inbox,
  which :meth:`Hosted.feed` drains;
- closes it when it has been idle for ``session.idle_timeout`` (no command, no response running), through the
  connection's ``close`` (code 1000, a reason naming the setting);
- lets its running response end when the server drains (:meth:`Hosted.finish`), then closes it with the connection.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import AsyncIterable, AsyncIterator, Awaitable, Callable
from typing import Generic, Protocol, TypeVar

from starlette import status

from voxcall.config import SessionOptions
from voxcall.core.commands import Command
from voxcall.core.errors import SessionError
from voxcall.core.events import Event
from voxcall.core.parts import SessionParts
from voxcall.core.playout import Playout
from voxcall.core.responses.lifecycle import Phase
from voxcall.core.session import Session
from voxcall.core.tools.toolbox import Toolbox
from voxcall.llm import LLMBackend
from voxcall.serving.metrics import Metrics
from voxcall.serving.outbox import Outbox
from voxcall.serving.shared import Shared
from voxcall.telemetry.tracing import SessionTrace

log = logging.getLogger(__name__)

M = TypeVar("M")

CloseConnection = Callable[[int, str], Awaitable[None]]
"""Ends a session's connection with a WebSocket close code and a reason."""

Work = Callable[[], Awaitable[None]]
"""An edge's own step of a session's input (a frame to read and act on), run in turn with the commands."""

INBOX_LIMIT = 64
r"""Items a session's inbox holds before a producer that :meth:`Hosted.put`\ s (a socket's reader) waits: a client
faster than its session reads no further ahead (callbacks :meth:`Hosted.submit` and never wait)."""

IDLE_CLOSE_CODE = status.WS_1000_NORMAL_CLOSURE
"""The close code of a session ended for idleness (nothing went wrong)."""

SERVER_MODEL = "voxcall"
"""The model name a session reports when neither its client nor the operator named one."""


class Codec(Protocol[M]):
    """An edge's part of a session: its events as the edge's messages, and how a message is written."""

    def encode(self, ev: Event) -> M | None:
        """The message for ``ev`` (None: nothing to write; an edge may play it instead, or leave it out)."""
        ...

    async def write(self, message: M) -> None:
        """Write one message to the connection (raising when the connection is gone)."""
        ...

    async def refused(self, error: SessionError) -> None:
        """A command submitted to the session failed (an edge's own work reports its errors itself)."""
        ...


class SessionHost:
    """Builds and runs every session of the process from its :class:`Shared` parts."""

    def __init__(self, shared: Shared) -> None:
        self.shared = shared

    def model(self, asked: str | None = None) -> str:
        """The model name a session reports: the client's, else the operator's, else the server's own."""
        settings = self.shared.settings
        return asked or settings.model or settings.llm or SERVER_MODEL

    def open(self, codec: Codec[M], *, protocol: str, model: str | None = None, close: CloseConnection | None = None,
             playout: Playout | None = None, toolbox: Toolbox | bool | None = True,
             backend: LLMBackend | None = None, options: SessionOptions | None = None) -> Hosted[M]:
        """A session for one connection of the edge ``protocol`` (``realtime``, ``live`` …: what its trace says),
        its events encoded and written by ``codec``; ``model``: the name the client asked for (:meth:`model`);
        ``close`` ends the connection (None: the session is never closed for idleness); ``playout`` plays its speech
        (:mod:`voxcall.core.playout`). ``toolbox``: True for the server's tools, else the ones to use (None: none);
        ``backend`` and ``options`` replace the server's own."""
        shared = self.shared
        tracing, named = shared.tracing, self.model(model)

        def trace(session_id: str) -> SessionTrace:
            return tracing.session(session_id=session_id, protocol=protocol, model=named)

        parts = SessionParts(backend or shared.backend, options or shared.settings.session, shared.settings.tools,
                             shared.voice, shared.toolbox if toolbox is True else toolbox or None, shared.slots,
                             shared.metrics, trace)
        return Hosted(parts, codec, shared.metrics, close, playout)


class Hosted(Generic[M]):
    """One session, its way out (an :class:`~voxcall.serving.outbox.Outbox` writing with its codec), its inbox
    and its idle watch."""

    def __init__(self, parts: SessionParts, codec: Codec[M], metrics: Metrics, close: CloseConnection | None,
                 playout: Playout | None = None) -> None:
        self.codec = codec
        self.outbox: Outbox[M] = Outbox(codec.write)
        self.session = Session(parts, self._emit, playout)
        self._metrics = metrics
        self._idle_timeout = parts.options.idle_timeout
        self._close_connection = close
        self._inbox: deque[Command | Work | None] = deque()
        self._arrived = asyncio.Event()
        self._room = asyncio.Event()
        self._room.set()
        self._active_at = 0.0  # when (event loop time) the last command came, or the last response ended
        self._idle_watch: asyncio.Task[None] | None = None
        self._started = False

    async def _emit(self, ev: Event) -> None:
        message = self.codec.encode(ev)
        if message is not None:
            await self.outbox.put(message)

    async def send(self, message: M) -> None:
        """Write an edge's own message, in order with the session's events."""
        await self.outbox.put(message)

    async def start(self) -> None:
        """Start writing, count the session, and watch for idleness."""
        self._started = True
        self._metrics.sessions_total.inc()
        self._metrics.sessions_active.inc()
        self.outbox.start()
        self._active_at = asyncio.get_running_loop().time()
        if self._close_connection is not None:
            self._idle_watch = asyncio.create_task(self._expire_when_idle(self._close_connection),
                                                   name=f"voxcall-idle-{self.session.id}")

    async def run(self, source: AsyncIterable[Command | Work]) -> None:
        """Apply what ``source`` yields, one at a time, until it ends."""
        async for item in source:
            await self.apply(item)

    async def apply(self, item: Command | Work) -> None:
        """Apply one command (its error goes to the codec) or run one step of the edge's own."""
        self._active_at = asyncio.get_running_loop().time()
        if callable(item):
            await item()
            return
        try:
            await self.session.apply(item)
        except SessionError as err:
            await self.codec.refused(err)

    def submit(self, item: Command | Work | None) -> None:
        """Queue ``item`` for :meth:`feed` (from a callback or another task; never waits); None ends the feed."""
        self._inbox.append(item)
        self._arrived.set()
        if len(self._inbox) >= INBOX_LIMIT:
            self._room.clear()

    async def put(self, item: Command | Work) -> None:
        """Queue ``item`` for :meth:`feed`, first waiting while the inbox is full."""
        await self._room.wait()
        self.submit(item)

    async def feed(self) -> None:
        """Apply what is submitted, in order, until the session closes (or the task is cancelled)."""
        await self.run(self._submitted())

    async def _submitted(self) -> AsyncIterator[Command | Work]:
        while True:
            while not self._inbox:
                self._arrived.clear()
                await self._arrived.wait()
            item = self._inbox.popleft()
            if len(self._inbox) < INBOX_LIMIT:
                self._room.set()
            if item is None:
                return
            yield item

    async def finish(self, expired: asyncio.Event) -> None:
        """The server is stopping: let the response running now (if any) end, unless ``expired`` is set first; then
        write out what is queued (nothing more once expired) and stop writing. The caller then closes the
        connection, which ends the session (and a response still running)."""
        ended = asyncio.ensure_future(self.session.responses.settled())
        cut = asyncio.ensure_future(expired.wait())
        try:
            await asyncio.wait([ended, cut], return_when=asyncio.FIRST_COMPLETED)
        finally:
            settled = ended.done() and not ended.cancelled()
            ended.cancel()
            cut.cancel()
        await self.outbox.close(flush=settled)

    async def close(self) -> None:
        """The connection ended: stop the session and everything it runs; nothing more is written."""
        self.submit(None)
        if self._idle_watch is not None:
            self._idle_watch.cancel()
            await asyncio.wait([self._idle_watch])
        self.outbox.closed = True
        await self.session.close()
        await self.outbox.close(flush=False)
        if self._started:
            self._metrics.sessions_active.dec()

    async def _expire_when_idle(self, close: CloseConnection) -> None:
        """End the connection once the session has been idle for ``idle_timeout``: counted from the last command or
        the end of the last response, whichever is later; never while a response runs."""
        loop = asyncio.get_running_loop()
        timeout = self._idle_timeout
        responses = self.session.responses
        while True:
            if responses.phase is Phase.VISIBLE:
                await responses.settled()
                self._active_at = loop.time()
            left = self._active_at + timeout - loop.time()
            if left <= 0:
                break
            await asyncio.sleep(left)
        log.info("session %s: idle for %g s; closing it", self.session.id, timeout)
        await close(IDLE_CLOSE_CODE, f"idle for {timeout:g} s (session.idle_timeout)")
