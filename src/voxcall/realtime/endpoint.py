"""The Realtime protocol's WebSocket edge: ``WS /v1/realtime``, one session per connection.

The gate has checked the origin, the key and the session limits and accepted the upgrade; this reads what the
Realtime handshake says (``?model=``, ``OpenAI-Beta: realtime=v1`` for the beta event names), greets the client
with ``session.created`` and hands every frame to the connection (:mod:`voxcall.realtime.connection`) until the client
goes away.
"""

from __future__ import annotations

from starlette.websockets import WebSocket

from voxcall.realtime.connection import RealtimeConnection
from voxcall.serving.frames import Message, frames, json_text
from voxcall.serving.host import SessionHost
from voxcall.serving.shared import Occupy


async def serve_realtime(ws: WebSocket, host: SessionHost, occupy: Occupy) -> None:
    """Serve one accepted ``/v1/realtime`` connection until it ends; ``occupy`` registers its session for a drain
    (False: the server began to stop, and has closed the connection)."""

    async def close(code: int, reason: str) -> None:
        await ws.close(code=code, reason=reason)

    async def send(message: Message) -> None:
        await ws.send_text(json_text(message))

    connection = RealtimeConnection(host, send, model=ws.query_params.get("model"),
                                    beta="realtime=v1" in ws.headers.get("openai-beta", ""), close=close)
    try:
        if not await occupy(connection.hosted):
            return
        await connection.start()
        await connection.serve(frames(ws))
    finally:
        await connection.close()
