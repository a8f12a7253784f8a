"""The GPT-Live protocol's edge: ``WS /v1/live/sessions``, one :class:`~voxcall.live.session.LiveSession` per connection
(what the SDK's ``client.live.connect()`` opens for ``base_url=http://HOST:PORT/v1``).

The gate has checked the origin, the key and the session limits and accepted the upgrade (no subprotocol). The client
speaks first: its first frame must be ``session.start``, answered with ``session.started``; anything else, or a
configuration voxcall refuses, is answered with an ``error`` and the connection closes (1008). Then every frame goes to
the session's inbox, within the server's frame size and event rate limits, and is handled in turn, until
``session.close`` or the client goes away.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import time

from starlette import status
from starlette.websockets import WebSocket, WebSocketDisconnect

from voxcall.core.errors import SessionError
from voxcall.live.backend import backend_models
from voxcall.live.config import LiveError, error_wire, read_start
from voxcall.live.session import LiveSession
from voxcall.serving.frames import Message, event, frames, json_text, read_json
from voxcall.serving.host import SessionHost
from voxcall.serving.rate import EventFate, EventRate
from voxcall.serving.shared import Occupy

log = logging.getLogger(__name__)


async def serve_live(ws: WebSocket, host: SessionHost, occupy: Occupy) -> None:
    """Serve one accepted ``/v1/live/sessions`` connection until it ends."""
    writing = asyncio.Lock()  # the paced output and the replies share the socket

    async def send(ev: Message) -> None:
        async with writing:
            await ws.send_text(json_text(ev))

    async def close_socket(code: int, reason: str) -> None:
        with contextlib.suppress(RuntimeError, WebSocketDisconnect):
            await ws.close(code=code, reason=reason)

    options = host.shared.settings.session
    source = frames(ws)
    try:
        data = await anext(source, None)
        if data is None:
            return
        first = read_json(data, options.max_frame_bytes)
        client_event_id = first.get("event_id") if isinstance(first.get("event_id"), str) else None
        if first.get("type") != "session.start":
            raise LiveError("the first event must be session.start", code="session_not_started", param="type")
        config = read_start(first.get("session"), backend_models=backend_models(host.shared))
    except SessionError as err:
        await send(event("error", error=error_wire(err, None)))
        await close_socket(status.WS_1008_POLICY_VIOLATION, err.message[:120])
        return
    session = LiveSession(host, config, send, close_socket)
    rate = EventRate(options.events_per_second, time.monotonic)
    feeding: asyncio.Task[None] | None = None
    try:
        if not await occupy(session.hosted):
            return
        await session.start(client_event_id)
        feeding = asyncio.create_task(session.hosted.feed(), name=f"voxcall-live-{session.id}")
        async for data in source:
            try:
                ev = read_json(data, options.max_frame_bytes)
            except SessionError as err:
                await session.hosted.put(functools.partial(session.error, err, None))
                continue
            fate = rate.admit()
            if fate is EventFate.ACCEPTED:
                await session.hosted.put(functools.partial(session.handle, ev))
            elif fate is EventFate.REFUSED:
                client_event_id = ev.get("event_id") if isinstance(ev.get("event_id"), str) else None
                await session.hosted.put(functools.partial(session.error, rate.error(), client_event_id))
    finally:
        if feeding is not None:
            feeding.cancel()
            await asyncio.wait([feeding])
        await session.close()
