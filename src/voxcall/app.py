"""The ASGI app: the protocol edges' WebSockets, ``WS /v1/realtime`` (:mod:`voxcall.realtime`) and
``WS /v1/live/sessions`` (GPT-Live, :mod:`voxcall.live`), behind the same checks, and ``WS /v1/twilio/{profile}``
(phone calls from Twilio Media Streams, :mod:`voxcall.twilio`, signed by Twilio instead of keyed);
``POST /v1/realtime/calls`` and ``POST /v1/realtime/client_secrets`` (browser calls over WebRTC,
:mod:`voxcall.webrtc`); ``WS /xiaozhi/v1/`` and ``/xiaozhi/ota/`` (xiaozhi voice devices, :mod:`voxcall.xiaozhi`,
which present a device token or a key);
``GET /healthz``, ``GET /metrics`` (Prometheus) and, at ``GET /``, the playground: a web page to talk to the
server (static files shipped in the package, ``voxcall/playground/``).

One backend (and so one set of loaded models) serves every session of the process; a session costs only its
conversation and a few tasks. When client API keys are configured, a connection must present one
(``Authorization: Bearer KEY``, or the browser subprotocol ``openai-insecure-api-key.KEY``) or is refused
before the WebSocket is accepted; ``/metrics`` then needs one too (``Authorization: Bearer KEY``). Past the
session limits (:mod:`voxcall.serving.admission`) a connection is refused with an HTTP error before the upgrade
too; while the server drains, ``/healthz`` answers 503. ``/healthz`` names the process (``pid``) and counts its
sessions, so that behind a load balancer each replica can be told apart and watched.

The app traces its sessions (:mod:`voxcall.telemetry.tracing`) as the ``telemetry:`` section and the standard
``OTEL_*`` variables say: it configures the tracing when it is built and shuts it down, sending what is left, when it
stops.
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
from starlette.routing import BaseRoute, Mount, Route, WebSocketRoute
from starlette.staticfiles import StaticFiles
from starlette.websockets import WebSocket

from voxcall import __version__
from voxcall.config import ServerSettings, TelemetrySettings
from voxcall.core.tools.toolbox import Toolbox
from voxcall.live.endpoint import serve_live
from voxcall.llm import LLMBackend, LLMError, LLMRequest, warm_shared
from voxcall.realtime.endpoint import serve_realtime
from voxcall.serving.admission import Admission
from voxcall.serving.gate import EdgeCheck, Gate
from voxcall.serving.host import SessionHost
from voxcall.serving.metrics import CONTENT_TYPE
from voxcall.serving.shared import Occupy, Shared
from voxcall.speech.voice import Voice
from voxcall.telemetry.tracing import Tracing, TracingOptions, configure, content_wanted
from voxcall.telemetry.watchdog import LoopWatchdog
from voxcall.twilio import serve_twilio, twilio_check
from voxcall.webrtc.endpoint import WebRTCEdge
from voxcall.xiaozhi import WEBSOCKET_PATH, discovery_routes, serve_xiaozhi, xiaozhi_check

log = logging.getLogger(__name__)

Edge = Callable[[WebSocket, SessionHost, Occupy], Awaitable[None]]
"""A protocol edge over a WebSocket: serves one accepted connection until it ends."""


def create_app(settings: ServerSettings, backend: LLMBackend, voice: Voice | None = None,
               toolbox: Toolbox | None = None, admission: Admission | None = None,
               delegates: Mapping[str, LLMBackend] | None = None, tracing: Tracing | None = None) -> Starlette:
    """The voxcall server for ``settings``, answering every session with ``backend``; with ``voice`` (shared
    speech models) sessions hear and speak, without it they are text-only. Server-side tools come from
    ``toolbox``, or are built from the settings' ``tools``/``mcp`` sections when the app starts (and the MCP
    servers stopped when it stops). ``admission`` keeps the session limits and drains the sessions when the
    server stops (default: one with the settings' limits). ``delegates`` are the named backends a GPT-Live
    session's Responses delegation may name (``live.backends``). ``tracing``: where the sessions' traces go (None:
    as :func:`tracing_for` the settings; the app then shuts it down when it stops; one given stays the caller's)."""
    admission = admission or Admission(settings.max_sessions, settings.max_sessions_per_key,
                                       settings.shutdown_close_code)
    owned = None
    if tracing is None:
        tracing = owned = tracing_for(settings.telemetry)
    shared = Shared.of(settings, backend, voice=voice, toolbox=toolbox, delegates=delegates, tracing=tracing)
    tools, slots, metrics = shared.tools, shared.slots, shared.metrics

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        built = None
        if toolbox is None and (settings.tools.builtin or settings.tools.modules or settings.mcp.servers):
            built = tools.box = await Toolbox.from_settings(settings)
            log.info("server tools: %s", ", ".join(t.name for t in built.tools) or "none")
        watchdog.start(asyncio.get_running_loop())
        shared_part = asyncio.create_task(_warm_shared(backend, settings, speaks=voice is not None),
                                          name="voxcall-warm-shared")
        try:
            yield
        finally:
            shared_part.cancel()
            watchdog.stop()
            if built is not None:
                await built.aclose()
            if owned is not None:
                await asyncio.to_thread(owned.shutdown)  # sends the spans left: a network round trip
    watchdog = LoopWatchdog(metrics.registry)  # loop lag in /metrics; a stalled loop logs the blocking stack
    metrics.watch_tool_threads(lambda: tools.box.registry.threads if tools.box is not None else None)
    host = SessionHost(shared)
    gate = Gate(settings, admission, metrics)

    def edge(serve: Edge, name: str, check: EdgeCheck | None = None) -> Callable[[WebSocket], Awaitable[None]]:
        """The route of one WebSocket edge: the gate, then ``serve``. ``check`` replaces the API key check for an
        edge whose clients present no key (Twilio signs its requests instead)."""

        async def route(ws: WebSocket) -> None:
            seat = await gate.websocket(ws, name, check)
            if seat is None:
                return
            with seat:
                await serve(ws, host, gate.occupy(seat, ws))

        return route

    async def healthz(request: Request) -> JSONResponse:
        body: dict[str, Any] = {"status": "draining" if admission.draining else "ok", "version": __version__,
                                "pid": os.getpid(), "draining": admission.draining,
                                "backend": backend.name, "speech": voice is not None,
                                "sessions": admission.active, "max_sessions": admission.max_sessions,
                                "speculation": dataclasses.asdict(slots.stats)}
        return JSONResponse(body, status_code=503 if admission.draining else 200)

    async def metrics_page(request: Request) -> Response:
        if not gate.key_valid(gate.key_of(request.headers)):
            return JSONResponse({"error": "invalid or missing API key"}, status_code=401)
        return Response(metrics.render(), media_type=CONTENT_TYPE)

    routes: list[BaseRoute] = [
        WebSocketRoute("/v1/realtime", edge(serve_realtime, "realtime")),
        WebSocketRoute("/v1/live/sessions", edge(serve_live, "live")),
        WebSocketRoute("/v1/twilio/{profile}", edge(serve_twilio, "twilio", twilio_check(shared))),
        *WebRTCEdge(host, gate).routes(),
        *(WebSocketRoute(path, edge(serve_xiaozhi, "xiaozhi", xiaozhi_check(shared)))
          for path in (WEBSOCKET_PATH, WEBSOCKET_PATH.rstrip("/"))),
        *discovery_routes(settings),
        Route("/healthz", healthz),
        Route("/metrics", metrics_page),
        Mount("/", StaticFiles(packages=[("voxcall", "playground")], html=True)),
    ]
    return Starlette(routes=routes, lifespan=lifespan)


def tracing_for(telemetry: TelemetrySettings) -> Tracing:
    """The process's tracing as the ``telemetry:`` section says: ``tracing`` (``auto``: as the ``OTEL_*``
    variables say), and ``record_content`` or the standard content variable to record content."""
    enabled = {"auto": None, "on": True, "off": False}[telemetry.tracing]
    options = TracingOptions(record_content=telemetry.record_content or content_wanted(os.environ))
    return configure(options, enabled=enabled)


async def _warm_shared(backend: LLMBackend, settings: ServerSettings, *, speaks: bool) -> None:
    """Have ``backend`` evaluate, once at start, what the tools prompt of every session with the default settings
    shares whatever tools it declares (:func:`voxcall.llm.warm_shared`): the first session declaring tools of its
    own then evaluates only those (~180 tokens fewer, ~0.7 s on two cores with SmolLM2)."""
    request = LLMRequest(items=[], instructions=settings.session.instructions, voice=speaks)
    try:
        await warm_shared(backend, request)
    except LLMError as exc:  # the first session's request reports the backend's failure
        log.warning("the model could not prepare the shared part of the tools prompt: %s", exc)
