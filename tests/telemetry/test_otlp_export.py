"""Traces leave the process over OTLP/HTTP as the standard variables say: a receiver on loopback gets the protobuf
request, and decoding it gives back the spans, their parents, attributes, events and the service's name."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from tests.requirements import require_module
from voxcall.telemetry import tracing
from voxcall.telemetry.tracing import ToolOutcome, ToolSide, Trigger

require_module("opentelemetry.exporter.otlp.proto.http")

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest  # noqa: E402
from opentelemetry.proto.common.v1.common_pb2 import KeyValue  # noqa: E402


class Receiver(ThreadingHTTPServer):
    """An OTLP/HTTP trace receiver: keeps each request's path, content type and decoded body."""

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.received: list[tuple[str, str, ExportTraceServiceRequest]] = []

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


class _Handler(BaseHTTPRequestHandler):
    server: Receiver

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["Content-Length"]))
        request = ExportTraceServiceRequest()
        request.ParseFromString(body)
        self.server.received.append((self.path, self.headers["Content-Type"], request))
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    server = Receiver()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


def attributes(pairs: Any) -> dict[str, object]:
    out: dict[str, object] = {}
    for pair in pairs:
        assert isinstance(pair, KeyValue)
        value = pair.value
        out[pair.key] = getattr(value, value.WhichOneof("value"))
    return out


def test_spans_are_exported_over_otlp_http_to_the_configured_endpoint(
        receiver: Receiver, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.endpoint)
    monkeypatch.setenv("OTEL_SERVICE_NAME", "voxcall-test")
    monkeypatch.delenv("OTEL_TRACES_EXPORTER", raising=False)
    traces = tracing.configure()
    assert traces.enabled
    session = traces.session(session_id="sess_x", protocol="realtime", model="smollm2-135m")
    turn = session.turn(trigger=Trigger.SPEECH, response_id="resp_x")
    call = turn.tool_call(call_id="call_x", name="calculator", side=ToolSide.SERVER)
    call.moved("running")
    call.ended(ToolOutcome.DONE, output="96")
    turn.audio()
    turn.end(status="completed")
    session.end()
    traces.shutdown()  # flushes the batch

    assert receiver.received, "nothing reached the receiver"
    paths = {path for path, _, _ in receiver.received}
    assert paths == {"/v1/traces"} and {kind for _, kind, _ in receiver.received} == {"application/x-protobuf"}
    spans, resources = {}, []
    for _, _, request in receiver.received:
        for resource_spans in request.resource_spans:
            resources.append(attributes(resource_spans.resource.attributes))
            for scope_spans in resource_spans.scope_spans:
                assert scope_spans.scope.name == "voxcall"
                for span in scope_spans.spans:
                    spans[span.name] = span
    assert set(spans) == {"voxcall.session", "voxcall.turn", "execute_tool calculator", "voxcall.tool_to_audio"}
    assert all(resource["service.name"] == "voxcall-test" for resource in resources)
    session_span, turn_span, tool_span = (spans[n] for n in ("voxcall.session", "voxcall.turn",
                                                            "execute_tool calculator"))
    assert turn_span.parent_span_id == session_span.span_id and tool_span.parent_span_id == turn_span.span_id
    assert len({span.trace_id for span in spans.values()}) == 1
    assert attributes(tool_span.attributes)["gen_ai.tool.call.id"] == "call_x"
    assert "gen_ai.tool.call.result" not in attributes(tool_span.attributes)  # no content by default
    assert [event.name for event in tool_span.events] == ["proposed", "running", "done"]
    assert attributes(session_span.attributes)["gen_ai.conversation.id"] == "sess_x"
    assert tool_span.end_time_unix_nano >= tool_span.start_time_unix_nano > 0
