"""The WebRTC edge's HTTP routes: calls opened with an SDP offer, and the client secrets a browser opens them with.

- ``POST /v1/realtime/calls``: the SDP offer in (:mod:`voxcall.webrtc.offer`), the SDP answer out (``201``, its
  ``Location`` naming the call, ``/v1/realtime/calls/{call_id}``); the call then runs by itself
  (:class:`~voxcall.webrtc.call.WebRTCCall`). The caller presents ``Authorization: Bearer`` with a client API key
  or a client secret (``ek_…``, spent by the call); without client keys configured (a loopback server) no key is
  needed, but a secret presented must still be valid.
- ``POST /v1/realtime/client_secrets``: ``{"expires_after": {"anchor": "created_at", "seconds": 600},
  "session": {...}}`` in (both optional), ``{"value": "ek_…", "expires_at": …, "session": {...}}`` out. Only a
  holder of a client API key may mint one (never with a secret).
- ``POST /v1/realtime/calls/{call_id}/hangup``: ends a call (a client API key, as for minting).

Calls are admitted like WebSocket sessions (the same limits, counted against the key that minted the secret) and
drained like them when the server stops. Browsers call from their page's origin: the origin check of the
WebSockets applies, and an allowed origin gets the CORS headers the JS Agents SDK needs (``Authorization``,
``Content-Type`` and ``X-OpenAI-Agents-SDK`` allowed, ``Location`` exposed). Every refusal is an OpenAI-shaped
JSON error; nothing is spent (no secret, no seat) by a request that is refused.

The media need the ``webrtc`` extra (aiortc); without it these routes answer ``501``.
"""

from __future__ import annotations

import asyncio
import json
import logging
import secrets
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from voxcall.core.errors import SessionError
from voxcall.realtime.client_events import parse_client_event
from voxcall.serving.admission import Refusal
from voxcall.serving.gate import Gate, refusal_response
from voxcall.serving.host import SessionHost
from voxcall.webrtc.offer import Offer, OfferError, read_form, read_sdp, session_config
from voxcall.webrtc.secrets import ClientSecret, ClientSecrets, SecretRefused, is_client_secret

if TYPE_CHECKING:
    from voxcall.webrtc.call import WebRTCCall

log = logging.getLogger(__name__)

CALLS_PATH = "/v1/realtime/calls"

_CORS_HEADERS = {"Access-Control-Allow-Methods": "POST, OPTIONS",
                 "Access-Control-Allow-Headers": "Authorization, Content-Type, X-OpenAI-Agents-SDK, OpenAI-Beta",
                 "Access-Control-Expose-Headers": "Location",
                 "Access-Control-Max-Age": "600"}


class WebRTCEdge:
    """The process's WebRTC calls and client secrets, behind the three routes of :meth:`routes`."""

    def __init__(self, host: SessionHost, gate: Gate) -> None:
        self._host = host
        self._settings = host.shared.settings
        self._gate = gate
        self.secrets = ClientSecrets()
        self.calls: dict[str, WebRTCCall] = {}
        self._watchers: set[asyncio.Task[None]] = set()
        self._configured = False

    def routes(self) -> list[Route]:
        """``POST /v1/realtime/calls``, ``POST /v1/realtime/calls/{call_id}/hangup`` and
        ``POST /v1/realtime/client_secrets``, each with its CORS preflight."""
        return [Route(CALLS_PATH, self._answering(self._call), methods=["POST", "OPTIONS"]),
                Route(CALLS_PATH + "/{call_id}/hangup", self._answering(self._hangup), methods=["POST", "OPTIONS"]),
                Route("/v1/realtime/client_secrets", self._answering(self._mint), methods=["POST", "OPTIONS"])]

    def _answering(self, handle: Callable[[Request], Awaitable[Response]]) -> Callable[[Request], Awaitable[Response]]:
        """A route: the origin check and the preflight, then ``handle``; a
        :class:`~voxcall.serving.admission.Refusal` becomes its error."""

        async def route(request: Request) -> Response:
            origin = request.headers.get("origin")
            if not self._gate.origin_allowed(request.headers):
                log.info("refused a webrtc request from %s: origin %s is not allowed", request.client, origin)
                return _error(Refusal(403, "invalid_request_error", "origin_not_allowed",
                                      "this page's origin may not use the server (allowed_origins)"), None)
            if request.method == "OPTIONS":
                return Response(status_code=204, headers=_cors(origin, preflight=True))
            try:
                response: Response = await handle(request)
            except Refusal as refused:
                log.info("refused a webrtc request from %s: %s", request.client, refused.message)
                return _error(refused, origin)
            response.headers.update(_cors(origin, preflight=False))
            return response

        return route

    async def _call(self, request: Request) -> Response:
        settings = self._settings
        if self._host.shared.voice is None:
            raise Refusal(503, "server_error", "speech_disabled",
                          "speech is off on this server (voxcall serve --speech): a WebRTC call has nothing to say")
        try:
            from voxcall.webrtc.call import WebRTCCall
            from voxcall.webrtc.ice import configuration, offer_loopback
        except ImportError:
            raise Refusal(501, "server_error", "webrtc_not_installed",
                          "WebRTC needs the webrtc extra on the server: pip install 'voxcall[webrtc]'") from None
        offer = await _read_offer(request)
        key = self._gate.key_of(request.headers)
        secret = self._secret(key) if key is not None and is_client_secret(key) else None
        if secret is None and not self._gate.key_valid(key):
            raise Refusal(401, "invalid_request_error", "invalid_api_key", "invalid or missing API key")
        owner = secret.owner if secret is not None else key
        initial = [session for session in (secret.session if secret else {}, offer.session) if session]
        admitted = self._gate.admit(owner)
        if not self._configured:
            offer_loopback(settings.webrtc.loopback_candidate)
            self._configured = True
        call_id = "rtc_" + secrets.token_hex(12)
        call = WebRTCCall(call_id, self._host, configuration(settings.webrtc.ice_servers), initial=initial)
        try:
            try:
                answer = await call.answer(offer.sdp)
            except (ValueError, TypeError) as exc:
                raise Refusal(400, "invalid_request_error", "invalid_offer",
                              f"the SDP offer cannot be answered: {exc}") from None
            if secret is not None:  # spent only now, by a call that opens (no await from here to occupy)
                self._secret(secret.value, spend=True)
            if not admitted.occupy(call.hosted, call):
                raise Refusal(503, "server_error", "shutting_down", "the server is shutting down")
        except BaseException:
            admitted.leave()
            await call.close()
            raise
        self.calls[call_id] = call
        watcher = asyncio.create_task(self._watch(call, admitted.leave), name=f"voxcall-webrtc-{call_id}")
        self._watchers.add(watcher)
        watcher.add_done_callback(self._watchers.discard)
        log.info("webrtc call %s: answered (session %s)", call_id, call.session.id)
        return Response(answer, status_code=201, media_type="application/sdp",
                        headers={"Location": f"{CALLS_PATH}/{call_id}"})

    async def _watch(self, call: WebRTCCall, release: Callable[[], None]) -> None:
        """Give the call's seat back when it ends."""
        try:
            await call.ended.wait()
        finally:
            release()
            self.calls.pop(call.id, None)

    def _secret(self, key: str, *, spend: bool = False) -> ClientSecret:
        """The client secret ``key`` (checked; with ``spend``, used up too)."""
        try:
            return self.secrets.redeem(key) if spend else self.secrets.peek(key)
        except SecretRefused as exc:
            raise Refusal(401, "invalid_request_error", "invalid_client_secret", str(exc)) from None

    async def _mint(self, request: Request) -> Response:
        key = self._key_holder(request)
        body = await _json_body(request)
        expires = body.get("expires_after") or {}
        if not isinstance(expires, dict) or expires.get("anchor", "created_at") != "created_at":
            raise Refusal(400, "invalid_request_error", "invalid_value",
                          "expires_after must be {\"anchor\": \"created_at\", \"seconds\": N}")
        seconds = expires.get("seconds", self._settings.webrtc.client_secret_seconds)
        session = body.get("session") or {}
        if not isinstance(session, dict) or isinstance(seconds, bool) or not isinstance(seconds, int):
            raise Refusal(400, "invalid_request_error", "invalid_value",
                          "session must be an object and expires_after.seconds an integer")
        session = _checked_session(session, "session")
        try:
            secret = self.secrets.mint(seconds, session, owner=key)
        except ValueError as exc:
            raise Refusal(400, "invalid_request_error", "invalid_value", str(exc)) from None
        except SecretRefused as exc:
            raise Refusal(429, "rate_limit_error", "too_many_client_secrets", str(exc)) from None
        return JSONResponse({"value": secret.value, "expires_at": secret.expires_at, "session": secret.session})

    async def _hangup(self, request: Request) -> Response:
        self._key_holder(request)
        call = self.calls.get(request.path_params["call_id"])
        if call is None:
            raise Refusal(404, "invalid_request_error", "call_not_found", "no such call (it may have ended)")
        await call.close(1000, "hung up")
        return Response(status_code=200)

    def _key_holder(self, request: Request) -> str | None:
        """The client API key of a request only a key holder may make (None on a server without keys)."""
        key = self._gate.key_of(request.headers)
        if is_client_secret(key):
            raise Refusal(401, "invalid_request_error", "invalid_api_key",
                          "a client secret cannot do this: use a client API key (from your backend, never a page)")
        if not self._gate.key_valid(key):
            raise Refusal(401, "invalid_request_error", "invalid_api_key", "invalid or missing API key")
        return key


async def _read_offer(request: Request) -> Offer:
    """The offer a request carries, in either form (:mod:`voxcall.webrtc.offer`)."""
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    try:
        if kind == "application/sdp":
            return read_sdp(await request.body())
        if kind == "multipart/form-data":
            async with request.form(max_files=0, max_fields=4, max_part_size=65_536) as form:
                offer = read_form(form.get("sdp"), form.get("session"))
            return Offer(offer.sdp, _checked_session(offer.session, "the 'session' field"))
    except OfferError as exc:
        raise Refusal(400, "invalid_request_error", "invalid_offer", str(exc)) from None
    except HTTPException as exc:  # Starlette's answer to a form it cannot parse (or one with a file in it)
        raise Refusal(400, "invalid_request_error", "invalid_offer",
                      f"the form cannot be read: {exc.detail}") from None
    raise Refusal(415, "invalid_request_error", "unsupported_media_type",
                  "send the SDP offer as application/sdp, or as the 'sdp' field of multipart/form-data")


def _checked_session(session: dict[str, Any], where: str) -> dict[str, Any]:
    """``session`` checked as a ``session.update`` would check its JSON types: a bad one is refused now, not
    when the call opens."""
    if not session:
        return session
    try:
        session = session_config(session, where)
        parse_client_event({"type": "session.update", "session": session})
    except OfferError as exc:
        raise Refusal(400, "invalid_request_error", "invalid_value", str(exc)) from None
    except SessionError as exc:
        raise Refusal(400, "invalid_request_error", exc.code, f"{where}: {exc.message}") from None
    return session


async def _json_body(request: Request) -> dict[str, Any]:
    body = await request.body()
    if not body:
        return {}
    try:
        data = json.loads(body)
    except ValueError:
        raise Refusal(400, "invalid_request_error", "invalid_json", "the body is not valid JSON") from None
    if not isinstance(data, dict):
        raise Refusal(400, "invalid_request_error", "invalid_json", "the body must be a JSON object")
    return data


def _cors(origin: str | None, *, preflight: bool) -> dict[str, str]:
    """The CORS headers for an (allowed) ``origin``; none for a request with no ``Origin``."""
    if origin is None:
        return {}
    headers = {"Access-Control-Allow-Origin": origin, "Vary": "Origin",
               "Access-Control-Expose-Headers": _CORS_HEADERS["Access-Control-Expose-Headers"]}
    return {**headers, **_CORS_HEADERS} if preflight else headers


def _error(refused: Refusal, origin: str | None) -> JSONResponse:
    return refusal_response(refused, _cors(origin, preflight=False))
