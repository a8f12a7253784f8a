"""The Responses backend of a GPT-Live session (:mod:`voxcall.live.backend`): which model answers a delegation, and
the protocol's text flow (a user message and ``response.create`` with no delegated task running)."""

from __future__ import annotations

from tests.live.conftest import Factory, LiveServer

SCRIPT = {
    "rules": [
        {"match": "where is my order", "calls": [{"name": "delegate", "arguments": {"task": "look up order 42"}}]},
        {"match": "look up", "reply": "Order 42 ships tomorrow."},
    ],
    "after_tool": "{output}",
    "default": "Hello.",
}
ASKS = [{"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Where is my order?"}]}]


def office(model: str) -> dict[str, object]:
    return {"type": "responses", "responses": {"model": model}}


async def test_a_delegation_naming_a_model_the_server_does_not_know_is_served_by_its_own_backend(
        live_server: Factory) -> None:
    """LiveKit's default backend model, unknown here: the session starts (as the Realtime endpoint takes any model
    name), the server's own backend answers, and its responses say which model that is."""
    server: LiveServer = await live_server(SCRIPT)
    live = await server.connect({"model": "gpt-live-1", "input": ASKS, "delegation": office("gpt-5.5")})
    assert live.of("session.started")[0]["session"]["delegation"]["responses"]["model"] == "gpt-5.5"
    await live.conn.session.commentary.append(content="Answer the user.", delegation_id=None)
    created = await live.wait("response.event", lambda ev: ev["event"]["type"] == "response.created")
    assert created["event"]["response"]["model"] == "scripted"  # the model that answered
    await live.wait("session.output_transcript.delta", lambda ev: "ships tomorrow" in live.said())
    assert not live.of("error")


async def test_under_strict_models_an_unknown_model_is_refused(live_server: Factory) -> None:
    server: LiveServer = await live_server(SCRIPT, live={"strict_models": True})
    live = await server.connect(start=False)
    await live.conn.send({"type": "session.start", "session": {"model": "gpt-live-1", "delegation": office("gpt-5.5")}})
    error = await live.wait("error")
    assert error["error"]["code"] == "model_not_found"


async def test_a_user_message_and_response_create_feed_the_backend_when_no_task_runs(live_server: Factory) -> None:
    """The protocol's text flow under Responses delegation: ``response.item.create`` (a user message) then
    ``response.create`` start a task of the client's own; it is announced, streamed, and its answer said."""
    server: LiveServer = await live_server(SCRIPT)
    live = await server.connect({"model": "gpt-live-1", "delegation": office("scripted")})
    await live.conn.response.item.create(item={"type": "message", "role": "user", "content": [
        {"type": "input_text", "text": "Please look up order 42."}]}, event_id="evt_item")
    await live.conn.response.create(event_id="evt_go")
    created = await live.wait("session.delegation.created")
    assert created["delegation"]["target"] == "responses"
    await live.wait("response.event", lambda ev: ev["event"]["type"] == "response.completed")
    await live.wait("session.output_transcript.delta", lambda ev: "ships tomorrow" in live.said())
    assert not live.of("error")
    await live.conn.response.create(event_id="evt_again")  # no message given: nothing to start, nothing to continue
    error = await live.wait("error")
    assert error["error"]["code"] == "no_active_delegation" and error["client_event_id"] == "evt_again"
