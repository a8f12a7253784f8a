"""``ToolContext``: who is calling a server tool, for the tools that act on the caller (its voice volume …).

A handler that declares a parameter annotated ``ToolContext`` receives it at call time; the parameter is not
part of the tool's schema, so the model never sees or fills it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol


class VoiceControl(Protocol):
    """The caller's assistant voice: its gain (1.0 is normal volume) can be read and set."""

    voice_gain: float


@dataclass
class ToolContext:
    """The calling session (empty when a tool is called outside a session, e.g. from a test or the CLI)."""

    session_id: str = ""
    voice: VoiceControl | None = None
    state: dict[str, Any] = field(default_factory=dict)  # per-session scratch space for stateful tools


def context_parameter(hints: dict[str, Any]) -> str | None:
    """The name of the parameter annotated ``ToolContext`` in resolved type hints, if any."""
    return next((name for name, hint in hints.items() if hint is ToolContext and name != "return"), None)
