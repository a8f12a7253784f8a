"""The tracing of :mod:`voxcall.telemetry.tracing` on the OpenTelemetry SDK (the ``otel`` extra).

Spans are made with explicit parents and explicit times: a session's tasks are many and its measurements are taken
before the span that holds them exists (the end of the user's speech is known once the turn detector decides), so
nothing relies on the "current span" of a context. Times are :data:`~voxcall.telemetry.tracing.Clock` readings
placed on the wall clock by one offset taken when the tracing starts, so every span of a process keeps the order and
the durations the core measured.

The provider is voxcall's own, not OpenTelemetry's global one: an embedding application keeps its own tracing, and
tests make as many as they like. Exporters come from the standard variables (:func:`exporters_from_environment`).
"""

from __future__ import annotations

import importlib
import logging
import time
from collections.abc import Mapping, Sequence
from importlib.metadata import PackageNotFoundError, version

from opentelemetry import trace
from opentelemetry.sdk.resources import SERVICE_NAME, SERVICE_VERSION, OTELResourceDetector, Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor, SpanExporter
from opentelemetry.trace import Span, SpanKind, Status, StatusCode

from voxcall.telemetry.tracing import (
    Clock,
    LLMTrace,
    SessionTrace,
    Stage,
    ToolOutcome,
    ToolSide,
    ToolTrace,
    Tracing,
    TracingOptions,
    Trigger,
    TurnTrace,
)

log = logging.getLogger(__name__)

_ERROR_OUTCOMES = frozenset({ToolOutcome.FAILED, ToolOutcome.TIMED_OUT})


class _Clock:
    """Monotonic readings as OpenTelemetry's nanoseconds since the epoch."""

    def __init__(self) -> None:
        self._offset = time.time_ns() - time.monotonic_ns()

    def ns(self, at: Clock | None) -> int:
        return self._offset + (time.monotonic_ns() if at is None else int(at * 1e9))

    @staticmethod
    def now(at: Clock | None) -> Clock:
        return time.monotonic() if at is None else at


class OtelLLM(LLMTrace):
    """A ``chat MODEL`` span."""

    def __init__(self, span: Span, clock: _Clock, started: Clock) -> None:
        self._span, self._clock, self._started = span, clock, started
        self._first = False

    def first_token(self, *, at: Clock | None = None) -> None:
        if self._first:
            return
        self._first = True
        at = self._clock.now(at)
        self._span.set_attribute("gen_ai.response.time_to_first_chunk", max(0.0, at - self._started))
        self._span.add_event("first_token", timestamp=self._clock.ns(at))

    def usage(self, *, input_tokens: int, output_tokens: int, cached_input_tokens: int = 0) -> None:
        self._span.set_attributes({"gen_ai.usage.input_tokens": input_tokens,
                                   "gen_ai.usage.output_tokens": output_tokens,
                                   "gen_ai.usage.cache_read.input_tokens": cached_input_tokens})

    def end(self, *, error: str | None = None, at: Clock | None = None) -> None:
        if error is not None:
            self._span.set_attribute("error.type", "llm_error")
            self._span.set_status(Status(StatusCode.ERROR, error))
        self._span.end(end_time=self._clock.ns(at))


class OtelTool(ToolTrace):
    """An ``execute_tool NAME`` span; its result waits in its session for the audio that speaks it."""

    def __init__(self, span: Span, session: OtelSession, call_id: str, name: str) -> None:
        self._span, self._session, self._clock = span, session, session.clock
        self.call_id, self.name = call_id, name
        self._ended = False

    def moved(self, state: str, *, reason: str | None = None, at: Clock | None = None) -> None:
        self._span.add_event(state, {"voxcall.tool.reason": reason} if reason else None, self._clock.ns(at))

    def acknowledged(self, *, at: Clock | None = None) -> None:
        self._span.add_event("acknowledged", timestamp=self._clock.ns(at))

    def ended(self, outcome: ToolOutcome, *, output: str | None = None, reason: str | None = None,
              at: Clock | None = None) -> None:
        if self._ended:
            return
        self._ended = True
        at = self._clock.now(at)
        self.moved(outcome.value, reason=reason, at=at)
        self._span.set_attribute("voxcall.tool.outcome", outcome.value)
        if output is not None and self._session.record_content:
            self._span.set_attribute("gen_ai.tool.call.result", output)
        if outcome in _ERROR_OUTCOMES:
            self._span.set_attribute("error.type", outcome.value)
            self._span.set_status(Status(StatusCode.ERROR, reason or outcome.value))
        if outcome is not ToolOutcome.CANCELLED:
            self._session.results.append((self, at))
        self._span.end(end_time=self._clock.ns(at))


class OtelTurn(TurnTrace):
    """A ``voxcall.turn`` span and its children."""

    def __init__(self, span: Span, session: OtelSession, origin: Clock, hidden: bool) -> None:
        self._span, self._session, self._clock = span, session, session.clock
        self._context = trace.set_span_in_context(span)
        self._origin = origin
        self._hidden = hidden  # until claimed: its audio waits for the claim
        self._held: Clock | None = None  # the first audio it made while hidden
        self._spoke = False
        self._said: list[str] = []
        self._ended = False

    def _child(self, name: str, at: Clock | None, attributes: Mapping[str, str | int | float | bool],
               kind: SpanKind = SpanKind.INTERNAL) -> Span:
        return self._session.tracer.start_span(name, self._context, kind, dict(attributes),
                                               start_time=self._clock.ns(at))

    def stage(self, stage: Stage, *, start: Clock, end: Clock) -> None:
        self._child(f"voxcall.{stage.value}", start, {}).end(end_time=self._clock.ns(end))

    def heard(self, transcript: str) -> None:
        if self._session.record_content:
            self._span.set_attribute("voxcall.turn.heard", transcript)

    def said(self, transcript: str) -> None:
        if self._session.record_content:  # a turn that ran tools says a message per round: the whole answer
            self._said.append(transcript)
            self._span.set_attribute("voxcall.turn.said", " ".join(self._said))

    def llm_request(self, *, model: str, provider: str, at: Clock | None = None) -> LLMTrace:
        at = self._clock.now(at)
        span = self._child(f"chat {model}", at, {"gen_ai.operation.name": "chat", "gen_ai.request.model": model,
                                                 "gen_ai.provider.name": provider}, SpanKind.CLIENT)
        return OtelLLM(span, self._clock, at)

    def tool_call(self, *, call_id: str, name: str, side: ToolSide, arguments: str | None = None,
                  mcp_server: str | None = None, deadline_s: float | None = None,
                  at: Clock | None = None) -> ToolTrace:
        attributes: dict[str, str | int | float | bool] = {
            "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": name, "gen_ai.tool.call.id": call_id,
            "gen_ai.tool.type": "function", "voxcall.tool.side": side.value}
        if mcp_server is not None:
            attributes["voxcall.tool.mcp_server"] = mcp_server
        if deadline_s is not None:
            attributes["voxcall.tool.deadline_s"] = deadline_s
        if arguments is not None and self._session.record_content:
            attributes["gen_ai.tool.call.arguments"] = arguments
        span = self._child(f"execute_tool {name}", at, attributes)
        span.add_event("proposed", timestamp=self._clock.ns(at))
        return OtelTool(span, self._session, call_id, name)

    def audio(self, *, at: Clock | None = None) -> None:
        if self._spoke and not self._session.results:
            return
        at = self._clock.now(at)
        if self._hidden:
            self._held = at if self._held is None else self._held
            return
        if not self._spoke:
            self._spoke = True
            self._span.set_attribute("voxcall.turn.first_audio_ms", round(max(0.0, at - self._origin) * 1000))
            self._span.add_event("first_audio", timestamp=self._clock.ns(at))
        results, self._session.results = self._session.results, []
        for tool, ended in results:
            span = self._child("voxcall.tool_to_audio", ended, {"gen_ai.tool.call.id": tool.call_id,
                                                                "gen_ai.tool.name": tool.name})
            span.end(end_time=self._clock.ns(at))

    def claimed(self, *, at: Clock | None = None, origin: Clock | None = None) -> None:
        at = self._clock.now(at)
        self._origin = at if origin is None else origin  # as the timing event measures a claimed turn
        self._hidden = False
        self._span.set_attribute("voxcall.turn.claimed", True)
        self._span.add_event("speculation.claimed", timestamp=self._clock.ns(at))
        if self._held is not None:
            self.audio(at=max(self._held, at))

    def discarded(self, *, reason: str, at: Clock | None = None) -> None:
        if self._ended:
            return
        self._span.add_event("speculation.discarded", {"voxcall.speculation.reason": reason}, self._clock.ns(at))
        self.end(status="discarded", at=at)

    def end(self, *, status: str, at: Clock | None = None) -> None:
        if self._ended:
            return
        self._ended = True
        self._span.set_attribute("voxcall.turn.status", status)
        if status == "failed":
            self._span.set_status(Status(StatusCode.ERROR, "the response failed"))
        self._span.end(end_time=self._clock.ns(at))


class OtelSession(SessionTrace):
    """A ``voxcall.session`` span; it keeps the tool results no audio has spoken yet."""

    def __init__(self, span: Span, tracing: OtelTracing) -> None:
        self._span = span
        self.tracer, self.clock, self.record_content = tracing.tracer, tracing.clock, tracing.options.record_content
        self._context = trace.set_span_in_context(span)
        self.results: list[tuple[OtelTool, Clock]] = []

    def turn(self, *, trigger: Trigger, response_id: str, origin: Clock | None = None,
             hidden: str | None = None) -> TurnTrace:
        origin = self.clock.now(origin)
        attributes: dict[str, str] = {"voxcall.turn.trigger": trigger.value, "voxcall.response.id": response_id}
        if hidden is not None:
            attributes["voxcall.turn.hidden"] = hidden
        span = self.tracer.start_span("voxcall.turn", self._context, SpanKind.INTERNAL, attributes,
                                      start_time=self.clock.ns(origin))
        return OtelTurn(span, self, origin, hidden is not None)

    def end(self, *, at: Clock | None = None) -> None:
        self._span.end(end_time=self.clock.ns(at))


class OtelTracing(Tracing):
    """Traces to ``exporters``, batched (``batch=False``: each span exported as it ends, for tests)."""

    enabled = True

    def __init__(self, options: TracingOptions, exporters: Sequence[SpanExporter], *, batch: bool = True) -> None:
        self.options = options
        self.clock = _Clock()
        resource = Resource.create({SERVICE_NAME: options.service_name, SERVICE_VERSION: _version()}).merge(
            OTELResourceDetector().detect())  # OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES win, as everywhere
        self.provider = TracerProvider(resource=resource)
        for exporter in exporters:
            self.provider.add_span_processor(BatchSpanProcessor(exporter) if batch else SimpleSpanProcessor(exporter))
        self.tracer = self.provider.get_tracer("voxcall", _version())

    def session(self, *, session_id: str, protocol: str, model: str, at: Clock | None = None) -> SessionTrace:
        span = self.tracer.start_span("voxcall.session", kind=SpanKind.SERVER, start_time=self.clock.ns(at),
                                      attributes={"gen_ai.conversation.id": session_id, "voxcall.protocol": protocol,
                                                  "gen_ai.request.model": model})
        return OtelSession(span, self)

    def shutdown(self) -> None:
        self.provider.shutdown()


def exporters_from_environment(environ: Mapping[str, str]) -> list[SpanExporter]:
    """The exporters ``OTEL_TRACES_EXPORTER`` names (``otlp`` when unset, ``console``); an OTLP exporter speaks
    ``http/protobuf`` and reads its endpoint, headers, timeout and compression from the ``OTEL_EXPORTER_OTLP_*``
    variables itself (``grpc`` needs the ``opentelemetry-exporter-otlp-proto-grpc`` package)."""
    names = [name.strip() for name in environ.get("OTEL_TRACES_EXPORTER", "otlp").lower().split(",") if name.strip()]
    exporters: list[SpanExporter] = []
    for name in names:
        if name == "otlp":
            exporters.append(_otlp_exporter(environ))
        elif name == "console":
            from opentelemetry.sdk.trace.export import ConsoleSpanExporter

            exporters.append(ConsoleSpanExporter())
        elif name != "none":
            log.warning("OTEL_TRACES_EXPORTER names %r, which voxcall does not know (otlp, console); ignored", name)
    return exporters


def _otlp_exporter(environ: Mapping[str, str]) -> SpanExporter:
    protocol = (environ.get("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL") or environ.get("OTEL_EXPORTER_OTLP_PROTOCOL")
                or "http/protobuf").strip().lower()
    if protocol == "grpc":
        try:
            grpc = importlib.import_module("opentelemetry.exporter.otlp.proto.grpc.trace_exporter")
        except ImportError:
            log.warning("OTLP over gRPC needs opentelemetry-exporter-otlp-proto-grpc; sending over HTTP instead")
        else:
            exporter: SpanExporter = grpc.OTLPSpanExporter()
            return exporter
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

    return OTLPSpanExporter()


def _version() -> str:
    try:
        return version("voxcall")
    except PackageNotFoundError:
        return "unknown"
