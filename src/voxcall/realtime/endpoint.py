"""The Realtime protocol's edge: ``WS /v1/realtime``, one :class:`~voxcall.core.session.Session` per connection.

The serving layer has checked the origin, the key and the session limits and accepted the upgrade; this reads what
the Realtime handshake says (``?model=``, ``OpenAI-Beta: realtime=v1`` for the beta event names), greets the client
with ``session.created`` and hands every frame to the session until the client goes away. The session's events
are the Realtime protocol's own (GA shape), so the edge writes them as they are.
"""

from __future__ import annotations

from starlette.websockets import WebSocket, WebSocketDisconnect

from voxcall.core.protocol import Event, wire_text
from voxcall.core.session import Session
from voxcall.serving.shared import Occupy, Shared


async def serve_realtime(ws: WebSocket, shared: Shared, occupy: Occupy) -> None:
    """Serve one accepted ``/v1/realtime`` connection until it ends; ``occupy`` registers its session for a drain
    (False: the server began to stop, and has closed the connection)."""
    settings = shared.settings
    model = ws.query_params.get("model") or settings.model or settings.llm or "voxcall"
    beta = "realtime=v1" in ws.headers.get("openai-beta", "")

    async def send(ev: Event) -> None:
        await ws.send_text(wire_text(ev))

    async def close_socket(code: int, reason: str) -> None:
        await ws.close(code=code, reason=reason)

    session = Session(shared.backend, send, options=settings.session, tools=settings.tools, model=model, beta=beta,
                      slots=shared.slots, voice=shared.voice, toolbox=shared.toolbox, metrics=shared.metrics,
                      close_socket=close_socket)
    shared.metrics.sessions_total.inc()
    shared.metrics.sessions_active.inc()
    try:
        if not await occupy(session):
            return
        await session.start()
        while True:
            message = await ws.receive()
            if message["type"] == "websocket.disconnect":
                break
            data = message.get("text")
            await session.handle_frame(data if data is not None else message.get("bytes") or b"")
    except WebSocketDisconnect:
        pass
    finally:
        shared.metrics.sessions_active.dec()
        await session.close()
