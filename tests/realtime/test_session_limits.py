"""A session's size and time limits: the conversation's bytes, and the idle timeout."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx2 as httpx
import pytest
import websockets

from tests.harness import ControlledBackend, Harness, Turn
from tests.servers import ServerFactory
from voxcall.core.conversation.conversation import item_bytes
from voxcall.llm import FunctionCallItem, FunctionOutputItem


async def test_oldest_items_are_deleted_before_a_response_until_the_conversation_fits() -> None:
    backend = ControlledBackend()
    async with Harness(backend, max_conversation_bytes=2048) as h:
        for n in range(6):
            await h.say(f"note {n}: " + "x" * 400)
        assert sum(map(item_bytes, h.session.conversation.items)) > 2048
        notes = h.session.conversation.items
        await h.send(type="response.create")
        await h.wait("response.done")
        deleted = [e["item_id"] for e in h.of("conversation.item.deleted")]
        assert deleted and deleted == [item.id for item in notes[:len(deleted)]]  # the oldest, in order
        kept = notes[len(deleted):]
        assert sum(map(item_bytes, kept)) <= 2048 < sum(map(item_bytes, notes[len(deleted) - 1:]))  # no more
        assert len(backend.requests[0].items) == len(kept)


async def test_a_call_and_its_output_are_deleted_together() -> None:
    backend = ControlledBackend()
    async with Harness(backend, max_conversation_bytes=1500) as h:
        await h.say("hi")
        await h.send(type="conversation.item.create", item={
            "type": "function_call", "id": "call_item", "call_id": "c1", "name": "lookup",
            "arguments": json.dumps({"text": "y" * 700})})
        await h.output("c1", "ok")
        await h.say("z" * 600)
        await h.send(type="response.create")
        await h.wait("response.done")
        deleted = [e["item_id"] for e in h.of("conversation.item.deleted")]
        assert "call_item" in deleted and len(deleted) == 3  # the greeting, the call, and its output with it
        items = backend.requests[0].items
        assert not any(isinstance(i, FunctionCallItem | FunctionOutputItem) for i in items)


async def test_an_item_bigger_than_the_conversation_limit_is_refused() -> None:
    async with Harness(ControlledBackend(), max_conversation_bytes=1024) as h:
        await h.send(type="conversation.item.create", event_id="evt_big", item={
            "type": "message", "role": "user", "content": [{"type": "input_text", "text": "x" * 1100}]})
        [error] = h.of("error")
        details: dict[str, Any] = error["error"]
        assert details["code"] == "item_too_large" and details["event_id"] == "evt_big"
        assert "session.max_conversation_bytes" in details["message"] and details["param"] == "item"
        assert len(h.session.conversation) == 0 and not h.of("conversation.item.added")


class Hangup:
    """Records how a session ended its connection."""

    def __init__(self) -> None:
        self.closed = asyncio.Event()
        self.calls: list[tuple[int, str]] = []

    async def __call__(self, code: int, reason: str) -> None:
        self.calls.append((code, reason))
        self.closed.set()


async def test_an_idle_session_is_closed_with_a_reason_naming_the_limit(make_server: ServerFactory) -> None:
    server = await make_server(session={"idle_timeout": 0.05})
    async with websockets.connect(f"ws://127.0.0.1:{server.port}/v1/realtime") as ws:
        assert json.loads(await ws.recv())["type"] == "session.created"
        with pytest.raises(websockets.exceptions.ConnectionClosedOK) as closed:
            await asyncio.wait_for(ws.recv(), 10)
    assert closed.value.rcvd is not None and closed.value.rcvd.code == 1000
    assert "session.idle_timeout" in closed.value.rcvd.reason
    await asyncio.wait_for(_no_sessions(server), 10)  # the server let go of it


async def _no_sessions(server: Any) -> None:
    async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{server.port}") as http:
        while (await http.get("/healthz")).json()["sessions"]:
            await asyncio.sleep(0.01)


async def test_a_running_response_keeps_the_session_open() -> None:
    turn = Turn("Thinking", hold=True)
    hangup = Hangup()
    async with Harness(ControlledBackend(turn), idle_timeout=0.05, close_socket=hangup) as h:
        await h.send(type="response.create")
        await turn.started.wait()
        await asyncio.sleep(0.3)  # six idle timeouts, all while the response runs
        assert not hangup.calls
        turn.release.set()
        await h.wait("response.done")
        await asyncio.wait_for(hangup.closed.wait(), 10)
        assert hangup.calls == [(1000, "idle for 0.05 s (session.idle_timeout)")]

