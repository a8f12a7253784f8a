"""Server tools end to end: voxcall serve's app, voxcall.yaml-style settings, real MCP servers, the official SDK.

One scripted turn chains calculator → music → MCP time; an MCP server crash mid-session is survived; a hanging
tool times out into the model's context; an approval round trip; the music folder refuses traversal.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.audio.test_decode import write_tone
from tests.servers import ServerFactory
from voxcall.llm import ScriptedBackend

DEMO = str(Path(__file__).resolve().parent.parent / "tools" / "mcp" / "demo_server.py")
SCRIPT = {"rules": [
    {"match": "everything", "reply": "On it.", "calls": [{"name": "calculator", "arguments": {"op": "mul", "a": 12,
                                                                                             "b": 8}}]},
    {"after": "calculator", "calls": [{"name": "music_play", "arguments": {"name": "blue green"}}]},
    {"after": "music_play", "calls": [{"name": "time__get_current_time", "arguments": {"timezone": "UTC"}}]},
    {"match": "crash", "calls": [{"name": "demo__crash", "arguments": {}}]},
    {"match": "add", "calls": [{"name": "demo__add", "arguments": {"a": 40, "b": 2}}]},
    {"match": "hang", "calls": [{"name": "slowpoke__slow", "arguments": {"seconds": 30}}]},
    {"match": "approve", "calls": [{"name": "guarded__echo", "arguments": {"text": "hi"}}]},
    {"match": "escape", "calls": [{"name": "music_play", "arguments": {"name": "../../../etc/passwd"}}]},
], "after_tool": "Result: {output}."}


@pytest.fixture
async def server(make_server: ServerFactory, tmp_path: Path) -> Any:
    music = tmp_path / "music"
    music.mkdir()
    write_tone(music / "Blue in Green.mp3", seconds=0.5)
    write_tone(music / "So What.ogg", seconds=0.5)
    return await make_server(
        backend=ScriptedBackend(SCRIPT), session={"prefetch": False},
        tools={"builtin": ["calculator", "music", "voice_volume"], "music_dir": str(music), "max_tool_rounds": 5,
               "acknowledge_after_ms": 0},  # every round within its response (test_slow_tool_e2e: the other way)
        mcp={"servers": {
            "time": {"command": "mcp-server-time", "args": ["--local-timezone", "UTC"]},
            "demo": {"command": sys.executable, "args": [DEMO]},
            "slowpoke": {"command": sys.executable, "args": [DEMO], "call_timeout": 1.0},
            "guarded": {"command": sys.executable, "args": [DEMO], "require_approval": "always"},
        }})


async def turn(conn: Any, text: str, *, approve: bool | None = None) -> tuple[Any, list[Any]]:
    """One user turn; returns the response.done event and every event seen."""
    await conn.conversation.item.create(item={"type": "message", "role": "user",
                                              "content": [{"type": "input_text", "text": text}]})
    await conn.response.create()
    seen = []
    async for ev in conn:
        seen.append(ev)
        if ev.type == "error":
            raise AssertionError(ev.error.message)
        if ev.type == "response.output_item.done" and ev.item.type == "mcp_approval_request" and approve is not None:
            await conn.conversation.item.create(item={"type": "mcp_approval_response", "approve": approve,
                                                      "approval_request_id": ev.item.id})
        if ev.type == "response.done":
            return ev, seen
    raise AssertionError("connection closed")


def text_of(seen: list[Any]) -> str:
    return "".join(ev.delta for ev in seen if ev.type == "response.output_text.delta")


async def test_calculator_music_and_mcp_time_in_one_turn(server: Any) -> None:
    async with server.client().realtime.connect(model="m") as conn:
        await conn.session.update(session={"type": "realtime", "output_modalities": ["text"]})
        done, seen = await turn(conn, "do everything")
        calls = [o for o in done.response.output if o.type == "mcp_call"]
        assert [(c.server_label, c.name) for c in calls] == [
            ("voxcall", "calculator"), ("voxcall", "music_play"), ("time", "get_current_time")]
        assert calls[0].output == "96" and "Blue in Green" in calls[1].output
        assert "UTC" in calls[2].output or "+00:00" in calls[2].output
        assert done.response.status == "completed" and text_of(seen).startswith("On it.Result: ")
        rounds = [ev.round for ev in seen if ev.type == "voxcall.tool_call.completed"]
        assert rounds == [1, 2, 3]


async def test_mcp_crash_is_survived_and_hanging_tool_times_out(server: Any) -> None:
    async with server.client().realtime.connect(model="m") as conn:
        await conn.session.update(session={"type": "realtime", "output_modalities": ["text"]})
        crashed, _ = await turn(conn, "crash now")
        assert crashed.response.output[0].error is not None
        added, seen = await turn(conn, "add please")
        assert added.response.output[0].output == "42" and text_of(seen) == "Result: 42."
        hung, seen = await turn(conn, "hang on")
        assert "timed out" in hung.response.output[0].error.message
        assert hung.response.status == "completed" and "timed out" in text_of(seen)


async def test_approval_round_trip_and_denial(server: Any) -> None:
    async with server.client().realtime.connect(model="m") as conn:
        await conn.session.update(session={"type": "realtime", "output_modalities": ["text"]})
        approved, _ = await turn(conn, "approve this", approve=True)
        kinds = [o.type for o in approved.response.output]
        assert kinds == ["mcp_call", "mcp_approval_request", "message"]
        assert approved.response.output[0].output == "hi"
        denied, seen = await turn(conn, "approve that", approve=False)
        assert "did not approve" in denied.response.output[0].error.message
        assert "did not approve" in text_of(seen)


async def test_music_folder_refuses_traversal(server: Any) -> None:
    async with server.client().realtime.connect(model="m") as conn:
        await conn.session.update(session={"type": "realtime", "output_modalities": ["text"]})
        done, _ = await turn(conn, "escape please")
        call = done.response.output[0]
        assert call.error is not None and "passwd" not in (call.output or "")
        raw = json.dumps(done.response.model_dump())
        assert "root:" not in raw
