"""A stdio connection's life: timeouts, crashes and restarts, start-up failures, close."""

from __future__ import annotations

import asyncio
import sys
import time

import pytest

from tests.tools.mcp.conftest import demo_config, process_alive
from voxcall.tools.mcp import MCPConnection, MCPServerConfig, MCPStartupError


async def _pid(connection: MCPConnection) -> int:
    result = await connection.call("pid")
    assert not result.is_error, result.output
    return int(result.output)


async def test_call_timeout_is_an_error_result_and_the_next_call_works() -> None:
    connection = MCPConnection(demo_config(call_timeout=0.5))
    await connection.start()
    try:
        started = time.monotonic()
        result = await connection.call("slow", {"seconds": 10})
        assert time.monotonic() - started < 2
        assert result.is_error and result.output == "MCP tool 'slow' timed out after 0.5 s"
        assert (await connection.call("add", {"a": 1, "b": 1})).output == "2"
    finally:
        await connection.close()


async def test_a_crashed_server_is_restarted_and_the_next_call_works() -> None:
    connection = MCPConnection(demo_config(call_timeout=15))
    await connection.start()
    try:
        before = await _pid(connection)
        crashed = await connection.call("crash")
        assert crashed.is_error and "closed during the call" in crashed.output
        assert (await connection.call("add", {"a": 20, "b": 22})).output == "42"  # waits for the restart
        after = await _pid(connection)
        assert after != before and not process_alive(before)
    finally:
        await connection.close()
    assert not process_alive(after)


async def test_a_call_fails_fast_when_the_restart_is_further_away_than_its_timeout() -> None:
    connection = MCPConnection(demo_config(call_timeout=0.3))
    await connection.start()
    try:
        await connection.call("crash")
        result = await connection.call("add", {"a": 1, "b": 1})
        assert result.is_error and ("restarting" in result.output or "timed out" in result.output)
    finally:
        await connection.close()


async def test_a_missing_command_fails_start_with_a_clear_error() -> None:
    connection = MCPConnection(MCPServerConfig(name="ghost", command="voxcall-no-such-mcp-server"))
    with pytest.raises(MCPStartupError, match="'ghost' did not start: FileNotFoundError"):
        await connection.start()


async def test_a_server_that_dies_at_start_reports_its_stderr() -> None:
    script = "import sys; sys.stderr.write('config file missing\\n'); sys.exit(2)"
    connection = MCPConnection(MCPServerConfig(name="dies", command=sys.executable, args=["-c", script]))
    with pytest.raises(MCPStartupError, match="stderr: config file missing"):
        await connection.start()


async def test_a_server_that_never_answers_times_out_and_is_stopped() -> None:
    script = "import os, time; print(os.getpid(), file=__import__('sys').stderr, flush=True); time.sleep(60)"
    config = MCPServerConfig(name="mute", command=sys.executable, args=["-c", script], startup_timeout=1)
    connection = MCPConnection(config)
    started = time.monotonic()
    with pytest.raises(MCPStartupError, match="no answer within 1 s") as info:
        await connection.start()
    assert time.monotonic() - started < 8
    pid = int(str(info.value).rsplit("stderr: ", 1)[1])
    assert not process_alive(pid)


async def test_close_is_fast_idempotent_and_stops_the_child() -> None:
    connection = MCPConnection(demo_config())
    await connection.start()
    pid = await _pid(connection)
    started = time.monotonic()
    await asyncio.wait_for(connection.close(), 10)
    await connection.close()
    assert time.monotonic() - started < 3
    assert not process_alive(pid) and not connection.ready
    result = await connection.call("add", {"a": 1, "b": 1})
    assert result.is_error and "shut down" in result.output
