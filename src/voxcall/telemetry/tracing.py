"""OpenTelemetry traces of the sessions: what the core tells, as typed calls, and nothing at all when tracing is off.

The core reports to a :class:`Tracing` (one per process, from :func:`configure`). Each call below is a no-op in the
base classes, which are what :func:`configure` returns when tracing is off, so the core calls them unconditionally
and pays one method call each; :mod:`voxcall.telemetry.otel` (the ``otel`` extra) overrides them with spans.

The trace of one session (span names; ``gen_ai.*`` attributes follow OpenTelemetry's GenAI conventions)::

    voxcall.session                       gen_ai.conversation.id, voxcall.protocol, gen_ai.request.model
    └── voxcall.turn                      one response: voxcall.turn.trigger (speech, request, tool_output),
        │                                 voxcall.response.id, voxcall.turn.first_audio_ms, its status
        ├── voxcall.end_of_turn / voxcall.transcription     stages, with their own start and end
        ├── chat MODEL                    gen_ai.operation.name=chat, gen_ai.request.model, gen_ai.provider.name,
        │                                 gen_ai.usage.input_tokens / output_tokens / cache_read.input_tokens,
        │                                 gen_ai.response.time_to_first_chunk (s)
        ├── execute_tool NAME             gen_ai.tool.name, gen_ai.tool.call.id, gen_ai.tool.type=function,
        │                                 voxcall.tool.side (server, client), voxcall.tool.mcp_server,
        │                                 voxcall.tool.deadline_s; one event per ledger state (proposed,
        │                                 running, done …) and ``acknowledged``
        └── voxcall.tool_to_audio         a tool's result → the next answer audio (gen_ai.tool.call.id)

A hidden response (a speculative follow-up, an eager turn) is a turn with ``voxcall.turn.hidden`` set; it gets the
event ``speculation.claimed`` or ``speculation.discarded`` (with the reason), and a discarded one ends with status
``discarded``. Its audio waits for the claim, as the client's does: its first audio is the later of the two.
Every time is a :data:`Clock` reading (``time.monotonic()``, what the core measures with), so one measurement
feeds the timing event, ``/metrics`` and the trace alike; None means now.

Arguments, results and transcripts (``gen_ai.tool.call.arguments``, ``gen_ai.tool.call.result``,
``voxcall.turn.heard``, ``voxcall.turn.said``) are recorded only with ``record_content``; the calls that carry them
pass the text either way, and the no-op and the content-free tracing drop it.
"""

from __future__ import annotations

import enum
import logging
import os
from collections.abc import Mapping
from dataclasses import dataclass

log = logging.getLogger(__name__)

Clock = float
"""Seconds on :func:`time.monotonic`, as the core measures."""

CONTENT_ENV = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
"""The GenAI instrumentations' standard switch for recording message content: ``true`` records arguments, results
and transcripts (unless the settings say otherwise)."""

INSTALL_HINT = "pip install 'voxcall[otel]'"
"""How to get the tracing packages."""


class Trigger(enum.Enum):
    """What started a turn (and so where its time is measured from)."""

    SPEECH = "speech"  # the end of the user's speech
    REQUEST = "request"  # the client's response.create
    TOOL_OUTPUT = "tool_output"  # a tool's result (a follow-up the server starts itself, or a hidden one)


class ToolSide(enum.Enum):
    """Where a tool runs."""

    SERVER = "server"  # in the server: a built-in, a module's, an MCP server's
    CLIENT = "client"  # in the client (or a device), over the protocol


class ToolOutcome(enum.Enum):
    """How a tool call ended: the tool ledger's four last states, by the same values."""

    DONE = "done"
    FAILED = "failed"
    TIMED_OUT = "timed_out"
    CANCELLED = "cancelled"


class Stage(enum.Enum):
    """A stage of a turn measured as an interval before the turn's span exists or beside its children."""

    END_OF_TURN = "end_of_turn"  # the silence waited before the turn detector ended the user's turn
    TRANSCRIPTION = "transcription"  # speech to text of the user's turn


@dataclass(frozen=True)
class TracingOptions:
    """How traces are made: ``record_content`` records arguments, results and transcripts (off: they may hold
    personal data); ``service_name`` names the process in the traces."""

    record_content: bool = False
    service_name: str = "voxcall"


class LLMTrace:
    """One request to the LLM (a no-op: see :mod:`voxcall.telemetry.otel`)."""

    def first_token(self, *, at: Clock | None = None) -> None:
        """The model's first output (text or a call) arrived."""

    def usage(self, *, input_tokens: int, output_tokens: int, cached_input_tokens: int = 0) -> None:
        """The request's token counts (``cached_input_tokens``: prompt tokens served from a cache)."""

    def end(self, *, error: str | None = None, at: Clock | None = None) -> None:
        """The stream ended (``error``: how it failed)."""


class ToolTrace:
    """One tool call, from the moment the model proposed it (a no-op: see :mod:`voxcall.telemetry.otel`)."""

    def moved(self, state: str, *, reason: str | None = None, at: Clock | None = None) -> None:
        """The call moved to ``state`` in the tool ledger (``running`` …): an event on its span."""

    def acknowledged(self, *, at: Clock | None = None) -> None:
        """The voice acknowledged the call while it runs ("one moment…")."""

    def ended(self, outcome: ToolOutcome, *, output: str | None = None, reason: str | None = None,
              at: Clock | None = None) -> None:
        """The call ended; with a result (every outcome but ``CANCELLED``) the time to the next audio starts."""


class TurnTrace:
    """One turn: a response, from its origin to its end (a no-op: see :mod:`voxcall.telemetry.otel`)."""

    def stage(self, stage: Stage, *, start: Clock, end: Clock) -> None:
        """A stage of the turn that took from ``start`` to ``end``."""

    def heard(self, transcript: str) -> None:
        """What the user said (recorded with ``record_content`` only)."""

    def said(self, transcript: str) -> None:
        """What the answer said (recorded with ``record_content`` only)."""

    def llm_request(self, *, model: str, provider: str, at: Clock | None = None) -> LLMTrace:
        """A request to the LLM starts; ``provider`` is its kind (``openai``, ``llama.cpp``, ``scripted`` …)."""
        return _NO_LLM

    def tool_call(self, *, call_id: str, name: str, side: ToolSide, arguments: str | None = None,
                  mcp_server: str | None = None, deadline_s: float | None = None,
                  at: Clock | None = None) -> ToolTrace:
        """The model proposed a tool call (``arguments``: its JSON)."""
        return _NO_TOOL

    def audio(self, *, at: Clock | None = None) -> None:
        """Answer audio went out: the first ends the time to first audio, and every tool result waiting for
        audio gets it. Cheap to call for every chunk."""

    def claimed(self, *, at: Clock | None = None, origin: Clock | None = None) -> None:
        """A hidden turn was claimed: it becomes the visible answer, measured from ``origin`` (None: the claim; an
        eager answer to a spoken turn: the end of the speech). Its audio reaches the client from the claim on."""

    def discarded(self, *, reason: str, at: Clock | None = None) -> None:
        """A hidden turn was discarded (``reason``: what discarded it); its span ends."""

    def end(self, *, status: str, at: Clock | None = None) -> None:
        """The turn's response ended with ``status`` (``completed``, ``cancelled``, ``failed`` …)."""


class SessionTrace:
    """One session (a no-op: see :mod:`voxcall.telemetry.otel`)."""

    def turn(self, *, trigger: Trigger, response_id: str, origin: Clock | None = None,
             hidden: str | None = None) -> TurnTrace:
        """A turn starts, measured from ``origin`` (``hidden``: the kind of a hidden response)."""
        return _NO_TURN

    def end(self, *, at: Clock | None = None) -> None:
        """The session closed."""


class Tracing:
    """The process's tracing; this base records nothing (tracing off)."""

    enabled = False

    def session(self, *, session_id: str, protocol: str, model: str, at: Clock | None = None) -> SessionTrace:
        """A session starts (``protocol``: ``realtime``, ``live``, ``twilio``, ``webrtc`` …)."""
        return _NO_SESSION

    def shutdown(self) -> None:
        """Send what is left and stop (the process ends)."""


_NO_LLM = LLMTrace()
_NO_TOOL = ToolTrace()
_NO_TURN = TurnTrace()
_NO_SESSION = SessionTrace()
NO_TRACING = Tracing()
"""Tracing off: every call is a no-op."""

_EXPORTER_ENDPOINTS = ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")


def wanted(environ: Mapping[str, str]) -> bool:
    """Whether the standard ``OTEL_*`` variables ask for traces: an OTLP endpoint, or ``OTEL_TRACES_EXPORTER``
    naming an exporter (``otlp``, ``console``), and not ``OTEL_SDK_DISABLED=true`` nor ``OTEL_TRACES_EXPORTER=none``."""
    if environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return False
    exporters = environ.get("OTEL_TRACES_EXPORTER", "").strip().lower()
    if exporters == "none":
        return False
    return bool(exporters) or any(environ.get(name, "").strip() for name in _EXPORTER_ENDPOINTS)


def content_wanted(environ: Mapping[str, str]) -> bool:
    """Whether :data:`CONTENT_ENV` asks for message content."""
    return environ.get(CONTENT_ENV, "").strip().lower() == "true"


def configure(options: TracingOptions | None = None, *, enabled: bool | None = None) -> Tracing:
    """The process's tracing, to the exporters the environment's ``OTEL_*`` variables name (OTLP by default), else
    :data:`NO_TRACING`. ``enabled``: None traces when those variables ask for it (:func:`wanted`), True always,
    False never. ``options`` None: the defaults, with :data:`CONTENT_ENV` deciding ``record_content``.

    Asked for without the ``otel`` extra installed, tracing stays off and a warning says how to install it.
    """
    environ = os.environ
    if not (wanted(environ) if enabled is None else enabled):
        return NO_TRACING
    if options is None:
        options = TracingOptions(record_content=content_wanted(environ))
    try:
        from voxcall.telemetry.otel import OtelTracing, exporters_from_environment
    except ImportError as exc:
        log.warning("OTEL_* variables ask for traces, but the OpenTelemetry SDK is not installed (%s); tracing is "
                    "off. Install it with: %s", exc, INSTALL_HINT)
        return NO_TRACING
    return OtelTracing(options, exporters_from_environment(environ))
