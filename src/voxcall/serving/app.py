"""The ASGI app: the protocol edges' WebSockets, ``WS /v1/realtime`` (:mod:`voxcall.realtime`) and
``WS /v1/live/sessions`` (GPT-Live, :mod:`voxcall.live`), behind the same checks, and ``WS /v1/twilio/{profile}``
(phone calls from Twilio Media Streams, :mod:`voxcall.twilio`, signed by Twilio instead of keyed);
``POST /v1/realtime/calls`` and ``POST /v1/realtime/client_secrets`` (browser calls over WebRTC,
:mod:`voxcall.webrtc`);
``GET /healthz``, ``GET /metrics`` (Prometheus) and, at ``GET /``, the playground: a web page to talk to the
server (static files shipped in the package, ``voxcall/playground/``).

One backend (and so one set of loaded models) serves every session of the process; a session costs only its
conversation and a few tasks. When client API keys are configured, a connection must present one
(``Authorization: Bearer KEY``, or the browser subprotocol ``openai-insecure-api-key.KEY``) or is refused
before the WebSocket is accepted; ``/metrics`` then needs one too (``Authorization: Bearer KEY``). Past the
session limits (:mod:`voxcall.serving.admission`) a connection is refused with an HTTP error before the upgrade
too; while the server drains, ``/healthz`` answers 503. ``/healthz`` names the process (``pid``) and counts its
sessions, so that behind a load balancer each replica can be told apart and watched.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import os
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Mount, Route, WebSocketRoute
from starlette.staticfiles import StaticFiles
from starlette.websockets import WebSocket

from voxcall import __version__
from voxcall.config import ServerSettings
from voxcall.core.metrics import CONTENT_TYPE, Metrics
from voxcall.core.prefetch import SpeculationSlots
from voxcall.core.shared import Drainable, Occupy, Shared
from voxcall.core.toolbox import Toolbox
from voxcall.core.voice import Voice
from voxcall.live.endpoint import serve_live
from voxcall.llm import LLMBackend
from voxcall.realtime.endpoint import serve_realtime
from voxcall.serving.admission import RETRY_AFTER_SECONDS, Admission, Refusal
from voxcall.serving.auth import choose_subprotocol, extract_client_key, key_is_valid, origin_allowed
from voxcall.telemetry.watchdog import LoopWatchdog
from voxcall.twilio import serve_twilio, twilio_refusal
from voxcall.webrtc.endpoint import WebRTCEdge

log = logging.getLogger(__name__)

_POLICY_VIOLATION = 1008
_TRY_AGAIN_LATER = 1013

Edge = Callable[[WebSocket, Shared, Occupy], Awaitable[None]]
"""A protocol edge: serves one accepted connection until it ends."""

Admit = Callable[[WebSocket, Shared], str | None]
"""An edge's own admission check: why a connection may not open, or None."""


def create_app(settings: ServerSettings, backend: LLMBackend, voice: Voice | None = None,
               toolbox: Toolbox | None = None, admission: Admission | None = None,
               delegates: Mapping[str, LLMBackend] | None = None) -> Starlette:
    """The voxcall server for ``settings``, answering every session with ``backend``; with ``voice`` (shared
    speech models) sessions hear and speak, without it they are text-only. Server-side tools come from
    ``toolbox``, or are built from the settings' ``tools``/``mcp`` sections when the app starts (and the MCP
    servers stopped when it stops). ``admission`` keeps the session limits and drains the sessions when the
    server stops (default: one with the settings' limits). ``delegates`` are the named backends a GPT-Live
    session's Responses delegation may name (``live.backends``)."""
    keys = settings.client_keys()
    admission = admission or Admission(settings.max_sessions, settings.max_sessions_per_key,
                                       settings.shutdown_close_code)
    tools: dict[str, Toolbox | None] = {"box": toolbox}

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        built = None
        if toolbox is None and (settings.tools.builtin or settings.tools.modules or settings.mcp.servers):
            built = tools["box"] = await Toolbox.from_settings(settings)
            log.info("server tools: %s", ", ".join(t.name for t in built.tools) or "none")
        watchdog.start(asyncio.get_running_loop())
        try:
            yield
        finally:
            watchdog.stop()
            if built is not None:
                await built.aclose()
    slots = SpeculationSlots(settings.session.max_speculative)
    metrics = Metrics()
    watchdog = LoopWatchdog(metrics.registry)  # loop lag in /metrics; a stalled loop logs the blocking stack
    metrics.watch_tool_threads(lambda: tools["box"].registry.threads if tools["box"] is not None else None)

    shared = Shared(settings, backend, slots, metrics, voice, delegates=dict(delegates or {}))

    def edge(serve: Edge, name: str, admit: Admit | None = None) -> Callable[[WebSocket], Awaitable[None]]:
        """The route of one protocol edge: the checks every edge shares, then ``serve``. ``admit`` replaces the
        API key check for an edge whose clients present no key (Twilio signs its requests instead)."""

        async def route(ws: WebSocket) -> None:
            offered = list(ws.scope.get("subprotocols") or [])
            if not origin_allowed(ws.headers.get("origin"), ws.headers.get("host"), settings.allowed_origins):
                log.info("refused a %s connection from %s: origin %s is not allowed", name, ws.client,
                         ws.headers.get("origin"))
                await ws.close(code=_POLICY_VIOLATION, reason="origin not allowed")
                return
            key = extract_client_key(ws.headers, offered) if admit is None else None
            refused = admit(ws, shared) if admit is not None else None
            if refused is not None:
                log.info("refused a %s connection from %s: %s", name, ws.client, refused)
                await ws.close(code=_POLICY_VIOLATION, reason=refused)
                return
            if admit is None and keys and not key_is_valid(key, keys):
                log.info("refused a %s connection from %s: missing or unknown API key", name, ws.client)
                await ws.close(code=_POLICY_VIOLATION, reason="invalid or missing API key")
                return
            admitted = admission.admit(key if keys else None)
            if isinstance(admitted, Refusal):
                log.info("refused a %s connection from %s: %s", name, ws.client, admitted.code)
                metrics.sessions_refused.labels(admitted.code).inc()
                await _refuse(ws, admitted, choose_subprotocol(offered))
                return
            with admitted as seat:
                await ws.accept(subprotocol=choose_subprotocol(offered))

                async def occupy(session: Drainable) -> bool:
                    if seat.occupy(session, ws):
                        return True
                    await admission.close(ws)  # the server began to stop during the handshake
                    return False

                shared.toolbox = tools["box"]
                await serve(ws, shared, occupy)

        return route

    async def healthz(request: Request) -> JSONResponse:
        body: dict[str, Any] = {"status": "draining" if admission.draining else "ok", "version": __version__,
                                "pid": os.getpid(), "draining": admission.draining,
                                "backend": backend.name, "speech": voice is not None,
                                "sessions": admission.active, "max_sessions": admission.max_sessions,
                                "speculation": dataclasses.asdict(slots.stats)}
        return JSONResponse(body, status_code=503 if admission.draining else 200)

    async def metrics_page(request: Request) -> Response:
        if keys and not key_is_valid(extract_client_key(request.headers, []), keys):
            return JSONResponse({"error": "invalid or missing API key"}, status_code=401)
        return Response(metrics.render(), media_type=CONTENT_TYPE)

    return Starlette(routes=[WebSocketRoute("/v1/realtime", edge(serve_realtime, "realtime")),
                             WebSocketRoute("/v1/live/sessions", edge(serve_live, "live")),
                             WebSocketRoute("/v1/twilio/{profile}", edge(serve_twilio, "twilio", twilio_refusal)),
                             *WebRTCEdge(shared, admission, keys, lambda: tools["box"]).routes(),
                             Route("/healthz", healthz),
                             Route("/metrics", metrics_page),
                             Mount("/", StaticFiles(packages=[("voxcall", "playground")], html=True))],
                     lifespan=lifespan)


async def _refuse(ws: WebSocket, refusal: Refusal, subprotocol: str | None) -> None:
    """Refuse a connection before the upgrade: an HTTP response with ``refusal``'s status, its JSON body and a
    ``Retry-After``. A server without the ASGI WebSocket denial-response extension cannot send one (closing
    before the upgrade would read as 403): there the connection is accepted and closed with code 1013, "try
    again later", with the refusal's code as its reason."""
    if "websocket.http.response" in ws.scope.get("extensions", {}):
        await ws.send_denial_response(JSONResponse(refusal.body(), status_code=refusal.status,
                                                   headers={"Retry-After": str(RETRY_AFTER_SECONDS)}))
        return
    await ws.accept(subprotocol=subprotocol)
    await ws.close(code=_TRY_AGAIN_LATER, reason=refusal.code)
