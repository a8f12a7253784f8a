"""The device's own MCP server, with voxcall as its client: JSON-RPC 2.0 inside ``{"type": "mcp"}`` messages.

A device that says ``features.mcp`` in its ``hello`` serves tools of its own (the volume, the screen, a light, the
camera: ``docs/mcp-protocol.md`` of the firmware). :class:`DeviceMcp` asks for them the way the firmware expects:

- ``initialize`` with ``capabilities.vision`` (``url`` and ``token``: where the camera tool sends its photo;
  xiaozhi-sdk does not answer an ``initialize`` without them), then ``notifications/initialized``;
- ``tools/list``, page after page while ``nextCursor`` names the first tool left out (the firmware pages at 8,000
  bytes), at most :data:`MAX_PAGES` pages; a tool meant for the user only (``annotations.audience: ["user"]``) is
  left out, in case a device lists one;
- ``tools/call``: the result's text parts joined; ``isError``, or an ``error`` (the firmware's has no ``code``),
  becomes a :class:`~voxcall.tools.ToolError` whose message the model reads.

Request ids are integers (the firmware drops a request whose id is not a JSON number). Each request waits for its
answer at most its ``timeout``; a device that never answers (xiaozhi-sdk ignores a call of a tool it does not have)
leaves only a timeout, never a hung turn. Answers to requests no longer awaited are dropped.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

from voxcall.serving.frames import Message
from voxcall.tools import ToolError

log = logging.getLogger(__name__)

PROTOCOL_VERSION = "2024-11-05"
"""The MCP revision the firmware speaks."""

MAX_PAGES = 50
"""The most ``tools/list`` pages read from one device (a device whose cursor never ends cannot hang the session)."""

DISCOVERY_TIMEOUT = 10.0
"""Seconds a device has to answer ``initialize`` and each ``tools/list`` page."""

CLIENT_INFO = {"name": "voxcall", "version": "1"}


class DeviceError(Exception):
    """The device answered a request with an error, or with something that is no answer."""


@dataclass(frozen=True, slots=True)
class DeviceTool:
    """One tool the device serves: its name there (``self.light.set_rgb``), description and JSON Schema."""

    name: str
    description: str
    parameters: dict[str, Any]


class DeviceMcp:
    """One device's MCP server; ``send`` writes a JSON-RPC message to the device."""

    def __init__(self, send: Callable[[Message], Awaitable[None]], *, vision_url: str, vision_token: str) -> None:
        self._send = send
        self._vision = {"url": vision_url, "token": vision_token}
        self._ids = itertools.count(1)
        self._waiting: dict[int, asyncio.Future[Any]] = {}

    async def discover(self) -> list[DeviceTool]:
        """Initialize the device's MCP server and list its tools (every page); :class:`DeviceError` or
        ``TimeoutError`` when the device does not go along."""
        await self.request("initialize", {"protocolVersion": PROTOCOL_VERSION, "clientInfo": CLIENT_INFO,
                                          "capabilities": {"vision": self._vision}}, DISCOVERY_TIMEOUT)
        await self._send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        tools: list[DeviceTool] = []
        cursor = ""
        for _ in range(MAX_PAGES):
            page = await self.request("tools/list", {"cursor": cursor} if cursor else {}, DISCOVERY_TIMEOUT)
            listed = page.get("tools") if isinstance(page, dict) else None
            if not isinstance(listed, list):
                raise DeviceError("tools/list answered without a list of tools")
            tools += [tool for data in listed if (tool := _tool(data)) is not None]
            cursor = page.get("nextCursor") or ""
            if not isinstance(cursor, str) or not cursor:
                return tools
        log.warning("device MCP: stopped listing tools after %d pages", MAX_PAGES)
        return tools

    async def call(self, name: str, arguments: Mapping[str, Any], timeout: float | None) -> str:
        """Call tool ``name`` (its name on the device); its text. :class:`ToolError` for an error the device
        reports (its message, for the model), ``TimeoutError`` when it does not answer within ``timeout``."""
        try:
            result = await self.request("tools/call", {"name": name, "arguments": dict(arguments)}, timeout)
        except DeviceError as exc:
            raise ToolError(f"the device reported an error: {exc}") from None
        if not isinstance(result, dict):
            raise ToolError("the device's answer held no result")
        text = _text_of(result.get("content"))
        if result.get("isError") is True:
            raise ToolError(f"the device reported an error: {text or 'no reason given'}")
        return text or "ok"

    async def request(self, method: str, params: Mapping[str, Any], timeout: float | None) -> Any:
        """Send one request and wait (at most ``timeout`` seconds) for its ``result``."""
        request_id = next(self._ids)
        answer: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._waiting[request_id] = answer
        try:
            await self._send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": dict(params)})
            async with asyncio.timeout(timeout):
                return await answer
        finally:
            self._waiting.pop(request_id, None)

    def received(self, payload: Any) -> None:
        """A JSON-RPC message from the device: the answer to a request, or something to ignore."""
        if not isinstance(payload, dict):
            log.info("device MCP: dropped a payload that is no JSON-RPC object")
            return
        request_id = payload.get("id")
        answer = self._waiting.get(request_id) if isinstance(request_id, int) else None
        if answer is None or answer.done():
            if "method" not in payload:  # a late answer (its request timed out) or one nobody asked for
                log.info("device MCP: dropped an answer to request %r, which nothing awaits", request_id)
            return
        error = payload.get("error")
        if error is not None:
            message = error.get("message") if isinstance(error, dict) else None
            answer.set_exception(DeviceError(message if isinstance(message, str) and message else "unspecified"))
        elif "result" in payload:
            answer.set_result(payload["result"])
        else:
            answer.set_exception(DeviceError("an answer with neither result nor error"))

    def close(self) -> None:
        """The session ends: every request still waiting fails."""
        for answer in self._waiting.values():
            if not answer.done():
                answer.set_exception(DeviceError("the device disconnected"))
        self._waiting.clear()


def _tool(data: Any) -> DeviceTool | None:
    """A listed tool, or None for one that is malformed (logged) or meant for the user only."""
    if not isinstance(data, dict) or not isinstance(data.get("name"), str) or not data["name"]:
        log.warning("device MCP: skipped a tool without a name")
        return None
    annotations = data.get("annotations")
    if isinstance(annotations, dict) and annotations.get("audience") == ["user"]:
        return None
    schema = data.get("inputSchema")
    if not isinstance(schema, dict):
        schema = {"type": "object", "properties": {}}
    description = data.get("description")
    return DeviceTool(data["name"], description if isinstance(description, str) else "", schema)


def _text_of(content: Any) -> str:
    """A result's content as text: its text parts joined; an image (the firmware nests it as a JSON string) or any
    other part is named, not given."""
    if not isinstance(content, list):
        return ""
    parts: list[str] = []
    for part in content:
        if not isinstance(part, dict):
            continue
        if part.get("type") == "text" and isinstance(part.get("text"), str):
            parts.append(part["text"])
        else:
            parts.append(f"[{part.get('type', 'content')}]")
    return "\n".join(parts)
