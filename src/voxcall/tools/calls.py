"""The structured results of the tool path: a call the model made and the result a tool returned.

Every LLM path (native tool calls from a cloud backend, ``<code>`` blocks from a local model) produces the same
:class:`ToolCall`; every tool source (client, registry, MCP) answers with the same :class:`ToolResult`.
"""

from __future__ import annotations

import json
import secrets
from dataclasses import dataclass, field
from typing import Any

_CALL_ID_BYTES = 18  # 18 random bytes -> 24 URL-safe base64 characters


def new_call_id() -> str:
    """Return a fresh call id: ``"call_"`` followed by 24 random URL-safe characters."""
    return "call_" + secrets.token_urlsafe(_CALL_ID_BYTES)


@dataclass(slots=True)
class ToolCall:
    """One call of a tool by the model, with its arguments already parsed and validated.

    ``warnings`` records what was repaired on the way (for example unknown arguments that were dropped), so a
    caller can log it or tell the model without rejecting the call.
    """

    name: str
    arguments: dict[str, Any]
    call_id: str = field(default_factory=new_call_id)
    warnings: list[str] = field(default_factory=list)

    @property
    def arguments_json(self) -> str:
        """The arguments as compact JSON, non-ASCII characters kept as they are."""
        return json.dumps(self.arguments, ensure_ascii=False, separators=(",", ":"))


@dataclass(slots=True)
class ToolResult:
    """What a tool returned: ``output`` is the text given back to the model; ``data`` the raw value, if any;
    ``cached``: reused from an earlier call (:mod:`voxcall.tools.cache`) rather than run; ``timed_out``: the tool
    did not finish within its deadline (an error whose output says so)."""

    output: str
    is_error: bool = False
    data: Any = None
    cached: bool = False
    timed_out: bool = False
