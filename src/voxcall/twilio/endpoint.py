"""The Twilio Media Streams edge: ``WS /v1/twilio/{profile}``, one phone call per connection.

Before the upgrade, :func:`twilio_check` says why a stream may not open: no such agent profile, no valid
``X-Twilio-Signature`` (or no auth token to check it with, unless the operator turned signatures off on a
loopback server), or a server that does not speak. Twilio presents no API key, so this check takes the place of
the gate's key check. :func:`serve_twilio` then runs the call (:class:`~voxcall.twilio.call.TwilioCall`)
with the profile's settings and server tools until the stream stops or the socket closes.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from starlette import status
from starlette.websockets import WebSocket

from voxcall.core.tools.toolbox import Toolbox
from voxcall.serving.frames import frames
from voxcall.serving.host import SessionHost
from voxcall.serving.shared import Occupy, Shared
from voxcall.twilio.call import TwilioCall
from voxcall.twilio.signature import SIGNATURE_HEADER, signature_valid, signed_url

log = logging.getLogger(__name__)


def twilio_check(shared: Shared) -> Callable[[WebSocket], str | None]:
    """The gate's check of a stream: why the stream ``ws`` asks for may not open (a reason for the log and the
    close frame), or None."""

    def check(ws: WebSocket) -> str | None:
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

    return check


async def serve_twilio(ws: WebSocket, host: SessionHost, occupy: Occupy) -> None:
    """Serve one accepted stream (checked by :func:`twilio_check`) until the call ends; ``occupy`` registers its
    session for a drain."""
    settings = host.shared.settings
    name = ws.path_params["profile"]
    profile = settings.profiles[name]
    try:
        toolbox = _profile_tools(host.shared.toolbox, profile.tools)
    except ValueError as exc:
        log.error("agent profile %s: tools: %s", name, exc)
        await ws.close(code=status.WS_1011_INTERNAL_ERROR, reason="the agent profile names an unknown tool")
        return

    async def close(code: int, reason: str) -> None:
        await ws.close(code=code, reason=reason)

    call = TwilioCall(host, ws.send_text, profile, toolbox=toolbox, keys_pause=settings.twilio.dtmf_pause_ms / 1000,
                      close=close)
    feeding: asyncio.Task[None] | None = None
    try:
        if not await occupy(call.hosted):
            return
        await call.start()
        feeding = asyncio.create_task(call.hosted.feed(), name=f"voxcall-twilio-{call.session.id}")
        async for data in frames(ws):
            if not await call.receive(data):
                await ws.close()
                break
    finally:
        if feeding is not None:
            feeding.cancel()
            await asyncio.wait([feeding])
        await call.close()


def _profile_tools(toolbox: Toolbox | None, names: list[str] | None) -> Toolbox | bool | None:
    """The server tools of a profile's calls: all of them (True), or just those ``names`` (``ValueError`` for one
    that is no server tool)."""
    if names is None:
        return True
    if toolbox is None:
        if names:
            raise ValueError(f"no server tool named {', '.join(map(repr, names))}; the server has none")
        return None
    return toolbox.only(names)
