"""Session settings: every GA session field is honoured, mapped, refused or warned about, by name."""

from __future__ import annotations

from typing import Any

import pytest
from openai.types.realtime import RealtimeSessionCreateRequest

from tests.harness import ControlledBackend, Harness, Turn
from voxcall.audio.formats import PCMU
from voxcall.core.errors import SessionError
from voxcall.core.hearing.turn_detection import EAGERNESS_SILENCE_MS
from voxcall.core.settings import DEFAULT_VOICE, SessionSettings
from voxcall.realtime.client_events import parse_client_event
from voxcall.realtime.session_fields import OPENAI_VOICES
from voxcall.realtime.settings import NO_AUDIO_OUTPUT, ServerSpeech, read_settings, response_settings, settings_wire


def update(data: dict[str, Any], current: SessionSettings | None = None) -> tuple[SessionSettings, dict[str, str]]:
    """The settings after a session.update with ``data``, and its warnings by parameter."""
    settings, warnings = read_settings(current or SessionSettings(), data, where="session.",
                                       speech=ServerSpeech(speaks=True))
    return settings, {w.param: w.message for w in warnings}


def audio(*, heard: dict[str, Any] | None = None, spoken: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"type": "realtime", "audio": {"input": heard or {}, "output": spoken or {}}}


def test_speed_and_parallel_tool_calls_are_kept_and_reported() -> None:
    settings, warnings = update({**audio(spoken={"speed": 1.25}), "parallel_tool_calls": False})
    assert (settings.speed, settings.parallel_tool_calls, warnings) == (1.25, False, {})
    wire = settings_wire(settings)
    assert wire["audio"]["output"]["speed"] == 1.25 and wire["parallel_tool_calls"] is False


@pytest.mark.parametrize(("data", "param"), [
    (audio(spoken={"speed": 2}), "session.audio.output.speed"),
    (audio(spoken={"speed": True}), "session.audio.output.speed"),
    ({"parallel_tool_calls": "no"}, "session.parallel_tool_calls"),
    (audio(heard={"turn_detection": {"type": "server_vad", "idle_timeout_ms": 0}}),
     "session.audio.input.turn_detection.idle_timeout_ms"),
    (audio(heard={"turn_detection": {"type": "semantic_vad", "threshold": 0.4}}),
     "session.audio.input.turn_detection.threshold"),
    (audio(heard={"turn_detection": {"type": "semantic_vad", "eagerness": "eager"}}),
     "session.audio.input.turn_detection.eagerness"),
])
def test_bad_values_of_honoured_fields_are_named(data: dict[str, Any], param: str) -> None:
    with pytest.raises(SessionError) as caught:
        update(data)
    assert caught.value.param == param


@pytest.mark.parametrize("eagerness", ["low", "medium", "high", "auto"])
def test_semantic_vad_maps_eagerness_to_silence_and_is_reported_as_sent(eagerness: str) -> None:
    settings, _ = update(audio(heard={"turn_detection": {"type": "semantic_vad", "eagerness": eagerness,
                                                         "interrupt_response": False}}))
    turns = settings.turn_detection
    assert turns is not None and turns.semantic
    assert turns.silence_duration_ms == EAGERNESS_SILENCE_MS[eagerness] and not turns.interrupt_response
    assert settings_wire(settings)["audio"]["input"]["turn_detection"] == {
        "type": "semantic_vad", "eagerness": eagerness, "create_response": True, "interrupt_response": False}


def test_a_lower_eagerness_waits_longer() -> None:
    assert EAGERNESS_SILENCE_MS["low"] > EAGERNESS_SILENCE_MS["medium"] > EAGERNESS_SILENCE_MS["high"]


def test_server_vad_keeps_the_idle_timeout() -> None:
    settings, _ = update(audio(heard={"turn_detection": {"type": "server_vad", "idle_timeout_ms": 6000,
                                                         "silence_duration_ms": 700}}))
    assert settings.turn_detection is not None
    assert (settings.turn_detection.idle_timeout_ms, settings.turn_detection.silence_duration_ms) == (6000, 700)
    assert settings_wire(settings)["audio"]["input"]["turn_detection"]["idle_timeout_ms"] == 6000


@pytest.mark.parametrize(("data", "param", "code"), [
    ({"prompt": {"id": "pmpt_1"}}, "session.prompt", "unsupported_parameter"),
    ({"include": ["item.input_audio_transcription.logprobs"]}, "session.include[0]", "unsupported_value"),
    ({"truncation": "disabled"}, "session.truncation", "unsupported_value"),
    (audio(heard={"transcription": {"model": "whisper-1", "language": "fr"}}),
     "session.audio.input.transcription.language", "unsupported_value"),
    (audio(heard={"transcription": {"languages": ["en", "de"]}}),
     "session.audio.input.transcription.languages[1]", "unsupported_value"),
    (audio(spoken={"voice": {"id": "voice_123"}}), "session.audio.output.voice", "unsupported_value"),
    (audio(spoken={"voice": "bob"}), "session.audio.output.voice", "unsupported_value"),
])
def test_what_voxcall_cannot_do_is_refused_by_name(data: dict[str, Any], param: str, code: str) -> None:
    current = SessionSettings(instructions="Before.")
    with pytest.raises(SessionError) as caught:
        update({**data, "instructions": "After."}, current)
    assert (caught.value.param, caught.value.code) == (param, code)
    assert param.split("[")[0] in caught.value.message
    assert current.instructions == "Before."  # nothing applied


@pytest.mark.parametrize(("data", "param"), [
    ({"model": "gpt-realtime"}, "session.model"),
    ({"tracing": "auto"}, "session.tracing"),
    ({"reasoning": {"effort": "low"}}, "session.reasoning"),
    ({"truncation": {"type": "retention_ratio", "retention_ratio": 0.5}}, "session.truncation"),
    (audio(heard={"noise_reduction": {"type": "near_field"}}), "session.audio.input.noise_reduction"),
    (audio(heard={"transcription": {"model": "gpt-4o-transcribe", "language": "en"}}),
     "session.audio.input.transcription.model"),
    (audio(heard={"transcription": {"prompt": "names: Ada"}}), "session.audio.input.transcription.prompt"),
    (audio(heard={"transcription": None}), "session.audio.input.transcription"),
    (audio(spoken={"voice": "alloy"}), "session.audio.output.voice"),
])
def test_what_voxcall_accepts_without_acting_on_is_warned_by_name(data: dict[str, Any], param: str) -> None:
    _, warnings = update(data)
    assert list(warnings) == [param] and warnings[param]


def test_fields_voxcall_honours_as_sent_raise_no_warning() -> None:
    _, warnings = update({"truncation": "auto", "include": [], "tracing": None, "prompt": None,
                          **audio(heard={"noise_reduction": None, "transcription": {"language": "en"}},
                                  spoken={"voice": DEFAULT_VOICE})})
    assert warnings == {}


def test_openai_voices_are_spoken_by_the_servers_voice() -> None:
    settings, _ = update(audio(spoken={"voice": "marin"}))
    assert settings.voice == "marin" and "marin" in OPENAI_VOICES  # reported as chosen; spoken by the server's


def test_beta_spellings_apply_once_the_event_is_read() -> None:
    parsed = parse_client_event({"type": "session.update", "session": {
        "modalities": ["text"], "input_audio_format": "g711_ulaw", "voice": "alloy",
        "turn_detection": {"silence_duration_ms": 900}, "max_response_output_tokens": 10}})
    settings, _ = update(parsed.data["session"])
    assert settings.input_format == PCMU and settings.voice == "alloy" and settings.max_output_tokens == 10
    assert settings.turn_detection is not None and settings.turn_detection.silence_duration_ms == 900


def test_response_overrides_take_parallel_tool_calls() -> None:
    settings, warnings = response_settings(SessionSettings(), {"parallel_tool_calls": False,
                                                               "audio": {"output": {"voice": "ash"}}})
    assert settings.parallel_tool_calls is False
    assert [w.param for w in warnings] == ["response.audio.output.voice"]


@pytest.mark.parametrize("turns", [
    None, {"type": "server_vad", "idle_timeout_ms": 5000}, {"type": "semantic_vad", "eagerness": "high"}])
def test_the_reported_session_is_valid_for_the_sdk(turns: dict[str, Any] | None) -> None:
    settings, _ = update({**audio(heard={"turn_detection": turns, "transcription": {"language": "en"}},
                                  spoken={"speed": 0.8}), "parallel_tool_calls": False})
    wire = {"type": "realtime", **settings_wire(settings)}
    RealtimeSessionCreateRequest.model_validate(wire, strict=True)


async def test_the_session_sends_warnings_right_after_session_updated() -> None:
    async with Harness(ControlledBackend()) as h:
        await h.send(type="session.update", session={"type": "realtime", "model": "gpt-realtime",
                                                     "audio": {"output": {"voice": "coral"}}})
        kinds = [e["type"] for e in h.events]
        assert kinds[-3:] == ["session.updated", "voxcall.session.warning", "voxcall.session.warning"]
        assert {e["param"] for e in h.events[-2:]} == {"session.model", "session.audio.output.voice"}
        assert h.of("session.updated")[0]["session"]["audio"]["output"]["voice"] == "coral"


async def test_a_refused_field_is_an_error_and_changes_nothing() -> None:
    async with Harness(ControlledBackend()) as h:
        await h.send(type="session.update", event_id="e1", session={"type": "realtime", "instructions": "New.",
                                                                    "prompt": {"id": "pmpt_1"}})
        error = h.of("error")[-1]["error"]
        assert (error["param"], error["event_id"]) == ("session.prompt", "e1")
        assert h.session.settings.instructions != "New." and not h.of("session.updated")


async def test_parallel_tool_calls_reach_the_request() -> None:
    backend = ControlledBackend(Turn("ok"))
    async with Harness(backend) as h:
        await h.send(type="session.update", session={"type": "realtime", "parallel_tool_calls": False})
        await h.send(type="response.create")
        await h.wait("response.done")
        assert backend.requests[0].parallel_tool_calls is False


def test_transcription_languages_follow_the_servers_speech_to_text() -> None:
    data = audio(heard={"transcription": {"language": "de"}})
    speech = ServerSpeech(speaks=True, models={"base": frozenset({"en", "de"})}, stt_model="base")
    settings, warnings = read_settings(SessionSettings(), data, where="session.", speech=speech)
    assert settings.transcription == {"language": "de"} and warnings == []
    with pytest.raises(SessionError):
        update(data)  # an English-only model


def test_audio_output_without_a_voice_is_text_with_a_warning() -> None:
    settings, warnings = read_settings(SessionSettings(), {"output_modalities": ["audio"], "instructions": "Hi."},
                                       where="session.")
    assert settings.output_modalities == ("text",) and settings.instructions == "Hi."
    assert [(w.param, w.message) for w in warnings] == [("session.output_modalities", NO_AUDIO_OUTPUT)]
