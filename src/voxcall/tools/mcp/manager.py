"""``MCPManager``: the operator's MCP servers as one set of tools, started together and closed together.

Servers start in parallel, each within its own start-up timeout; one that fails is logged, recorded in
:attr:`MCPManager.failures` and left out, and the others work. Each tool gets an alias the model can use
(see :mod:`voxcall.tools.mcp.names`); two tools with the same alias stop start-up with a ``ValueError`` rather
than one silently replacing the other. :meth:`MCPManager.register` puts the tools into a
:class:`~voxcall.tools.ToolRegistry`, so the tool loop runs MCP tools like any other server tool; whether a
call needs the client's approval first is the loop's decision, read from :meth:`MCPManager.approval_needed`.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from voxcall.tools.calls import ToolResult
from voxcall.tools.effects import ToolEffects
from voxcall.tools.mcp.config import MCPServerConfig
from voxcall.tools.mcp.connection import MCPConnection, MCPStartupError
from voxcall.tools.mcp.listing import MCPTool
from voxcall.tools.mcp.names import internal_id, tool_alias
from voxcall.tools.registry import ToolError, ToolRegistry, ToolTimeout
from voxcall.tools.schema import Tool

__all__ = ["MCPManager", "MCPToolEntry"]

log = logging.getLogger(__name__)

REGISTRY_GRACE = 2.0
"""Seconds a registry allows beyond an MCP call's own timeout, so the connection's clearer timeout message wins."""


@dataclass(frozen=True, slots=True)
class MCPToolEntry:
    """One MCP tool as voxcall offers it: ``tool`` carries the alias the model sees."""

    tool: Tool
    internal_id: str
    server: str
    name: str
    needs_approval: bool
    effects: ToolEffects

    @property
    def alias(self) -> str:
        """The name the model calls the tool by."""
        return self.tool.name


class MCPManager:
    """The MCP servers of one voxcall process: start, list, register, call and close them together."""

    def __init__(self, configs: Iterable[MCPServerConfig]) -> None:
        self.connections: dict[str, MCPConnection] = {}
        for config in configs:
            if config.name in self.connections:
                raise ValueError(f"two MCP servers are named {config.name!r}")
            self.connections[config.name] = MCPConnection(config, on_tools_changed=self._tools_changed)
        self.failures: dict[str, str] = {}
        """Servers that did not start, each with the reason (``FileNotFoundError: …``)."""
        self._entries: dict[str, MCPToolEntry] = {}
        self._registries: list[ToolRegistry] = []
        self._registered: set[str] = set()  # aliases given to registries (a registry cannot forget one)
        self._started = False

    async def start(self) -> None:
        """Start every server in parallel; record failures; raise ``ValueError`` on an alias collision.

        On a collision every server is closed before the error propagates, so no child process is left running.
        """
        if self._started:
            raise RuntimeError("MCPManager.start() was already called")
        self._started = True
        names = list(self.connections)
        outcomes = await asyncio.gather(*(self.connections[name].start() for name in names), return_exceptions=True)
        for name, outcome in zip(names, outcomes, strict=True):
            if isinstance(outcome, BaseException):
                if not isinstance(outcome, Exception):
                    raise outcome
                self.failures[name] = outcome.reason if isinstance(outcome, MCPStartupError) else str(outcome)
                log.error("MCP server %s did not start: %s", name, self.failures[name])
                del self.connections[name]
        try:
            for connection in self.connections.values():
                for entry in self._entries_of(connection):
                    self._add_entry(entry)
        except ValueError:
            await self.close()
            raise
        log.info("MCP tools: %s", ", ".join(self._entries) or "none")

    async def close(self) -> None:
        """Close every server in parallel; bounded, since each connection's close is."""
        await asyncio.gather(*(connection.close() for connection in self.connections.values()))

    # -- the tools -------------------------------------------------------------------------------------------

    @property
    def tools(self) -> list[MCPToolEntry]:
        """Every tool of the running servers."""
        return list(self._entries.values())

    def get(self, alias: str) -> MCPToolEntry | None:
        """The tool the model calls ``alias``, or ``None``."""
        return self._entries.get(alias)

    def approval_needed(self, alias: str) -> bool:
        """Whether a call of ``alias`` must wait for the client's approval; ``KeyError`` for an unknown alias."""
        return self._entry(alias).needs_approval

    def server_label(self, alias: str) -> str:
        """The name of the server that offers ``alias``; ``KeyError`` for an unknown alias."""
        return self._entry(alias).server

    async def call(self, alias: str, arguments: Mapping[str, Any] | None = None) -> ToolResult:
        """Call the tool the model knows as ``alias``; never raises (see :meth:`MCPConnection.call`)."""
        entry = self._entries.get(alias)
        if entry is None:
            return ToolResult(f"unknown MCP tool {alias!r}", is_error=True)
        return await self.connections[entry.server].call(entry.name, arguments)

    def register(self, registry: ToolRegistry) -> None:
        """Add every tool to ``registry`` under its alias, and tools a server adds later too.

        Raises ``ValueError`` when the registry already has a tool of the same name.
        """
        for entry in self._entries.values():
            self._register_entry(registry, entry)
        self._registries.append(registry)

    # -- internals -------------------------------------------------------------------------------------------

    def _entry(self, alias: str) -> MCPToolEntry:
        entry = self._entries.get(alias)
        if entry is None:
            raise KeyError(f"no MCP tool is called {alias!r}")
        return entry

    def _entries_of(self, connection: MCPConnection) -> list[MCPToolEntry]:
        return [_make_entry(connection.config, tool) for tool in connection.tools]

    def _add_entry(self, entry: MCPToolEntry) -> None:
        """Index ``entry`` by alias; ``ValueError`` when another tool has that alias."""
        other = self._entries.get(entry.alias)
        if other is not None and other.internal_id != entry.internal_id:
            raise ValueError(f"MCP tools {other.internal_id!r} and {entry.internal_id!r} would both be called "
                             f"{entry.alias!r}; rename a server or narrow its allowed_tools")
        self._entries[entry.alias] = entry

    def _register_entry(self, registry: ToolRegistry, entry: MCPToolEntry) -> None:
        timeout = self.connections[entry.server].config.call_timeout + REGISTRY_GRACE
        registry.add(entry.tool, self._handler(entry), timeout=timeout, effects=entry.effects)
        self._registered.add(entry.alias)

    def _handler(self, entry: MCPToolEntry) -> Callable[..., Awaitable[str]]:
        """A registry handler for ``entry``: an error result becomes a :class:`ToolError` with the same text."""
        connection = self.connections[entry.server]

        async def call_mcp_tool(**arguments: Any) -> str:
            result = await connection.call(entry.name, arguments)
            if result.is_error:
                raise (ToolTimeout if result.timed_out else ToolError)(result.output)
            return result.output

        return call_mcp_tool

    def _tools_changed(self, connection: MCPConnection) -> None:
        """A server's tool list changed: index (and register) new tools, forget removed ones."""
        current = self._entries_of(connection)
        keep = {entry.alias for entry in current}
        for alias, entry in list(self._entries.items()):
            if entry.server == connection.name and alias not in keep:
                del self._entries[alias]  # still in registries; the connection refuses calls to it
        for entry in current:
            if entry.alias in self._entries:
                continue
            try:
                self._add_entry(entry)
                if entry.alias not in self._registered:  # a tool that comes back keeps its registration
                    for registry in self._registries:
                        self._register_entry(registry, entry)
            except ValueError as exc:
                log.error("MCP tool %s left out: %s", entry.internal_id, exc)


def _make_entry(config: MCPServerConfig, tool: MCPTool) -> MCPToolEntry:
    alias = tool_alias(config.name, tool.name)
    return MCPToolEntry(tool=Tool(name=alias, description=tool.description, parameters=tool.parameters),
                        internal_id=internal_id(config.name, tool.name), server=config.name, name=tool.name,
                        needs_approval=config.needs_approval(tool.name), effects=tool.effects)
