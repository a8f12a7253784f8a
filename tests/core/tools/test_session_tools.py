"""MCP servers a session declares in session.update: off unless the operator allows them, loopback URLs only."""

from __future__ import annotations

from tests.harness import ControlledBackend, Harness, Turn
from tests.tools.mcp.conftest import http_url  # noqa: F401  (the demo MCP server over streamable HTTP)


def mcp_tool(url: str, **extra: object) -> dict[str, object]:
    return {"type": "mcp", "server_label": "remote", "server_url": url, "require_approval": "never", **extra}


async def test_session_mcp_is_off_unless_the_operator_allows_it(http_url: str) -> None:  # noqa: F811
    async with Harness(ControlledBackend(Turn("ok"))) as h:
        await h.send(type="session.update", session={"type": "realtime", "tools": [mcp_tool(http_url)]})
        error = h.of("error")[-1]["error"]
        assert error["code"] == "unsupported_tool_type" and "allow_session_mcp" in error["message"]
        assert h.session.tools.toolbox is None


async def test_declared_server_tools_run_in_the_loop(http_url: str) -> None:  # noqa: F811
    backend = ControlledBackend(Turn("", [("remote__add", {"a": 40, "b": 2})]), Turn("It is 42."))
    async with Harness(backend, allow_session_mcp=True) as h:
        await h.send(type="session.update", session={"type": "realtime", "tools": [mcp_tool(http_url)]})
        assert not h.of("error"), h.of("error")
        assert h.of("session.updated")[-1]["session"]["tools"][0]["server_label"] == "remote"
        await h.say("add")
        await h.send(type="response.create")
        done = await h.wait("response.done", timeout=20)
        call = done["response"]["output"][0]
        assert (call["type"], call["server_label"], call["name"], call["output"]) == ("mcp_call", "remote", "add", "42")
        assert "remote__add" in [t.name for t in backend.requests[0].tools]
        await h.send(type="session.update", session={"type": "realtime", "tools": []})
        assert h.session.tools.toolbox is None  # the session's server is gone with its declaration


async def test_remote_urls_and_bad_servers_are_refused(http_url: str) -> None:  # noqa: F811
    async with Harness(ControlledBackend(), allow_session_mcp=True) as h:
        await h.send(type="session.update", session={"type": "realtime", "tools": [
            mcp_tool("https://mcp.example.com/mcp")]})
        assert h.of("error")[-1]["error"]["code"] == "invalid_tool"
        await h.send(type="session.update", session={"type": "realtime", "tools": [
            {"type": "mcp", "server_label": "x", "server_url": http_url, "command": "rm"}]})
        assert h.of("error")[-1]["error"]["code"] == "invalid_tool"
        dead = http_url.rsplit(":", 1)[0] + ":9/mcp"
        await h.send(type="session.update", session={"type": "realtime", "tools": [mcp_tool(dead)]})
        assert h.of("error")[-1]["error"]["code"] == "mcp_server_unavailable"
        assert h.session.tools.toolbox is None and not h.of("session.updated")
