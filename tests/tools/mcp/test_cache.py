"""MCP tool annotations decide caching, through a real MCP server (the demo server over stdio)."""

from __future__ import annotations

from tests.tools.mcp.conftest import demo_config
from voxcall.tools import ToolRegistry
from voxcall.tools.cache import ToolCache
from voxcall.tools.effects import MCP_READ_ONLY_TTL
from voxcall.tools.mcp import MCPManager


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


async def test_read_only_tools_are_reused_and_others_run_every_time() -> None:
    clock = Clock()
    manager = MCPManager([demo_config(allowed_tools=["lookup", "set_level", "ring", "echo"])])
    await manager.start()
    try:
        registry = ToolRegistry(cache=ToolCache({"demo__echo": 60, "demo__set_level": 60}, clock=clock))
        manager.register(registry)
        first = await registry.call("demo__lookup", {"key": "k", "page": 1})
        again = await registry.call("demo__lookup", {"page": 1, "key": "k"})
        assert (first.output, first.cached) == ("k p1 (run 1)", False)
        assert (again.output, again.cached) == ("k p1 (run 1)", True)
        assert (await registry.call("demo__lookup", {"key": "k", "page": 2})).output == "k p2 (run 2)"
        clock.now += MCP_READ_ONLY_TTL
        assert (await registry.call("demo__lookup", {"key": "k", "page": 1})).output == "k p1 (run 3)"
        # idempotent but not read-only: it changes something, so the operator's override is ignored
        levels = [(await registry.call("demo__set_level", {"level": 3})).output for _ in range(2)]
        assert levels == ["level 3 (run 1)", "level 3 (run 2)"]
        # no annotations: cached only because the operator said so
        assert (await registry.call("demo__echo", {"text": "hi"})).cached is False
        assert (await registry.call("demo__echo", {"text": "hi"})).cached is True
        ring = registry.effects("demo__ring")
        assert ring is not None and not ring.returns and not ring.reusable
    finally:
        await manager.close()
