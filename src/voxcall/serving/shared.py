"""What every session of a process shares: the LLM backend, the speech models, the server tools, the speculation
slots, the metrics, the tracing and the settings. The web app makes one :class:`Shared` when it is built; the session
host builds every session from it."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Protocol

from voxcall.config import ServerSettings
from voxcall.core.responses.prefetch import SpeculationSlots
from voxcall.core.tools.toolbox import Toolbox
from voxcall.llm import LLMBackend
from voxcall.serving.metrics import Metrics
from voxcall.speech.voice import Voice
from voxcall.telemetry.tracing import NO_TRACING, Tracing


class Drainable(Protocol):
    """A session as a stopping server sees it: it lets its running response end (until ``expired``)."""

    async def finish(self, expired: asyncio.Event) -> None: ...


Occupy = Callable[[Drainable], Awaitable[bool]]
"""Hands the gate an accepted connection's session, for a drain to end; False when the server began to stop
meanwhile (it has then closed the connection: the edge ends the session unserved)."""


@dataclass
class ServerTools:
    """The process's server tools: given when the app is built, or built when it starts (from the settings'
    ``tools:``/``mcp:`` sections), and set once, before any session starts."""

    box: Toolbox | None = None


@dataclass(frozen=True)
class Shared:
    """The process's parts, for the sessions of every edge."""

    settings: ServerSettings
    backend: LLMBackend
    slots: SpeculationSlots
    metrics: Metrics
    voice: Voice | None = None
    tools: ServerTools = field(default_factory=ServerTools)
    delegates: Mapping[str, LLMBackend] = field(default_factory=dict)
    """More backends by name, for work a session hands off (a GPT-Live Responses delegation's ``model``)."""
    tracing: Tracing = NO_TRACING
    """Where the sessions' traces go (:mod:`voxcall.telemetry.tracing`; the default records nothing)."""

    @classmethod
    def of(cls, settings: ServerSettings, backend: LLMBackend, *, voice: Voice | None = None,
           toolbox: Toolbox | None = None, delegates: Mapping[str, LLMBackend] | None = None,
           tracing: Tracing = NO_TRACING) -> Shared:
        """The parts of a process serving ``settings`` with ``backend``: its own speculation slots and metrics."""
        return cls(settings, backend, SpeculationSlots(settings.session.max_speculative), Metrics(), voice,
                   ServerTools(toolbox), dict(delegates or {}), tracing)

    @property
    def toolbox(self) -> Toolbox | None:
        """The server tools every session may use (None: none)."""
        return self.tools.box
