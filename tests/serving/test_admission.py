"""Session limits and the drain: the official SDK and raw WebSockets against a real server.

Over ``max_sessions`` a connection is refused with HTTP 503 before the upgrade, over ``max_sessions_per_key`` with
429; a seat comes back when its connection ends. A drain lets a running response finish, closes every session
with code 1001 and refuses new connections (``/healthz`` 503). The stop signal end to end (a ``voxcall serve``
process) is in ``tests/test_server.py``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
from typing import Any, cast

import httpx2 as httpx
import pytest
import websockets
from starlette.types import Message

from tests.servers import SCRIPT, Server, ServerFactory
from voxcall.app import create_app
from voxcall.config import ServerSettings
from voxcall.llm import ScriptedBackend
from voxcall.serving.admission import GOING_AWAY, RETRY_AFTER_SECONDS, SERVICE_RESTART, Admission, Refusal, Seat

ANSWER = " ".join(f"w{n}" for n in range(20))
DRAIN_SCRIPT = {**SCRIPT, "rules": [{"match": "tell", "reply": ANSWER}, *SCRIPT["rules"]]}


def url(server: Server) -> str:
    return f"ws://127.0.0.1:{server.port}/v1/realtime"


async def refused(address: str, **options: Any) -> websockets.exceptions.InvalidStatus:
    """The refusal a raw WebSocket connect to ``address`` gets (fails the test when it is admitted)."""
    with pytest.raises(websockets.exceptions.InvalidStatus) as caught:
        async with websockets.connect(address, **options):
            pass
    return caught.value


def error_of(refusal: websockets.exceptions.InvalidStatus) -> dict[str, Any]:
    return cast(dict[str, Any], json.loads(refusal.response.body)["error"])


async def health(server: Server) -> httpx.Response:
    async with httpx.AsyncClient() as http:
        return await http.get(f"http://127.0.0.1:{server.port}/healthz")


async def until_sessions(server: Server, count: int) -> None:
    """Wait until the server counts ``count`` sessions (a closed connection's end reaches it a moment later)."""
    for _ in range(200):
        if server.admission.active == count:
            return
        await asyncio.sleep(0.02)
    pytest.fail(f"the server still counts {server.admission.active} sessions, not {count}")


# --- the counts -------------------------------------------------------------------------------------------------


def test_admission_counts_in_all_and_per_key() -> None:
    admission = Admission(max_sessions=3, max_sessions_per_key=2)
    first, second = admission.admit("k1"), admission.admit("k1")
    assert isinstance(first, Seat) and isinstance(second, Seat)
    third = admission.admit("k1")
    assert isinstance(third, Refusal) and (third.status, third.code) == (429, "max_sessions_per_key")
    assert isinstance(admission.admit(None), Seat)  # no key: only the total counts
    full = admission.admit("k2")
    assert isinstance(full, Refusal) and (full.status, full.code) == (503, "max_sessions")
    assert "max_sessions" in full.message and admission.active == 3
    with first:
        pass
    with first:  # giving a seat back twice frees one place only
        pass
    assert admission.active == 2
    assert isinstance(admission.admit("k1"), Seat)
    assert isinstance(admission.admit("k2"), Refusal)


def test_a_draining_admission_refuses_and_turns_late_seats_away() -> None:
    admission = Admission(max_sessions=5, max_sessions_per_key=5)
    late = admission.admit(None)
    assert isinstance(late, Seat)
    admission.draining = True
    refusal = admission.admit(None)
    assert isinstance(refusal, Refusal) and (refusal.status, refusal.code) == (503, "shutting_down")
    assert not late.occupy(cast(Any, object()), cast(Any, object()))  # accepted during the drain: closed at once


async def test_the_sdk_is_refused_with_503_before_the_upgrade(make_server: ServerFactory) -> None:
    server = await make_server(max_sessions=2)
    async with server.client().realtime.connect(model="m") as one, \
            server.client().realtime.connect(model="m") as two:
        assert (await one.recv()).type == (await two.recv()).type == "session.created"
        with pytest.raises(websockets.exceptions.InvalidStatus, match="HTTP 503") as caught:
            async with server.client().realtime.connect(model="m"):
                pass
        assert error_of(caught.value)["code"] == "max_sessions"
        raw = await refused(url(server))
        assert raw.response.status_code == 503
        assert raw.response.headers["Retry-After"] == str(RETRY_AFTER_SECONDS)
        assert raw.response.headers["Content-Type"] == "application/json"
        assert error_of(raw) == {"type": "server_error", "code": "max_sessions",
                                 "message": "the server is serving its limit of 2 sessions (max_sessions); "
                                            "try again later"}
        body = (await health(server)).json()
        assert (body["sessions"], body["max_sessions"]) == (2, 2)
    async with httpx.AsyncClient() as http:
        page = (await http.get(f"http://127.0.0.1:{server.port}/metrics")).text
    assert "voxcall_sessions_refused_total{reason=\"max_sessions\"} 2.0" in page


async def test_a_key_over_its_limit_gets_429(make_server: ServerFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VOXCALL_API_KEYS", "k1,k2")
    server = await make_server(max_sessions_per_key=1)
    async with server.client(api_key="k1").realtime.connect(model="m") as conn:
        assert (await conn.recv()).type == "session.created"
        with pytest.raises(websockets.exceptions.InvalidStatus, match="HTTP 429") as caught:
            async with server.client(api_key="k1").realtime.connect(model="m"):
                pass
        assert error_of(caught.value)["code"] == "max_sessions_per_key"
        browser = [websockets.Subprotocol("realtime"), websockets.Subprotocol("openai-insecure-api-key.k1")]
        assert (await refused(url(server), subprotocols=browser)).response.status_code == 429  # same key, any way
        async with server.client(api_key="k2").realtime.connect(model="m") as other:  # another key has its own
            assert (await other.recv()).type == "session.created"
        assert (await refused(url(server))).response.status_code == 403  # no key: refused before it is counted
    await until_sessions(server, 0)
    async with server.client(api_key="k1").realtime.connect(model="m") as again:
        assert (await again.recv()).type == "session.created"


async def test_a_seat_comes_back_however_the_connection_ends(make_server: ServerFactory) -> None:
    server = await make_server(backend=ScriptedBackend(SCRIPT, token_delay=0.05), max_sessions=1)
    for _ in range(3):  # a clean close; a drop mid-response; a refusal that took no seat
        async with websockets.connect(url(server)) as ws:
            await ws.recv()
            assert (await refused(url(server))).response.status_code == 503
            await ws.send(json.dumps({"type": "conversation.item.create", "item": {
                "type": "message", "role": "user", "content": [{"type": "input_text", "text": "long story"}]}}))
            await ws.send(json.dumps({"type": "response.create"}))
            while json.loads(await ws.recv())["type"] != "response.output_text.delta":
                pass
        await until_sessions(server, 0)
    assert (await health(server)).json()["sessions"] == 0


async def test_a_storm_admits_exactly_the_limit(make_server: ServerFactory) -> None:
    server = await make_server(max_sessions=5)
    async with contextlib.AsyncExitStack() as held:
        async def attempt() -> int:
            try:
                ws = await held.enter_async_context(websockets.connect(url(server)))
            except websockets.exceptions.InvalidStatus as exc:
                return exc.response.status_code
            assert json.loads(await ws.recv())["type"] == "session.created"
            return 101
        outcomes = await asyncio.gather(*(attempt() for _ in range(30)))
        assert sorted(outcomes).count(101) == 5 and outcomes.count(503) == 25
        assert server.admission.active == 5
    await until_sessions(server, 0)


async def test_without_the_denial_extension_a_refusal_is_close_1013() -> None:
    """A server that cannot answer a WebSocket request over HTTP: accept, then close with "try again later"."""
    admission = Admission(max_sessions=1, max_sessions_per_key=1)
    app = create_app(ServerSettings(), ScriptedBackend(SCRIPT), admission=admission)
    assert isinstance(admission.admit(None), Seat)
    sent: list[Message] = []
    incoming = [{"type": "websocket.connect"}]

    async def receive() -> Message:
        return incoming.pop(0) if incoming else {"type": "websocket.disconnect", "code": 1000}

    async def send(message: Message) -> None:
        sent.append(message)

    scope = {"type": "websocket", "path": "/v1/realtime", "raw_path": b"/v1/realtime", "query_string": b"",
             "headers": [], "subprotocols": ["realtime"], "client": ("127.0.0.1", 1), "server": ("127.0.0.1", 2),
             "scheme": "ws", "root_path": "", "asgi": {"version": "3.0"}}
    await app(scope, receive, send)
    assert [m["type"] for m in sent] == ["websocket.accept", "websocket.close"]
    assert sent[0]["subprotocol"] == "realtime"
    assert (sent[1]["code"], sent[1]["reason"]) == (1013, "max_sessions")


# --- the drain --------------------------------------------------------------------------------------------------


async def ask(conn: Any, text: str) -> None:
    await conn.conversation.item.create(item={"type": "message", "role": "user",
                                              "content": [{"type": "input_text", "text": text}]})
    await conn.response.create()


async def events_until_closed(conn: Any) -> tuple[list[Any], int | None]:
    """The events ``conn`` gets until the server closes it, and the close code."""
    seen: list[Any] = []
    try:
        while True:
            seen.append(await conn.recv())
    except websockets.exceptions.ConnectionClosed as closed:
        return seen, closed.rcvd.code if closed.rcvd else None


async def test_a_drain_lets_the_running_response_finish_then_closes_with_1001(make_server: ServerFactory) -> None:
    server = await make_server(backend=ScriptedBackend(DRAIN_SCRIPT, token_delay=0.05), session={"prefetch": False})
    async with server.client().realtime.connect(model="m") as busy, \
            server.client().realtime.connect(model="m") as idle:
        assert (await busy.recv()).type == (await idle.recv()).type == "session.created"
        await ask(busy, "tell me")
        while (await busy.recv()).type != "response.output_text.delta":
            pass
        draining = asyncio.create_task(server.admission.drain(30))
        idle_events, idle_code = await events_until_closed(idle)  # no response running: closed at once
        assert (idle_events, idle_code) == ([], GOING_AWAY)
        health_now = await health(server)
        assert health_now.status_code == 503 and health_now.json()["status"] == "draining"
        refusal = await refused(url(server))
        assert refusal.response.status_code == 503 and error_of(refusal)["code"] == "shutting_down"
        assert not draining.done()
        seen, code = await events_until_closed(busy)
        done = [ev for ev in seen if ev.type == "response.done"]
        assert len(done) == 1 and done[0].response.status == "completed"
        assert done[0].response.output[0].content[0].text == ANSWER
        assert code == GOING_AWAY
        await asyncio.wait_for(draining, 10)
    await until_sessions(server, 0)


async def test_a_replica_drains_with_1012_and_healthz_names_the_process(make_server: ServerFactory) -> None:
    server = await make_server(backend=ScriptedBackend(DRAIN_SCRIPT, token_delay=0.05), session={"prefetch": False},
                               shutdown_close_code=SERVICE_RESTART)
    serving = (await health(server)).json()
    assert (serving["pid"], serving["draining"], serving["sessions"]) == (os.getpid(), False, 0)
    async with websockets.connect(url(server)) as busy:
        assert json.loads(await busy.recv())["type"] == "session.created"
        await busy.send(json.dumps({"type": "conversation.item.create", "item": {
            "type": "message", "role": "user", "content": [{"type": "input_text", "text": "tell me"}]}}))
        await busy.send(json.dumps({"type": "response.create"}))
        while json.loads(await busy.recv())["type"] != "response.output_text.delta":
            pass
        draining = asyncio.create_task(server.admission.drain(30))
        await asyncio.sleep(0)
        drained = await health(server)
        assert drained.status_code == 503
        assert (drained.json()["pid"], drained.json()["draining"], drained.json()["sessions"]) == (os.getpid(), True, 1)
        seen = []
        with pytest.raises(websockets.exceptions.ConnectionClosed) as closed:
            while True:
                seen.append(json.loads(await busy.recv())["type"])
        assert "response.done" in seen
        assert closed.value.rcvd is not None
        assert (closed.value.rcvd.code, closed.value.rcvd.reason) == (SERVICE_RESTART, "server restarting: reconnect")
        await asyncio.wait_for(draining, 10)


def test_admission_refuses_a_close_code_a_drain_cannot_use() -> None:
    with pytest.raises(ValueError, match="close_code"):
        Admission(1, 1, close_code=1000)


async def test_a_drain_cuts_off_a_response_at_the_end_of_its_grace(make_server: ServerFactory) -> None:
    server = await make_server(backend=ScriptedBackend(SCRIPT, token_delay=0.05), session={"prefetch": False})
    async with server.client().realtime.connect(model="m") as conn:
        await conn.recv()
        await ask(conn, "long story")  # 200 words: 10 s
        while (await conn.recv()).type != "response.output_text.delta":
            pass
        draining = asyncio.create_task(server.admission.drain(0.2))
        seen, code = await events_until_closed(conn)
        assert code == GOING_AWAY and "response.done" not in {ev.type for ev in seen}
        await asyncio.wait_for(draining, 10)
    await until_sessions(server, 0)


async def test_hurry_ends_the_grace_at_once(make_server: ServerFactory) -> None:
    server = await make_server(backend=ScriptedBackend(SCRIPT, token_delay=0.05), session={"prefetch": False})
    async with server.client().realtime.connect(model="m") as conn:
        await conn.recv()
        await ask(conn, "long story")
        while (await conn.recv()).type != "response.output_text.delta":
            pass
        draining = asyncio.create_task(server.admission.drain(600))
        await asyncio.sleep(0.1)
        server.admission.hurry()
        await asyncio.wait_for(draining, 10)  # not the 600 s grace
        assert (await events_until_closed(conn))[1] == GOING_AWAY
