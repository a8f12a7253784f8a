"""What one response is given, and what it counts.

:class:`ResponseParams` are the session's settings merged with the request's overrides; :class:`ResponseInputs`
add the backend and its request, where the response's items and events go, and what it may use. A
:class:`~voxcall.core.responses.response.ResponseRun` owns everything else it needs; :class:`UsageTotals` is its
token count.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from voxcall.audio.formats import PCM24K, AudioFormat
from voxcall.config import ToolsSettings
from voxcall.core.conversation.conversation import Conversation
from voxcall.core.conversation.output_items import History
from voxcall.core.events import Emit, TokenCounts
from voxcall.core.metrics import Metrics
from voxcall.core.responses.acknowledgement import acknowledgement
from voxcall.core.responses.timing import ResponseTiming
from voxcall.core.settings import SessionSettings
from voxcall.core.tools.server_calls import Approvals
from voxcall.core.tools.tool_ledger import ToolLedger
from voxcall.core.tools.toolbox import Toolbox
from voxcall.llm import LLMBackend, LLMRequest, Usage
from voxcall.speech.tts import TTS
from voxcall.tools import Tool, ToolContext
from voxcall.tools.codecalls.prompt import ToolChoice


@dataclass
class ResponseParams:
    """Everything one response is generated with: the session's settings merged with the request's overrides."""

    instructions: str
    tools: list[Tool]
    tool_choice: ToolChoice
    output_modalities: list[str]
    max_output_tokens: int | None
    temperature: float | None = None
    metadata: dict[str, str] | None = None
    output_format: AudioFormat = PCM24K
    speed: float = 1.0  # speaking rate (``audio.output.speed``)

    @property
    def audio(self) -> bool:
        """Whether the response is spoken."""
        return "audio" in self.output_modalities


def _unit_gain() -> float:
    return 1.0


def _own_ledger() -> ToolLedger:
    """A ledger for a response run on its own (tests): a session gives its responses the session's."""
    return ToolLedger(Conversation(), Metrics(), client_wait=ToolsSettings().client_tool_wait,
                      on_landed=lambda entry: None)


def _english() -> str:
    return acknowledgement(None, "", 0)


@dataclass
class ResponseInputs:
    """What a response is given: the backend and the request for it, the settings, where its items and events go,
    and what it may use (speech, server tools, the session's tool context and approvals)."""

    backend: LLMBackend
    request: LLMRequest
    params: ResponseParams
    history: History
    emit: Emit
    llm_timeout: float
    tts: TTS | None = None
    gain: Callable[[], float] = _unit_gain  # the session's voice gain, read as each clause is spoken
    toolbox: Toolbox | None = None
    context: ToolContext = field(default_factory=ToolContext)
    approvals: Approvals | None = None
    timing: ResponseTiming = field(default_factory=ResponseTiming)  # from response.create, or the end of speech
    repair_calls: bool = False  # a botched native call gets one repair attempt (``session.repair_tool_calls``)
    settings: SessionSettings | None = None  # the effective settings it is generated with (a claim compares them)
    ledger: ToolLedger = field(default_factory=_own_ledger)  # the session's tool calls, this response's among them
    acknowledge_after: float | None = None  # seconds tools may run before the response acknowledges them and ends
    acknowledge: Callable[[], str] = _english  # the acknowledgement to say then


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
