"""How a client reaches a realtime session: a WebSocket to a server, or a session in this process.

Both carry the same JSON events, so :class:`~voxcall.client.session.ClientSession` drives either unchanged. The
WebSocket side uses the ``websockets`` library directly (the one ``openai[realtime]`` brings): events stay plain
dicts, voxcall's own ``voxcall.*`` events included, with no model layer in between.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Protocol

from voxcall.config import default_of
from voxcall.serving.frames import Message

if TYPE_CHECKING:
    from websockets.asyncio.client import ClientConnection

    from voxcall.config import SessionOptions
    from voxcall.llm import LLMBackend
    from voxcall.realtime.connection import RealtimeConnection

def default_url(path: str) -> str:
    """The WebSocket URL of ``path`` on ``voxcall serve`` run with its defaults (host and port)."""
    return f"ws://{default_of('host')}:{default_of('port')}{path}"


REALTIME_URL = default_url("/v1/realtime")
"""Where ``voxcall talk`` connects by default."""

LIVE_URL = default_url("/v1/live/sessions")
"""Where ``voxcall talk --live`` connects by default."""

MAX_MESSAGE_BYTES = 16 * 1024 * 1024
"""Largest server message the client accepts (audio deltas are a few kilobytes)."""


class ClientError(Exception):
    """A problem the user of a client can act on (no server, refused key, bad input …); shown without traceback."""


class Transport(Protocol):
    """A two-way stream of Realtime events."""

    async def send(self, event: Message) -> None:
        """Send one client event."""
        ...

    def events(self) -> AsyncIterator[Message]:
        """The server's events, in order, until the connection ends."""
        ...

    async def close(self) -> None:
        """End the connection."""
        ...


class WebSocketTransport:
    """A Realtime WebSocket connection to a server."""

    def __init__(self, connection: ClientConnection) -> None:
        self._connection = connection

    @classmethod
    async def connect(cls, url: str, api_key: str | None = None) -> WebSocketTransport:
        """Connect to ``url`` (``ws://host:port/v1/realtime``), presenting ``api_key`` as a bearer token.

        Raises :class:`ClientError` when the server cannot be reached or refuses the connection.
        """
        from websockets.asyncio.client import connect
        from websockets.exceptions import InvalidHandshake, InvalidStatus, InvalidURI

        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        try:
            connection = await connect(url, additional_headers=headers, max_size=MAX_MESSAGE_BYTES, open_timeout=10)
        except InvalidURI:
            raise ClientError(f"{url!r} is not a WebSocket URL (ws://host:port/v1/realtime)") from None
        except InvalidStatus as exc:
            status = exc.response.status_code
            hint = ": check --api-key" if status in (401, 403) else ""
            raise ClientError(f"the server at {url} refused the connection (HTTP {status}){hint}") from None
        except (OSError, TimeoutError, InvalidHandshake) as exc:
            raise ClientError(f"cannot connect to {url}: {exc or type(exc).__name__}; is 'voxcall serve' "
                              "running?") from None
        return cls(connection)

    async def send(self, event: Message) -> None:
        from websockets.exceptions import ConnectionClosed

        try:
            await self._connection.send(json.dumps(event))
        except ConnectionClosed:
            raise ClientError("the server closed the connection") from None

    async def events(self) -> AsyncIterator[Message]:
        from websockets.exceptions import ConnectionClosed

        try:
            async for message in self._connection:
                yield json.loads(message)
        except ConnectionClosed:
            return

    async def close(self) -> None:
        await self._connection.close()


class InProcessTransport:
    """A session in this process, spoken to in the Realtime protocol: the events go through its connection's JSON
    entry point, as from a socket."""

    def __init__(self, connection: RealtimeConnection, events: asyncio.Queue[Message | None]) -> None:
        self._connection = connection
        self._events = events

    @classmethod
    async def open(cls, backend: LLMBackend, options: SessionOptions) -> InProcessTransport:
        """Start a session answering with ``backend``; its ``session.created`` is the first event."""
        from voxcall.config import ServerSettings
        from voxcall.realtime.connection import RealtimeConnection
        from voxcall.serving.host import SessionHost
        from voxcall.serving.shared import Shared

        events: asyncio.Queue[Message | None] = asyncio.Queue()
        connection = RealtimeConnection(SessionHost(Shared.of(ServerSettings(session=options), backend)), events.put)
        await connection.start()
        return cls(connection, events)

    async def send(self, event: Message) -> None:
        await self._connection.handle_frame(json.dumps(event))

    async def events(self) -> AsyncIterator[Message]:
        while (event := await self._events.get()) is not None:
            yield event

    async def close(self) -> None:
        await self._connection.close()
        await self._events.put(None)
