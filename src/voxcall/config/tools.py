"""The ``tools:`` and ``mcp:`` sections: the server-side tools every session may use."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field


class ToolsSettings(BaseModel):
    """The ``tools:`` section: server-side tools every session may use."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    builtin: list[str] = Field(default_factory=list)
    """Built-in tools to enable: ``calculator``, ``clock``, ``music``, ``voice_volume`` (none by default; ``make serve``
    runs ``examples/demo.yaml``, which enables ``calculator`` and ``clock``)."""
    music_dir: Path | None = None
    """Folder the music tools play from (required by ``music``); nothing outside it is ever read."""
    modules: list[str] = Field(default_factory=list)
    """Python tool modules: dotted module names or ``.py`` file paths."""
    max_tool_rounds: int = Field(default=5, ge=1, le=20)
    """Rounds of server tool calls within one response before a final answer is forced (tools disabled)."""
    cache: dict[str, Annotated[float, Field(ge=0)]] = Field(default_factory=dict)
    """Seconds a server tool's result is reused for the same arguments, by tool name (0: never), over what the
    tool declares (``@tool(cache_ttl=…)``; MCP ``readOnlyHint: true``). Never for a tool that changes something."""
    allow_session_mcp: bool = False
    """Let sessions declare MCP servers (``{type: "mcp", server_url: …}``) in ``session.update``; loopback URLs only."""
    allow_remote_session_mcp: bool = False
    """Also let sessions reach MCP servers beyond loopback (only with ``allow_session_mcp``)."""
    timeout: float = Field(default=30.0, gt=0)
    """Seconds a server tool may run before its call ends ``timed_out`` and the model is told so (MCP servers: their
    own ``call_timeout``)."""
    timeouts: dict[str, Annotated[float, Field(gt=0)]] = Field(default_factory=dict)
    """Seconds, by tool name, over ``timeout`` (and over what a tool declares)."""
    max_concurrency: int = Field(default=8, ge=1)
    """Server tool calls that run at once in the process; more wait for a free slot."""
    max_threads: int = Field(default=32, ge=1)
    """Threads for sync tool handlers (their own, never the speech pipeline's); a timed-out call's thread is
    abandoned and holds its place until it ends; when all are taken a call fails at once."""
    acknowledge_after_ms: int = Field(default=700, ge=0, le=60_000)
    """A server tool still running this long after it started: the agent says a short acknowledgement ("One
    moment, I'm checking."), the response ends, the user may talk on, and the result is spoken when it lands
    (0: never; the response waits for its tools)."""
    client_tool_wait: float = Field(default=60.0, gt=0)
    """Seconds a client tool's call waits for its ``function_call_output``; then the model is told the tool did not
    answer."""
    repeatable: list[str] = Field(default_factory=list)
    """Tools meant to run again with the same arguments in one user turn (otherwise a repeat gets the first
    result)."""


class McpSettings(BaseModel):
    """The ``mcp:`` section: MCP servers the operator runs for every session (see :mod:`voxcall.tools.mcp`)."""

    model_config = ConfigDict(extra="forbid")

    servers: dict[str, dict[str, Any]] = Field(default_factory=dict)
    """``NAME: {command, args, env, cwd}`` (stdio) or ``NAME: {url, headers}`` (streamable HTTP), each with
    optional ``allowed_tools`` and ``require_approval``."""
