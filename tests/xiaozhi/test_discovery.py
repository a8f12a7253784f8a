"""How a device finds the server: the OTA answer holds what the firmware needs and nothing else; the camera's
endpoint says there is no vision model."""

from __future__ import annotations

import asyncio
import json
import urllib.error
import urllib.request
from typing import Any

from .conftest import HEADERS, TOKEN, server


async def http(method: str, url: str, headers: dict[str, str] | None = None,
               body: bytes | None = None) -> tuple[int, Any]:
    """An HTTP request's status and JSON body."""

    def send() -> tuple[int, Any]:
        request = urllib.request.Request(url, data=body, headers=headers or {}, method=method)
        try:
            with urllib.request.urlopen(request, timeout=10) as reply:
                return reply.status, json.load(reply)
        except urllib.error.HTTPError as error:
            return error.code, json.load(error)

    return await asyncio.to_thread(send)


async def test_the_ota_answer_holds_what_the_firmware_needs_and_nothing_else() -> None:
    async with server(None, ota_token=TOKEN) as running:
        ota = running.http + "/xiaozhi/ota"
        for status, body in (await http("POST", ota + "/", HEADERS, b'{"version": 2}'),
                             await http("GET", ota + "/", HEADERS), await http("POST", ota)):
            assert status == 200
            assert set(body) == {"server_time", "websocket"}, "never mqtt, activation or firmware"
            assert body["websocket"] == {"url": running.url, "token": TOKEN}
            assert set(body["server_time"]) == {"timestamp", "timezone_offset"}
        assert (await http("POST", ota + "/activate", HEADERS, b"{}"))[0] == 200
        status, body = await http("POST", running.http + "/xiaozhi/vision/explain", {}, b"jpeg")
        assert status == 501 and "no vision model" in body["error"]


async def test_the_ota_answer_names_the_public_url_and_refuses_a_device_not_allowed() -> None:
    async with server(None, public_url="wss://voice.example.com", allowed_devices=["02:00:00:00:00:01"]) as running:
        _, body = await http("POST", running.http + "/xiaozhi/ota/", HEADERS)
        assert body["websocket"] == {"url": "wss://voice.example.com/xiaozhi/v1/", "token": ""}
        other, _ = await http("POST", running.http + "/xiaozhi/ota/", {**HEADERS, "Device-Id": "02:00:00:00:00:02"})
        assert other == 403
