"""A slow MCP tool end to end (voxcall's app, a real MCP server over stdio, the official openai SDK): the agent
acknowledges it at once, answers the user's next question while it runs, and speaks its result when it lands."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from tests.servers import ServerFactory
from voxcall.language import ACKNOWLEDGEMENTS
from voxcall.llm import ScriptedBackend

DEMO = str(Path(__file__).resolve().parent.parent / "tools" / "mcp" / "demo_server.py")
SCRIPT = {"rules": [
    {"match": "forecast", "calls": [{"name": "demo__slow", "arguments": {"seconds": 3}}]},
    {"match": "clock", "reply": "It is noon."},
], "after_tool": "The forecast tool says: {output}."}


async def until_done(conn: Any) -> list[Any]:
    """Every event up to and including the next ``response.done``."""
    seen = []
    async for ev in conn:
        seen.append(ev)
        if ev.type == "error":
            raise AssertionError(ev.error.message)
        if ev.type == "response.done":
            return seen
    raise AssertionError("connection closed")


def text_of(seen: list[Any]) -> str:
    return "".join(ev.delta for ev in seen if ev.type == "response.output_text.delta")


async def say(conn: Any, text: str) -> None:
    await conn.conversation.item.create(item={"type": "message", "role": "user",
                                              "content": [{"type": "input_text", "text": text}]})
    await conn.response.create()


async def test_a_slow_mcp_tool_is_acknowledged_the_user_talks_on_and_the_result_is_spoken(
        make_server: ServerFactory) -> None:
    server = await make_server(backend=ScriptedBackend(SCRIPT), session={"prefetch": False},
                               tools={"acknowledge_after_ms": 300},
                               mcp={"servers": {"demo": {"command": sys.executable, "args": [DEMO]}}})
    async with server.client().realtime.connect(model="m") as conn:
        await conn.session.update(session={"type": "realtime", "output_modalities": ["text"]})
        await say(conn, "what is the forecast for tomorrow?")
        first = await until_done(conn)
        done = first[-1].response
        assert done.status == "completed"
        call, _ack = done.output
        assert call.type == "mcp_call" and call.status == "in_progress" and call.output is None
        assert text_of(first) == ACKNOWLEDGEMENTS["en"][0]
        started = [ev for ev in first if ev.type == "voxcall.tool_call.started"]
        assert started and started[0].model_extra["item_id"] == call.id

        await say(conn, "and what does the clock say?")
        second = await until_done(conn)
        assert second[-1].response.status == "completed" and text_of(second) == "It is noon."
        assert not [ev for ev in second if ev.type == "conversation.item.done" and ev.item.id == call.id]

        third = await until_done(conn)  # the server answers the result when it lands, unasked
        landed = [ev for ev in third if ev.type == "conversation.item.done" and ev.item.id == call.id]
        assert landed and landed[0].item.output == "slept 3 s"
        assert third.index(landed[0]) < next(i for i, ev in enumerate(third) if ev.type == "response.created")
        assert text_of(third) == "The forecast tool says: slept 3 s."
