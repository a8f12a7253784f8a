"""``ClientSession`` against an in-process session (scripted backend, no models): tool round trips and idleness."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from voxcall.client.session import ClientSession
from voxcall.client.tools import ClientTools
from voxcall.client.transport import ClientError, InProcessTransport
from voxcall.config import SessionOptions
from voxcall.llm import ScriptedBackend
from voxcall.serving.frames import Message
from voxcall.tools import ToolRegistry

SCRIPT = {
    "rules": [
        {"match": "both", "reply": "Checking both.", "calls": [
            {"name": "slow", "arguments": {"x": 1}}, {"name": "fast", "arguments": {"x": 2}}]},
        {"match": "broken", "calls": [{"name": "broken", "arguments": {}}]},
        {"match": "fail", "reply": "Oh", "error": "simulated failure"},
    ],
    "after_tool": "{name} gave {output}.",
    "default": "Hello.",
}


class Recorder:
    """A reporter that keeps every line it is told, tagged with its kind."""

    def __init__(self) -> None:
        self.lines: list[tuple[str, str]] = []

    def user_transcript(self, text: str) -> None:
        self.lines.append(("user", text))

    def assistant_delta(self, text: str) -> None:
        self.lines.append(("delta", text))

    def assistant_done(self) -> None:
        self.lines.append(("done", ""))

    def tool_call(self, name: str, arguments: str) -> None:
        self.lines.append(("call", f"{name} {arguments}"))

    def tool_output(self, name: str, output: str) -> None:
        self.lines.append(("output", f"{name} {output}"))

    def error(self, message: str) -> None:
        self.lines.append(("error", message))

    def text(self) -> str:
        return "".join(text for kind, text in self.lines if kind == "delta")


class Sent(InProcessTransport):
    """An in-process transport that also records the client's events."""

    sent: list[Message]

    async def send(self, event: Message) -> None:
        self.sent.append(event)
        await super().send(event)


def client_tools() -> ClientTools:
    registry = ToolRegistry()

    @registry.tool
    async def slow(x: int) -> dict[str, Any]:
        """Answers after "fast" does, yet its output must go first."""
        await asyncio.sleep(0.2)
        return {"name": "slow", "x": x}

    @registry.tool
    async def fast(x: int) -> dict[str, Any]:
        """Answers at once."""
        return {"name": "fast", "x": x}

    @registry.tool
    def broken() -> None:
        """Always fails."""
        raise RuntimeError("the tool broke")

    return ClientTools(registry)


async def open_session(reporter: Recorder) -> tuple[ClientSession, Sent]:
    transport = await Sent.open(ScriptedBackend(SCRIPT), SessionOptions())
    transport.sent = []
    tools = client_tools()
    session = ClientSession(transport, reporter=reporter, tools=tools)
    await session.__aenter__()
    await session.update(tools=tools.definitions)
    return session, transport


async def test_outputs_go_in_call_order_then_one_response_create() -> None:
    reporter = Recorder()
    session, transport = await open_session(reporter)
    try:
        await session.say("check both")
        await session.wait_idle(10)
    finally:
        await session.close()
    kinds = [(e["type"], e.get("item", {}).get("type")) for e in transport.sent[1:]]  # after the session.update
    assert kinds == [("conversation.item.create", "message"), ("response.create", None),
                     ("conversation.item.create", "function_call_output"),
                     ("conversation.item.create", "function_call_output"), ("response.create", None)]
    outputs = [json.loads(e["item"]["output"])["name"] for e in transport.sent if e.get("item", {}).get("output")]
    assert outputs == ["slow", "fast"]
    assert [kind for kind, _ in reporter.lines if kind in ("call", "output")] == ["call", "call", "output", "output"]
    assert reporter.text() == 'Checking both.slow gave {"name":"slow","x":1}. fast gave {"name":"fast","x":2}.'
    assert [r["status"] for r in session.responses] == ["completed", "completed"]


async def test_a_tool_that_raises_gives_an_error_output_and_the_turn_goes_on() -> None:
    reporter = Recorder()
    session, _ = await open_session(reporter)
    try:
        await session.say("broken tool")
        await session.wait_idle(10)
    finally:
        await session.close()
    assert ("output", "broken tool 'broken' failed (RuntimeError)") in reporter.lines
    assert reporter.text() == "broken gave tool 'broken' failed (RuntimeError)."


async def test_a_failed_response_fails_the_wait() -> None:
    reporter = Recorder()
    session, _ = await open_session(reporter)
    try:
        await session.say("fail now")
        with pytest.raises(ClientError, match="the response failed: simulated failure"):
            await session.wait_idle(10)
    finally:
        await session.close()


async def test_refused_settings_raise_with_the_servers_message() -> None:
    transport = await InProcessTransport.open(ScriptedBackend(SCRIPT), SessionOptions())
    async with ClientSession(transport, reporter=Recorder()) as session:
        with pytest.raises(ClientError, match=r"the server refused the session settings: .*max_output_tokens"):
            await session.update(max_output_tokens=0)
        await session.say("hi")  # the session is still usable
        await session.wait_idle(10)
        assert session.responses[-1]["status"] == "completed"


async def test_a_call_without_client_tools_still_gets_an_output() -> None:
    reporter = Recorder()
    transport = await InProcessTransport.open(ScriptedBackend(SCRIPT), SessionOptions())
    async with ClientSession(transport, reporter=reporter) as session:
        await session.say("broken")
        await session.wait_idle(10)
    assert ("output", "broken error: this client has no tool named 'broken'") in reporter.lines
