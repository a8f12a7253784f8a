"""What a session is built from: the process's parts, shared by all its sessions, and the server's settings."""

from __future__ import annotations

from dataclasses import dataclass, field

from voxcall.config import SessionOptions, ToolsSettings
from voxcall.core.metrics import Metrics
from voxcall.core.responses.prefetch import SpeculationSlots
from voxcall.core.tools.toolbox import Toolbox
from voxcall.core.voice import Voice
from voxcall.llm import LLMBackend


@dataclass(frozen=True)
class SessionParts:
    """The LLM ``backend`` that answers, the speech models (``voice``; None: text only), the server tools
    (``toolbox``; None: none), the speculation ``slots`` (None: the session's own), the ``metrics``, and the
    server's ``session:`` and ``tools:`` sections."""

    backend: LLMBackend
    options: SessionOptions = field(default_factory=SessionOptions)
    tools: ToolsSettings = field(default_factory=ToolsSettings)
    voice: Voice | None = None
    toolbox: Toolbox | None = None
    slots: SpeculationSlots | None = None
    metrics: Metrics = field(default_factory=Metrics)
