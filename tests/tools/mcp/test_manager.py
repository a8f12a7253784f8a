"""``MCPManager``: parallel start-up with failures, aliases and collisions, the registry, approval, close."""

from __future__ import annotations

import asyncio
import time

import pytest

from tests.tools.mcp.conftest import demo_config, process_alive
from voxcall.tools import ToolRegistry
from voxcall.tools.mcp import MCPManager, MCPServerConfig


async def test_parallel_start_leaves_a_broken_server_out() -> None:
    manager = MCPManager([demo_config("one"), MCPServerConfig(name="broken", command="voxcall-no-such-server"),
                          demo_config("two", allowed_tools=["echo"])])
    started = time.monotonic()
    await manager.start()
    try:
        assert time.monotonic() - started < 6  # in parallel, not one after the other
        assert list(manager.failures) == ["broken"] and "FileNotFoundError" in manager.failures["broken"]
        aliases = {entry.alias for entry in manager.tools}
        assert {"one__add", "one__echo", "two__echo"} <= aliases and "two__add" not in aliases
        assert (await manager.call("two__echo", {"text": "hi"})).output == "hi"
        refused = await manager.connections["two"].call("add", {"a": 1, "b": 2})  # not in its allowed_tools
        assert refused.is_error and "offers no tool 'add'" in refused.output
        unknown = await manager.call("broken__add", {})
        assert unknown.is_error and "unknown MCP tool" in unknown.output
    finally:
        await manager.close()


async def test_alias_collision_is_an_error_and_stops_every_server() -> None:
    manager = MCPManager([demo_config("demo.x", allowed_tools=["pid"]), demo_config("demo_x", allowed_tools=["pid"])])
    with pytest.raises(ValueError, match=r"'mcp:demo\.x:pid' and 'mcp:demo_x:pid' would both be called 'demo_x__pid'"):
        await manager.start()
    assert all(not connection.ready for connection in manager.connections.values())


def test_duplicate_server_names_are_refused() -> None:
    with pytest.raises(ValueError, match="two MCP servers are named 'a'"):
        MCPManager([demo_config("a"), demo_config("a")])


async def test_registered_tools_run_through_the_registry() -> None:
    manager = MCPManager([demo_config("demo", require_approval=["crash"])])
    await manager.start()
    registry = ToolRegistry()
    try:
        manager.register(registry)
        entry = manager.get("demo__add")
        assert entry is not None and entry.internal_id == "mcp:demo:add" and entry.name == "add"
        assert registry.get("demo__add") == entry.tool and entry.tool.description == "Add two integers."
        assert manager.approval_needed("demo__crash") and not manager.approval_needed("demo__add")
        assert manager.server_label("demo__add") == "demo"
        with pytest.raises(KeyError):
            manager.approval_needed("nope")

        assert (await registry.call("demo__add", {"a": 1, "b": 2})).output == "3"
        failed = await registry.call("demo__fail", {})
        assert failed.is_error and failed.output == "the demo tool failed on purpose"
        invalid = await registry.call("demo__add", {"a": 1})  # validated by the registry, before any call
        assert invalid.is_error and "invalid arguments" in invalid.output
        with pytest.raises(ValueError, match="already registered"):
            manager.register(registry)  # never a silent overwrite

        assert (await registry.call("demo__grow", {})).output == "added extra"
        for _ in range(100):
            if "demo__extra" in registry:
                break
            await asyncio.sleep(0.02)
        assert (await registry.call("demo__extra", {})).output == "extra!"
    finally:
        await manager.close()


async def test_close_is_bounded_and_leaves_no_child_running() -> None:
    manager = MCPManager([demo_config("a"), demo_config("b", call_timeout=5)])
    await manager.start()
    pids = [int((await manager.call(f"{name}__pid", {})).output) for name in ("a", "b")]
    assert all(process_alive(pid) for pid in pids)
    busy = asyncio.create_task(manager.call("b__slow", {"seconds": 30}))  # a call in flight does not hold close up
    await asyncio.sleep(0.2)
    await asyncio.wait_for(manager.close(), 10)
    assert not any(process_alive(pid) for pid in pids)
    result = await asyncio.wait_for(busy, 5)
    assert result.is_error
    await manager.close()  # idempotent
