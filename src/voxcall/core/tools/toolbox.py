"""The server-side tools of a voxcall process: built-ins, Python tool modules and MCP servers, in one registry.

Every session may use them, mixed with its own client tools. For each tool the toolbox knows the label clients
see on its ``mcp_call`` items (``voxcall`` for built-ins and modules, the server's name for MCP tools), the name
its server knows it by, and whether a call needs the client's approval first.
"""

from __future__ import annotations

import logging
from collections.abc import Collection
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from voxcall.config import ToolsSettings
from voxcall.tools import Tool, ToolContext, ToolRegistry, ToolResult
from voxcall.tools.builtin import register_builtins
from voxcall.tools.cache import ToolCache
from voxcall.tools.modules import load_tool_module
from voxcall.tools.threads import ToolThreads

if TYPE_CHECKING:
    from voxcall.audio.output import AudioOutput
    from voxcall.config import ServerSettings
    from voxcall.tools.mcp import MCPManager

log = logging.getLogger(__name__)

BUILTIN_LABEL = "voxcall"


@dataclass(frozen=True)
class ServerTool:
    """How a server tool appears on the protocol: its ``server_label``, its name there, and its approval need."""

    server_label: str
    remote_name: str
    needs_approval: bool = False


@dataclass
class Toolbox:
    """One registry of server tools plus what the protocol needs to know about each."""

    registry: ToolRegistry = field(default_factory=ToolRegistry)
    max_rounds: int = ToolsSettings().max_tool_rounds
    details: dict[str, ServerTool] = field(default_factory=dict)
    mcp: MCPManager | None = None
    output: AudioOutput | None = None  # the host's audio output, when the music tools play on it

    @property
    def tools(self) -> list[Tool]:
        """The tools' definitions, as the model sees them."""
        return self.registry.tools

    def get(self, name: str) -> ServerTool | None:
        """The server tool the model called ``name``, or None for a client tool."""
        if name not in self.registry:
            return None
        return self.details.get(name) or ServerTool(BUILTIN_LABEL, name)

    def only_acts(self, name: str) -> bool:
        """Whether the server tool ``name`` only acts (``@tool(returns=False)``, or an MCP tool whose ``_meta``
        says ``"voxcall/returns": false``): once it succeeded, no model round runs just to report it."""
        effects = self.registry.effects(name)
        return effects is not None and not effects.returns

    async def run(self, name: str, arguments: dict[str, Any], context: ToolContext) -> ToolResult:
        """Run one call (validated, limited and timed out by the registry; never raises but for cancellation)."""
        return await self.registry.call(name, arguments, context=context)

    async def aclose(self) -> None:
        """Stop the MCP servers and the music."""
        if self.mcp is not None:
            await self.mcp.close()
        if self.output is not None:
            await self.output.close()

    @classmethod
    async def from_settings(cls, settings: ServerSettings, *, output: AudioOutput | None = None) -> Toolbox:
        """Build the toolbox the operator configured: built-ins, modules, then the MCP servers (started).

        Raises ``ValueError`` for a configuration that cannot work (unknown built-in, broken module, clashing
        names); an MCP server that fails to start is logged and left out.
        """
        config = settings.tools
        registry = ToolRegistry(default_timeout=config.timeout, max_concurrency=config.max_concurrency,
                                cache=ToolCache(config.cache), threads=ToolThreads(config.max_threads))
        box = cls(registry, max_rounds=config.max_tool_rounds)
        if "music" in config.builtin and output is None:
            from voxcall.audio.output import AudioOutput, default_sink

            output = AudioOutput(default_sink())
        box.output = output
        register_builtins(box.registry, config.builtin, music_dir=config.music_dir, output=output)
        for spec in config.modules:
            loaded = load_tool_module(spec, box.registry)
            log.info("tool module %s: %s", spec, ", ".join(t.name for t in loaded))
        if settings.mcp.servers:  # a server's calls have the tools' deadline unless it sets its own call_timeout
            await box._start_mcp({name: {"call_timeout": config.timeout, **server}
                                  for name, server in settings.mcp.servers.items()})
        for problem in box.registry.cache.ignored_overrides(box.registry.effects):
            log.warning("%s", problem)
        box._configure(config.timeouts, config.repeatable)
        return box

    def _configure(self, timeouts: dict[str, float], repeatable: list[str]) -> None:
        """Apply the operator's per-tool ``tools.timeouts`` and ``tools.repeatable`` (an unknown name is logged)."""
        for name in [*timeouts, *repeatable]:
            if name not in self.registry:
                log.warning("tools.timeouts / tools.repeatable name %r, which is no server tool", name)
        for name, seconds in timeouts.items():
            if name in self.registry:
                self.registry.configure(name, timeout=seconds)
        for name in repeatable:
            if name in self.registry:
                self.registry.configure(name, repeats=True)

    async def _start_mcp(self, servers: dict[str, dict[str, Any]]) -> None:
        from voxcall.tools.mcp import MCPManager, parse_mcp_config

        manager = MCPManager(parse_mcp_config({"servers": servers}))
        await manager.start()  # a server that fails to start is logged by the manager and left out
        self.add_mcp(manager)
        self.mcp = manager

    def add_mcp(self, manager: MCPManager) -> None:
        """Register a started manager's tools (``ValueError`` when a name is taken)."""
        manager.register(self.registry)
        for entry in manager.tools:
            self.details[entry.alias] = ServerTool(entry.server, entry.name, entry.needs_approval)

    def only(self, names: Collection[str]) -> Toolbox:
        """A toolbox of just the tools called ``names`` (an agent profile's), run as this one runs them (see
        :meth:`ToolRegistry.subset`, whose ``ValueError`` names an unknown tool); this one is unchanged."""
        return Toolbox(self.registry.subset(names), max_rounds=self.max_rounds, output=self.output,
                       details={name: tool for name, tool in self.details.items() if name in names})

    def extended(self, manager: MCPManager) -> Toolbox:
        """A toolbox with these tools plus ``manager``'s (a session's own MCP servers); this one is unchanged."""
        box = self.joined(ToolRegistry())
        box.add_mcp(manager)
        return box

    def joined(self, own: ToolRegistry) -> Toolbox:
        """A toolbox with these tools plus ``own``'s (tools one session brings); this one is unchanged.
        ``ValueError`` when a name is taken."""
        mine = self.registry
        registry = ToolRegistry(default_timeout=mine.default_timeout, cache=mine.cache, threads=mine.threads)
        box = Toolbox(registry, max_rounds=self.max_rounds, details=dict(self.details), output=self.output)
        box.registry.include(self.registry)
        box.registry.include(own)
        return box
