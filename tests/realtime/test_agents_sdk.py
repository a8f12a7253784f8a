"""What the OpenAI Agents SDK for JavaScript (``@openai/agents-realtime``) sends and needs, checked without Node.

The events below are those the SDK 0.20.0 sends (recorded by ``tests/js``, which runs the SDK itself): its opening
``session.update`` with its defaults (``semantic_vad``, a transcription model, no noise reduction), the
``tracing`` update that follows ``session.created``, and the ``conversation.item.retrieve`` it sends after every
transcript, truncation and MCP call. The SDK also reads each server event with its own schemas, stricter in places
than the Python SDK's models, and ignores an event that fails them.
"""

from __future__ import annotations

from typing import Any

from tests.harness import ControlledBackend, Harness, Turn
from tests.servers import ServerFactory
from voxcall.core.hearing.turn_detection import EAGERNESS_SILENCE_MS
from voxcall.core.tools.toolbox import Toolbox
from voxcall.tools import ToolRegistry

CALCULATOR = {"type": "function", "name": "calculator", "description": "Do arithmetic.", "parameters": {
    "type": "object", "properties": {"op": {"type": "string", "enum": ["add", "sub", "mul", "div"]},
                                     "a": {"type": "number"}, "b": {"type": "number"}},
    "required": ["op", "a", "b"], "additionalProperties": False, "$schema": "http://json-schema.org/draft-07/schema#"}}
AGENTS_SDK_SESSION: dict[str, Any] = {
    "type": "realtime", "instructions": "Answer briefly.", "model": "gpt-realtime-2.1", "output_modalities": ["text"],
    "audio": {"input": {"format": {"type": "audio/pcm", "rate": 24000}, "noise_reduction": None,
                        "transcription": {"model": "gpt-4o-mini-transcribe"},
                        "turn_detection": {"type": "semantic_vad"}},
              "output": {"format": {"type": "audio/pcm", "rate": 24000}, "speed": 1}},
    "tools": [CALCULATOR]}
"""The SDK's first ``session.update`` for an agent with one function tool and ``outputModalities: ['text']`` (its
default, audio, needs a server that speaks; these tests' server does not)."""


async def test_the_sdks_session_updates_are_accepted_with_warnings_only(make_server: ServerFactory) -> None:
    server = await make_server()
    async with server.client().realtime.connect(model="voxcall") as conn:
        await conn.send({"type": "session.update", "session": AGENTS_SDK_SESSION})
        await conn.send({"type": "session.update", "session": {"type": "realtime", "tracing": "auto"}})
        seen: list[Any] = []
        async for event in conn:
            seen.append(event)
            if event.type == "error" or (event.model_extra or {}).get("param") == "session.tracing":
                break  # the tracing update's warning comes last
    assert not [e for e in seen if e.type == "error"]
    updated = next(e for e in seen if e.type == "session.updated").session
    turns = updated.audio.input.turn_detection
    assert turns is not None and turns.type == "semantic_vad" and updated.instructions == "Answer briefly."
    assert [tool.name for tool in updated.tools] == ["calculator"]
    warned = [e.model_extra["param"] for e in seen if e.type == "voxcall.session.warning"]
    assert sorted(warned) == ["session.audio.input.transcription.model", "session.model", "session.tracing"]


async def test_semantic_vad_ends_a_turn_after_the_silence_its_eagerness_maps_to() -> None:
    async with Harness(ControlledBackend()) as h:
        for eagerness, silence_ms in [("high", 250), ("low", 1200), ("auto", 500)]:
            await h.send(type="session.update", session={"type": "realtime", "audio": {"input": {
                "turn_detection": {"type": "semantic_vad", "eagerness": eagerness}}}})
            turns = h.session.settings.turn_detection
            assert turns is not None and turns.silence_duration_ms == silence_ms
            assert EAGERNESS_SILENCE_MS[turns.eagerness or "auto"] == silence_ms
            assert h.of("session.updated")[-1]["session"]["audio"]["input"]["turn_detection"]["eagerness"] == eagerness
        assert not h.of("error")


async def test_retrieve_answers_with_the_item_or_an_error_naming_the_unknown_id(make_server: ServerFactory) -> None:
    server = await make_server()
    async with server.client().realtime.connect(model="voxcall") as conn:
        await conn.conversation.item.create(item={"type": "message", "role": "user",
                                                  "content": [{"type": "input_text", "text": "hello"}]})
        added = None
        async for event in conn:
            if event.type == "conversation.item.added":
                added = event.item
                break
        assert added is not None and added.id is not None
        await conn.conversation.item.retrieve(item_id=added.id)
        await conn.send({"type": "conversation.item.retrieve", "item_id": "item_gone", "event_id": "evt_retrieve"})
        answers = []
        async for event in conn:
            if event.type in ("conversation.item.retrieved", "error"):
                answers.append(event)
            if len(answers) == 2:
                break
    retrieved, error = answers
    assert retrieved.type == "conversation.item.retrieved" and retrieved.item.model_dump() == added.model_dump()
    assert error.type == "error" and error.error.code == "item_not_found" and error.error.param == "item_id"
    assert error.error.event_id == "evt_retrieve" and "item_gone" in error.error.message


async def test_mcp_call_argument_deltas_carry_the_obfuscation_field_the_sdk_requires() -> None:
    """The SDK's schema for ``response.mcp_call_arguments.delta`` requires ``obfuscation`` (a string; the Python
    SDK's model makes it optional): without it the SDK ignores the event. voxcall pads nothing, so it is empty."""
    registry = ToolRegistry()

    @registry.tool
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    async with Harness(ControlledBackend(Turn("", [("add", {"a": 2, "b": 3})]), Turn("5.")),
                       toolbox=Toolbox(registry)) as h:
        await h.say("add")
        await h.send(type="response.create")
        await h.wait("response.done")
        deltas = h.of("response.mcp_call_arguments.delta")
        assert deltas and all(delta["obfuscation"] == "" for delta in deltas)
        assert "".join(delta["delta"] for delta in deltas) == '{"a":2,"b":3}'
