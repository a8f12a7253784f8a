"""MCP servers as voxcall tools, with the official ``mcp`` SDK (v2 API).

:class:`MCPManager` runs the operator's servers (``mcp: {servers: {...}}`` in ``voxcall.yaml``, read by
:func:`parse_mcp_config`) and registers their tools in a :class:`~voxcall.tools.ToolRegistry` under aliases the
model can use. :class:`MCPConnection` is one server, kept connected (and restarted) by one owner task.
"""

from voxcall.tools.mcp.config import MCPServerConfig, parse_mcp_config
from voxcall.tools.mcp.connection import MCPConnection, MCPStartupError
from voxcall.tools.mcp.listing import MCPTool
from voxcall.tools.mcp.manager import MCPManager, MCPToolEntry
from voxcall.tools.mcp.names import internal_id, tool_alias
from voxcall.tools.mcp.results import normalize_result

__all__ = [
    "MCPConnection",
    "MCPManager",
    "MCPServerConfig",
    "MCPStartupError",
    "MCPTool",
    "MCPToolEntry",
    "internal_id",
    "normalize_result",
    "parse_mcp_config",
    "tool_alias",
]
