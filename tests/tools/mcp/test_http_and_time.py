"""Streamable HTTP to the demo server on loopback, and the third-party ``mcp-server-time`` over stdio."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from tests.requirements import require_program
from tests.tools.mcp.conftest import free_port
from voxcall.tools.mcp import MCPConnection, MCPServerConfig, MCPStartupError


async def test_streamable_http_lists_and_calls(http_url: str) -> None:
    connection = MCPConnection(MCPServerConfig(name="remote", url=http_url, headers={"X-Voxcall-Test": "yes"}))
    await connection.start()
    try:
        assert {"add", "echo", "image"} <= {tool.name for tool in connection.tools}
        assert (await connection.call("add", {"a": 3, "b": 4})).output == "7"
        assert (await connection.call("header", {"name": "X-Voxcall-Test"})).output == "yes"
        failed = await connection.call("fail")
        assert failed.is_error and failed.output == "the demo tool failed on purpose"
    finally:
        await connection.close()


async def test_an_http_server_that_is_not_there_fails_start() -> None:
    url = f"http://127.0.0.1:{free_port()}/mcp"
    connection = MCPConnection(MCPServerConfig(name="nobody", url=url, startup_timeout=5))
    with pytest.raises(MCPStartupError, match="'nobody' did not start: ConnectError"):
        await connection.start()


async def test_mcp_server_time_over_stdio() -> None:
    require_program("mcp-server-time", path=str(Path(sys.executable).parent))  # a dev dependency
    # A bare command name: found through the PATH voxcall gives its children (which includes its own bin folder).
    config = MCPServerConfig(name="time", command="mcp-server-time", args=["--local-timezone", "UTC"])
    connection = MCPConnection(config)
    await connection.start()
    try:
        assert {"get_current_time", "convert_time"} <= {tool.name for tool in connection.tools}
        result = await connection.call("get_current_time", {"timezone": "UTC"})
        assert not result.is_error
        assert re.search(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}", result.output), result.output
    finally:
        await connection.close()
