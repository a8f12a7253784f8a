"""Client-side tools: the tools a client offers in ``session.update`` and runs itself when the model calls them.

They live in a :class:`~voxcall.tools.ToolRegistry`, so a client's calls get what a server's get: arguments checked
against the schema, timeouts, and failures turned into short error outputs the model can read. ``voxcall talk
--tool-module`` fills one from a user's module through :mod:`voxcall.tools.modules`, whose simplest form is::

    TOOLS = [{"type": "function", "name": "calculator", "description": "...", "parameters": {...}}]

    async def execute_tool(name: str, arguments: dict) -> object:
        ...  # the result: a string as is, anything else as JSON

(``@voxcall.tools.tool`` functions and module-level registries work too); ``voxcall chat`` offers the built-ins.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from voxcall.tools import ToolRegistry
from voxcall.tools.modules import load_tool_module as register_tool_module


class ToolModuleError(ValueError):
    """A tool module that cannot be loaded or offers no tools; the message says why."""


@dataclass(frozen=True)
class ClientTools:
    """The tools of ``registry``, as a client offers and runs them."""

    registry: ToolRegistry

    @property
    def definitions(self) -> list[dict[str, Any]]:
        """The Realtime tool dicts for ``session.update``."""
        return [tool.to_openai() for tool in self.registry.tools]

    async def run(self, name: str, arguments: str) -> str:
        """The output for a call of ``name`` with the JSON ``arguments``, as the model will read it (an error
        output for anything that went wrong: the conversation stays valid)."""
        try:
            parsed = json.loads(arguments or "{}")
        except ValueError:
            return f"error: the arguments are not valid JSON: {arguments!r}"
        if not isinstance(parsed, dict):
            return "error: the arguments must be a JSON object"
        return (await self.registry.call(name, parsed)).output


def load_tool_module(spec: str) -> ClientTools:
    """The tools of ``spec``: a ``.py`` file path or an importable module name.

    Raises :class:`ToolModuleError` when it cannot be imported or offers no tools.
    """
    registry = ToolRegistry()
    try:
        register_tool_module(spec, registry)
    except ValueError as exc:
        raise ToolModuleError(str(exc)) from None
    return ClientTools(registry)
