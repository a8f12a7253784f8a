"""Names of MCP tools: voxcall's internal id, and the alias the model sees.

Inside voxcall an MCP tool is ``mcp:SERVER:TOOL``. Model APIs accept only ``^[a-zA-Z0-9_-]{1,64}$`` as a tool
name, so the model sees ``SERVER__TOOL`` with every other character replaced by ``_``, cut to 64 characters with
a short hash of the full name when longer. Aliases are not guaranteed unique (``a.b`` and ``a_b`` meet), so
whoever collects them must check for collisions; :class:`~voxcall.tools.mcp.manager.MCPManager` does.
"""

from __future__ import annotations

import hashlib
import re

__all__ = ["internal_id", "tool_alias"]

_MAX_ALIAS = 64
_HASH_CHARS = 8
_UNSAFE = re.compile(r"[^a-zA-Z0-9_-]")


def internal_id(server: str, tool: str) -> str:
    """voxcall's id for tool ``tool`` of MCP server ``server``: ``mcp:SERVER:TOOL``."""
    return f"mcp:{server}:{tool}"


def tool_alias(server: str, tool: str) -> str:
    """The name the model sees for ``tool`` of ``server``: ``SERVER__TOOL``, made to match the tool name rule
    (:data:`~voxcall.tools.names.TOOL_NAME_PATTERN`)."""
    alias = _UNSAFE.sub("_", f"{server}__{tool}")
    if len(alias) <= _MAX_ALIAS:
        return alias
    digest = hashlib.sha256(internal_id(server, tool).encode()).hexdigest()[:_HASH_CHARS]
    return f"{alias[: _MAX_ALIAS - _HASH_CHARS - 1]}_{digest}"
