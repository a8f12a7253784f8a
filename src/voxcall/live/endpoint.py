"""The GPT-Live protocol's edge: ``WS /v1/live/sessions``, one :class:`~voxcall.live.session.LiveSession` per
connection (what the SDK's ``client.live.connect()`` opens for ``base_url=http://HOST:PORT/v1``).

The serving layer has checked the origin, the key and the session limits and accepted the upgrade (no
subprotocol). The client speaks first: its first frame must be ``session.start``, answered with
``session.started``; anything else, or a configuration voxcall refuses, is answered with an ``error`` and the
connection closes (1008). Then every frame goes to the session, within the server's frame size and event rate
limits, until ``session.close`` or the client goes away.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time

from starlette.websockets import WebSocket, WebSocketDisconnect

from voxcall.core.client_events import decode_frame
from voxcall.core.protocol import Event, ProtocolError, event, wire_text
from voxcall.core.rate_limits import EventFate, EventRate
from voxcall.live.config import LiveError, read_start
from voxcall.live.session import LiveSession, backend_models
from voxcall.serving.shared import Occupy, Shared

log = logging.getLogger(__name__)

_POLICY_VIOLATION = 1008


async def serve_live(ws: WebSocket, shared: Shared, occupy: Occupy) -> None:
    """Serve one accepted ``/v1/live/sessions`` connection until it ends."""
    writing = asyncio.Lock()  # the paced output and the replies share the socket

    async def send(ev: Event) -> None:
        async with writing:
            await ws.send_text(wire_text(ev))

    async def close_socket(code: int, reason: str) -> None:
        with contextlib.suppress(RuntimeError, WebSocketDisconnect):
            await ws.close(code=code, reason=reason)

    options = shared.settings.session
    try:
        first = await _frame(ws, options.max_frame_bytes)
        if first is None:
            return
        client_event_id = first.get("event_id") if isinstance(first.get("event_id"), str) else None
        if first.get("type") != "session.start":
            raise LiveError("the first event must be session.start", code="session_not_started", param="type")
        config = read_start(first.get("session"), backend_models=backend_models(shared))
    except LiveError as err:
        await send(event("error", error=err.to_wire(None)))
        await close_socket(_POLICY_VIOLATION, err.message[:120])
        return
    except WebSocketDisconnect:
        return
    session = LiveSession(shared, config, send, close_socket)
    rate = EventRate(options.events_per_second, time.monotonic)
    shared.metrics.sessions_total.inc()
    shared.metrics.sessions_active.inc()
    try:
        if not await occupy(session):
            return
        await session.start(client_event_id)
        while not session.closed:
            try:
                ev = await _frame(ws, options.max_frame_bytes)
            except LiveError as err:
                await session.error(err, None)
                continue
            if ev is None:
                break
            fate = rate.admit()
            if fate is EventFate.ACCEPTED:
                await session.handle(ev)
            elif fate is EventFate.REFUSED:
                refusal = rate.error()
                await session.error(LiveError(refusal.message, code=refusal.code, kind=refusal.kind),
                                    ev.get("event_id") if isinstance(ev.get("event_id"), str) else None)
    except WebSocketDisconnect:
        pass
    finally:
        shared.metrics.sessions_active.dec()
        await session.close()


async def _frame(ws: WebSocket, max_frame_bytes: int) -> Event | None:
    """The next client frame, decoded (None: the client went away); ``LiveError`` for one that is no JSON object
    or is too large."""
    message = await ws.receive()
    if message["type"] == "websocket.disconnect":
        return None
    data = message.get("text")
    try:
        return decode_frame(data if data is not None else message.get("bytes") or b"", max_frame_bytes)
    except ProtocolError as err:
        raise LiveError(err.message, code=err.code, param=err.param) from None
