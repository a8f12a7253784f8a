"""The session protocol: settings, items, responses, cancellation, failures and bad input (events validated)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from tests.harness import WEATHER, ControlledBackend, Harness, Turn
from voxcall.config import DEFAULT_INSTRUCTIONS
from voxcall.llm import LLMRequest, ScriptedBackend

RESPONSE_EVENTS = [
    "response.created",
    "response.output_item.added", "conversation.item.added", "response.content_part.added",
    "response.output_text.delta", "response.output_text.delta",
    "response.output_text.done", "response.content_part.done", "response.output_item.done", "conversation.item.done",
    "response.output_item.added", "conversation.item.added", "response.function_call_arguments.delta",
    "voxcall.tool_call.proposed",  # the tool ledger has the call from the moment its arguments are complete
    "response.function_call_arguments.done", "response.output_item.done", "conversation.item.done",
    "voxcall.tool_call.started",  # the client's to run now: the ledger waits for its output
    "response.done", "voxcall.response.timing",
]


async def test_session_created_then_updated_with_every_setting() -> None:
    async with Harness(ControlledBackend(), instructions="Default.") as h:
        await h.settle()
        created = h.of("session.created")[0]
        assert h.events[0] is created
        assert created["session"]["instructions"] == "Default."
        await h.send(type="session.update", event_id="evt_1", session={
            "type": "realtime", "instructions": "Be brief.", "tools": [WEATHER],
            "tool_choice": {"type": "function", "name": "get_weather"}, "output_modalities": ["text"],
            "max_output_tokens": 50, "temperature": 0.3})
        session = h.of("session.updated")[0]["session"]
        assert session["tools"][0]["name"] == "get_weather"
        assert session["tool_choice"] == {"type": "function", "name": "get_weather"}
        assert session["max_output_tokens"] == 50
        settings = h.session.settings
        assert (settings.instructions, settings.temperature, settings.max_output_tokens) == ("Be brief.", 0.3, 50)


async def test_default_instructions_reach_the_backend_with_the_tool_rules() -> None:
    backend = ControlledBackend(Turn("a"))
    async with Harness(backend) as h:
        await h.send(type="session.update", session={"type": "realtime", "tools": [WEATHER]})
        await h.say("weather in Oslo?")
        await h.send(type="response.create")
        await h.wait("response.done")
    [request] = backend.requests
    assert request.instructions == DEFAULT_INSTRUCTIONS
    assert request.heard_at is None  # asked for, not spoken: no speech ended before it
    for rule in ("use it rather than guessing", "say a short sentence", "If a tool fails, say so plainly",
                 "do not repeat the call", "short"):
        assert rule in request.instructions


async def test_settings_reach_the_backend_and_response_overrides_win() -> None:
    backend = ControlledBackend(Turn("a"), Turn("b"))
    async with Harness(backend) as h:
        await h.send(type="session.update", session={"type": "realtime", "instructions": "Session.",
                                                     "tools": [WEATHER], "max_output_tokens": 100})
        await h.say("hi")
        await h.send(type="response.create")
        await h.wait("response.done")
        await h.send(type="response.create", response={"instructions": "Override.", "tools": [], "tool_choice": "none",
                                                       "max_output_tokens": 7, "metadata": {"k": "v"}})
        done = await h.wait("response.done", 2)
        first, second = backend.requests
        assert (first.instructions, [t.name for t in first.tools], first.max_output_tokens) == (
            "Session.", ["get_weather"], 100)
        assert (second.instructions, second.tools, second.tool_choice, second.max_output_tokens) == (
            "Override.", [], "none", 7)
        assert done["response"]["metadata"] == {"k": "v"}
        assert done["response"]["max_output_tokens"] == 7
        assert h.session.settings.instructions == "Session."  # overrides are per response


async def test_response_event_order_and_done_payload() -> None:
    backend = ControlledBackend(Turn("Let me.", [("get_weather", {"city": "Paris"})], usage=(12, 3)))
    async with Harness(backend) as h:
        await h.send(type="session.update", session={"type": "realtime", "tools": [WEATHER]})
        await h.say("weather?")
        start = len(h.events)
        await h.send(type="response.create")
        done = await h.wait("response.done")
        assert [e["type"] for e in h.events[start:]] == ["rate_limits.updated", *RESPONSE_EVENTS]
        response = done["response"]
        assert response["status"] == "completed" and response["status_details"] is None
        assert [o["type"] for o in response["output"]] == ["message", "function_call"]
        assert response["output"][0]["content"] == [{"type": "output_text", "text": "Let me. "}]
        assert response["output"][1]["arguments"] == '{"city":"Paris"}'
        assert response["usage"]["input_tokens"] == 12 and response["usage"]["output_tokens"] == 3
        assert response["conversation_id"] == h.session.conversation.id
        kinds = [i.type for i in h.session.conversation.items]
        assert kinds == ["message", "message", "function_call"]


async def test_parallel_calls_and_client_outputs() -> None:
    backend = ControlledBackend(Turn("Both.", [("get_weather", {"city": "A"}), ("get_weather", {"city": "B"})]),
                                Turn("A is warm, B is cold."))
    async with Harness(backend, prefetch=False) as h:
        await h.send(type="session.update", session={"type": "realtime", "tools": [WEATHER]})
        await h.say("both cities")
        await h.send(type="response.create")
        await h.wait("response.done")
        calls = h.of("response.function_call_arguments.done")
        assert [c["arguments"] for c in calls] == ['{"city":"A"}', '{"city":"B"}']
        for call, out in zip(calls, ["warm", "cold"], strict=True):
            await h.output(call["call_id"], out)
        assert len(h.of("response.created")) == 1  # outputs are acknowledged, never answered by themselves
        assert len(h.of("conversation.item.done")) >= 2
        await h.send(type="response.create")
        await h.wait("response.done", 2)
        request: LLMRequest = backend.requests[-1]
        assert [type(i).__name__ for i in request.items] == [
            "Message", "Message", "FunctionCallItem", "FunctionCallItem", "FunctionOutputItem", "FunctionOutputItem"]


@pytest.mark.parametrize(("event", "code", "param"), [
    ({"type": "conversation.item.create", "item": {"type": "function_call_output", "call_id": "nope", "output": "x"}},
     "invalid_call_id", "item.call_id"),
    ({"type": "conversation.item.create", "item": {"type": "message", "role": "robot", "content": []}},
     "invalid_value", "item.role"),
    ({"type": "conversation.item.create", "item": {"type": "message", "role": "user",
                                                    "content": [{"type": "input_audio", "audio": "AAAA"}]}},
     "invalid_value", "item.content[0].type"),
    ({"type": "conversation.item.create", "item": {"type": "message", "role": "user",
                                                    "content": [{"type": "input_image", "image_url": "x"}]}},
     "invalid_value", "item.content[0].image_url"),
    ({"type": "conversation.item.create", "item": "text"}, "invalid_type", "item"),
    ({"type": "conversation.item.create"}, "missing_required_parameter", "item"),
    ({"type": "conversation.item.create", "previous_item_id": "missing",
      "item": {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "x"}]}},
     "item_not_found", "previous_item_id"),
    ({"type": "conversation.item.delete", "item_id": "missing"}, "item_not_found", "item_id"),
    ({"type": "conversation.item.retrieve", "item_id": 5}, "invalid_type", "item_id"),
    ({"type": "session.update", "session": {"type": "realtime", "tools": [{"type": "function", "name": "t",
                                                                           "parameters": {"type": "strin"}}]}},
     "invalid_tool", "session.tools[0].parameters"),
    ({"type": "session.update", "session": {"type": "realtime", "tools": [{"type": "function", "name": "bad name"}]}},
     "invalid_tool", "session.tools[0].name"),
    ({"type": "session.update", "session": {"type": "realtime", "tools": [{"type": "function"}]}},
     "invalid_tool", "session.tools[0]"),
    ({"type": "session.update", "session": {"type": "realtime", "tool_choice": {"type": "function", "name": "x"}}},
     "invalid_value", "session.tool_choice"),
    ({"type": "session.update", "session": {"type": "realtime", "max_output_tokens": 0}},
     "invalid_value", "session.max_output_tokens"),
    ({"type": "session.update", "session": {"type": "realtime", "temperature": "hot"}},
     "invalid_value", "session.temperature"),
    ({"type": "session.update", "session": {"type": "realtime", "bogus": 1}}, "unknown_parameter", "session.bogus"),
    ({"type": "session.update", "session": []}, "invalid_type", "session"),
    ({"type": "response.create", "response": {"conversation": "other"}}, "invalid_value", "response.conversation"),
    ({"type": "response.create", "response": {"metadata": {"k": 1}}}, "invalid_value", "response.metadata"),
    ({"type": "response.create", "response": {"input": [{"type": "item_reference", "id": "nope"}]}},
     "item_not_found", "response.input[0].id"),
    ({"type": "response.cancel"}, "response_cancel_not_active", None),
    ({"type": "input_audio_buffer.append", "audio": "AAAA"}, "unsupported_event", "type"),
    ({"type": "no.such.event"}, "unknown_event_type", "type"),
    ({"item": {}}, "missing_required_parameter", "type"),
])
async def test_bad_events_get_a_clear_error_and_the_session_survives(event: dict[str, Any], code: str,
                                                                      param: str | None) -> None:
    async with Harness(ControlledBackend(Turn("Still here."))) as h:
        await h.send(event_id="client_evt_9", **event)
        error = h.of("error")[-1]["error"]
        assert (error["code"], error["param"]) == (code, param)
        assert error["event_id"] == "client_evt_9"
        assert error["message"]
        await h.say("hello")
        await h.send(type="response.create")
        assert (await h.wait("response.done"))["response"]["status"] == "completed"


@pytest.mark.parametrize(("frame", "code"), [
    ("not json", "invalid_json"), ("[1, 2]", "invalid_event"), ('"text"', "invalid_event"),
    (b"\xff\xfe", "invalid_json"), ("x" * 2000, "frame_too_large"),
    # a lone UTF-16 surrogate (escaped, or raw in a binary frame) cannot be encoded back to the client as UTF-8
    ('{"type": "session.update", "session": {"type": "realtime", "instructions": "\\udfff"}}', "invalid_json"),
    (b'{"type": "response.cancel", "event_id": "\xed\xa0\x80"}', "invalid_json"),
    # NaN and Infinity are not JSON: a tool schema holding one would be echoed in session.updated
    ('{"type": "session.update", "session": {"type": "realtime", "tools": [{"type": "function", "name": "f", '
     '"parameters": {"type": "object", "properties": {"x": {"type": "number", "maximum": NaN}}}}]}}', "invalid_json"),
    ('{"type": "response.create", "response": {"metadata": {"k": "v"}, "temperature": -Infinity}}', "invalid_json"),
])
async def test_bad_frames(frame: str | bytes, code: str) -> None:
    async with Harness(ControlledBackend(), max_frame_bytes=1000) as h:
        await h.connection.handle_frame(frame)
        await h.settle()
        assert h.of("error")[-1]["error"]["code"] == code
        await h.send(type="session.update", session={"type": "realtime", "instructions": "ok"})
        assert h.of("session.updated")


async def test_failed_session_update_changes_nothing() -> None:
    async with Harness(ControlledBackend()) as h:
        await h.send(type="session.update", session={"type": "realtime", "instructions": "Keep.", "tools": [WEATHER]})
        await h.send(type="session.update", session={"type": "realtime", "instructions": "Lost.",
                                                     "tools": [{"type": "function", "name": "x", "parameters": 5}]})
        assert h.session.settings.instructions == "Keep."
        assert [t.name for t in h.session.settings.tools] == ["get_weather"]


async def test_duplicate_output_and_output_for_client_created_call() -> None:
    async with Harness(ControlledBackend(), prefetch=False) as h:
        await h.send(type="conversation.item.create", item={"type": "function_call", "call_id": "c1", "name": "f",
                                                             "arguments": "{}"})
        await h.output("c1", "first")
        await h.output("c1", "second")
        assert h.of("error")[-1]["error"]["code"] == "duplicate_call_output"
        assert sum(1 for i in h.session.conversation.items if i.type == "function_call_output") == 1


async def test_items_insert_delete_retrieve_truncate() -> None:
    async with Harness(ControlledBackend()) as h:
        await h.say("one")
        await h.say("three")
        first, third = (i.id for i in h.session.conversation.items)
        await h.send(type="conversation.item.create", previous_item_id=first,
                     item={"type": "message", "role": "user", "content": [{"type": "input_text", "text": "two"}]})
        assert [i.text for i in h.session.conversation.items] == ["one", "two", "three"]
        assert h.of("conversation.item.added")[-1]["previous_item_id"] == first
        await h.send(type="conversation.item.create", previous_item_id="root",
                     item={"type": "message", "role": "system", "content": [{"type": "input_text", "text": "zero"}]})
        assert h.session.conversation.items[0].text == "zero"
        await h.send(type="conversation.item.retrieve", item_id=third)
        assert h.of("conversation.item.retrieved")[0]["item"]["content"][0]["text"] == "three"
        await h.send(type="conversation.item.delete", item_id=third)
        assert h.of("conversation.item.deleted")[0]["item_id"] == third
        assert [i.text for i in h.session.conversation.items] == ["zero", "one", "two"]
        await h.send(type="conversation.item.truncate", item_id=first, content_index=0, audio_end_ms=10)
        assert h.of("error")[-1]["error"]["param"] == "content_index"


async def test_response_create_while_active_is_rejected() -> None:
    turn = Turn("Working", hold=True)
    async with Harness(ControlledBackend(turn)) as h:
        await h.say("hi")
        await h.send(type="response.create")
        await asyncio.wait_for(turn.started.wait(), 5)
        await h.send(type="response.create", event_id="dup")
        error = h.of("error")[-1]["error"]
        assert error["code"] == "conversation_already_has_active_response" and error["event_id"] == "dup"
        turn.release.set()
        assert (await h.wait("response.done"))["response"]["status"] == "completed"


async def test_cancel_mid_stream_keeps_what_was_said_and_drops_the_unfinished_call() -> None:
    turn = Turn("Partial words", hold=True)
    async with Harness(ControlledBackend(turn)) as h:
        await h.say("hi")
        await h.send(type="response.create")
        await h.wait("response.output_text.delta", 2)
        response_id = h.of("response.created")[0]["response"]["id"]
        await h.send(type="response.cancel", response_id=response_id)
        done = h.of("response.done")[0]
        assert done["response"]["status"] == "cancelled"
        assert done["response"]["status_details"] == {"type": "cancelled", "reason": "client_cancelled"}
        assert turn.closed  # the provider stream was closed
        assert h.events[-2] is done  # nothing of the response after its response.done but its timing
        assert h.events[-1]["type"] == "voxcall.response.timing" and h.events[-1]["response_id"] == response_id
        last = h.session.conversation.items[-1]
        assert last.role == "assistant" and last.text == "Partial words " and last.status == "incomplete"
        assert h.session.responses.visible is None


async def test_cancel_drops_a_call_whose_arguments_never_completed() -> None:
    class HalfCall(ControlledBackend):
        async def stream(self, request: LLMRequest) -> Any:  # type: ignore[override]
            from voxcall.llm import ToolCallArgumentsDelta, ToolCallStart
            yield ToolCallStart("call_half", "get_weather")
            yield ToolCallArgumentsDelta("call_half", '{"ci')
            await asyncio.Event().wait()

    async with Harness(HalfCall()) as h:
        await h.say("hi")
        await h.send(type="response.create")
        await h.wait("response.function_call_arguments.delta")
        await h.send(type="response.cancel")
        assert not any(i.type == "function_call" for i in h.session.conversation.items)
        assert h.of("conversation.item.deleted")
        assert h.of("response.done")[0]["response"]["output"] == []


async def test_backend_failure_mid_stream_fails_the_response_and_the_session_goes_on() -> None:
    backend = ControlledBackend(Turn("Some", fail="backend returned HTTP 500"), Turn("Fine now."))
    async with Harness(backend) as h:
        await h.say("hi")
        await h.send(type="response.create")
        done = await h.wait("response.done")
        assert done["response"]["status"] == "failed"
        assert done["response"]["status_details"]["error"]["message"] == "backend returned HTTP 500"
        await h.send(type="response.create")
        assert (await h.wait("response.done", 2))["response"]["status"] == "completed"


async def test_backend_timeout_mid_stream() -> None:
    turn = Turn("Slow", hold=True)
    async with Harness(ControlledBackend(turn, Turn("Back.")), llm_timeout=0.05) as h:
        await h.say("hi")
        await h.send(type="response.create")
        done = await h.wait("response.done")
        assert done["response"]["status"] == "failed"
        assert done["response"]["status_details"]["error"]["code"] == "timeout"
        assert turn.closed
        await h.send(type="response.create")
        assert (await h.wait("response.done", 2))["response"]["status"] == "completed"


async def test_length_limit_is_incomplete() -> None:
    class Cut(ControlledBackend):
        async def stream(self, request: LLMRequest) -> Any:  # type: ignore[override]
            from voxcall.llm import Done
            from voxcall.tools.codecalls import TextDelta
            yield TextDelta("cut off")
            yield Done("length")

    async with Harness(Cut()) as h:
        await h.send(type="response.create", response={"max_output_tokens": 2})
        done = await h.wait("response.done")
        assert done["response"]["status"] == "incomplete"
        assert done["response"]["status_details"] == {"type": "incomplete", "reason": "max_output_tokens"}


async def test_out_of_band_response_leaves_the_conversation_alone() -> None:
    backend = ControlledBackend(Turn("Summary."))
    async with Harness(backend) as h:
        await h.say("remember this")
        before = len(h.session.conversation)
        item_id = h.session.conversation.items[0].id
        await h.send(type="response.create", response={
            "conversation": "none", "metadata": {"purpose": "summary"},
            "input": [{"type": "item_reference", "id": item_id},
                      {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Summarise."}]}]})
        done = await h.wait("response.done")
        assert done["response"]["conversation_id"] is None
        assert done["response"]["output"][0]["content"][0]["text"] == "Summary. "
        assert len(h.session.conversation) == before
        assert not [e for e in h.of("conversation.item.added") if e["item"]["role"] == "assistant"]
        assert [getattr(i, "text", None) for i in backend.requests[0].items] == ["remember this", "Summarise."]


async def test_rejected_calls_are_reported_as_extension_events() -> None:
    from voxcall.llm import CodeFormatBackend

    inner = ScriptedBackend({"rules": [{"match": "x", "reply": "Ok.<code>get_wether(city='P')</code>"}]})
    async with Harness(CodeFormatBackend(inner)) as h:
        await h.send(type="session.update", session={"type": "realtime", "tools": [WEATHER]})
        await h.say("x")
        await h.send(type="response.create")
        done = await h.wait("response.done")
        rejected = h.of("voxcall.tool_call.rejected")[0]
        assert rejected["name"] == "get_wether" and "get_weather" in rejected["reason"]
        assert [o["type"] for o in done["response"]["output"]] == ["message"]
        assert "<code>" not in "".join(e["delta"] for e in h.of("response.output_text.delta"))


async def test_beta_clients_get_beta_event_names() -> None:
    async with Harness(ControlledBackend(Turn("Hi there.")), beta=True) as h:
        sent: list[dict[str, Any]] = []  # beta frames bypass the GA validator: they are checked by hand

        async def record(ev: dict[str, Any]) -> None:
            sent.append(ev)

        h.connection._send = record
        await h.say("hi")
        await h.send(type="response.create")
        for _ in range(50):
            await asyncio.sleep(0.01)
            if any(e["type"] == "response.done" for e in sent):
                break
        kinds = [e["type"] for e in sent]
        assert "conversation.item.created" in kinds and "conversation.item.added" not in kinds
        assert "conversation.item.done" not in kinds
        assert "response.text.delta" in kinds and "response.output_text.delta" not in kinds
        done = next(e for e in sent if e["type"] == "response.done")
        assert done["response"]["output"][0]["content"][0]["type"] == "text"


async def test_cancel_right_after_create_still_reports_the_response() -> None:
    async with Harness(ControlledBackend(Turn("never"))) as h:
        await h.connection.handle_frame('{"type": "response.create"}')
        await h.connection.handle_frame('{"type": "response.cancel"}')  # before the response task ran at all
        await h.settle()
        assert [e["type"] for e in h.events[-3:]] == ["response.created", "response.done", "voxcall.response.timing"]
        assert h.of("response.done")[0]["response"]["status"] == "cancelled"
        assert h.session.responses.visible is None
        await h.send(type="response.create")
        assert (await h.wait("response.done", 2))["response"]["status"] == "completed"


class Preparing(ControlledBackend):
    """A backend that can prepare requests ahead (:class:`voxcall.llm.Warmable`); it records them."""

    def __init__(self, *turns: Turn) -> None:
        super().__init__(*turns)
        self.warmed: list[Any] = []

    async def warm(self, request: Any) -> None:
        self.warmed.append(request)


async def test_new_tools_are_prepared_before_the_user_asks() -> None:
    backend = Preparing(Turn("Sunny."))
    async with Harness(backend) as h:
        await h.send(type="session.update", session={"type": "realtime", "instructions": "Be brief.",
                                                     "tools": [WEATHER]})
        assert len(backend.warmed) == 1
        warmed = backend.warmed[0]
        assert warmed.instructions == "Be brief." and [t.name for t in warmed.tools] == ["get_weather"]
        assert warmed.items == []  # only what every next turn starts with
        await h.say("weather?")
        await h.send(type="response.create")
        await h.wait("response.done")
        asked = backend.requests[0]
        assert (asked.instructions, asked.tools, asked.tool_choice, asked.voice) == (
            warmed.instructions, warmed.tools, warmed.tool_choice, warmed.voice)  # the same prompt prefix


async def test_deeply_nested_json_is_an_error_and_the_session_lives() -> None:
    async with Harness(ControlledBackend(Turn("Still here."))) as h:
        frame = '{"type":"session.update","session":' + "[" * 10000 + "]" * 10000 + "}"
        await h.connection.handle_frame(frame)
        await h.settle()
        assert h.of("error")[-1]["error"]["code"] == "invalid_json"
        await h.say("hello")
        await h.send(type="response.create")
        assert (await h.wait("response.done"))["response"]["status"] == "completed"


def nested(depth: int) -> dict[str, Any]:
    """An object schema whose properties nest ``depth`` deep."""
    schema: dict[str, Any] = {"type": "string"}
    for _ in range(depth):
        schema = {"type": "object", "properties": {"x": schema}}
    return schema


@pytest.mark.parametrize("schema", [
    {"type": "object", "$schema": 5},
    {"type": "object", "$schema": True},
    {"type": "object", "$schema": ["x"]},
    {"type": "object", "$schema": {"a": 1}},
    nested(400),
], ids=["schema-int", "schema-bool", "schema-list", "schema-object", "nested-400"])
async def test_odd_tool_schemas_are_refused_clearly(schema: dict[str, Any]) -> None:
    async with Harness(ControlledBackend(Turn("ok"))) as h:
        tool = {"type": "function", "name": "odd", "description": "d", "parameters": schema}
        await h.send(type="session.update", event_id="evt_odd", session={"type": "realtime", "tools": [tool]})
        error = h.of("error")[-1]["error"]
        assert error["code"] == "invalid_tool" and error["event_id"] == "evt_odd"
        assert error["param"].startswith("session.tools[0]")
        await h.send(type="session.update", session={"type": "realtime", "tools": [WEATHER]})
        assert h.of("session.updated")  # the session took the next, good update


async def test_a_handler_that_crashes_answers_server_error_and_the_session_lives() -> None:
    async with Harness(ControlledBackend(Turn("Fine."))) as h:
        async def broken(model: Any, ev: Any) -> None:
            raise RuntimeError("a bug")

        h.connection._handlers["conversation.item.retrieve"] = broken
        await h.send(type="conversation.item.retrieve", event_id="evt_bug", item_id="x")
        error = h.of("error")[-1]["error"]
        assert (error["type"], error["code"], error["event_id"]) == ("server_error", "server_error", "evt_bug")
        assert "a bug" not in error["message"]  # no internals leak to the client
        await h.say("hi")
        await h.send(type="response.create")
        assert (await h.wait("response.done"))["response"]["status"] == "completed"


async def test_more_tools_than_the_limit_is_an_error_that_names_it() -> None:
    def tool(n: int) -> dict[str, Any]:
        return {"type": "function", "name": f"t{n}", "description": "d", "parameters": {"type": "object"}}

    async with Harness(ControlledBackend(Turn("ok")), max_tools=3) as h:
        await h.send(type="session.update", session={"type": "realtime", "tools": [tool(n) for n in range(4)]})
        error = h.of("error")[-1]["error"]
        assert error["code"] == "too_many_tools" and error["param"] == "session.tools"
        assert "session.max_tools" in error["message"] and "4 tools" in error["message"]
        await h.send(type="session.update", session={"type": "realtime", "tools": [tool(n) for n in range(3)]})
        assert [t["name"] for t in h.of("session.updated")[-1]["session"]["tools"]] == ["t0", "t1", "t2"]
        await h.say("go")
        await h.send(type="response.create", response={"tools": [tool(n) for n in range(5)]})
        assert h.of("error")[-1]["error"]["param"] == "response.tools"


async def test_ten_thousand_tools_are_refused_at_once() -> None:
    tools = [{"type": "function", "name": f"t{n}", "description": "d", "parameters": {"type": "object"}}
             for n in range(10_000)]
    async with Harness(ControlledBackend(Turn("ok"))) as h:
        await h.send(type="session.update", session={"type": "realtime", "tools": tools})
        assert h.of("error")[-1]["error"]["code"] == "too_many_tools"
        assert not h.of("session.updated")


async def test_cancel_without_a_response_speaks_openais_words() -> None:
    """LiveKit's plugin treats an error starting "Cancellation failed: no active response found" as the ordinary
    race of a barge-in after the response ended; any other message it logs as an ERROR."""
    async with Harness(ControlledBackend()) as h:
        await h.send(type="response.cancel")
        error = h.of("error")[-1]["error"]
        assert error["code"] == "response_cancel_not_active"
        assert error["message"].startswith("Cancellation failed: no active response found")


def nested(depth: int) -> dict[str, Any]:
    """A schema whose ``x`` is an object nested ``depth`` levels deep."""
    schema: dict[str, Any] = {"type": "string"}
    for _ in range(depth):
        schema = {"type": "object", "properties": {"x": schema}}
    return schema


async def test_a_deeply_nested_tool_schema_is_refused_and_the_session_survives() -> None:
    tool = {"type": "function", "name": "deep", "parameters": nested(400)}
    async with Harness(ControlledBackend(Turn("Still here."))) as h:
        await h.send(type="session.update", session={"type": "realtime", "tools": [tool]})
        error = h.of("error")[-1]["error"]
        assert (error["code"], error["param"]) == ("invalid_tool", "session.tools[0].parameters")
        assert "nested more than" in error["message"]
        await h.say("hello")
        await h.send(type="response.create")
        assert (await h.wait("response.done"))["response"]["status"] == "completed"
