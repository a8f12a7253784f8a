"""GPT-Live over ``/v1/live/sessions`` with the official SDK as the client, text only (a scripted voice).

Start and close, the SDK's own error shapes for what voxcall refuses (unknown and immutable fields, Decisions,
commands before ``session.start``), appends and their acknowledgements, mute, a client-delegated task whose
commentary the voice says, auth and session limits as on ``/v1/realtime``.
"""

from __future__ import annotations

import asyncio
import base64
import json
from typing import Any

import pytest
import websockets
from openai import AsyncOpenAI

from tests.live.conftest import Factory, LiveServer

WEATHER_SCRIPT = {
    "rules": [{"match": "weather", "reply": "Let me ask.", "calls": [
        {"name": "delegate", "arguments": {"task": "the weather in Paris"}}]}],
    "after_tool": "Here is the answer: {output}",
    "default": "Hello from the voice.",
}
USER_ASKS = [{"type": "message", "role": "user", "content": [{"type": "input_text", "text": "What is the weather?"}]}]


async def test_start_then_close(live_server: Factory) -> None:
    server: LiveServer = await live_server()
    live = await server.connect({"model": "gpt-live-1", "instructions": "Be brief."})
    started = live.of("session.started")[0]
    assert started["client_event_id"] == "evt_start"
    session = started["session"]
    assert session["model"] == "gpt-live-1" and session["status"] == "active"
    assert session["id"].startswith("live_") and session["expires_at"] > 0
    assert session["audio"]["format"] == {"type": "audio/pcm", "rate": 24000}  # the default, shown back
    assert session["delegation"]["type"] == "client"
    await live.conn.session.close(event_id="evt_close")
    closed = await live.wait("session.closed")
    assert closed["reason"] == "close_requested" and closed["client_event_id"] == "evt_close"
    assert closed["usage"]["seconds"] >= 0 and closed["session"]["id"] == session["id"]
    await asyncio.wait_for(live.closed.wait(), 5)
    assert live.events[-1]["type"] == "session.closed"


async def test_the_first_event_must_be_session_start(live_server: Factory) -> None:
    server: LiveServer = await live_server()
    live = await server.connect(start=False)
    await live.conn.session.input_audio.mute()
    error = await live.wait("error")
    assert error["error"]["code"] == "session_not_started"
    await asyncio.wait_for(live.closed.wait(), 5)


@pytest.mark.parametrize(("session", "code", "param"), [
    ({"model": "gpt-live-1", "voice_speed": 2}, "unknown_parameter", "session.voice_speed"),
    ({"model": "gpt-live-1", "audio": {"format": {"type": "audio/pcmu", "rate": 16000}}}, "invalid_value",
     "session.audio.format.rate"),
    ({"instructions": "no model"}, "missing_required_parameter", "session.model"),
    ({"model": "gpt-live-1", "delegation": {"type": "decisions", "decisions": {"model": "x", "questions": []}}},
     "unsupported_parameter", "session.delegation.type"),
    ({"model": "gpt-live-1", "delegation": {"type": "responses", "responses": {"model": "gpt-9"}}},
     "model_not_found", "session.delegation.responses.model"),
    ({"model": "gpt-live-1", "delegation": {"type": "responses", "responses": {
        "model": "scripted", "tools": [{"type": "web_search"}]}}}, "unsupported_tool_type",
     "session.delegation.responses.tools[0].type"),
    ({"model": "gpt-live-1", "store": True}, "unsupported_parameter", "session.store"),
])
async def test_a_refused_start_names_the_parameter_and_closes(live_server: Factory, session: dict[str, Any],
                                                              code: str, param: str) -> None:
    server: LiveServer = await live_server(llm="scripted", live={"strict_models": True})  # gpt-9: model_not_found
    live = await server.connect(start=False)
    await live.conn.send({"type": "session.start", "session": session})
    error = await live.wait("error")
    assert (error["error"]["code"], error["error"]["param"]) == (code, param)
    await asyncio.wait_for(live.closed.wait(), 5)
    assert not live.of("session.started")


async def test_update_changes_delegation_only(live_server: Factory) -> None:
    server: LiveServer = await live_server()
    live = await server.connect()
    await live.conn.session.update(session={"instructions": "other"}, event_id="evt_1")  # type: ignore[typeddict-unknown-key]
    error = await live.wait("error")
    assert error["error"]["code"] == "immutable_parameter" and error["error"]["param"] == "session.instructions"
    assert error["client_event_id"] == "evt_1" and error["error"]["client_event_id"] == "evt_1"
    await live.conn.session.update(session={"delegation": {"type": "responses", "responses": {"model": "x"}}})
    error = await live.wait("error", after=live.events.index(error) + 1)
    assert error["error"]["param"] == "session.delegation.type"
    await live.conn.session.update(session={"delegation": {"type": "client", "acknowledgement_delay_ms": 250}},
                                   event_id="evt_2")
    updated = await live.wait("session.updated")
    assert updated["client_event_id"] == "evt_2"
    assert updated["session"]["delegation"] == {"type": "client", "acknowledgement_delay_ms": 250}


async def test_commands_voxcall_does_not_run_are_errors_and_the_session_goes_on(live_server: Factory) -> None:
    server: LiveServer = await live_server()
    live = await server.connect()
    await live.conn.decision.create(event_id="evt_decide")
    await live.conn.response.create(event_id="evt_response")
    await live.conn.send({"type": "session.output_audio.fixture.play"})  # no audio
    await live.conn.send({"type": "no.such.event"})
    await live.wait("error", lambda ev: len(live.of("error")) == 4)
    errors = live.of("error")
    codes = [ev["error"]["code"] for ev in errors]
    assert codes == ["unsupported_event", "invalid_request", "missing_required_parameter", "unknown_event_type"]
    assert errors[1]["error"]["message"] == "response.create requires Responses delegation."
    await live.conn.session.input_audio.mute(event_id="evt_mute")
    assert (await live.wait("session.input_audio.muted"))["client_event_id"] == "evt_mute"
    await live.conn.session.input_audio.unmute()
    await live.wait("session.input_audio.unmuted")


async def test_commentary_is_acknowledged_on_the_timeline_and_said(live_server: Factory) -> None:
    server: LiveServer = await live_server(WEATHER_SCRIPT)
    live = await server.connect()
    await live.conn.session.instructions.append(content="Speak slowly.", delegation_id=None, event_id="evt_i")
    await live.conn.session.thinking.append(content="The user is in a hurry.", delegation_id=None)
    await live.conn.session.commentary.append(content="Welcome the user.", delegation_id=None, event_id="evt_c")
    for kind in ("instructions", "thinking", "commentary"):
        appended = await live.wait(f"session.{kind}.appended")
        assert 0 <= appended["start_ms"] <= appended["end_ms"]
    assert live.of("session.commentary.appended")[0]["client_event_id"] == "evt_c"
    await live.wait("session.output_transcript.delta")
    await asyncio.sleep(0.5)
    assert live.said() == "Hello from the voice."  # silent context is not read out; the commentary got an answer
    deltas = live.of("session.output_transcript.delta")
    assert all(ev["start_ms"] <= ev["end_ms"] for ev in deltas)


async def test_a_client_delegation_is_announced_acknowledged_and_its_commentary_said(live_server: Factory) -> None:
    server: LiveServer = await live_server(WEATHER_SCRIPT)
    live = await server.connect({"model": "gpt-live-1", "input": USER_ASKS})
    await live.conn.session.commentary.append(content="Answer the user.", delegation_id=None)
    created = await live.wait("session.delegation.created")
    delegation = created["delegation"]
    assert delegation["target"] == "client" and delegation["type"] == "delegation" and created["offset_ms"] >= 0
    assert delegation["voxcall_task"] == "the weather in Paris"  # what the voice asked for, in its words
    await live.wait("session.output_transcript.delta", lambda ev: "moment" in live.said().lower()
                    or "second" in live.said().lower() or "look" in live.said().lower())
    await live.conn.session.thinking.append(content="Looking it up.", delegation_id=delegation["id"])
    await live.wait("session.thinking.appended")
    await live.conn.session.commentary.append(content="Sunny and 21 degrees.", delegation_id=delegation["id"])
    await live.wait("session.output_transcript.delta", lambda ev: "21 degrees" in live.said())
    assert "Sunny and 21 degrees" in live.said()
    await live.conn.session.commentary.append(content="late", delegation_id=delegation["id"], event_id="evt_late")
    error = await live.wait("error")
    assert error["error"]["code"] == "unknown_delegation" and error["client_event_id"] == "evt_late"


async def test_auth_and_session_limits_hold_as_on_realtime(live_server: Factory) -> None:
    server: LiveServer = await live_server(api_keys=["right"], max_sessions=1)
    with pytest.raises(websockets.exceptions.InvalidStatus):
        await server.connect(api_key="wrong")
    live = await server.connect(api_key="right")
    with pytest.raises(websockets.exceptions.InvalidStatus) as refused:
        client = AsyncOpenAI(base_url=server.server.base_url, api_key="right")
        async with client.live.connect():
            pass
    assert refused.value.response.status_code == 503
    await live.conn.session.close()
    await live.wait("session.closed")


DEMO_MCP = str(__import__("pathlib").Path(__file__).resolve().parents[1] / "tools" / "mcp" / "demo_server.py")
ORDER_SCRIPT = {
    "rules": [
        {"match": "back office", "reply": "Checking.", "calls": [
            {"name": "lookup_order", "arguments": {"order_id": 42}},
            {"name": "calculator", "arguments": {"op": "mul", "a": 6, "b": 7}},
            {"name": "demo__echo", "arguments": {"text": "hi"}}]},
        {"match": "order", "calls": [{"name": "delegate", "arguments": {"task": "back office: find order 42"}}]},
    ],
    "after_tool": "{name} says {output}.",
}
LOOKUP_ORDER = {"type": "function", "name": "lookup_order", "description": "Where an order is.",
                "parameters": {"type": "object", "properties": {"order_id": {"type": "integer"}},
                               "required": ["order_id"]}}


async def test_a_responses_delegation_runs_server_mcp_and_client_tools(live_server: Factory) -> None:
    import sys

    server: LiveServer = await live_server(ORDER_SCRIPT, llm="scripted", session={"prefetch": False},
                                           tools={"builtin": ["calculator"]},
                                           mcp={"servers": {"demo": {"command": sys.executable, "args": [DEMO_MCP]}}})
    live = await server.connect({"model": "gpt-live-1", "input": [
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Where is my order?"}]}],
        "delegation": {"type": "responses", "responses": {"model": "scripted", "tools": [LOOKUP_ORDER]}}})
    await live.conn.session.commentary.append(content="Answer the user.", delegation_id=None)
    created = await live.wait("session.delegation.created")
    delegation = created["delegation"]
    assert delegation["target"] == "responses" and delegation["response_id"]
    assert delegation["voxcall_task"] == "back office: find order 42"
    call = await live.wait("response.event", lambda ev: ev["event"]["type"] == "response.output_item.done"
                           and ev["event"]["item"]["type"] == "function_call")
    item = call["event"]["item"]
    assert item["name"] == "lookup_order" and call["delegation_id"] == delegation["id"]
    await live.wait("response.event", lambda ev: ev["event"]["type"] == "response.completed")
    await live.conn.response.item.create(item={"type": "function_call_output", "call_id": item["call_id"],
                                               "output": "shipped"}, event_id="evt_output")
    await live.conn.response.create(event_id="evt_continue")
    await live.wait("session.output_transcript.delta", lambda ev: "shipped" in live.said() and "hi" in live.said())
    nested = [ev["event"]["type"] for ev in live.of("response.event")]
    assert nested[0] == "response.created" and nested.count("response.completed") == 2
    assert all(ev["delegation_id"] == delegation["id"] for ev in live.of("response.event"))
    server_items = [ev["event"]["item"] for ev in live.of("response.event")
                    if ev["event"]["type"] == "response.output_item.done" and ev["event"]["item"]["type"] == "mcp_call"]
    assert {(i["name"], i["output"]) for i in server_items} >= {("calculator", "42"), ("echo", "hi")}
    said = live.said()
    assert "echo says hi" in said and "lookup_order says shipped" in said  # the backend's answer, said by the voice
    await live.conn.session.commentary.append(content="x", delegation_id=delegation["id"], event_id="evt_bad")
    error = await live.wait("error")
    assert error["error"]["param"] == "delegation_id"


async def test_a_bad_frame_is_an_error_and_the_session_goes_on(live_server: Factory) -> None:
    server: LiveServer = await live_server(session={"max_frame_bytes": 4096})
    live = await server.connect()
    await live.conn.send({"type": "session.input_audio.append", "audio": "A" * 8000, "event_id": "evt_big"})
    error = await live.wait("error")
    assert error["error"]["code"] == "frame_too_large"
    await live.conn.session.input_audio.append(audio="AAAA", event_id="evt_no_ears")  # this server has no speech
    refused = await live.wait("error", lambda ev: ev.get("client_event_id") == "evt_no_ears")
    assert "without speech models" in refused["error"]["message"]
    await live.conn.session.input_audio.mute()
    await live.wait("session.input_audio.muted")


async def test_an_idle_session_closes_as_expired(live_server: Factory) -> None:
    server: LiveServer = await live_server(session={"idle_timeout": 0.5})
    live = await server.connect()
    closed = await live.wait("session.closed", timeout=10)
    assert closed["reason"] == "expired"
    await asyncio.wait_for(live.closed.wait(), 5)


async def test_a_draining_server_closes_live_sessions_as_realtime_ones(live_server: Factory) -> None:
    server: LiveServer = await live_server()
    live = await server.connect()
    await server.server.admission.drain(1.0)
    await asyncio.wait_for(live.closed.wait(), 5)
    closed = live.ended_with
    assert isinstance(closed, websockets.exceptions.ConnectionClosed) and closed.rcvd is not None
    assert closed.rcvd.code == 1001


async def test_usage_is_reported_while_the_session_runs(live_server: Factory) -> None:
    server: LiveServer = await live_server(live={"usage_interval_seconds": 0.3})
    live = await server.connect()
    first = await live.wait("session.usage.updated", timeout=5)
    later = await live.wait("session.usage.updated", after=live.events.index(first) + 1, timeout=5)
    assert 0 <= first["usage"]["seconds"] <= later["usage"]["seconds"]


async def test_a_responses_delegation_may_name_another_backend(live_server: Factory) -> None:
    from voxcall.llm import ScriptedBackend

    office = ScriptedBackend({"default": "The back office says: order 42 ships tomorrow."})
    server: LiveServer = await live_server(ORDER_SCRIPT, delegates={"office": office})
    live = await server.connect({"model": "gpt-live-1", "input": [
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Where is my order?"}]}],
        "delegation": {"type": "responses", "responses": {"model": "office"}}})
    await live.conn.session.commentary.append(content="Answer the user.", delegation_id=None)
    await live.wait("session.output_transcript.delta", lambda ev: "ships tomorrow" in live.said())
    assert "delegate says The back office says: order 42 ships tomorrow." in live.said()


async def test_text_the_user_types_arrives_as_commentary_and_is_answered(live_server: Factory) -> None:
    """LiveKit sends what a user types mid-session as a ``session.commentary.append`` with no delegation: the voice
    is asked to answer it (not merely to repeat it) and answers at once."""
    from tests.harness import ControlledBackend, Turn

    backend = ControlledBackend(Turn("It is 96."))
    server: LiveServer = await live_server(backend)
    live = await server.connect()
    await live.conn.session.commentary.append(content="What is 12 times 8?", delegation_id=None)
    await live.wait("session.output_transcript.delta", lambda ev: "96" in live.said())
    asked = backend.requests[-1].items[-1]
    assert "What is 12 times 8?" in asked.text and "answer it" in asked.text  # type: ignore[union-attr]


async def test_after_session_closed_the_socket_closes_1000_while_the_voice_speaks_and_audio_streams(
        live_server: Factory) -> None:
    """As LiveKit uses it: the client streams audio throughout and closes while the voice is speaking."""
    from tests.core.hearing.test_heard_audio import fake_voice

    server: LiveServer = await live_server({"default": " ".join(["word"] * 300) + "."}, voice=fake_voice())
    url = f"ws://127.0.0.1:{server.server.port}/v1/live/sessions"
    async with websockets.connect(url, additional_headers={"Authorization": "Bearer k"}) as ws:
        await ws.send(json.dumps({"type": "session.start", "session": {"model": "gpt-live-1"}}))

        async def microphone() -> None:
            chunk = base64.b64encode(bytes(960)).decode()
            while True:
                await ws.send(json.dumps({"type": "session.input_audio.append", "audio": chunk}))
                await asyncio.sleep(0.02)

        streaming = asyncio.create_task(microphone())
        await ws.send(json.dumps({"type": "session.commentary.append", "content": "Talk.", "delegation_id": None}))
        kinds: list[str] = []
        while "session.output_audio.delta" not in kinds:
            kinds.append(json.loads(await asyncio.wait_for(ws.recv(), 10))["type"])
        await ws.send(json.dumps({"type": "session.close", "event_id": "evt_close"}))
        with pytest.raises(websockets.exceptions.ConnectionClosedOK):
            while True:
                kinds.append(json.loads(await asyncio.wait_for(ws.recv(), 10))["type"])
        streaming.cancel()
    assert kinds[-1] == "session.closed"
    assert ws.close_code == 1000
