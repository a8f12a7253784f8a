"""Realtime settings: ``session.update``'s session object and ``response.create``'s overrides read into a
:class:`~voxcall.core.settings.SessionSettings`, checked in full first; and the GA session object they are shown as.

A ``session.update`` either applies completely or not at all: every field is parsed into new settings before
anything changes, and the first problem becomes a :class:`~voxcall.core.errors.SessionError` naming the parameter
(``session.tools[2].parameters``). ``response.create`` overrides are read by the same code. Settings arrive in the
GA shape (beta spellings are rewritten first, :mod:`voxcall.realtime.beta`). Fields that voxcall refuses or only warns
about are reviewed in :mod:`voxcall.realtime.session_fields`; turn detection is read by
:func:`~voxcall.core.hearing.turn_detection.parse_turn_detection`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from voxcall.audio.formats import AudioFormat, AudioFormatError, parse_format
from voxcall.core.errors import SessionError, refuse_unknown
from voxcall.core.hearing.turn_detection import parse_turn_detection
from voxcall.core.settings import (
    SessionSettings,
    parse_max_tokens,
    parse_tool_choice,
    parse_tools,
    still_valid_choice,
)
from voxcall.realtime.session_fields import SettingWarning, review_fields
from voxcall.speech.catalog import DEFAULT_MODEL
from voxcall.speech.voices import VoiceCatalog
from voxcall.tools.codecalls.prompt import ToolChoice, forced_tool_name

__all__ = ["NO_AUDIO_OUTPUT", "ServerSpeech", "parse_metadata", "read_settings", "response_settings",
           "settings_wire"]

_MAX_METADATA = 16
_SPEED = (0.25, 1.5)
# GA session fields (with beta's temperature), and fields of a session object a client may echo back.
_SETTINGS = frozenset({"type", "instructions", "tools", "tool_choice", "output_modalities", "max_output_tokens",
                       "temperature", "audio", "parallel_tool_calls", "truncation", "include", "prompt", "tracing",
                       "model", "reasoning"})
_ECHOED = frozenset({"object", "id", "expires_at", "client_secret"})
_AUDIO_INPUT = frozenset({"format", "turn_detection", "transcription", "noise_reduction", "voxcall_audio_input"})
_AUDIO_INPUT_MODES = ("transcribe", "direct")
_AUDIO_OUTPUT = frozenset({"format", "voice", "speed"})
_RESPONSE_ONLY = frozenset({"metadata", "conversation", "input"})


@dataclass(frozen=True)
class ServerSpeech:
    """What the server's speech models can do, which decides the audio settings a client may ask for."""

    speaks: bool = False  # a text-to-speech voice is loaded: audio output is possible
    voices: VoiceCatalog = field(default_factory=lambda: VoiceCatalog({}))  # the voices a session may name
    models: Mapping[str, frozenset[str]] = field(default_factory=lambda: {DEFAULT_MODEL: frozenset({"en"})})
    """The speech-to-text models a session may choose, by name, with the languages each understands."""
    stt_model: str = DEFAULT_MODEL  # the server's own (the one a session that names none hears with)


def settings_wire(settings: SessionSettings) -> dict[str, Any]:
    """The settings as fields of a GA session object."""
    turns = settings.turn_detection.to_wire() if settings.turn_detection else None
    return {"instructions": settings.instructions,
            "tools": [*(t.to_openai() for t in settings.tools), *(dict(s) for s in settings.mcp_servers)],
            "tool_choice": _choice_wire(settings.tool_choice), "output_modalities": list(settings.output_modalities),
            "max_output_tokens": "inf" if settings.max_output_tokens is None else settings.max_output_tokens,
            "parallel_tool_calls": settings.parallel_tool_calls, "truncation": "auto",
            "audio": {"input": {"format": settings.input_format.to_wire(), "turn_detection": turns,
                                "transcription": (None if settings.transcription is None
                                                  else dict(settings.transcription)),
                                "noise_reduction": None, "voxcall_audio_input": settings.audio_input},
                      "output": {"format": settings.output_format.to_wire(), "voice": settings.voice,
                                 "speed": settings.speed}}}


def _choice_wire(choice: ToolChoice) -> Any:
    name = forced_tool_name(choice)
    return {"type": "function", "name": name} if name else choice


NO_AUDIO_OUTPUT = "audio output is not available: this server runs without text-to-speech; answering in text"
"""The warning for audio output asked of a server without a voice (the rest of the settings still apply)."""


def read_settings(current: SessionSettings, data: dict[str, Any], *, where: str, speech: ServerSpeech = ServerSpeech(),
                  extra: frozenset[str] = frozenset(), max_tools: int | None = None,
                  ) -> tuple[SessionSettings, list[SettingWarning]]:
    """A copy of ``current`` with the fields of ``data`` applied, and the warnings about fields accepted but not
    acted on; a ``SessionError`` for the first bad or refused field.

    ``speech`` says what this server can hear and say (without a voice, audio output becomes text, with a
    warning). ``extra`` names further
    fields the caller reads itself (``response.create``'s metadata, input …); ``max_tools`` caps the function tools.
    """
    refuse_unknown(data, _SETTINGS | _ECHOED | extra, where.removesuffix("."))
    changes: dict[str, Any] = {}
    if data.get("instructions") is not None:
        changes["instructions"] = _typed(data, "instructions", str, where)
    tools = current.tools
    if data.get("tools") is not None:
        tools, servers = parse_tools(data["tools"], where=f"{where}tools", limit=max_tools)
        if servers and where != "session.":
            raise SessionError("MCP servers can only be declared in session.update", code="invalid_tool",
                               param=f"{where}tools")
        changes.update(tools=tools, mcp_servers=servers)
    if data.get("tool_choice") is not None:
        changes["tool_choice"] = parse_tool_choice(data["tool_choice"], tools, where=f"{where}tool_choice")
    elif data.get("tools") is not None:
        changes["tool_choice"] = still_valid_choice(current.tool_choice, tools)
    muted: list[SettingWarning] = []
    if data.get("output_modalities") is not None:
        modalities = parse_modalities(data["output_modalities"], where=f"{where}output_modalities")
        if "audio" in modalities and not speech.speaks:  # refusing would lose the rest of the update
            modalities = ("text",)
            muted.append(SettingWarning(f"{where}output_modalities", NO_AUDIO_OUTPUT))
        changes["output_modalities"] = modalities
    if data.get("max_output_tokens") is not None:
        changes["max_output_tokens"] = parse_max_tokens(data["max_output_tokens"], where=f"{where}max_output_tokens")
    if data.get("temperature") is not None:
        changes["temperature"] = parse_temperature(data["temperature"], where=f"{where}temperature")
    if data.get("parallel_tool_calls") is not None:
        changes["parallel_tool_calls"] = _typed(data, "parallel_tool_calls", bool, where)
    warnings = review_fields(data, where=where, voices=speech.voices, models=speech.models, stt_model=speech.stt_model)
    changes.update(_audio_changes(data.get("audio"), where))
    return dataclasses.replace(current, **changes), muted + warnings


def _audio_changes(audio: Any, where: str) -> dict[str, Any]:
    """The GA ``audio`` object's settings: formats, turn detection, transcription, voice and speed."""
    if audio is None:
        return {}
    changes: dict[str, Any] = {}
    audio = _object(audio, f"{where}audio", frozenset({"input", "output"}))
    heard = _object(audio.get("input") or {}, f"{where}audio.input", _AUDIO_INPUT)
    spoken = _object(audio.get("output") or {}, f"{where}audio.output", _AUDIO_OUTPUT)
    if heard.get("format") is not None:
        changes["input_format"] = _format(heard["format"], f"{where}audio.input.format")
    if "turn_detection" in heard:  # null is meaningful: push-to-talk
        changes["turn_detection"] = parse_turn_detection(heard["turn_detection"],
                                                         where=f"{where}audio.input.turn_detection")
    if "transcription" in heard:
        changes["transcription"] = heard["transcription"]
    if heard.get("voxcall_audio_input") is not None:
        param = f"{where}audio.input.voxcall_audio_input"
        if heard["voxcall_audio_input"] not in _AUDIO_INPUT_MODES:
            raise SessionError(f"'{param}' must be 'transcribe' or 'direct'", code="invalid_value", param=param)
        changes["audio_input"] = heard["voxcall_audio_input"]
    if spoken.get("format") is not None:
        changes["output_format"] = _format(spoken["format"], f"{where}audio.output.format")
    if spoken.get("voice") is not None:
        changes["voice"] = _string_value(spoken["voice"], f"{where}audio.output.voice")
    if spoken.get("speed") is not None:
        changes["speed"] = parse_speed(spoken["speed"], where=f"{where}audio.output.speed")
    return changes


def _object(value: Any, where: str, known: frozenset[str]) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise SessionError(f"'{where}' must be an object", code="invalid_type", param=where)
    refuse_unknown(value, known, where)
    return value


def _format(value: Any, where: str) -> AudioFormat:
    try:
        return parse_format(value)
    except AudioFormatError as exc:
        raise SessionError(f"'{where}': {exc}", code="invalid_value", param=where) from None


def _string_value(value: Any, where: str) -> str:
    if not isinstance(value, str) or not value:
        raise SessionError(f"'{where}' must be a non-empty string", code="invalid_value", param=where)
    return value


def response_settings(current: SessionSettings, data: dict[str, Any], *, speech: ServerSpeech = ServerSpeech(),
                      max_tools: int | None = None) -> tuple[SessionSettings, list[SettingWarning]]:
    """The settings of one response: the session's with the ``response.create`` overrides applied (and the
    warnings about overrides accepted but not acted on)."""
    return read_settings(current, data, where="response.", speech=speech, extra=_RESPONSE_ONLY, max_tools=max_tools)


def _typed(data: dict[str, Any], key: str, kind: type, where: str) -> Any:
    value = data[key]
    if not isinstance(value, kind):
        raise SessionError(f"'{where}{key}' must be a {kind.__name__}", code="invalid_type", param=f"{where}{key}")
    return value


def parse_modalities(value: Any, *, where: str) -> tuple[str, ...]:
    """``["text"]`` or ``["audio"]`` (spoken, with a transcript); beta's ``["text", "audio"]`` means audio."""
    if not isinstance(value, list) or not value or not all(isinstance(m, str) for m in value):
        raise SessionError(f"'{where}' must be a non-empty array", code="invalid_type", param=where)
    bad = [m for m in value if m not in ("text", "audio")]
    if bad:
        raise SessionError(f"'{where}': unknown modality {bad[0]!r}", code="invalid_value", param=where)
    return ("audio",) if "audio" in value else ("text",)


def parse_temperature(value: Any, *, where: str) -> float:
    """A sampling temperature from 0 to 2."""
    if not isinstance(value, int | float) or isinstance(value, bool) or not 0 <= value <= 2:
        raise SessionError(f"'{where}' must be a number from 0 to 2", code="invalid_value", param=where)
    return float(value)


def parse_speed(value: Any, *, where: str) -> float:
    """A speaking rate from 0.25 to 1.5 (1.0 is the voice's own pace)."""
    low, high = _SPEED
    if not isinstance(value, int | float) or isinstance(value, bool) or not low <= value <= high:
        raise SessionError(f"'{where}' must be a number from {low} to {high}", code="invalid_value", param=where)
    return float(value)


def parse_metadata(value: Any, *, where: str = "response.metadata") -> dict[str, str] | None:
    """Up to 16 string key/value pairs (keys <= 64 characters, values <= 512)."""
    if value is None:
        return None
    if (not isinstance(value, dict) or len(value) > _MAX_METADATA
            or not all(isinstance(k, str) and isinstance(v, str) and len(k) <= 64 and len(v) <= 512
                       for k, v in value.items())):
        raise SessionError(f"'{where}' must be an object of at most {_MAX_METADATA} string pairs (keys up to 64 "
                            "characters, values up to 512)", code="invalid_value", param=where)
    return dict(value)
