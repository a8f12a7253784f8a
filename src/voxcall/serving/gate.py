"""The one gate every connection passes, WebSocket or HTTP: the page's origin, the client's key, the session limits
and the drain.

- **Origin**: a browser page may open a session only from the server's own page or an allowed origin
  (:func:`~voxcall.serving.auth.origin_allowed`: no cross-site WebSocket hijacking).
- **Key**: with client API keys configured, a client presents one (``Authorization: Bearer KEY``, or the browser
  subprotocol ``openai-insecure-api-key.KEY``); an edge whose clients present none checks them its own way instead
  (Twilio's signature), and an HTTP edge may take other credentials besides (WebRTC's client secrets).
- **Admission**: the session limits, in all and per key (:class:`~voxcall.serving.admission.Admission`); a refusal is
  counted in ``/metrics``.
- **Draining**: a stopping server admits no one; an admitted session is :meth:`occupy`-ed so that a drain can end it.

A WebSocket refused for its origin or key is closed before the upgrade (1008, policy violation); one refused by the
limits gets an HTTP error with ``Retry-After`` (or, on a server without the WebSocket denial-response extension, an
accepted connection closed with 1013, try again later). An HTTP request gets the refusal as its JSON error.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence

from starlette import status
from starlette.responses import JSONResponse
from starlette.websockets import WebSocket

from voxcall.config import ServerSettings
from voxcall.serving.admission import RETRY_AFTER_SECONDS, Admission, Connection, Refusal, Seat
from voxcall.serving.auth import choose_subprotocol, extract_client_key, key_is_valid, origin_allowed
from voxcall.serving.metrics import Metrics
from voxcall.serving.shared import Drainable, Occupy

log = logging.getLogger(__name__)

EdgeCheck = Callable[[WebSocket], str | None]
"""An edge's own check of a connection in place of the key: why it may not open, or None."""


class Gate:
    """Origin, keys, admission and draining, for every edge."""

    def __init__(self, settings: ServerSettings, admission: Admission, metrics: Metrics) -> None:
        self.keys = settings.client_keys()
        self.admission = admission
        self._origins = settings.allowed_origins
        self._metrics = metrics

    def origin_allowed(self, headers: Mapping[str, str]) -> bool:
        """Whether the request's page (``Origin``) may use the server."""
        return origin_allowed(headers.get("origin"), headers.get("host"), self._origins)

    def key_of(self, headers: Mapping[str, str], subprotocols: Sequence[str] = ()) -> str | None:
        """The client key the request presents, if any."""
        return extract_client_key(headers, subprotocols)

    def key_valid(self, key: str | None) -> bool:
        """Whether ``key`` opens a session: always on a server without client keys."""
        return not self.keys or key_is_valid(key, self.keys)

    def admit(self, owner: str | None) -> Seat:
        """A seat for a session of ``owner`` (its key; counted only on a server with keys); a :class:`Refusal`,
        counted in ``/metrics``, when the limits or a drain say no."""
        admitted = self.admission.admit(owner if self.keys else None)
        if isinstance(admitted, Refusal):
            self._metrics.sessions_refused.labels(admitted.code).inc()
            raise admitted
        return admitted

    def occupy(self, seat: Seat, connection: Connection) -> Occupy:
        """How an accepted connection registers its session for a drain (False: the server began to stop; the
        connection is then closed)."""

        async def occupy(session: Drainable) -> bool:
            if seat.occupy(session, connection):
                return True
            await self.admission.close(connection)
            return False

        return occupy

    async def websocket(self, ws: WebSocket, edge: str, check: EdgeCheck | None = None) -> Seat | None:
        """Let ``ws`` in: its seat, the upgrade accepted; or None, the connection refused (and closed)."""
        offered = list(ws.scope.get("subprotocols") or [])
        if not self.origin_allowed(ws.headers):
            log.info("refused a %s connection from %s: origin %s is not allowed", edge, ws.client,
                     ws.headers.get("origin"))
            await ws.close(code=status.WS_1008_POLICY_VIOLATION, reason="origin not allowed")
            return None
        key = self.key_of(ws.headers, offered) if check is None else None
        why = check(ws) if check is not None else None if self.key_valid(key) else "invalid or missing API key"
        if why is not None:
            log.info("refused a %s connection from %s: %s", edge, ws.client,
                     "missing or unknown API key" if check is None else why)
            await ws.close(code=status.WS_1008_POLICY_VIOLATION, reason=why)
            return None
        try:
            seat = self.admit(key)
        except Refusal as refusal:
            log.info("refused a %s connection from %s: %s", edge, ws.client, refusal.code)
            await _refuse(ws, refusal, choose_subprotocol(offered))
            return None
        await ws.accept(subprotocol=choose_subprotocol(offered))
        return seat


def refusal_response(refusal: Refusal, headers: Mapping[str, str] | None = None) -> JSONResponse:
    """An HTTP request's refusal: its status and JSON error, ``Retry-After`` when it may be tried again later."""
    out = dict(headers or {})
    if refusal.status in (status.HTTP_429_TOO_MANY_REQUESTS, status.HTTP_503_SERVICE_UNAVAILABLE):
        out["Retry-After"] = str(RETRY_AFTER_SECONDS)
    return JSONResponse(refusal.body(), status_code=refusal.status, headers=out)


async def _refuse(ws: WebSocket, refusal: Refusal, subprotocol: str | None) -> None:
    """Refuse a connection before the upgrade: an HTTP response with ``refusal``'s status, its JSON body and a
    ``Retry-After``. A server without the ASGI WebSocket denial-response extension cannot send one (closing
    before the upgrade would read as 403): there the connection is accepted and closed with code 1013, "try
    again later", with the refusal's code as its reason."""
    if "websocket.http.response" in ws.scope.get("extensions", {}):
        await ws.send_denial_response(refusal_response(refusal))
        return
    await ws.accept(subprotocol=subprotocol)
    await ws.close(code=status.WS_1013_TRY_AGAIN_LATER, reason=refusal.code)
