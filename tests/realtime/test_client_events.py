"""Client events read with the SDK's models: beta spellings mapped to GA, and errors that name the parameter."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from openai.types.realtime import InputAudioBufferAppendEvent, SessionUpdateEvent

from voxcall.core.errors import SessionError
from voxcall.realtime.beta import from_beta
from voxcall.realtime.client_events import ItemReference, ResponseCreateEvent, parse_client_event


def user_text(text: Any) -> dict[str, Any]:
    return {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}


@pytest.mark.parametrize(("event", "code", "param"), [
    ({}, "missing_required_parameter", "type"),
    ({"type": 5}, "invalid_type", "type"),
    ({"type": "no.such.event"}, "unknown_event_type", "type"),
    ({"type": "conversation.item.create"}, "missing_required_parameter", "item"),
    ({"type": "conversation.item.create", "item": "text"}, "invalid_type", "item"),
    ({"type": "conversation.item.create", "item": {"type": "message", "role": "robot", "content": []}},
     "invalid_value", "item.role"),
    ({"type": "conversation.item.create", "item": {"type": "bogus"}}, "invalid_value", "item"),
    ({"type": "conversation.item.create", "item": user_text(5)}, "invalid_type", "item.content[0].text"),
    ({"type": "conversation.item.create", "item": {"type": "message", "role": "user",
                                                    "content": [{"type": "image", "text": "x"}]}},
     "invalid_value", "item.content[0].type"),
    ({"type": "conversation.item.create", "item": {"type": "mcp_approval_response", "approval_request_id": "r",
                                                    "approve": "yes"}}, "invalid_type", "item.approve"),
    ({"type": "conversation.item.create", "item": {"type": "function_call_output", "output": "x"}},
     "missing_required_parameter", "item.call_id"),
    ({"type": "conversation.item.retrieve", "item_id": 5}, "invalid_type", "item_id"),
    ({"type": "conversation.item.truncate", "item_id": "i", "content_index": True, "audio_end_ms": 5},
     "invalid_type", "content_index"),
    ({"type": "conversation.item.truncate", "item_id": "i", "content_index": 0, "audio_end_ms": 1.5},
     "invalid_type", "audio_end_ms"),
    ({"type": "input_audio_buffer.append"}, "missing_required_parameter", "audio"),
    ({"type": "session.update", "session": []}, "invalid_type", "session"),
    ({"type": "session.update", "session": {"type": "realtime", "tools": [{"type": "function", "name": 5}]}},
     "invalid_type", "session.tools[0].name"),
    ({"type": "session.update", "session": {"type": "realtime", "tools": [{"type": "mcp"}]}},
     "missing_required_parameter", "session.tools[0].server_label"),
    ({"type": "session.update", "session": {"type": "realtime", "instructions": ["x"]}},
     "invalid_type", "session.instructions"),
    ({"type": "session.update", "session": {"type": "realtime", "max_output_tokens": "many"}},
     "invalid_type", "session.max_output_tokens"),
    ({"type": "session.update", "session": {"type": "realtime", "audio": {"input": {"format": {"type": "wav"}}}}},
     "invalid_value", "session.audio.input.format"),
    ({"type": "session.update", "session": {"type": "realtime", "audio": {"input": {"turn_detection": {
        "type": "semantic_vad", "eagerness": "eager"}}}}},
     "invalid_value", "session.audio.input.turn_detection.eagerness"),
    ({"type": "session.update", "session": {"input_audio_format": "wav"}}, "invalid_value",
     "session.input_audio_format"),
    ({"type": "response.create", "response": {"metadata": {"k": 1}}}, "invalid_value", "response.metadata"),
    ({"type": "response.create", "response": {"input": [{"type": "item_reference", "id": 5}]}},
     "invalid_type", "response.input[0].id"),
    ({"type": "response.create", "response": {"input": [user_text(5)]}}, "invalid_type",
     "response.input[0].content[0].text"),
    ({"type": "conversation.item.create", "item": {"type": "message", "role": "assistant",
                                                    "content": [{"type": ["text"]}]}},
     "invalid_value", "item.content[0].type"),
    ({"type": "response.create", "response": {"input": [{"role": "assistant", "content": [{"type": {}}]}]}},
     "invalid_value", "response.input[0].content[0].type"),
])
def test_bad_events_name_the_parameter(event: dict[str, Any], code: str, param: str) -> None:
    with pytest.raises(SessionError) as caught:
        parse_client_event(event)
    assert (caught.value.code, caught.value.param) == (code, param)
    assert param in caught.value.message or code == "unknown_event_type"
    assert "Realtime" not in caught.value.message  # no SDK class names in what the client reads


def test_literal_errors_list_every_value_the_client_could_mean() -> None:
    with pytest.raises(SessionError) as caught:
        parse_client_event({"type": "conversation.item.create", "item": {"type": "message", "role": "robot",
                                                                          "content": []}})
    assert all(role in caught.value.message for role in ("'system'", "'user'", "'assistant'"))


@pytest.mark.parametrize("event", [
    # accepted by the SDK's models; voxcall's own checks answer them (see test_session.py's table)
    {"type": "conversation.item.create", "item": {"type": "message", "role": "user",
                                                  "content": [{"type": "input_image", "image_url": "x"}]}},
    {"type": "session.update", "session": {"type": "realtime", "bogus": 1, "temperature": "hot"}},
    {"type": "session.update", "session": {"type": "realtime", "max_output_tokens": 0}},
    {"type": "response.create", "response": {"conversation": "other"}},
    {"type": "response.create", "response": {"input": [{"type": "item_reference", "id": "nope"}]}},
    {"type": "output_audio_buffer.clear"},
    {"type": "response.cancel"},
])
def test_what_voxcall_checks_itself_passes_the_sdk_models(event: dict[str, Any]) -> None:
    assert parse_client_event(event).kind == event["type"]


def test_the_result_is_the_sdk_model() -> None:
    parsed = parse_client_event({"type": "input_audio_buffer.append", "audio": "AAAA", "event_id": "e1"})
    assert isinstance(parsed.model, InputAudioBufferAppendEvent) and parsed.model.audio == "AAAA"
    session = parse_client_event({"type": "session.update", "session": {"instructions": "Hi."}})
    assert isinstance(session.model, SessionUpdateEvent) and session.model.session.instructions == "Hi."
    response = parse_client_event({"type": "response.create", "response": {
        "input": [{"type": "item_reference", "id": "item_1"}, user_text("x")]}})
    assert isinstance(response.model, ResponseCreateEvent)
    assert response.model.response is not None and response.model.response.input is not None
    assert isinstance(response.model.response.input[0], ItemReference)


def test_beta_session_fields_move_to_their_ga_places() -> None:
    beta = {"type": "session.update", "session": {
        "modalities": ["text", "audio"], "max_response_output_tokens": 40, "input_audio_format": "g711_ulaw",
        "output_audio_format": "pcm16", "turn_detection": {"silence_duration_ms": 300}, "voice": "alloy",
        "input_audio_transcription": {"model": "whisper-1"}, "input_audio_noise_reduction": None, "speed": 1.2,
        "temperature": 0.7, "tool_choice": {"type": "function", "function": {"name": "f"}}}}
    original = copy.deepcopy(beta)
    session = parse_client_event(beta).data["session"]
    assert beta == original  # the client's dict is left alone
    assert session == {
        "type": "realtime", "output_modalities": ["text", "audio"], "max_output_tokens": 40, "temperature": 0.7,
        "tool_choice": {"type": "function", "name": "f"},
        "audio": {"input": {"format": {"type": "audio/pcmu"}, "transcription": {"model": "whisper-1"},
                            "turn_detection": {"type": "server_vad", "silence_duration_ms": 300},
                            "noise_reduction": None},
                  "output": {"format": {"type": "audio/pcm", "rate": 24000}, "voice": "alloy", "speed": 1.2}}}


def test_a_ga_field_wins_over_its_beta_alias() -> None:
    session = from_beta({"type": "session.update", "session": {
        "voice": "alloy", "modalities": ["audio"], "output_modalities": ["text"],
        "audio": {"output": {"voice": "joe"}}}})["session"]
    assert session["audio"]["output"]["voice"] == "joe"
    assert session["output_modalities"] == ["text"]


def test_beta_response_fields_and_lenient_items() -> None:
    data = parse_client_event({"type": "response.create", "response": {
        "modalities": ["text"], "voice": "joe", "input": [
            {"role": "assistant", "content": [{"type": "text", "text": "hi"}]},
            {"type": "function_call", "name": "f"},
            {"type": "function_call_output", "call_id": "c", "output": {"temp": 21}}]}}).data["response"]
    assert data["output_modalities"] == ["text"] and data["audio"] == {"output": {"voice": "joe"}}
    message, call, output = data["input"]
    assert message["type"] == "message" and message["content"][0]["type"] == "output_text"
    assert message["id"].startswith("item_")
    assert call["arguments"] == "{}"
    assert output["output"] == '{"temp": 21}'


def test_an_approval_without_id_gets_one() -> None:
    parsed = parse_client_event({"type": "conversation.item.create", "item": {
        "type": "mcp_approval_response", "approval_request_id": "r1", "approve": True}})
    assert parsed.data["item"]["id"].startswith("item_")
