"""The server-side tools one session may use: the process's toolbox plus the MCP servers the session declared.

:class:`SessionTools` also holds what the session's tool calls share across responses: the one
:class:`~voxcall.tools.ToolContext` (its ``state`` is per-session scratch space that lives as long as the session)
and the approval requests waiting for the client's answer.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from voxcall.core.errors import SessionError
from voxcall.core.settings import SessionSettings
from voxcall.core.tools.server_calls import Approvals
from voxcall.core.tools.toolbox import Toolbox
from voxcall.tools import ToolContext
from voxcall.tools.context import VoiceControl

if TYPE_CHECKING:
    from voxcall.tools.mcp import MCPManager


class SessionTools:
    """A session's server tools, its tool context and its pending approvals."""

    def __init__(self, toolbox: Toolbox | None, *, session_id: str, voice: VoiceControl,
                 allow_mcp: bool = False, allow_remote_mcp: bool = False) -> None:
        """``toolbox`` is the process's (None: no server tools); ``allow_mcp`` lets the session declare MCP
        servers (loopback URLs only, unless ``allow_remote_mcp``)."""
        self.toolbox = toolbox
        self.context = ToolContext(session_id=session_id, voice=voice)
        self.approvals = Approvals()
        self._base = toolbox
        self._mcp: MCPManager | None = None
        self._allow_mcp = allow_mcp
        self._allow_remote_mcp = allow_remote_mcp

    def check_names(self, settings: SessionSettings) -> None:
        """A client tool may not take the name of a server tool: the model could not tell them apart."""
        if self.toolbox is None:
            return
        for n, tool in enumerate(settings.tools):
            if tool.name in self.toolbox.registry:
                raise SessionError(f"tool name {tool.name!r} is taken by a server-side tool; rename the client tool",
                                    code="invalid_tool", param=f"session.tools[{n}].name")

    async def use_mcp_servers(self, specs: Sequence[Mapping[str, Any]]) -> None:
        """Start the MCP servers a session declared (when the operator allows it) in place of its previous ones."""
        manager, toolbox = None, self._base
        if specs:
            if not self._allow_mcp:
                raise SessionError("MCP servers in session.update are switched off on this server (the operator can "
                                    "allow them with tools.allow_session_mcp)", code="unsupported_tool_type",
                                    param="session.tools")
            manager, toolbox = await self._start(specs)
        old, self._mcp, self.toolbox = self._mcp, manager, toolbox
        if old is not None:
            await old.close()

    async def _start(self, specs: Sequence[Mapping[str, Any]]) -> tuple[MCPManager, Toolbox]:
        from voxcall.tools.mcp import MCPManager, MCPServerConfig  # the MCP SDK costs ~0.5 s to import: when used

        try:
            configs = [MCPServerConfig.from_session_tool(d, allow_remote=self._allow_remote_mcp) for d in specs]
        except ValueError as exc:
            raise SessionError(f"'session.tools': {exc}", code="invalid_tool", param="session.tools") from None
        manager = MCPManager(configs)
        await manager.start()
        problem = ", ".join(f"{name}: {reason}" for name, reason in manager.failures.items())
        if not problem:
            try:
                return manager, (self._base or Toolbox()).extended(manager)
            except ValueError as exc:  # a name clash with a server tool
                problem = str(exc)
        await manager.close()
        raise SessionError(f"MCP server unavailable: {problem}", code="mcp_server_unavailable", param="session.tools")

    async def close(self) -> None:
        """Stop the session's own MCP servers."""
        if self._mcp is not None:
            await self._mcp.close()
            self._mcp = None
