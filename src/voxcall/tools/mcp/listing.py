"""The tools an MCP server offers: :class:`MCPTool`, and listing them (every page) through a connected client.

:class:`~voxcall.tools.mcp.connection.MCPConnection` lists them once connected and again on ``tools/list_changed``;
only the tools the server's ``allowed_tools`` lets through are kept.
"""

from __future__ import annotations

import logging
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

from mcp import Client

from voxcall.tools.effects import ToolEffects, mcp_effects

__all__ = ["MCPTool", "list_tools"]

log = logging.getLogger(__name__)

_MAX_TOOL_PAGES = 100  # a server whose tools/list never stops paginating cannot hang start-up


@dataclass(frozen=True, slots=True)
class MCPTool:
    """One tool an MCP server offers: its name there, description, JSON Schema parameters, and the effects its
    annotations declare (:func:`~voxcall.tools.effects.mcp_effects`)."""

    server: str
    name: str
    description: str
    parameters: dict[str, Any]
    effects: ToolEffects


async def list_tools(client: Client, server: str, allowed: Collection[str] | None) -> list[MCPTool]:
    """All the tools of ``server`` (every page) that ``allowed`` lets through (``None``: every tool)."""
    tools: list[MCPTool] = []
    cursor: str | None = None
    for _ in range(_MAX_TOOL_PAGES):
        page = await client.list_tools(cursor=cursor)
        tools += [MCPTool(server, tool.name, tool.description or tool.title or "", dict(tool.input_schema),
                          mcp_effects(tool.annotations, tool.meta))
                  for tool in page.tools if allowed is None or tool.name in allowed]
        cursor = page.next_cursor
        if cursor is None:
            break
    if allowed is not None:
        missing = set(allowed) - {tool.name for tool in tools}
        if missing:
            log.warning("MCP server %s does not offer allowed tool(s) %s", server, ", ".join(sorted(missing)))
    return tools
