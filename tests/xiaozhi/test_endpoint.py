"""Who may connect: the credentials and the allow-list, the binary protocol, and the ``hello`` that must come
first."""

from __future__ import annotations

import json

import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed, InvalidStatus

from voxcall.speech.voice import Voice

from .conftest import HEADERS, TOKEN, server

HELLO = {"type": "hello", "version": 1, "transport": "websocket", "features": {"mcp": False},
         "audio_params": {"format": "opus", "sample_rate": 16000, "channels": 1, "frame_duration": 60}}


async def refused(url: str, headers: dict[str, str]) -> int:
    """The HTTP status a connection is refused with before the upgrade."""
    with pytest.raises(InvalidStatus) as refusal:
        async with connect(url, additional_headers=headers):
            pass
    return refusal.value.response.status_code


async def test_who_may_connect(voice: Voice) -> None:
    async with server(voice, tokens=[{"token": TOKEN}], allowed_devices=["02:00:00:00:00:01"]) as running:
        assert await refused(running.url, HEADERS) == 403, "no token"
        assert await refused(running.url, {**HEADERS, "Authorization": "Bearer wrong-token-0123456"}) == 403
        assert await refused(running.url, {**HEADERS, "Authorization": f"Bearer {TOKEN}",
                                           "Device-Id": "02:00:00:00:00:02"}) == 403, "not on the allow-list"
        assert await refused(running.url, {"Authorization": f"Bearer {TOKEN}"}) == 403, "no device id"
        assert await refused(running.url, {**HEADERS, "Authorization": f"Bearer {TOKEN}",
                                           "Protocol-Version": "2"}) == 403, "binary protocol 2"
        async with connect(running.url, additional_headers={**HEADERS, "Authorization": f"Bearer {TOKEN}"}) as ws:
            await ws.send(json.dumps(HELLO))
            hello = json.loads(await ws.recv())
            assert hello["type"] == "hello" and hello["transport"] == "websocket" and hello["session_id"]
        query = f"{running.url}?device-id=02:00:00:00:00:01&client-id=c0ffee&authorization=Bearer%20{TOKEN}"
        async with connect(query) as ws:  # a browser's way: the query
            await ws.send(json.dumps(HELLO))
            assert json.loads(await ws.recv())["type"] == "hello"
    async with server(voice, ota_token=TOKEN) as running:
        assert await refused(running.url, HEADERS) == 403, "no token"
        async with connect(running.url, additional_headers={**HEADERS, "Authorization": TOKEN}) as ws:
            await ws.send(json.dumps(HELLO))  # the OTA token, bare as some clients send it
            assert json.loads(await ws.recv())["type"] == "hello"


async def test_speech_off_refuses_devices() -> None:
    async with server(None) as running:
        assert await refused(running.url, HEADERS) == 403


async def test_the_hello_must_come_first_in_binary_protocol_1(voice: Voice, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("voxcall.xiaozhi.endpoint.HELLO_TIMEOUT", 0.3)
    async with server(voice) as running:
        for first in (None, {"type": "listen", "state": "start", "mode": "auto"}, {**HELLO, "version": 2}):
            async with connect(running.url, additional_headers=HEADERS) as ws:
                if first is not None:
                    await ws.send(json.dumps(first))
                with pytest.raises(ConnectionClosed) as closed:
                    await ws.recv()
                assert closed.value.rcvd is not None and closed.value.rcvd.code == 1008


async def test_bad_input_is_skipped_and_the_session_goes_on(voice: Voice) -> None:
    async with server(voice) as running, connect(running.url, additional_headers=HEADERS) as ws:
        await ws.send(json.dumps(HELLO))
        assert json.loads(await ws.recv())["type"] == "hello"
        await ws.send(json.dumps({"type": "listen", "state": "start", "mode": "auto"}))
        for bad in (b"\xff\xff\xff", b"", b"\x00" * 4000, "not json", '{"type": "listen", "state": "pause"}',
                    '{"type": "mcp", "payload": {"jsonrpc": "2.0", "id": 99, "result": {}}}', '{"type": "iot"}'):
            await ws.send(bad)
        await ws.send(json.dumps({"type": "ping"}))
        assert json.loads(await ws.recv()) == {"type": "pong"}
        await ws.send(json.dumps({"type": "listen", "state": "detect", "text": "What is the weather?"}))
        kinds = []
        while "stop" not in kinds:
            message = await ws.recv()
            kinds.append("audio" if isinstance(message, bytes) else json.loads(message).get("state", "stt"))
        assert kinds[:2] == ["stt", "start"] and "audio" in kinds
