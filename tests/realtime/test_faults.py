"""Faults around a session: a provider killed mid-stream or silent, and a client gone at any moment of a spoken tool
response. The session ends each response clearly and goes on, or closes leaving nothing behind.

Covered elsewhere, not repeated here: an MCP server crashing mid-call (``test_tools_e2e.py``: the demo server's
``crash`` tool exits during the call; the call's result is an error and the next call to that server works), a
server tool that hangs (``test_server_tools.py``: the registry's timeout; ``test_tools_e2e.py``: an MCP server's
``call_timeout``), a backend that stalls or fails inside the process (``test_session.py``).
"""

from __future__ import annotations

import asyncio
import gc
import logging
import subprocess
import sys
from pathlib import Path
from types import TracebackType
from typing import Any, Self

import pytest

from tests.core.hearing.test_heard_audio import fake_voice
from tests.harness import WEATHER, Harness
from voxcall.core.tools.toolbox import Toolbox
from voxcall.llm import OpenAIChatBackend, ScriptedBackend
from voxcall.tools import ToolRegistry

ROOT = Path(__file__).resolve().parents[2]


class Provider:
    """:mod:`tests.realtime.provider_process` running (``stall``: says "Let me" and holds; ``answer``: "Back
    again."), killed on exit."""

    def __init__(self, kind: str, port: int = 0) -> None:
        self.proc = subprocess.Popen([sys.executable, "-m", "tests.realtime.provider_process", str(port), kind],
                                     cwd=ROOT, stdout=subprocess.PIPE, text=True)
        assert self.proc.stdout is not None
        self.base_url = self.proc.stdout.readline().strip()
        assert self.base_url.startswith("http://"), f"the provider did not start ({self.base_url!r})"

    @property
    def port(self) -> int:
        return int(self.base_url.rsplit(":", 1)[1].split("/")[0])

    def kill(self) -> None:
        """SIGKILL: the process dies mid-reply, its sockets closed by the kernel."""
        self.proc.kill()
        self.proc.wait()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        if self.proc.poll() is None:
            self.kill()
        assert self.proc.stdout is not None
        self.proc.stdout.close()


async def ask(h: Harness, count: int) -> dict[str, Any]:
    """``response.create``; the ``count``-th ``response.done``."""
    await h.send(type="response.create")
    return await h.wait("response.done", count, timeout=15)


async def test_a_provider_killed_mid_stream_fails_the_response_and_the_session_recovers_with_it() -> None:
    with Provider("stall") as provider:
        backend = OpenAIChatBackend("m", base_url=provider.base_url, max_retries=0)
        async with Harness(backend) as h:
            await h.say("hi")
            await h.send(type="response.create")
            await h.wait("response.output_text.delta", 2, timeout=15)
            provider.kill()
            failed = (await h.wait("response.done", timeout=15))["response"]
            assert failed["status"] == "failed"
            assert failed["status_details"]["error"] == {
                "type": "server_error", "code": "incomplete_stream",
                "message": "backend stream ended before the reply was complete"}
            said = h.session.conversation.items[-1]
            assert (said.role, said.text, said.status) == ("assistant", "Let me ", "incomplete")
            down = (await ask(h, 2))["response"]
            assert down["status_details"]["error"]["message"] == "backend unavailable: connection refused"
            with Provider("answer", port=provider.port):
                back = (await ask(h, 3))["response"]
            assert back["status"] == "completed" and back["output"][0]["content"][0]["text"] == "Back again."
        await backend.aclose()


async def test_a_provider_that_never_answers_fails_the_response_at_the_llm_timeout() -> None:
    abandoned = asyncio.Event()

    async def silent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.read()  # takes the request, answers nothing, until the client hangs up
        abandoned.set()
        writer.close()

    server = await asyncio.start_server(silent, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    backend = OpenAIChatBackend("m", base_url=f"http://127.0.0.1:{port}/v1", max_retries=0)
    try:
        async with Harness(backend, llm_timeout=0.5) as h:
            await h.say("hi")
            failed = (await ask(h, 1))["response"]
            assert failed["status"] == "failed"
            assert failed["status_details"]["error"] == {
                "type": "server_error", "code": "timeout", "message": "the model did not answer within 0.5 s"}
            await asyncio.wait_for(abandoned.wait(), 5)  # the request was closed, not left hanging
            await h.say("still there?")
            assert h.of("conversation.item.done")[-1]["item"]["content"][0]["text"] == "still there?"
    finally:
        await backend.aclose()
        server.close()
        await server.wait_closed()


SPOKEN_TOOLS = {"rules": [
    {"match": "weather", "reply": "Let me check that.", "calls": [{"name": "get_weather", "arguments": {"city": "P"}}]},
    {"match": "add", "reply": "Adding them up.", "calls": [{"name": "add", "arguments": {"a": 2, "b": 3}}]},
], "after_tool": "The {name} tool says {output}."}


def adder() -> Toolbox:
    registry = ToolRegistry()

    @registry.tool
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    return Toolbox(registry)


class Dropping(Harness):
    """A spoken session whose client goes away after ``after`` server events of its response: that send fails as
    on a closed socket, and the session is closed as the app closes it when the socket's reader ends."""

    def __init__(self, after: int) -> None:
        super().__init__(ScriptedBackend(SPOKEN_TOOLS), voice=fake_voice(), toolbox=adder(), prefetch=False)
        self.after = after
        self.counting = False
        self.sent = 0
        self.gone = asyncio.Event()

    async def _record(self, ev: dict[str, Any]) -> None:
        if self.counting:
            if self.sent == self.after:
                self.gone.set()
                raise ConnectionError("the client went away")
            self.sent += 1
        await super()._record(ev)

    async def turn(self, text: str) -> None:
        await self.send(type="session.update", session={"type": "realtime", "tools": [WEATHER]})
        await self.say(text)
        self.counting = True
        await self.send(type="response.create")


@pytest.mark.parametrize("text", ["weather please", "add them"], ids=["client-tool", "server-tool"])
async def test_a_client_gone_at_any_event_of_a_spoken_tool_response_leaves_nothing_behind(
        text: str, caplog: pytest.LogCaptureFixture) -> None:
    whole = Dropping(after=10_000)
    async with whole:
        await whole.turn(text)
        await whole.wait("voxcall.response.timing", timeout=15)
    events = whole.sent
    kinds = [e["type"] for e in whole.events]
    assert "response.output_audio.delta" in kinds and kinds.count("response.output_item.done") >= 2
    caplog.set_level(logging.WARNING)
    for after in range(events + 1):
        h = Dropping(after)
        await h.__aenter__()
        await h.turn(text)
        if after < events:
            await asyncio.wait_for(h.gone.wait(), 15)
        await asyncio.wait_for(h.connection.close(), 15)
        left = [t.get_name() for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        assert not left, f"tasks left after a drop at event {after} of {events}: {left}"
    gc.collect()  # a task that died with an exception nobody read is reported (logged) when collected
    errors = [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]
    assert not errors, errors
