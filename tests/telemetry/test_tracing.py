"""The tracing API on the SDK's in-memory exporter: the span tree of a spoken turn with a server tool, a client
tool's follow-up, a speculative follow-up claimed and one discarded; content only when asked; and tracing off,
which loads nothing and records nothing."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator

import pytest

from tests.requirements import require_module
from voxcall.telemetry import tracing
from voxcall.telemetry.tracing import (
    Stage,
    ToolOutcome,
    ToolSide,
    TracingOptions,
    Trigger,
    content_wanted,
    wanted,
)

require_module("opentelemetry.sdk")

from opentelemetry.sdk.trace import ReadableSpan  # noqa: E402
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter  # noqa: E402
from opentelemetry.trace import StatusCode  # noqa: E402

from voxcall.telemetry.otel import OtelTracing  # noqa: E402

T0 = 1000.0  # a monotonic reading: every time below is T0 + seconds


@pytest.fixture
def exporter() -> Iterator[InMemorySpanExporter]:
    exporter = InMemorySpanExporter()
    yield exporter
    exporter.shutdown()


def traced(exporter: InMemorySpanExporter, *, record_content: bool = False) -> OtelTracing:
    return OtelTracing(TracingOptions(record_content=record_content), [exporter], batch=False)


def by_name(spans: tuple[ReadableSpan, ...], name: str) -> list[ReadableSpan]:
    return [span for span in spans if span.name == name]


def one(spans: tuple[ReadableSpan, ...], name: str) -> ReadableSpan:
    found = by_name(spans, name)
    assert len(found) == 1, (name, [s.name for s in spans])
    return found[0]


def ms(span: ReadableSpan) -> float:
    assert span.start_time is not None and span.end_time is not None
    return (span.end_time - span.start_time) / 1e6


def parent_of(span: ReadableSpan) -> int | None:
    return span.parent.span_id if span.parent is not None else None


def span_id(span: ReadableSpan) -> int:
    assert span.context is not None
    return span.context.span_id


def spoken_turn_with_a_server_tool(tracer: OtelTracing) -> None:
    """What the core reports for "what is 12 times 8?" spoken, answered with the calculator in one response."""
    session = tracer.session(session_id="sess_1", protocol="realtime", model="smollm2-135m", at=T0)
    turn = session.turn(trigger=Trigger.SPEECH, response_id="resp_1", origin=T0 + 1.0)
    turn.stage(Stage.END_OF_TURN, start=T0 + 1.0, end=T0 + 1.5)
    turn.stage(Stage.TRANSCRIPTION, start=T0 + 1.5, end=T0 + 1.6)
    turn.heard("what is 12 times 8")
    first = turn.llm_request(model="smollm2-135m", provider="llama.cpp", at=T0 + 1.6)
    first.first_token(at=T0 + 1.8)
    call = turn.tool_call(call_id="call_1", name="calculator", side=ToolSide.SERVER,
                          arguments='{"op": "mul", "a": 12, "b": 8}', deadline_s=10.0, at=T0 + 1.9)
    first.usage(input_tokens=120, output_tokens=14, cached_input_tokens=100)
    first.end(at=T0 + 1.95)
    call.moved("running", at=T0 + 1.95)
    call.ended(ToolOutcome.DONE, output="96", at=T0 + 1.96)
    second = turn.llm_request(model="smollm2-135m", provider="llama.cpp", at=T0 + 1.96)
    second.first_token(at=T0 + 2.1)
    second.end(at=T0 + 2.3)
    turn.audio(at=T0 + 2.2)
    turn.audio(at=T0 + 2.25)
    turn.said("The answer is 96.")
    turn.end(status="completed", at=T0 + 3.0)
    session.end(at=T0 + 4.0)


def test_a_spoken_turn_with_a_server_tool_shows_every_stage_with_its_time(exporter: InMemorySpanExporter) -> None:
    spoken_turn_with_a_server_tool(traced(exporter))
    spans = exporter.get_finished_spans()
    session, turn = one(spans, "voxcall.session"), one(spans, "voxcall.turn")
    tool, to_audio = one(spans, "execute_tool calculator"), one(spans, "voxcall.tool_to_audio")
    chats = by_name(spans, "chat smollm2-135m")
    assert len(chats) == 2 and len(spans) == 8
    assert parent_of(turn) == span_id(session) and parent_of(session) is None
    for child in (tool, to_audio, *chats, one(spans, "voxcall.end_of_turn"), one(spans, "voxcall.transcription")):
        assert parent_of(child) == span_id(turn), child.name
    assert len({span.context.trace_id for span in spans if span.context is not None}) == 1
    # the times are the core's measurements
    assert ms(one(spans, "voxcall.end_of_turn")) == pytest.approx(500, abs=1)
    assert ms(one(spans, "voxcall.transcription")) == pytest.approx(100, abs=1)
    assert ms(to_audio) == pytest.approx(240, abs=1) and ms(tool) == pytest.approx(60, abs=1)
    assert turn.attributes is not None and turn.attributes["voxcall.turn.first_audio_ms"] == 1200
    assert turn.attributes["voxcall.turn.trigger"] == "speech" and turn.attributes["voxcall.response.id"] == "resp_1"
    assert turn.attributes["voxcall.turn.status"] == "completed"
    assert [e.name for e in turn.events] == ["first_audio"]  # the second chunk adds nothing
    # gen_ai names
    assert session.attributes == {"gen_ai.conversation.id": "sess_1", "voxcall.protocol": "realtime",
                                  "gen_ai.request.model": "smollm2-135m"}
    assert chats[0].attributes == {
        "gen_ai.operation.name": "chat", "gen_ai.request.model": "smollm2-135m", "gen_ai.provider.name": "llama.cpp",
        "gen_ai.response.time_to_first_chunk": pytest.approx(0.2), "gen_ai.usage.input_tokens": 120,
        "gen_ai.usage.output_tokens": 14, "gen_ai.usage.cache_read.input_tokens": 100}
    assert tool.attributes == {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "calculator",
                               "gen_ai.tool.call.id": "call_1", "gen_ai.tool.type": "function",
                               "voxcall.tool.side": "server", "voxcall.tool.deadline_s": 10.0,
                               "voxcall.tool.outcome": "done"}
    assert [e.name for e in tool.events] == ["proposed", "running", "done"]
    assert to_audio.attributes == {"gen_ai.tool.call.id": "call_1", "gen_ai.tool.name": "calculator"}
    assert resource_name(session) == "voxcall"


def resource_name(span: ReadableSpan) -> object:
    return span.resource.attributes.get("service.name")


def test_content_is_recorded_only_when_asked(exporter: InMemorySpanExporter) -> None:
    spoken_turn_with_a_server_tool(traced(exporter, record_content=True))
    spans = exporter.get_finished_spans()
    tool, turn = one(spans, "execute_tool calculator"), one(spans, "voxcall.turn")
    assert tool.attributes is not None and turn.attributes is not None
    assert tool.attributes["gen_ai.tool.call.arguments"] == '{"op": "mul", "a": 12, "b": 8}'
    assert tool.attributes["gen_ai.tool.call.result"] == "96"
    assert (turn.attributes["voxcall.turn.heard"], turn.attributes["voxcall.turn.said"]) == (
        "what is 12 times 8", "The answer is 96.")
    exporter.clear()
    spoken_turn_with_a_server_tool(traced(exporter))
    content = {"gen_ai.tool.call.arguments", "gen_ai.tool.call.result", "voxcall.turn.heard", "voxcall.turn.said"}
    assert not [(s.name, key) for s in exporter.get_finished_spans() for key in (s.attributes or {}) if key in content]


def test_a_client_tool_turn_and_its_follow_up(exporter: InMemorySpanExporter) -> None:
    """A typed question, a client tool that fails past its deadline, and the follow-up that speaks about it."""
    session = traced(exporter).session(session_id="sess_2", protocol="live", model="m", at=T0)
    ask = session.turn(trigger=Trigger.REQUEST, response_id="resp_1", origin=T0 + 1.0)
    call = ask.tool_call(call_id="call_9", name="get_local_time", side=ToolSide.CLIENT, at=T0 + 1.2)
    call.moved("running", at=T0 + 1.2)
    call.acknowledged(at=T0 + 1.5)
    ask.end(status="completed", at=T0 + 1.3)
    call.ended(ToolOutcome.TIMED_OUT, reason="no output within 10 s", at=T0 + 11.2)
    follow = session.turn(trigger=Trigger.TOOL_OUTPUT, response_id="resp_2", origin=T0 + 11.2)
    follow.audio(at=T0 + 11.6)
    follow.end(status="completed", at=T0 + 12.0)
    session.end(at=T0 + 13.0)
    spans = exporter.get_finished_spans()
    tool, to_audio = one(spans, "execute_tool get_local_time"), one(spans, "voxcall.tool_to_audio")
    turns = {s.attributes["voxcall.response.id"]: s for s in by_name(spans, "voxcall.turn") if s.attributes}
    assert parent_of(tool) == span_id(turns["resp_1"])
    assert parent_of(to_audio) == span_id(turns["resp_2"])  # the turn whose audio spoke the result
    assert ms(to_audio) == pytest.approx(400, abs=1)
    assert tool.attributes is not None and tool.attributes["voxcall.tool.side"] == "client"
    assert [e.name for e in tool.events] == ["proposed", "running", "acknowledged", "timed_out"]
    assert tool.events[-1].attributes == {"voxcall.tool.reason": "no output within 10 s"}
    assert tool.status.status_code is StatusCode.ERROR and tool.attributes["error.type"] == "timed_out"
    assert "voxcall.turn.first_audio_ms" not in (turns["resp_1"].attributes or {})
    assert (turns["resp_2"].attributes or {})["voxcall.turn.first_audio_ms"] == 400


def test_a_speculative_follow_up_claimed_and_one_discarded(exporter: InMemorySpanExporter) -> None:
    session = traced(exporter).session(session_id="sess_3", protocol="realtime", model="m", at=T0)
    claimed = session.turn(trigger=Trigger.TOOL_OUTPUT, response_id="resp_h1", origin=T0 + 1.0, hidden="follow_up")
    claimed.llm_request(model="m", provider="scripted", at=T0 + 1.0).end(at=T0 + 1.1)
    claimed.claimed(at=T0 + 1.5)
    claimed.audio(at=T0 + 1.6)
    claimed.end(status="completed", at=T0 + 2.0)
    discarded = session.turn(trigger=Trigger.TOOL_OUTPUT, response_id="resp_h2", origin=T0 + 3.0, hidden="follow_up")
    discarded.llm_request(model="m", provider="scripted", at=T0 + 3.0).end(error="aborted", at=T0 + 3.2)
    discarded.discarded(reason="conversation.item.create", at=T0 + 3.2)
    discarded.end(status="completed", at=T0 + 9.0)  # ended once: the discard ended it
    session.end(at=T0 + 10.0)
    turns = {s.attributes["voxcall.response.id"]: s for s in by_name(exporter.get_finished_spans(), "voxcall.turn")
             if s.attributes}
    kept, dropped = turns["resp_h1"], turns["resp_h2"]
    assert [e.name for e in kept.events] == ["speculation.claimed", "first_audio"]
    assert kept.attributes is not None and kept.attributes["voxcall.turn.claimed"] is True
    assert kept.attributes["voxcall.turn.first_audio_ms"] == 100  # from the claim, as the timing event counts
    assert kept.attributes["voxcall.turn.hidden"] == "follow_up"
    assert [e.name for e in dropped.events] == ["speculation.discarded"]
    assert dropped.events[0].attributes == {"voxcall.speculation.reason": "conversation.item.create"}
    assert dropped.attributes is not None and dropped.attributes["voxcall.turn.status"] == "discarded"
    assert ms(dropped) == pytest.approx(200, abs=1)
    chats = [s for s in exporter.get_finished_spans() if s.name == "chat m"]
    assert [s.status.status_code for s in chats] == [StatusCode.UNSET, StatusCode.ERROR]


def test_tracing_is_off_unless_the_environment_asks_for_it() -> None:
    assert not wanted({})
    assert wanted({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"})
    assert wanted({"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://collector:4318/v1/traces"})
    assert wanted({"OTEL_TRACES_EXPORTER": "console"})
    assert not wanted({"OTEL_TRACES_EXPORTER": "none", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://x"})
    assert not wanted({"OTEL_SDK_DISABLED": "true", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://x"})
    assert not content_wanted({}) and content_wanted({tracing.CONTENT_ENV: "True"})


def test_tracing_off_records_nothing_and_loads_no_sdk() -> None:
    """In a fresh interpreter with no OTEL_* variable: the no-op tracing, every call answered, no SDK imported."""
    script = (
        "import os, sys\n"
        "for name in [n for n in os.environ if n.startswith('OTEL_')]: del os.environ[name]\n"
        "from voxcall.telemetry.tracing import configure, NO_TRACING, Trigger, ToolSide, ToolOutcome, Stage\n"
        "t = configure()\n"
        "assert t is NO_TRACING and not t.enabled\n"
        "s = t.session(session_id='s', protocol='realtime', model='m')\n"
        "turn = s.turn(trigger=Trigger.SPEECH, response_id='r')\n"
        "turn.stage(Stage.TRANSCRIPTION, start=1.0, end=2.0)\n"
        "call = turn.tool_call(call_id='c', name='n', side=ToolSide.SERVER)\n"
        "call.moved('running'); call.ended(ToolOutcome.DONE, output='x')\n"
        "llm = turn.llm_request(model='m', provider='p'); llm.first_token(); llm.usage(input_tokens=1, "
        "output_tokens=1); llm.end()\n"
        "turn.audio(); turn.claimed(); turn.discarded(reason='r'); turn.end(status='completed'); s.end()\n"
        "assert not [m for m in sys.modules if m.startswith('opentelemetry')], 'an OpenTelemetry module was loaded'\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr


def test_configure_builds_the_exporters_the_environment_names(monkeypatch: pytest.MonkeyPatch) -> None:
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.trace.export import ConsoleSpanExporter

    from voxcall.telemetry.otel import exporters_from_environment

    assert [type(e) for e in exporters_from_environment({})] == [OTLPSpanExporter]
    assert [type(e) for e in exporters_from_environment({"OTEL_TRACES_EXPORTER": "console,otlp"})] == [
        ConsoleSpanExporter, OTLPSpanExporter]
    monkeypatch.setenv("OTEL_TRACES_EXPORTER", "console")
    monkeypatch.setenv(tracing.CONTENT_ENV, "true")
    configured = tracing.configure()
    assert isinstance(configured, OtelTracing) and configured.options.record_content
    configured.shutdown()
    named = tracing.configure(TracingOptions(service_name="replica-2"))
    assert isinstance(named, OtelTracing) and not named.options.record_content  # the options given win
    named.shutdown()
