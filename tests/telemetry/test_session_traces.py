"""Traces of real sessions: a voxcall server on the scripted backend, driven by the official SDK over the Realtime
protocol, its spans caught by the SDK's in-memory exporter. A text turn with the calculator (a server tool), a
client tool's call and its answer, a speculative follow-up claimed and one discarded; the span tree, the attributes
each span holds, one event per ledger move, and content only with ``record_content``; and the ``telemetry:``
section's switch."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import pytest

from tests.requirements import require_module
from tests.servers import WEATHER_TOOL, Server
from voxcall.app import tracing_for
from voxcall.config import ServerSettings, TelemetrySettings, default_of
from voxcall.llm import ScriptedBackend
from voxcall.telemetry.tracing import TracingOptions

require_module("opentelemetry.sdk")

from opentelemetry.sdk.trace import ReadableSpan  # noqa: E402
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter  # noqa: E402

from voxcall.telemetry.otel import OtelTracing  # noqa: E402

SCRIPT = {"rules": [
    {"match": "/what is (?P<a>\\d+) times (?P<b>\\d+)/", "reply": "Let me work that out.",
     "calls": [{"name": "calculator", "arguments": {"op": "mul", "a": "{a}", "b": "{b}"}}]},
    {"match": "weather", "reply": "Let me check.", "calls": [{"name": "get_weather", "arguments": {"city": "Paris"}}]},
], "after_tool": "{name} says {output}.", "default": "Fine."}


async def served(exporter: InMemorySpanExporter, *, record_content: bool, prefetch: bool) -> AsyncIterator[Server]:
    tracing = OtelTracing(TracingOptions(record_content=record_content), [exporter], batch=False)
    settings = ServerSettings(session={"prefetch": prefetch}, tools={"builtin": ["calculator"],
                                                                     "acknowledge_after_ms": 0})
    async with Server(settings, ScriptedBackend(SCRIPT), tracing=tracing) as server:
        yield server
    tracing.shutdown()


@pytest.fixture
def exporter() -> InMemorySpanExporter:
    return InMemorySpanExporter()


async def text_with_weather(conn: Any) -> None:
    """Text answers, and the client's ``get_weather`` offered."""
    await conn.session.update(session={"type": "realtime", "output_modalities": ["text"], "tools": [WEATHER_TOOL]})


async def until_done(conn: Any) -> Any:
    """Events up to the next ``response.done``; that event."""
    async for ev in conn:
        assert ev.type != "error", ev.error.message
        if ev.type == "response.done":
            return ev
    raise AssertionError("connection closed")


async def ask(conn: Any, text: str) -> Any:
    await conn.conversation.item.create(item={"type": "message", "role": "user",
                                              "content": [{"type": "input_text", "text": text}]})
    await conn.response.create()
    return await until_done(conn)


async def answer(conn: Any, done: Any, output: str) -> None:
    """Send the output of the client tool call ``done`` ended with."""
    call = done.response.output[-1]
    assert call.type == "function_call"
    await conn.conversation.item.create(item={"type": "function_call_output", "call_id": call.call_id,
                                              "output": output})


async def session_spans(exporter: InMemorySpanExporter) -> tuple[ReadableSpan, ...]:
    """Every span, once the session's own has ended (the server closes it after the client left)."""
    for _ in range(500):
        spans = exporter.get_finished_spans()
        if any(span.name == "voxcall.session" for span in spans):
            return spans
        await asyncio.sleep(0.01)
    raise AssertionError("the session's span never ended")


def named(spans: tuple[ReadableSpan, ...], name: str) -> list[ReadableSpan]:
    return sorted((span for span in spans if span.name == name), key=lambda span: span.start_time or 0)


def children(spans: tuple[ReadableSpan, ...], parent: ReadableSpan) -> list[ReadableSpan]:
    assert parent.context is not None
    return sorted((span for span in spans if span.parent is not None
                   and span.parent.span_id == parent.context.span_id), key=lambda span: span.start_time or 0)


def events(span: ReadableSpan) -> list[str]:
    return [event.name for event in span.events]


async def test_a_server_tool_and_a_client_tool_turn(exporter: InMemorySpanExporter) -> None:
    async for server in served(exporter, record_content=False, prefetch=False):
        async with server.client().realtime.connect(model="m") as conn:
            await text_with_weather(conn)
            calculated = await ask(conn, "what is 12 times 8")
            asked = await ask(conn, "and the weather?")
            await answer(conn, asked, "sunny")
            await conn.response.create()
            reported = await until_done(conn)
        spans = await session_spans(exporter)

    session, = named(spans, "voxcall.session")
    assert session.attributes is not None and session.attributes["voxcall.protocol"] == "realtime"
    assert str(session.attributes["gen_ai.conversation.id"]).startswith("sess_")
    assert session.attributes["gen_ai.request.model"] == "m"
    turns = children(spans, session)
    assert [turn.name for turn in turns] == ["voxcall.turn"] * 3
    assert [dict(turn.attributes or {})["voxcall.response.id"] for turn in turns] == [
        calculated.response.id, asked.response.id, reported.response.id]
    assert {dict(turn.attributes or {})["voxcall.turn.trigger"] for turn in turns} == {"request"}
    assert {dict(turn.attributes or {})["voxcall.turn.status"] for turn in turns} == {"completed"}

    # the calculator: a model request, the tool, a model request that reports its result
    first = children(spans, turns[0])
    assert [span.name for span in first] == ["chat scripted", "execute_tool calculator", "chat scripted"]
    chat, tool, report = first
    assert dict(chat.attributes or {}).items() >= {"gen_ai.operation.name": "chat", "gen_ai.provider.name": "scripted",
                                                   "gen_ai.request.model": "scripted"}.items()
    assert chat.attributes is not None and int(chat.attributes["gen_ai.usage.input_tokens"]) > 0
    assert "gen_ai.usage.cache_read.input_tokens" in chat.attributes
    assert "gen_ai.response.time_to_first_chunk" in chat.attributes and events(chat) == ["first_token"]
    assert tool.attributes is not None
    assert dict(tool.attributes).items() >= {"gen_ai.tool.name": "calculator", "gen_ai.tool.type": "function",
                                             "voxcall.tool.side": "server", "voxcall.tool.outcome": "done",
                                             "voxcall.tool.deadline_s": default_of("tools.timeout")}.items()
    assert "voxcall.tool.mcp_server" not in tool.attributes  # a built-in
    assert tool.attributes["gen_ai.tool.call.id"]
    assert events(tool) == ["proposed", "running", "done"]
    assert tool.end_time is not None and report.start_time is not None and tool.end_time <= report.start_time
    assert [item.output for item in calculated.response.output if item.type == "mcp_call"] == ["96"]

    # the client's tool: proposed with its response, running once sent, done when the client answered
    second = children(spans, turns[1])
    assert [span.name for span in second] == ["chat scripted", "execute_tool get_weather"]
    weather = second[1]
    assert weather.attributes is not None
    assert weather.attributes["voxcall.tool.side"] == "client"
    assert weather.attributes["voxcall.tool.deadline_s"] == default_of("tools.client_tool_wait")
    assert weather.attributes["gen_ai.tool.call.id"] == asked.response.output[-1].call_id
    assert events(weather) == ["proposed", "running", "done"]
    assert [span.name for span in children(spans, turns[2])] == ["chat scripted"]

    # content is not recorded unless asked for
    recorded = [key for span in spans for key in (span.attributes or {})
                if key in ("gen_ai.tool.call.arguments", "gen_ai.tool.call.result", "voxcall.turn.heard",
                           "voxcall.turn.said")]
    assert recorded == []


async def test_speculative_follow_ups_claimed_and_discarded_with_content(exporter: InMemorySpanExporter) -> None:
    async for server in served(exporter, record_content=True, prefetch=True):
        async with server.client().realtime.connect(model="m") as conn:
            await text_with_weather(conn)
            asked = await ask(conn, "the weather please")
            await answer(conn, asked, "sunny")  # a hidden follow-up starts: this response.create claims it
            await conn.response.create()
            claimed = await until_done(conn)
            again = await ask(conn, "the weather again")
            await answer(conn, again, "rainy")  # a hidden follow-up starts; the next message discards it (and
            # another starts, with the message in its context)
            fresh = await ask(conn, "thanks")
        spans = await session_spans(exporter)

    session, = named(spans, "voxcall.session")
    turns = {dict(turn.attributes or {})["voxcall.response.id"]: turn for turn in children(spans, session)}
    follow_up = turns[claimed.response.id]
    attributes = dict(follow_up.attributes or {})
    assert attributes["voxcall.turn.hidden"] == "follow_up" and attributes["voxcall.turn.claimed"] is True
    assert attributes["voxcall.turn.trigger"] == "tool_output" and attributes["voxcall.turn.status"] == "completed"
    assert "speculation.claimed" in events(follow_up)
    assert attributes["voxcall.turn.said"] == "get_weather says sunny."

    visible = {asked.response.id, claimed.response.id, again.response.id, fresh.response.id}
    discarded = [turn for response_id, turn in turns.items() if response_id not in visible]
    assert len(discarded) == 1
    gone = discarded[0]
    assert dict(gone.attributes or {})["voxcall.turn.status"] == "discarded"
    assert dict(gone.attributes or {})["voxcall.turn.hidden"] == "follow_up"
    event, = [event for event in gone.events if event.name == "speculation.discarded"]
    assert dict(event.attributes or {})["voxcall.speculation.reason"] == "conversation.item.create"
    # the message that discarded it is answered by a follow-up started afresh, which response.create claimed
    assert "speculation.claimed" in events(turns[fresh.response.id])
    assert dict(turns[fresh.response.id].attributes or {})["voxcall.turn.said"] == "Fine."

    weather = children(spans, turns[asked.response.id])[-1]
    assert weather.name == "execute_tool get_weather" and weather.attributes is not None
    assert json.loads(str(weather.attributes["gen_ai.tool.call.arguments"])) == {"city": "Paris"}
    assert weather.attributes["gen_ai.tool.call.result"] == "sunny"


def test_the_telemetry_section_switches_tracing(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_TRACES_EXPORTER",
                 "OTEL_SDK_DISABLED", "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"):
        monkeypatch.delenv(name, raising=False)
    assert not tracing_for(TelemetrySettings()).enabled  # auto, and no variable asks
    on = tracing_for(TelemetrySettings(tracing="on", record_content=True))
    assert isinstance(on, OtelTracing) and on.options.record_content
    on.shutdown()
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318")
    auto = tracing_for(TelemetrySettings())
    assert isinstance(auto, OtelTracing) and not auto.options.record_content
    auto.shutdown()
    assert not tracing_for(TelemetrySettings(tracing="off")).enabled
