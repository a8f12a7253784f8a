"""The connection to the server evaluated, through the official ``openai`` SDK: its Realtime client
(``client.realtime.connect``) or its GPT-Live client (``client.live.connect``), whichever the URL names.

The SDK builds the URL, the headers and the WebSocket as it would against OpenAI, so the runner talks to voxcall
exactly as to any other server. Events travel as plain dicts (:class:`Link`): what the server sends is read raw
(``recv_bytes``), so its own extension events (``voxcall.*``) and anything the SDK's models do not know pass through.
"""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any, Protocol
from urllib.parse import parse_qs, urlsplit, urlunsplit

from voxcall.evaluation.scenario import Protocol as Wire

DEFAULT_MODEL = "gpt-realtime"
"""The model a Realtime connection names when neither ``--model``, the file nor the URL's ``?model=`` does."""

Event = dict[str, Any]


class EvalError(Exception):
    """A problem the user of ``voxcall eval`` can act on (no server, refused key …); shown without a traceback."""


class Link(Protocol):
    """A two-way stream of JSON events with the server."""

    async def send(self, event: Event) -> None:
        """Send one client event."""

    def events(self) -> AsyncIterator[Event]:
        """The server's events in order, until the connection ends."""

    async def close(self) -> None:
        """End the connection."""


@dataclass(frozen=True)
class Endpoint:
    """Where to connect: the protocol, the SDK's ``websocket_base_url`` and the model the URL names."""

    protocol: Wire
    base_url: str
    model: str | None


def endpoint(url: str) -> Endpoint:
    """The endpoint of ``url``: ``ws[s]://HOST[:PORT]/PREFIX/realtime[?model=M]`` (Realtime) or
    ``…/PREFIX/live/sessions`` (GPT-Live); anything else is an :class:`EvalError` naming both forms."""
    parts = urlsplit(url)
    path = parts.path.rstrip("/")
    if parts.scheme not in ("ws", "wss") or not parts.netloc:
        raise EvalError(f"{url!r} is not a WebSocket URL (ws://HOST:PORT/v1/realtime or …/v1/live/sessions)")
    for suffix, protocol in (("/live/sessions", Wire.LIVE), ("/realtime", Wire.REALTIME)):
        if path.endswith(suffix):
            model = parse_qs(parts.query).get("model", [None])[0]
            base = urlunsplit((parts.scheme, parts.netloc, path.removesuffix(suffix), "", ""))
            return Endpoint(protocol, base, model)
    raise EvalError(f"{url!r} names neither a Realtime endpoint (…/realtime) nor a GPT-Live one (…/live/sessions)")


class SdkLink:
    """A connection of the SDK (Realtime or GPT-Live) as a :class:`Link`."""

    def __init__(self, connection: Any) -> None:
        self._connection = connection

    async def send(self, event: Event) -> None:
        from websockets.exceptions import ConnectionClosed

        try:
            await self._connection.send(event)
        except ConnectionClosed:
            raise EvalError("the server closed the connection") from None

    async def events(self) -> AsyncIterator[Event]:
        from websockets.exceptions import ConnectionClosed

        while True:
            try:
                message = await self._connection.recv_bytes()
            except ConnectionClosed:
                return
            yield json.loads(message)

    async def close(self) -> None:
        await self._connection.close()


async def open_link(where: Endpoint, *, api_key: str | None, model: str) -> Link:
    """A connection to ``where`` with the official SDK, presenting ``api_key`` (else ``OPENAI_API_KEY``) as the
    bearer token; an :class:`EvalError` when the server cannot be reached or refuses."""
    from openai import AsyncOpenAI
    from websockets.exceptions import InvalidHandshake, InvalidStatus

    key = api_key or os.environ.get("OPENAI_API_KEY") or "voxcall-eval"  # the SDK always sends a bearer token
    client = AsyncOpenAI(api_key=key, websocket_base_url=where.base_url, max_retries=0)
    manager = client.live.connect() if where.protocol is Wire.LIVE else client.realtime.connect(model=model)
    try:
        connection = await manager.enter()
    except InvalidStatus as exc:
        status = exc.response.status_code
        hint = ": check --api-key" if status in (401, 403) else ""
        raise EvalError(f"the server at {where.base_url} refused the connection (HTTP {status}){hint}") from None
    except (OSError, TimeoutError, InvalidHandshake) as exc:
        raise EvalError(f"cannot connect to {where.base_url}: {exc or type(exc).__name__}") from None
    return SdkLink(connection)
