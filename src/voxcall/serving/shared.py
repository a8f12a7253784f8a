"""What every session of a process shares: the LLM backend, the speech models, the server tools, the speculation
slots, the metrics and the settings. A protocol edge builds each of its sessions from one :class:`Shared`; the
serving layer makes it once, when the app is built."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Protocol

from voxcall.config import ServerSettings
from voxcall.core.metrics import Metrics
from voxcall.core.responses.prefetch import SpeculationSlots
from voxcall.core.tools.toolbox import Toolbox
from voxcall.core.voice import Voice
from voxcall.llm import LLMBackend


class Drainable(Protocol):
    """A session as a stopping server sees it: it lets its running response end (until ``expired``)."""

    async def finish(self, expired: asyncio.Event) -> None: ...


Occupy = Callable[[Drainable], Awaitable[bool]]
"""Hands the serving layer an accepted connection's session, for a drain to end; False when the server began to
stop meanwhile (it has then closed the connection: the edge ends the session unserved)."""

@dataclass
class Shared:
    """The process's parts, for the sessions of every edge. ``toolbox`` is read when a session starts: the app
    builds it at startup from the settings' ``tools``/``mcp`` sections when none was given."""

    settings: ServerSettings
    backend: LLMBackend
    slots: SpeculationSlots
    metrics: Metrics
    voice: Voice | None = None
    toolbox: Toolbox | None = None
    delegates: dict[str, LLMBackend] = field(default_factory=dict)
    """More backends by name, for work a session hands off (a GPT-Live Responses delegation's ``model``)."""
