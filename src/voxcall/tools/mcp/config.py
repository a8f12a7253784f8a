"""``MCPServerConfig``: one MCP server voxcall talks to, from the operator's YAML or from a session.

The operator declares servers under ``mcp: {servers: {NAME: {...}}}`` in ``voxcall.yaml``: a stdio server has a
``command`` (with ``args``, ``env``, ``cwd``), a streamable HTTP server a ``url`` (with ``headers``). A session may
declare HTTP servers only, in the Realtime GA shape ``{type: "mcp", server_label, server_url, ...}``: a command
from a session would let any client run programs on the host, so :meth:`MCPServerConfig.from_session_tool`
refuses one, and refuses non-loopback URLs unless the operator allows remote servers.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from typing import Any, Literal, Self
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from voxcall.config import ToolsSettings
from voxcall.validation import first_problem

__all__ = ["MCPServerConfig", "parse_mcp_config"]

SERVER_NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$"
"""Server names: they appear in tool ids (``mcp:NAME:TOOL``) and aliases, so no ``:`` or spaces."""

ApprovalPolicy = Literal["never", "always"] | list[str]
"""``"never"``, ``"always"``, or the names of the tools that need the client's approval before each call."""

_STDIO_ONLY = ("args", "env", "cwd")
_SESSION_FORBIDDEN = ("command", "args", "env", "cwd")


class MCPServerConfig(BaseModel):
    """One MCP server: how to reach it, which of its tools to offer, and the limits that apply to it."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)

    name: str = Field(pattern=SERVER_NAME_PATTERN)
    """The server's name in voxcall: the YAML key, or a session's ``server_label``."""
    command: str | None = Field(default=None, min_length=1)
    """Stdio: the program to run (found on the child's ``PATH``, which includes voxcall's own ``bin`` folder)."""
    args: list[str] = Field(default_factory=list)
    """Stdio: the program's arguments."""
    env: dict[str, str] = Field(default_factory=dict)
    """Stdio: extra environment variables; the child gets only these over a minimal base (``PATH``, ``HOME`` …)."""
    cwd: str | None = None
    """Stdio: the working directory (default: voxcall's)."""
    url: str | None = None
    """Streamable HTTP: the endpoint, e.g. ``http://127.0.0.1:9000/mcp``."""
    headers: dict[str, str] = Field(default_factory=dict)
    """Streamable HTTP: headers sent with every request (an ``Authorization`` token, say)."""
    allowed_tools: list[str] | None = None
    """Offer only these of the server's tools (``None``: all of them)."""
    require_approval: ApprovalPolicy = "never"
    """Which calls wait for the client's approval: ``never``, ``always``, or a list of tool names."""
    startup_timeout: float = Field(default=20.0, gt=0)
    """Seconds to start (or restart) the server and list its tools."""
    call_timeout: float = Field(default=ToolsSettings().timeout, gt=0)
    """Seconds one call may take, including any wait for a restarting server (by default the server tools'
    ``tools.timeout``)."""

    @model_validator(mode="after")
    def _one_transport(self) -> Self:
        if (self.command is None) == (self.url is None):
            raise ValueError("give exactly one of 'command' (stdio) or 'url' (streamable HTTP)")
        if self.url is not None:
            stray = [key for key in _STDIO_ONLY if key in self.model_fields_set]
            if stray:
                raise ValueError(f"{', '.join(map(repr, stray))} only apply to a stdio server ('command')")
            scheme = urlsplit(self.url).scheme
            if scheme not in ("http", "https") or not urlsplit(self.url).hostname:
                raise ValueError(f"'url' must be an http:// or https:// URL, got {self.url!r}")
        elif "headers" in self.model_fields_set:
            raise ValueError("'headers' only apply to an HTTP server ('url')")
        return self

    @property
    def transport(self) -> Literal["stdio", "http"]:
        """``"stdio"`` for a command, ``"http"`` for a URL."""
        return "stdio" if self.command is not None else "http"

    def needs_approval(self, tool_name: str) -> bool:
        """Whether calling ``tool_name`` (the server's own name for it) needs the client's approval."""
        if isinstance(self.require_approval, list):
            return tool_name in self.require_approval
        return self.require_approval == "always"

    @classmethod
    def from_session_tool(cls, data: Mapping[str, Any], *, allow_remote: bool) -> MCPServerConfig:
        """Read a session's ``{type: "mcp", server_label, server_url, ...}`` tool as a server config.

        Accepts ``server_label``, ``server_url``, ``allowed_tools`` (a list, or ``{tool_names: [...]}``),
        ``headers``, ``authorization`` (sent as a bearer token) and ``require_approval``: ``"always"`` (the
        default, as in the Realtime API), ``"never"``, a list of tool names, or the GA filter
        ``{always: {tool_names}, never: {tool_names}}``. With only ``always``, the tools it names need approval;
        with a ``never`` list, every other tool does, and since the server's tools are not known yet, the
        exemption applies only to tools that ``allowed_tools`` names (without it, every call needs approval).
        Other keys (``server_description`` …) are ignored.

        Raises ``ValueError`` for a command (sessions never start programs), a missing or non-HTTP URL, a
        non-loopback host unless ``allow_remote``, and malformed fields.
        """
        if not isinstance(data, Mapping):
            raise ValueError("an MCP tool must be an object")
        if data.get("type", "mcp") != "mcp":
            raise ValueError(f"expected an MCP tool (type 'mcp'), got type {data.get('type')!r}")
        forbidden = [key for key in _SESSION_FORBIDDEN if key in data]
        if forbidden:
            raise ValueError(f"a session may not declare {', '.join(map(repr, forbidden))}: only the operator's "
                             "configuration can start MCP server programs; give 'server_url' instead")
        label, url = data.get("server_label"), data.get("server_url")
        if not isinstance(label, str) or not label:
            raise ValueError("an MCP tool needs a 'server_label' string")
        if not isinstance(url, str) or not url:
            raise ValueError(f"MCP tool {label!r} needs a 'server_url' (connectors are not supported)")
        host = urlsplit(url).hostname
        if host is not None and not allow_remote and not _is_loopback(host):
            raise ValueError(f"MCP tool {label!r}: server_url host {host!r} is not loopback, and this server "
                             "does not allow sessions to reach remote MCP servers")
        headers = data.get("headers") or {}
        if not isinstance(headers, Mapping):
            raise ValueError(f"MCP tool {label!r}: 'headers' must be an object of strings")
        headers = dict(headers)
        token = data.get("authorization")
        if isinstance(token, str) and token and not any(k.lower() == "authorization" for k in headers):
            headers["Authorization"] = f"Bearer {token}"
        allowed = _tool_names(data.get("allowed_tools"), label, "allowed_tools")
        approval = data.get("require_approval")
        fields: dict[str, Any] = {"name": label, "url": url, "allowed_tools": allowed,
                                  "require_approval": _session_approval(approval if approval is not None
                                                                        else "always", allowed, label)}
        if headers:
            fields["headers"] = headers
        try:
            return cls(**fields)
        except ValidationError as exc:
            raise ValueError(f"MCP tool {label!r}: {_first_error(exc)}") from None


def parse_mcp_config(data: Mapping[str, Any] | None) -> list[MCPServerConfig]:
    """Read the servers of the YAML form ``mcp: {servers: {NAME: {...}}}``, in their order.

    ``data`` is the whole document (with an ``mcp`` key), the ``mcp`` section itself (with ``servers``), or
    ``None``. Raises ``ValueError`` naming the server and the field for anything malformed.
    """
    if data is None:
        return []
    if not isinstance(data, Mapping):
        raise ValueError("the mcp configuration must be a mapping")
    if "mcp" in data:
        section = data["mcp"]
    elif "servers" in data or not data:
        section = data
    else:
        raise ValueError("expected the document ({'mcp': {'servers': ...}}) or its mcp section ({'servers': ...})")
    if section is None:
        return []
    if not isinstance(section, Mapping):
        raise ValueError("'mcp' must be a mapping with a 'servers' key")
    unknown = sorted(set(section) - {"servers"})
    if unknown:
        raise ValueError(f"mcp: unknown key(s) {', '.join(map(repr, unknown))}; expected 'servers'")
    servers = section.get("servers") or {}
    if not isinstance(servers, Mapping):
        raise ValueError("mcp.servers must be a mapping of server names to settings")
    configs: list[MCPServerConfig] = []
    for name, settings in servers.items():
        where = f"mcp.servers.{name}"
        if not isinstance(settings, Mapping):
            raise ValueError(f"{where}: expected a mapping with 'command' or 'url'")
        if "name" in settings:
            raise ValueError(f"{where}: 'name' is the key itself; remove the 'name' field")
        try:
            configs.append(MCPServerConfig(name=str(name), **settings))
        except ValidationError as exc:
            raise ValueError(f"{where}: {_first_error(exc)}") from None
    return configs


def _first_error(exc: ValidationError) -> str:
    """``field: message`` for the first problem pydantic found (the rest follow once it is fixed)."""
    problem = first_problem(exc)
    message = problem.message.removeprefix("Value error, ")
    return f"{problem.where}: {message}" if problem.where else message


def _is_loopback(host: str) -> bool:
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _tool_names(value: Any, label: str, field: str) -> list[str] | None:
    """A list of tool names from a list or a GA ``{tool_names: [...]}`` filter; ``None`` when absent."""
    if value is None:
        return None
    if isinstance(value, Mapping):
        value = value.get("tool_names")
    if not isinstance(value, list) or not all(isinstance(name, str) for name in value):
        raise ValueError(f"MCP tool {label!r}: {field!r} must be a list of tool names")
    return list(value)


def _session_approval(value: Any, allowed: list[str] | None, label: str) -> ApprovalPolicy:
    """A session's ``require_approval`` as a policy, erring towards approval where the filter leaves gaps."""
    if value == "always":
        return "always"
    if value == "never":
        return "never"
    if isinstance(value, list):
        return _tool_names(value, label, "require_approval") or []
    if not isinstance(value, Mapping) or not set(value) <= {"always", "never"}:
        raise ValueError(f"MCP tool {label!r}: 'require_approval' must be 'always', 'never', a list of tool "
                         "names or {always: {tool_names}, never: {tool_names}}")
    always = _tool_names(value.get("always"), label, "require_approval.always") or []
    never = _tool_names(value.get("never"), label, "require_approval.never") or []
    if not never:
        return always
    if allowed is None:
        return "always"
    return sorted({*always, *(name for name in allowed if name not in never)})
