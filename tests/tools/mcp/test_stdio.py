"""One stdio connection to the demo server, shared by the tests that only call tools (and read its environment)."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio

from tests.tools.mcp.conftest import demo_config
from voxcall.tools.mcp import MCPConnection

pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def demo() -> AsyncIterator[MCPConnection]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("VOXCALL_TEST_SECRET", "hunter2")  # must not reach the child
        connection = MCPConnection(demo_config(env={"VOXCALL_DEMO_SETTING": "on"}))
        await connection.start()
    yield connection
    await connection.close()


async def test_lists_the_tools(demo: MCPConnection) -> None:
    tools = {tool.name: tool for tool in demo.tools}
    assert {"add", "echo", "slow", "crash", "fail", "image", "structured"} <= set(tools)
    assert tools["add"].description == "Add two integers."
    assert tools["add"].parameters["required"] == ["a", "b"] and tools["add"].server == "demo"
    assert demo.ready


async def test_add_and_echo(demo: MCPConnection) -> None:
    result = await demo.call("add", {"a": 2, "b": 40})
    assert (result.output, result.is_error) == ("42", False)
    assert (await demo.call("echo", {"text": "grüß dich\nzweite Zeile"})).output == "grüß dich\nzweite Zeile"


async def test_error_result(demo: MCPConnection) -> None:
    result = await demo.call("fail")
    assert (result.output, result.is_error) == ("the demo tool failed on purpose", True)


async def test_image_is_summarised(demo: MCPConnection) -> None:
    result = await demo.call("image")
    assert (result.output, result.is_error) == ("[image: image/png, 68 B]", False)


async def test_structured_content_as_json(demo: MCPConnection) -> None:
    assert (await demo.call("structured")).output == '{"temperature":21.5,"unit":"C"}'


async def test_unknown_tool_is_refused_without_a_call(demo: MCPConnection) -> None:
    result = await demo.call("rm_rf", {})
    assert result.is_error and "offers no tool 'rm_rf'" in result.output


async def test_bad_arguments_come_back_as_an_error_result(demo: MCPConnection) -> None:
    result = await demo.call("add", {"a": "two"})
    assert result.is_error and result.output


async def test_concurrent_calls(demo: MCPConnection) -> None:
    results = await asyncio.gather(*(demo.call("add", {"a": n, "b": 1}) for n in range(20)))
    assert [r.output for r in results] == [str(n + 1) for n in range(20)]


async def test_child_gets_a_minimal_environment(demo: MCPConnection) -> None:
    async def env(name: str) -> str:
        return (await demo.call("getenv", {"name": name})).output

    assert await env("VOXCALL_DEMO_SETTING") == "on"
    assert await env("VOXCALL_TEST_SECRET") == "<unset>"
    path = (await env("PATH")).split(":")
    assert str(Path(sys.executable).parent) in path and "/usr/bin" in path
