"""What tracing costs a session, and what a trace looks like.

One core session (no network: the figures are the server's own work) on the scripted backend with no delays runs a
conversation of three responses, again and again: "what is 12 times 8" answered with the calculator (a server tool,
two model requests), "the weather" answered with a call of the client's ``get_weather``, and, after its output, a
speculative follow-up claimed by ``response.create``. The same conversations run with tracing off (the no-op
:data:`~voxcall.telemetry.tracing.NO_TRACING`, what a server without ``OTEL_*`` variables gets), on with the SDK's
batch processor and an exporter that drops the spans (a server sending to a collector, less the network, which the
batch processor's own thread carries), and on with content recorded. Printed: CPU time and wall time per
conversation (best of ``--repeat``), side by side, and the spans each conversation made.

``--tree`` prints the span tree of one conversation instead (the README's example), from the SDK's in-memory
exporter.

    python benchmarks/bench_tracing.py [--conversations 200] [--repeat 5] [--tree]
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import time
from collections.abc import Sequence
from typing import Any

from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from voxcall.config import ServerSettings, SessionOptions
from voxcall.core.commands import AddItem, Respond, UpdateSettings
from voxcall.core.conversation.items import CallOutputItem, MessageItem
from voxcall.core.events import ArgumentsDone, Event
from voxcall.core.ids import new_id
from voxcall.core.parts import SessionParts
from voxcall.core.session import Session
from voxcall.core.tools.toolbox import Toolbox
from voxcall.llm import ScriptedBackend
from voxcall.telemetry.otel import OtelTracing
from voxcall.telemetry.tracing import NO_TRACING, Tracing, TracingOptions
from voxcall.tools import Tool

SCRIPT = {"rules": [
    {"match": "/what is (?P<a>\\d+) times (?P<b>\\d+)/", "reply": "Let me work that out.",
     "calls": [{"name": "calculator", "arguments": {"op": "mul", "a": "{a}", "b": "{b}"}}]},
    {"match": "weather", "reply": "Let me check.", "calls": [{"name": "get_weather", "arguments": {"city": "Paris"}}]},
], "after_tool": "{name} says {output}.", "default": "Fine."}
WEATHER = Tool.from_openai({"type": "function", "name": "get_weather", "description": "The weather in a city.",
                            "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
                                           "required": ["city"]}})


class Dropped(SpanExporter):
    """An exporter that sends nowhere: the cost of making and batching spans, without the network."""

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        return SpanExportResult.SUCCESS


async def conversation(tracing: Tracing, toolbox: Toolbox) -> None:
    """One session: the calculator's turn, the client tool's, and the claimed follow-up."""
    parts = SessionParts(ScriptedBackend(SCRIPT), SessionOptions(prefetch=True), toolbox=toolbox,
                         trace=lambda session_id: tracing.session(session_id=session_id, protocol="realtime",
                                                                  model="scripted"))
    calls: list[str] = []

    async def emit(ev: Event) -> None:
        if isinstance(ev, ArgumentsDone) and not ev.server:
            calls.append(ev.call_id)

    session = Session(parts, emit)
    await session.apply(UpdateSettings(dataclasses.replace(session.settings, tools=(WEATHER,))))
    for text in ("what is 12 times 8", "and the weather?"):
        await session.apply(AddItem(MessageItem(new_id("item"), "user", [{"type": "input_text", "text": text}])))
        await session.apply(Respond())
        await session.responses.settled()
    await session.apply(AddItem(CallOutputItem(new_id("item"), calls[-1], "sunny")))
    await session.apply(Respond())
    await session.responses.settled()
    await session.close()


async def measure(tracing: Tracing, toolbox: Toolbox, conversations: int, repeat: int) -> tuple[float, float]:
    """Best CPU and wall seconds per conversation over ``repeat`` runs of ``conversations``."""
    cpu, wall = [], []
    for _ in range(repeat):
        started_cpu, started = time.process_time(), time.perf_counter()
        for _ in range(conversations):
            await conversation(tracing, toolbox)
        cpu.append((time.process_time() - started_cpu) / conversations)
        wall.append((time.perf_counter() - started) / conversations)
    return min(cpu), min(wall)


def tree(spans: Sequence[ReadableSpan]) -> list[str]:
    """The spans as an indented tree: name, duration, attributes, events."""
    by_parent: dict[int | None, list[ReadableSpan]] = {}
    for span in spans:
        by_parent.setdefault(span.parent.span_id if span.parent is not None else None, []).append(span)
    lines: list[str] = []

    def walk(parent: int | None, depth: int) -> None:
        for span in sorted(by_parent.get(parent, []), key=lambda s: s.start_time or 0):
            assert span.start_time is not None and span.end_time is not None and span.context is not None
            attributes = " ".join(f"{key}={_short(value)}" for key, value in (span.attributes or {}).items())
            lines.append(f"{'  ' * depth}{span.name}  [{(span.end_time - span.start_time) / 1e6:.1f} ms]  "
                         f"{attributes}")
            if span.events:
                lines.append(f"{'  ' * depth}  events: {', '.join(event.name for event in span.events)}")
            walk(span.context.span_id, depth + 1)

    walk(None, 0)
    return lines


def _short(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    text = str(value)
    return repr(text) if " " in text else text


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--conversations", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--tree", action="store_true", help="print one conversation's span tree and stop")
    args = parser.parse_args()
    toolbox = await Toolbox.from_settings(ServerSettings(tools={"builtin": ["calculator"]}))
    if args.tree:
        exporter = InMemorySpanExporter()
        traced = OtelTracing(TracingOptions(record_content=True), [exporter], batch=False)
        await conversation(traced, toolbox)
        print("\n".join(tree(exporter.get_finished_spans())))
        return
    counted = InMemorySpanExporter()
    counting = OtelTracing(TracingOptions(), [counted], batch=False)
    await conversation(counting, toolbox)
    spans = len(counted.get_finished_spans())
    modes = {"off": NO_TRACING,
             "on (batch, dropped)": OtelTracing(TracingOptions(), [Dropped()]),
             "on, record_content": OtelTracing(TracingOptions(record_content=True), [Dropped()])}
    await measure(NO_TRACING, toolbox, max(1, args.conversations // 10), 1)  # warm up
    print(f"{args.conversations} conversations of 3 responses ({spans} spans each when traced), best of "
          f"{args.repeat}")
    print(f"{'tracing':<22}{'CPU ms/conv':>12}{'wall ms/conv':>14}{'CPU µs/span':>13}")
    base = None
    for name, tracing in modes.items():
        cpu, wall = await measure(tracing, toolbox, args.conversations, args.repeat)
        extra = "" if base is None else f"{(cpu - base) / spans * 1e6:>13.1f}"
        base = cpu if base is None else base
        print(f"{name:<22}{cpu * 1000:>12.2f}{wall * 1000:>14.2f}{extra}")
        tracing.shutdown()


if __name__ == "__main__":
    asyncio.run(main())
