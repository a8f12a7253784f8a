"""Where a device learns to connect here: the firmware's OTA endpoint, ``GET|POST /xiaozhi/ota/``.

The firmware asks its OTA URL at every boot (the Wi-Fi portal's *Advanced → OTA URL* field from firmware 2.4.1, or
``CONFIG_OTA_URL`` at build time) and connects where the answer's ``websocket`` section says, with its token. The
answer holds only what the firmware needs to use this server: ``websocket`` (this server's ``/xiaozhi/v1/`` and the
token of ``xiaozhi.ota_token``), and ``server_time``. Never ``mqtt`` (the firmware would prefer it), ``activation``
(it would wait for a code) or ``firmware`` (it would upgrade itself). A device not in ``xiaozhi.allowed_devices`` gets
403. ``POST /xiaozhi/ota/activate`` answers 200 (nothing to activate), and ``POST /xiaozhi/vision/explain``, where a
device's camera tool sends its photo, says that this server has no vision model.
"""

from __future__ import annotations

import time

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route

from voxcall.config import ServerSettings
from voxcall.xiaozhi.endpoint import VISION_PATH, device_allowed

WEBSOCKET_PATH = "/xiaozhi/v1/"
"""The path devices connect to."""

NO_VISION = "this server has no vision model: the camera's photo cannot be described"


def discovery_routes(settings: ServerSettings) -> list[BaseRoute]:
    """The OTA endpoint (with and without its trailing slash), its activation, and the camera's endpoint."""

    async def ota(request: Request) -> Response:
        device_id = (request.headers.get("device-id") or request.query_params.get("device-id") or "").lower()
        if not device_allowed(settings, device_id.strip()):
            return JSONResponse({"error": "this device is not allowed"}, status_code=403)
        token = settings.xiaozhi.ota_token
        return JSONResponse({
            "server_time": {"timestamp": round(time.time() * 1000),
                            "timezone_offset": time.localtime().tm_gmtoff // 60},
            "websocket": {"url": websocket_url(settings, request),
                          "token": token.get_secret_value() if token is not None else ""},
        })

    async def activate(request: Request) -> Response:
        return JSONResponse({})

    async def vision(request: Request) -> Response:
        return JSONResponse({"success": False, "error": NO_VISION, "message": NO_VISION}, status_code=501)

    return [Route("/xiaozhi/ota/", ota, methods=["GET", "POST"]), Route("/xiaozhi/ota", ota, methods=["GET", "POST"]),
            Route("/xiaozhi/ota/activate", activate, methods=["POST"]), Route(VISION_PATH, vision, methods=["POST"])]


def websocket_url(settings: ServerSettings, request: Request) -> str:
    """Where devices connect: ``xiaozhi.public_url``, else the host and port this request was sent to."""
    origin = settings.xiaozhi.public_url
    if origin is None:
        scheme = "wss" if request.url.scheme == "https" else "ws"
        origin = f"{scheme}://{request.headers.get('host') or request.url.netloc}"
    return origin + WEBSOCKET_PATH
