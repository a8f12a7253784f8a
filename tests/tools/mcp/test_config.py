"""``MCPServerConfig`` and ``parse_mcp_config``: the YAML form, its errors, and servers declared by sessions."""

from __future__ import annotations

import subprocess
import sys

import pytest
import yaml

from voxcall.tools.mcp import MCPServerConfig, parse_mcp_config

YAML = """
mcp:
  servers:
    time: {command: mcp-server-time, args: [--local-timezone, UTC], env: {TZ: UTC}, call_timeout: 5}
    arm:  {url: "http://127.0.0.1:9000/mcp", require_approval: always, headers: {Authorization: Bearer x}}
    files: {command: files-server, allowed_tools: [read], require_approval: [read]}
"""


def test_parse_the_documented_yaml() -> None:
    time, arm, files = parse_mcp_config(yaml.safe_load(YAML))
    assert (time.name, time.transport, time.command, time.args) == ("time", "stdio", "mcp-server-time",
                                                                      ["--local-timezone", "UTC"])
    assert time.env == {"TZ": "UTC"} and time.call_timeout == 5 and time.startup_timeout == 20
    assert (arm.transport, arm.url, arm.headers) == ("http", "http://127.0.0.1:9000/mcp", {"Authorization": "Bearer x"})
    assert arm.needs_approval("anything") and not time.needs_approval("get_current_time")
    assert files.allowed_tools == ["read"] and files.needs_approval("read") and not files.needs_approval("list")


def test_parse_the_section_alone_and_nothing() -> None:
    assert [c.name for c in parse_mcp_config({"servers": {"a": {"url": "https://example.com/mcp"}}})] == ["a"]
    assert parse_mcp_config(None) == parse_mcp_config({}) == parse_mcp_config({"mcp": None}) == []


@pytest.mark.parametrize(("settings", "words"), [
    ({"command": "x", "url": "http://127.0.0.1/mcp"}, ["mcp.servers.bad", "exactly one"]),
    ({}, ["mcp.servers.bad", "exactly one"]),
    ({"url": "ftp://127.0.0.1/mcp"}, ["mcp.servers.bad", "http"]),
    ({"url": "http://127.0.0.1/mcp", "args": ["-v"]}, ["mcp.servers.bad", "'args'", "stdio"]),
    ({"command": "x", "headers": {"a": "b"}}, ["mcp.servers.bad", "'headers'"]),
    ({"command": "x", "comand": "y"}, ["mcp.servers.bad", "comand"]),
    ({"command": "x", "call_timeout": 0}, ["mcp.servers.bad", "call_timeout"]),
    ({"command": "x", "require_approval": "sometimes"}, ["mcp.servers.bad", "require_approval"]),
    ({"command": "x", "env": {"A": 1}}, ["mcp.servers.bad", "env.A"]),
    ("x", ["mcp.servers.bad", "mapping"]),
])
def test_parse_errors_name_the_server_and_field(settings: object, words: list[str]) -> None:
    with pytest.raises(ValueError) as info:
        parse_mcp_config({"mcp": {"servers": {"bad": settings}}})
    for word in words:
        assert word in str(info.value)


def test_parse_rejects_bad_names_and_sections() -> None:
    with pytest.raises(ValueError, match=r"mcp\.servers\.a:b: name"):
        parse_mcp_config({"servers": {"a:b": {"command": "x"}}})
    with pytest.raises(ValueError, match="unknown key"):
        parse_mcp_config({"mcp": {"servers": {}, "extra": 1}})
    with pytest.raises(ValueError, match="mcp section"):
        parse_mcp_config({"tools": {}})


@pytest.mark.parametrize("url", ["http://127.0.0.1:9000/mcp", "http://localhost/mcp", "http://[::1]:8080/mcp",
                                 "https://127.0.0.2/mcp"])
def test_session_tool_on_loopback_is_accepted(url: str) -> None:
    config = MCPServerConfig.from_session_tool({"type": "mcp", "server_label": "arm", "server_url": url},
                                               allow_remote=False)
    assert (config.name, config.url, config.transport) == ("arm", url, "http")
    assert config.require_approval == "always"  # the Realtime API's default


def test_session_tool_fields() -> None:
    config = MCPServerConfig.from_session_tool({
        "type": "mcp", "server_label": "arm", "server_url": "http://127.0.0.1/mcp", "server_description": "ignored",
        "allowed_tools": {"tool_names": ["move", "stop"]}, "require_approval": "never",
        "headers": {"X-Key": "1"}, "authorization": "tok",
    }, allow_remote=False)
    assert config.allowed_tools == ["move", "stop"] and config.require_approval == "never"
    assert config.headers == {"X-Key": "1", "Authorization": "Bearer tok"}


@pytest.mark.parametrize(("approval", "allowed", "expected"), [
    ({"always": {"tool_names": ["move"]}}, None, ["move"]),
    ({"never": {"tool_names": ["stop"]}}, None, "always"),
    ({"never": {"tool_names": ["stop"]}}, ["move", "stop"], ["move"]),
    (["move"], None, ["move"]),
    ([], None, []),
    (None, None, "always"),
])
def test_session_tool_approval_filters(approval: object, allowed: list[str] | None, expected: object) -> None:
    data = {"type": "mcp", "server_label": "arm", "server_url": "http://127.0.0.1/mcp", "require_approval": approval}
    if allowed is not None:
        data["allowed_tools"] = allowed
    assert MCPServerConfig.from_session_tool(data, allow_remote=False).require_approval == expected


def test_session_tool_remote_needs_permission() -> None:
    data = {"type": "mcp", "server_label": "remote", "server_url": "https://mcp.example.com/mcp"}
    with pytest.raises(ValueError, match="not loopback"):
        MCPServerConfig.from_session_tool(data, allow_remote=False)
    assert MCPServerConfig.from_session_tool(data, allow_remote=True).url == "https://mcp.example.com/mcp"


@pytest.mark.parametrize(("data", "words"), [
    ({"server_label": "x", "server_url": "http://127.0.0.1/mcp", "command": "rm"}, ["'command'", "operator"]),
    ({"server_label": "x", "command": "sh", "args": ["-c", "id"]}, ["'command'", "'args'"]),
    ({"server_label": "x", "server_url": "http://127.0.0.1/mcp", "env": {"A": "1"}}, ["'env'"]),
    ({"server_label": "x"}, ["server_url"]),
    ({"server_url": "http://127.0.0.1/mcp"}, ["server_label"]),
    ({"type": "function", "server_label": "x", "server_url": "http://127.0.0.1/mcp"}, ["type"]),
    ({"server_label": "x", "server_url": "file:///etc/passwd"}, ["'x'", "http"]),
    ({"server_label": "x", "server_url": "http://10.0.0.1/mcp"}, ["not loopback"]),
    ({"server_label": "x", "server_url": "http://127.0.0.1/mcp", "require_approval": 3}, ["require_approval"]),
    ({"server_label": "x", "server_url": "http://127.0.0.1/mcp", "allowed_tools": "move"}, ["allowed_tools"]),
    ({"server_label": "bad label", "server_url": "http://127.0.0.1/mcp"}, ["'bad label'", "name"]),
])
def test_session_tool_rejections(data: dict[str, object], words: list[str]) -> None:
    with pytest.raises(ValueError) as info:
        MCPServerConfig.from_session_tool({"type": "mcp", **data}, allow_remote=False)
    for word in words:
        assert word in str(info.value)


def test_the_server_imports_the_mcp_sdk_only_when_mcp_servers_are_used() -> None:
    """The MCP SDK takes ~0.5 s to import (measured: a server started 0.8 s sooner without it); a server without
    MCP servers, and every session until it declares one, never needs it."""
    code = "import sys, voxcall.app; print('mcp' in sys.modules, 'voxcall.tools.mcp' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "False False"
