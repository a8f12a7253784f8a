"""Admission to the protocol edges: how many sessions the process serves at once, in all and per client key, and how
they end when the server stops.

:meth:`Admission.admit` checks the limits and reserves a place in one step, with no ``await`` in between, so a storm of
connections can never get past them: each connection gets a :class:`Seat` (given back when the connection ends, however
it ends) or a :class:`Refusal`, which the gate answers with an HTTP error before the WebSocket upgrade
(:mod:`voxcall.serving.gate`). :meth:`Admission.drain` is the graceful stop: no new seats; the response each session is
running may finish until the grace period ends (a session with none is closed at once); then every connection is closed
with the close code of the ``shutdown_close_code`` setting: 1001 (going away) for a server that stops, 1012 (service
restart) for a replica behind a load balancer, whose clients reconnect through it to another one.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import Counter
from types import TracebackType
from typing import TYPE_CHECKING, Any, Protocol

from starlette.websockets import WebSocketDisconnect

if TYPE_CHECKING:
    from voxcall.serving.shared import Drainable

log = logging.getLogger(__name__)

RETRY_AFTER_SECONDS = 5
"""The ``Retry-After`` of a refusal: when a client refused for capacity (or a stopping server) may try again."""

GOING_AWAY = 1001
"""The WebSocket close code of a session the stopping server ends (unless told otherwise: :data:`CLOSE_REASONS`)."""

SHUTTING_DOWN = "server shutting down"
"""The close reason that goes with :data:`GOING_AWAY`."""

SERVICE_RESTART = 1012
"""The close code of a session a stopping replica ends: the service goes on elsewhere, reconnect."""

CLOSE_REASONS = {GOING_AWAY: SHUTTING_DOWN, SERVICE_RESTART: "server restarting: reconnect"}
"""The close codes a drain may end sessions with (``shutdown_close_code``), with their reasons."""

CLOSE_FRAME_TIMEOUT = 5
"""Seconds a drain waits to send a connection its close frame (a client that stopped reading holds it up); past
that the connection is left to uvicorn's own shutdown."""


class Refusal(Exception):
    """Why a request or connection gets no session: the HTTP status it is refused with, the error's type, a code
    naming the limit (its setting) or the check, and a message for people. Raised where a refusal ends a request."""

    def __init__(self, status: int, kind: str, code: str, message: str) -> None:
        super().__init__(message)
        self.status, self.kind, self.code, self.message = status, kind, code, message

    def body(self) -> dict[str, Any]:
        """The JSON body of the refusal, shaped like an OpenAI API error."""
        return {"error": {"type": self.kind, "code": self.code, "message": self.message}}


class Connection(Protocol):
    """What a drain closes: a WebSocket, or a WebRTC call (:class:`~voxcall.webrtc.call.WebRTCCall`)."""

    async def close(self, code: int = 1000, reason: str | None = None) -> None: ...


class Seat:
    """One admitted connection's place in the counts and, once its WebSocket is accepted, its session, which a
    drain closes. Leaving the ``with`` block gives the place back."""

    def __init__(self, admission: Admission, key: str | None) -> None:
        self._admission = admission
        self.key = key
        self.session: Drainable | None = None
        self.websocket: Connection | None = None

    def occupy(self, session: Drainable, websocket: Connection) -> bool:
        """Attach the accepted connection's ``session`` so that a drain can end it; False when the server began
        to stop while the connection was being accepted (the caller then closes it with :meth:`Admission.close`)."""
        if self._admission.draining:
            return False
        self.session, self.websocket = session, websocket
        return True

    def leave(self) -> None:
        """Give the place back now (a call outlives the request that opened it: no ``with`` block holds it)."""
        self._admission.release(self)

    def __enter__(self) -> Seat:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 traceback: TracebackType | None) -> None:
        self._admission.release(self)


class Admission:
    """The process's session limits, the seats taken, and the drain at shutdown."""

    def __init__(self, max_sessions: int, max_sessions_per_key: int, close_code: int = GOING_AWAY) -> None:
        """``max_sessions``: seats in all; ``max_sessions_per_key``: seats one client key may hold (keys are only
        counted when the app passes one, that is when client keys are configured); ``close_code``: what a drain
        closes the sessions with, one of :data:`CLOSE_REASONS`."""
        if close_code not in CLOSE_REASONS:
            raise ValueError(f"close_code must be one of {sorted(CLOSE_REASONS)}, not {close_code}")
        self.max_sessions = max_sessions
        self.max_sessions_per_key = max_sessions_per_key
        self.close_code = close_code
        self.draining = False
        self._seats: set[Seat] = set()
        self._per_key: Counter[str] = Counter()
        self._expired = asyncio.Event()  # the grace period is over: stop waiting for responses

    @property
    def active(self) -> int:
        """Seats taken now (sessions open or being opened)."""
        return len(self._seats)

    def admit(self, key: str | None) -> Seat | Refusal:
        """A seat for a new connection presenting ``key`` (None: keys are not counted), or why it gets none."""
        if self.draining:
            return Refusal(503, "server_error", "shutting_down",
                           "the server is shutting down; connect again later or to another server")
        if len(self._seats) >= self.max_sessions:
            return Refusal(503, "server_error", "max_sessions",
                           f"the server is serving its limit of {self.max_sessions} sessions (max_sessions); "
                           "try again later")
        if key is not None and self._per_key[key] >= self.max_sessions_per_key:
            return Refusal(429, "rate_limit_error", "max_sessions_per_key",
                           f"this API key holds its limit of {self.max_sessions_per_key} sessions "
                           "(max_sessions_per_key); close one first")
        seat = Seat(self, key)
        self._seats.add(seat)
        if key is not None:
            self._per_key[key] += 1
        return seat

    def release(self, seat: Seat) -> None:
        """Give ``seat`` back (again: nothing)."""
        if seat not in self._seats:
            return
        self._seats.remove(seat)
        if seat.key is not None:
            self._per_key[seat.key] -= 1
            if not self._per_key[seat.key]:
                del self._per_key[seat.key]

    async def drain(self, grace: float) -> None:
        """Stop admitting; give each session's running response up to ``grace`` seconds (or until :meth:`hurry`)
        to finish; close every connection with :attr:`close_code`. Returns once every close frame is sent (or
        given up on)."""
        self.draining = True
        log.info("draining %d session(s): running responses get up to %g s", len(self._seats), grace)
        timer = asyncio.get_running_loop().call_later(grace, self._expired.set)
        try:
            await asyncio.gather(*(self._close(seat) for seat in list(self._seats)))
        finally:
            timer.cancel()

    def hurry(self) -> None:
        """End the grace period now (a second stop signal): running responses are cut off."""
        self._expired.set()

    async def _close(self, seat: Seat) -> None:
        """Let ``seat``'s session finish, then close its connection (nothing for a seat not yet occupied: it sees
        the drain when it tries to occupy)."""
        session, websocket = seat.session, seat.websocket
        if session is None or websocket is None:
            return
        await session.finish(self._expired)
        # the client may have left meanwhile, or stopped reading
        with contextlib.suppress(WebSocketDisconnect, RuntimeError, TimeoutError):
            async with asyncio.timeout(CLOSE_FRAME_TIMEOUT):
                await self.close(websocket)

    async def close(self, websocket: Connection) -> None:
        """Close ``websocket`` as the drain does: with :attr:`close_code` and its reason."""
        await websocket.close(code=self.close_code, reason=CLOSE_REASONS[self.close_code])
