"""The Twilio Media Streams edge: ``WS /v1/twilio/{profile}``, one phone call per connection.

Before the upgrade, :func:`twilio_refusal` says why a stream may not open: no such agent profile, no valid
``X-Twilio-Signature`` (or no auth token to check it with, unless the operator turned signatures off on a
loopback server), or a server that does not speak. Twilio presents no API key, so this check takes the place of
the serving layer's key check. :func:`serve_twilio` then runs the call (:class:`~voxcall.twilio.call.TwilioCall`)
with the profile's settings and server tools until the stream stops or the socket closes.
"""

from __future__ import annotations

import logging

from starlette.websockets import WebSocket, WebSocketDisconnect

from voxcall.core.responses.outbox import Send
from voxcall.core.session import Session
from voxcall.core.tools.toolbox import Toolbox
from voxcall.serving.shared import Occupy, Shared
from voxcall.twilio.call import TwilioCall
from voxcall.twilio.signature import SIGNATURE_HEADER, signature_valid, signed_url

log = logging.getLogger(__name__)

_INTERNAL_ERROR = 1011


def twilio_refusal(ws: WebSocket, shared: Shared) -> str | None:
    """Why the stream ``ws`` asks for may not open (a reason for the log and the close frame), or None."""
    settings = shared.settings.twilio
    if settings.auth_token is not None:
        url = signed_url(settings.public_url, str(ws.url))
        if not signature_valid(settings.auth_token.get_secret_value(), url, ws.headers.get(SIGNATURE_HEADER)):
            return "missing or invalid X-Twilio-Signature"
    elif not settings.insecure_no_signature:
        return "twilio.auth_token is not configured"
    if ws.path_params.get("profile") not in shared.settings.profiles:
        return "no such agent profile"
    if shared.voice is None:
        return "speech is off on this server"
    return None


async def serve_twilio(ws: WebSocket, shared: Shared, occupy: Occupy) -> None:
    """Serve one accepted stream (checked by :func:`twilio_refusal`) until the call ends; ``occupy`` registers
    its session for a drain."""
    settings = shared.settings
    name = ws.path_params["profile"]
    profile = settings.profiles[name]
    try:
        toolbox = _profile_tools(shared.toolbox, profile.tools)
    except ValueError as exc:
        log.error("agent profile %s: tools: %s", name, exc)
        await ws.close(code=_INTERNAL_ERROR, reason="the agent profile names an unknown tool")
        return

    async def close_socket(code: int, reason: str) -> None:
        await ws.close(code=code, reason=reason)

    def make_session(send: Send) -> Session:
        return Session(shared.backend, send, options=settings.session, tools=settings.tools,
                       model=settings.model or settings.llm or "voxcall", slots=shared.slots, voice=shared.voice,
                       toolbox=toolbox, metrics=shared.metrics, close_socket=close_socket)

    call = TwilioCall(ws.send_text, profile, make_session, keys_pause=settings.twilio.dtmf_pause_ms / 1000,
                      max_frame_bytes=settings.session.max_frame_bytes)
    shared.metrics.sessions_total.inc()
    shared.metrics.sessions_active.inc()
    try:
        if not await occupy(call.session):
            return
        await call.start()
        while True:
            message = await ws.receive()
            if message["type"] == "websocket.disconnect":
                break
            data = message.get("text")
            if not await call.receive(data if data is not None else message.get("bytes") or b""):
                await ws.close()
                break
    except WebSocketDisconnect:
        pass
    finally:
        shared.metrics.sessions_active.dec()
        await call.close()


def _profile_tools(toolbox: Toolbox | None, names: list[str] | None) -> Toolbox | None:
    """The server tools of a profile's calls: all of them (None), or just those ``names`` (``ValueError`` for
    one that is no server tool)."""
    if names is None:
        return toolbox
    if toolbox is None:
        if names:
            raise ValueError(f"no server tool named {', '.join(map(repr, names))}; the server has none")
        return None
    return toolbox.only(names)
