"""The tool core: tool definitions, calls, results and the registry that runs server-side tools."""

from voxcall.tools.calls import ToolCall, ToolResult
from voxcall.tools.context import ToolContext
from voxcall.tools.modules import tool
from voxcall.tools.registry import ToolError, ToolRegistry
from voxcall.tools.schema import Tool

__all__ = ["Tool", "ToolCall", "ToolContext", "ToolError", "ToolRegistry", "ToolResult", "tool"]
