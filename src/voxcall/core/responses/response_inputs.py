"""What one response is given, and what it counts.

A :class:`SessionContext` is what every response of a session uses, built once with the session: its backend, its
tool ledger, tool context and approvals, its voice gain and acknowledgement, and its limits. :class:`ResponseInputs`
are one response's own: the request for the backend, the settings it is generated with (the session's, with a
request's overrides: one frozen :class:`~voxcall.core.settings.SessionSettings`, never copied field by field), its
metadata, where its items and events go, and the voice and server tools in force when it starts. A
:class:`~voxcall.core.responses.response.ResponseRun` owns everything else it needs; :class:`UsageTotals` is its
token count.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from voxcall.core.conversation.output_items import History
from voxcall.core.events import Emit, TokenCounts
from voxcall.core.responses.timing import ResponseTiming
from voxcall.core.settings import SessionSettings
from voxcall.core.tools.server_calls import Approvals
from voxcall.core.tools.tool_ledger import ToolLedger
from voxcall.core.tools.toolbox import Toolbox
from voxcall.llm import LLMBackend, LLMRequest, Usage
from voxcall.speech.tts import TTS
from voxcall.telemetry.tracing import SessionTrace
from voxcall.tools import ToolContext


@dataclass(frozen=True)
class SessionContext:
    """What every response of one session uses: the ``backend``, the session's tool ``ledger``, tool ``context``
    and ``approvals``; ``gain`` (the session's voice gain, read as each clause is spoken) and ``acknowledge`` (the
    phrase a response says when its tools are slow); ``llm_timeout`` and ``repair_calls``
    (``session.repair_tool_calls``: a botched native call gets one repair attempt); the session's ``trace``, where
    each response opens its turn."""

    backend: LLMBackend
    ledger: ToolLedger
    llm_timeout: float
    acknowledge: Callable[[], str]
    gain: Callable[[], float]
    context: ToolContext = field(default_factory=ToolContext)
    approvals: Approvals | None = None
    repair_calls: bool = False
    trace: SessionTrace = field(default_factory=SessionTrace)


@dataclass
class ResponseInputs:
    """What one response is given: the ``request`` for the backend, the ``settings`` it is generated with (a claim
    compares them), its ``metadata``, where its items (``history``) and events (``emit``) go, the voice (``tts``;
    None: it is not spoken), the server tools, how long they may run before the response acknowledges them and ends
    (``acknowledge_after``), its ``timing`` (from ``response.create``, or the end of speech), and, for a hidden
    response, the kind of it (``hidden``: :class:`~voxcall.core.responses.lifecycle.HiddenKind`'s value)."""

    session: SessionContext
    request: LLMRequest
    settings: SessionSettings
    history: History
    emit: Emit
    metadata: dict[str, str] | None = None
    tts: TTS | None = None
    toolbox: Toolbox | None = None
    acknowledge_after: float | None = None
    timing: ResponseTiming = field(default_factory=ResponseTiming)
    hidden: str | None = None


@dataclass
class UsageTotals:
    """The tokens a response used, over all its model calls."""

    input_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int = 0

    def add(self, usage: Usage) -> None:
        self.input_tokens += usage.input_tokens
        self.output_tokens += usage.output_tokens
        self.cached_tokens += usage.cached_input_tokens

    def counts(self) -> TokenCounts:
        """The totals so far."""
        return TokenCounts(self.input_tokens, self.output_tokens, self.cached_tokens)
