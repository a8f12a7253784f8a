"""The xiaozhi device edge: ``WS /xiaozhi/v1/``, one device session per connection.

A device says who it is in headers (``Device-Id``, ``Client-Id``, ``Authorization: Bearer TOKEN``,
``Protocol-Version``) or, from a browser, in the query (``?device-id=&client-id=&authorization=``). Before the
upgrade, :func:`xiaozhi_check` says why it may not connect: a server that does not speak, a binary protocol other
than 1, no device id, a device not in ``xiaozhi.allowed_devices``, no valid credential (a client API key, a
``xiaozhi.tokens`` token or the ``xiaozhi.ota_token``; required whenever the server has any), an agent profile this
server cannot serve. The
device presents no key the gate knows, so this check takes the place of the gate's key check.

:func:`serve_xiaozhi` then runs the device's session (:class:`~voxcall.xiaozhi.device.DeviceSession`): the device's
``hello`` must come first, within :data:`HELLO_TIMEOUT` (as the firmware waits as long for the server's), and every
frame after it is the device's until it goes away.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass

from starlette import status
from starlette.websockets import WebSocket

from voxcall.config import ServerSettings
from voxcall.core.errors import SessionError
from voxcall.core.settings import SessionSettings
from voxcall.serving.auth import key_is_valid
from voxcall.serving.frames import frames
from voxcall.serving.host import SessionHost
from voxcall.serving.shared import Occupy, Shared
from voxcall.xiaozhi.agent import choose_agent
from voxcall.xiaozhi.device import DeviceLink, DeviceSession
from voxcall.xiaozhi.messages import BINARY_PROTOCOL

log = logging.getLogger(__name__)

HELLO_TIMEOUT = 10.0
"""Seconds a device has, once connected, to say ``hello``."""

VISION_PATH = "/xiaozhi/vision/explain"
"""Where a device's camera tool is told to send its photo (:mod:`voxcall.xiaozhi.discovery` answers it)."""


@dataclass(frozen=True)
class Presented:
    """What a connecting device says about itself: its id (lower case), its token, its binary protocol."""

    device_id: str
    token: str | None
    protocol: str | None

    @classmethod
    def of(cls, ws: WebSocket) -> Presented:
        """Read from the headers, else the query parameters a browser uses."""
        query = ws.query_params
        device_id = ws.headers.get("device-id") or query.get("device-id") or ""
        authorization = ws.headers.get("authorization") or query.get("authorization") or ""
        scheme, _, rest = authorization.strip().partition(" ")
        token = rest.strip() if scheme.lower() == "bearer" else authorization.strip()
        return cls(device_id.strip().lower(), token or None, ws.headers.get("protocol-version"))


def device_allowed(settings: ServerSettings, device_id: str) -> bool:
    """Whether ``device_id`` (lower case) may connect: any, unless ``xiaozhi.allowed_devices`` lists who may."""
    allowed = settings.xiaozhi.allowed_devices
    return allowed is None or device_id in {device.strip().lower() for device in allowed}


def token_valid(settings: ServerSettings, token: str | None) -> bool:
    """Whether ``token`` opens a device session (a client key, a device token, the OTA token): always on a server
    with none of them."""
    xiaozhi = settings.xiaozhi
    keys = settings.client_keys() | {entry.token.get_secret_value() for entry in xiaozhi.tokens}
    if xiaozhi.ota_token is not None:
        keys.add(xiaozhi.ota_token.get_secret_value())
    return not keys or key_is_valid(token, keys)


def xiaozhi_check(shared: Shared) -> Callable[[WebSocket], str | None]:
    """The gate's check of a device: why it may not connect (for the log and the close frame), or None."""

    def check(ws: WebSocket) -> str | None:
        settings, voice = shared.settings, shared.voice
        presented = Presented.of(ws)
        if presented.protocol not in (None, str(BINARY_PROTOCOL)):
            return f"binary protocol {presented.protocol} is not supported; voxcall speaks {BINARY_PROTOCOL}"
        if voice is None:
            return "speech is off on this server"
        if not presented.device_id:
            return "no Device-Id"
        if not device_allowed(settings, presented.device_id):
            return "this device is not allowed (xiaozhi.allowed_devices)"
        if not token_valid(settings, presented.token):
            return "invalid or missing token"
        agent = choose_agent(settings, presented.token, presented.device_id)
        try:
            agent.check(voice, SessionSettings())
        except SessionError as exc:
            log.error("xiaozhi: agent profile %s cannot be served: %s", agent.name, exc.message)
            return f"agent profile {agent.name} cannot be served here"
        return None

    return check


async def serve_xiaozhi(ws: WebSocket, host: SessionHost, occupy: Occupy) -> None:
    """Serve one accepted device (checked by :func:`xiaozhi_check`) until it goes away; ``occupy`` registers its
    session for a drain."""
    presented = Presented.of(ws)
    agent = choose_agent(host.shared.settings, presented.token, presented.device_id)

    async def close(code: int, reason: str) -> None:
        await ws.close(code=code, reason=reason)

    base = str(ws.url.replace(scheme="https" if ws.url.scheme == "wss" else "http", path="", query=""))
    link = DeviceLink(ws.send_text, ws.send_bytes, close, base.rstrip("/") + VISION_PATH)
    try:
        device = DeviceSession(host, link, agent, presented.device_id)
    except ValueError as exc:
        log.error("xiaozhi: agent profile %s: tools: %s", agent.name, exc)
        await ws.close(code=status.WS_1011_INTERNAL_ERROR, reason="the agent profile names an unknown tool")
        return
    try:
        if not await occupy(device.hosted):
            return
        await device.start()
        incoming = frames(ws)
        try:
            async with asyncio.timeout(HELLO_TIMEOUT):
                first = await anext(incoming)
        except (TimeoutError, StopAsyncIteration):
            await ws.close(code=status.WS_1008_POLICY_VIOLATION, reason=f"no hello within {HELLO_TIMEOUT:g} s")
            return
        if not await device.greet(first):
            await ws.close(code=status.WS_1008_POLICY_VIOLATION,
                           reason=f"expected a hello in binary protocol {BINARY_PROTOCOL}")
            return
        async for data in incoming:
            await device.receive(data)
    finally:
        await device.close()
