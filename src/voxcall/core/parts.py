"""What a session is built from: the process's parts, shared by all its sessions, and the server's settings."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from voxcall.config import SessionOptions, ToolsSettings
from voxcall.core.observer import Observer, Unobserved
from voxcall.core.responses.prefetch import SpeculationSlots
from voxcall.core.tools.toolbox import Toolbox
from voxcall.llm import LLMBackend
from voxcall.speech.voice import Voice
from voxcall.telemetry.tracing import SessionTrace


@dataclass(frozen=True)
class SessionParts:
    """The LLM ``backend`` that answers, the speech models (``voice``; None: text only), the server tools
    (``toolbox``; None: none), the speculation ``slots`` (None: the session's own), the ``observer`` of its
    measurements (:mod:`voxcall.core.observer`), the server's ``session:`` and ``tools:`` sections, and ``trace``,
    which opens a session's trace given its id (the host knows the protocol and the model it names; the default
    traces nothing)."""

    backend: LLMBackend
    options: SessionOptions = field(default_factory=SessionOptions)
    tools: ToolsSettings = field(default_factory=ToolsSettings)
    voice: Voice | None = None
    toolbox: Toolbox | None = None
    slots: SpeculationSlots | None = None
    observer: Observer = field(default_factory=Unobserved)
    trace: Callable[[str], SessionTrace] = field(default=lambda session_id: SessionTrace())
