"""Session and per-response settings: read from ``session.update`` / ``response.create``, checked in full first.

A ``session.update`` either applies completely or not at all: every field is parsed into a new
:class:`SessionSettings` before anything changes, and the first problem becomes a protocol error naming the
parameter (``session.tools[2].parameters``). ``response.create`` overrides are read by the same code.
Settings arrive in the GA shape (beta spellings are rewritten first, :mod:`voxcall.core.beta`). Fields that
voxcall refuses or only warns about are reviewed in :mod:`voxcall.core.session_fields`; turn detection is read
in :mod:`voxcall.core.hearing.turn_detection`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from jsonschema import exceptions as js_exceptions
from jsonschema import validators

from voxcall.audio.formats import PCM24K, AudioFormat, AudioFormatError, parse_format
from voxcall.core.hearing.turn_detection import TurnDetection, parse_turn_detection
from voxcall.core.protocol import ProtocolError
from voxcall.core.session_fields import SettingWarning, review_fields
from voxcall.speech.voices import PACKAGED_VOICE, VoiceCatalog
from voxcall.tools import Tool
from voxcall.tools.codecalls.prompt import ToolChoice, forced_tool_name
from voxcall.tools.names import TOOL_NAME_PATTERN
from voxcall.tools.validation import MAX_SCHEMA_DEPTH, nesting_depth

__all__ = ["DEFAULT_VOICE", "ServerSpeech", "SessionSettings", "TurnDetection", "parse_metadata",
           "read_settings", "response_settings"]

DEFAULT_VOICE = PACKAGED_VOICE
"""The name of the server's default voice unless its operator chose another (the embedded Piper voice)."""

_MAX_TOKENS = 1_000_000
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
    models: Mapping[str, frozenset[str]] = field(default_factory=lambda: {"tiny.en": frozenset({"en"})})
    """The speech-to-text models a session may choose, by name, with the languages each understands."""
    stt_model: str = "tiny.en"  # the server's own (the one a session that names none hears with)


@dataclass
class SessionSettings:
    """What a response is generated with, unless ``response.create`` overrides it."""

    instructions: str = ""
    tools: list[Tool] = field(default_factory=list)
    tool_choice: ToolChoice = "auto"
    output_modalities: list[str] = field(default_factory=lambda: ["text"])
    max_output_tokens: int | None = None
    temperature: float | None = None
    input_format: AudioFormat = PCM24K
    output_format: AudioFormat = PCM24K
    turn_detection: TurnDetection | None = field(default_factory=TurnDetection)
    transcription: dict[str, Any] | None = None  # as the client set it: language checked, the rest warned
    voice: str = DEFAULT_VOICE  # as the client named it: a voice of the server, or an OpenAI name (the default)
    speed: float = 1.0  # speaking rate, 0.25 to 1.5 (the TTS stretches or shortens its phonemes)
    parallel_tool_calls: bool = True  # False: at most one tool call per response
    mcp_servers: list[dict[str, Any]] = field(default_factory=list)  # {type: "mcp", ...} tools, as the client sent
    audio_input: str = "transcribe"  # "direct": the model hears the user's audio (audio.input.voxcall_audio_input)

    @property
    def audio_out(self) -> bool:
        """Whether responses are spoken (audio with a transcript) rather than written."""
        return "audio" in self.output_modalities

    def to_wire(self) -> dict[str, Any]:
        """The settings as fields of a GA session object."""
        turns = self.turn_detection.to_wire() if self.turn_detection else None
        return {"instructions": self.instructions, "tools": [*(t.to_openai() for t in self.tools), *self.mcp_servers],
                "tool_choice": _choice_wire(self.tool_choice), "output_modalities": list(self.output_modalities),
                "max_output_tokens": "inf" if self.max_output_tokens is None else self.max_output_tokens,
                "parallel_tool_calls": self.parallel_tool_calls, "truncation": "auto",
                "audio": {"input": {"format": self.input_format.to_wire(), "turn_detection": turns,
                                    "transcription": self.transcription, "noise_reduction": None,
                                    "voxcall_audio_input": self.audio_input},
                          "output": {"format": self.output_format.to_wire(), "voice": self.voice,
                                     "speed": self.speed}}}


def _choice_wire(choice: ToolChoice) -> Any:
    name = forced_tool_name(choice)
    return {"type": "function", "name": name} if name else choice


NO_AUDIO_OUTPUT = "audio output is not available: this server runs without text-to-speech; answering in text"
"""The warning for audio output asked of a server without a voice (the rest of the settings still apply)."""


def read_settings(current: SessionSettings, data: dict[str, Any], *, where: str, speech: ServerSpeech = ServerSpeech(),
                  extra: frozenset[str] = frozenset(), max_tools: int | None = None,
                  ) -> tuple[SessionSettings, list[SettingWarning]]:
    """A copy of ``current`` with the fields of ``data`` applied, and the warnings about fields accepted but not
    acted on; a ``ProtocolError`` for the first bad or refused field.

    ``speech`` says what this server can hear and say (without a voice, audio output becomes text, with a
    warning). ``extra`` names further
    fields the caller reads itself (``response.create``'s metadata, input …); ``max_tools`` caps the function tools.
    """
    unknown = sorted(set(data) - _SETTINGS - _ECHOED - extra)
    if unknown:
        raise ProtocolError(f"unknown parameter '{where}{unknown[0]}'", code="unknown_parameter",
                            param=f"{where}{unknown[0]}")
    new = dataclasses.replace(current)
    if data.get("instructions") is not None:
        new.instructions = _typed(data, "instructions", str, where)
    if data.get("tools") is not None:
        new.tools, new.mcp_servers = parse_tools(data["tools"], where=f"{where}tools", limit=max_tools)
        if new.mcp_servers and where != "session.":
            raise ProtocolError("MCP servers can only be declared in session.update", code="invalid_tool",
                                param=f"{where}tools")
    if data.get("tool_choice") is not None:
        new.tool_choice = parse_tool_choice(data["tool_choice"], new.tools, where=f"{where}tool_choice")
    elif data.get("tools") is not None:
        new.tool_choice = _still_valid_choice(new.tool_choice, new.tools)
    muted: list[SettingWarning] = []
    if data.get("output_modalities") is not None:
        new.output_modalities = parse_modalities(data["output_modalities"], where=f"{where}output_modalities")
        if new.audio_out and not speech.speaks:  # refusing would lose the rest of the update (instructions, tools)
            new.output_modalities = ["text"]
            muted.append(SettingWarning(f"{where}output_modalities", NO_AUDIO_OUTPUT))
    if data.get("max_output_tokens") is not None:
        new.max_output_tokens = parse_max_tokens(data["max_output_tokens"], where=f"{where}max_output_tokens")
    if data.get("temperature") is not None:
        new.temperature = parse_temperature(data["temperature"], where=f"{where}temperature")
    if data.get("parallel_tool_calls") is not None:
        new.parallel_tool_calls = _typed(data, "parallel_tool_calls", bool, where)
    warnings = review_fields(data, where=where, voices=speech.voices, models=speech.models, stt_model=speech.stt_model)
    return _apply_audio(new, data.get("audio"), where), muted + warnings


def _apply_audio(new: SessionSettings, audio: Any, where: str) -> SessionSettings:
    """The GA ``audio`` object: formats, turn detection, transcription, voice and speed."""
    if audio is None:
        return new
    audio = _object(audio, f"{where}audio", frozenset({"input", "output"}))
    heard = _object(audio.get("input") or {}, f"{where}audio.input", _AUDIO_INPUT)
    spoken = _object(audio.get("output") or {}, f"{where}audio.output", _AUDIO_OUTPUT)
    if heard.get("format") is not None:
        new.input_format = _format(heard["format"], f"{where}audio.input.format")
    if "turn_detection" in heard:  # null is meaningful: push-to-talk
        new.turn_detection = parse_turn_detection(heard["turn_detection"], where=f"{where}audio.input.turn_detection")
    if "transcription" in heard:
        new.transcription = heard["transcription"]
    if heard.get("voxcall_audio_input") is not None:
        param = f"{where}audio.input.voxcall_audio_input"
        if heard["voxcall_audio_input"] not in _AUDIO_INPUT_MODES:
            raise ProtocolError(f"'{param}' must be 'transcribe' or 'direct'", code="invalid_value", param=param)
        new.audio_input = heard["voxcall_audio_input"]
    if spoken.get("format") is not None:
        new.output_format = _format(spoken["format"], f"{where}audio.output.format")
    if spoken.get("voice") is not None:
        new.voice = _string_value(spoken["voice"], f"{where}audio.output.voice")
    if spoken.get("speed") is not None:
        new.speed = parse_speed(spoken["speed"], where=f"{where}audio.output.speed")
    return new


def _object(value: Any, where: str, known: frozenset[str]) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ProtocolError(f"'{where}' must be an object", code="invalid_type", param=where)
    unknown = sorted(set(value) - known)
    if unknown:
        raise ProtocolError(f"unknown parameter '{where}.{unknown[0]}'", code="unknown_parameter",
                            param=f"{where}.{unknown[0]}")
    return value


def _format(value: Any, where: str) -> AudioFormat:
    try:
        return parse_format(value)
    except AudioFormatError as exc:
        raise ProtocolError(f"'{where}': {exc}", code="invalid_value", param=where) from None


def _string_value(value: Any, where: str) -> str:
    if not isinstance(value, str) or not value:
        raise ProtocolError(f"'{where}' must be a non-empty string", code="invalid_value", param=where)
    return value


def response_settings(current: SessionSettings, data: dict[str, Any], *, speech: ServerSpeech = ServerSpeech(),
                      max_tools: int | None = None) -> tuple[SessionSettings, list[SettingWarning]]:
    """The settings of one response: the session's with the ``response.create`` overrides applied (and the
    warnings about overrides accepted but not acted on)."""
    return read_settings(current, data, where="response.", speech=speech, extra=_RESPONSE_ONLY, max_tools=max_tools)


def _typed(data: dict[str, Any], key: str, kind: type, where: str) -> Any:
    value = data[key]
    if not isinstance(value, kind):
        raise ProtocolError(f"'{where}{key}' must be a {kind.__name__}", code="invalid_type", param=f"{where}{key}")
    return value


def parse_tools(value: Any, *, where: str, limit: int | None = None) -> tuple[list[Tool], list[dict[str, Any]]]:
    """Read a tools array: function tools with valid names and JSON Schema parameters, and MCP server entries
    (``{type: "mcp", ...}``, checked when the session starts them)."""
    if not isinstance(value, list):
        raise ProtocolError(f"'{where}' must be an array of tools", code="invalid_type", param=where)
    if limit is not None and len(value) > limit:
        raise ProtocolError(f"'{where}' holds {len(value)} tools; this server allows at most {limit} "
                            "(setting session.max_tools)", code="too_many_tools", param=where)
    tools: list[Tool] = []
    names: set[str] = set()
    servers: list[dict[str, Any]] = []
    for n, data in enumerate(value):
        param = f"{where}[{n}]"
        if isinstance(data, dict) and data.get("type") == "mcp":
            servers.append(data)
            continue
        try:
            tool = Tool.from_openai(data)
        except ValueError as exc:
            raise ProtocolError(f"'{param}': {exc}", code="invalid_tool", param=param) from None
        except RecursionError:
            raise ProtocolError(f"'{param}.parameters' is nested too deeply", code="invalid_tool",
                                param=f"{param}.parameters") from None
        if not TOOL_NAME_PATTERN.match(tool.name):
            raise ProtocolError(f"'{param}.name' must match ^[a-zA-Z0-9_-]{{1,64}}$", code="invalid_tool",
                                param=f"{param}.name")
        if tool.name in names:
            raise ProtocolError(f"'{param}.name': duplicate tool name {tool.name!r}", code="invalid_tool",
                                param=f"{param}.name")
        _check_schema(tool.parameters, f"{param}.parameters")
        tools.append(tool)
        names.add(tool.name)
    return tools, servers


def _check_schema(schema: dict[str, Any], param: str) -> None:
    if schema.get("type", "object") != "object":
        raise ProtocolError(f"'{param}' must be a JSON Schema with type 'object'", code="invalid_tool", param=param)
    if nesting_depth(schema, MAX_SCHEMA_DEPTH) > MAX_SCHEMA_DEPTH:
        raise ProtocolError(f"'{param}' is nested more than {MAX_SCHEMA_DEPTH} levels deep", code="invalid_tool",
                            param=param)
    try:
        validators.validator_for(schema).check_schema(schema)
    except js_exceptions.SchemaError as exc:
        where = "/".join(str(p) for p in exc.absolute_path)
        raise ProtocolError(f"'{param}' is not a valid JSON Schema: {exc.message}" + (f" (at {where})" if where
                            else ""), code="invalid_tool", param=param) from None
    except RecursionError:
        raise ProtocolError(f"'{param}' is nested too deeply", code="invalid_tool", param=param) from None
    except (TypeError, AttributeError, KeyError, ValueError) as exc:  # jsonschema trips on e.g. "$schema": 5
        raise ProtocolError(f"'{param}' is not a valid JSON Schema ({type(exc).__name__} while checking it; look at "
                            "its \"$schema\" and keyword values)", code="invalid_tool", param=param) from None


def parse_tool_choice(value: Any, tools: list[Tool], *, where: str) -> ToolChoice:
    """``auto`` / ``none`` / ``required`` or ``{"type": "function", "name": N}`` naming a declared tool."""
    if value in ("auto", "none", "required"):
        return str(value)
    name = forced_tool_name(value) if isinstance(value, dict) and value.get("type") == "function" else None
    if name is None:
        raise ProtocolError(f"'{where}' must be 'auto', 'none', 'required' or {{\"type\": \"function\", "
                            "\"name\": ...}", code="invalid_value", param=where)
    if not any(t.name == name for t in tools):
        raise ProtocolError(f"'{where}' names tool {name!r}, which is not among the tools", code="invalid_value",
                            param=where)
    return {"type": "function", "name": name}


def _still_valid_choice(choice: ToolChoice, tools: list[Tool]) -> ToolChoice:
    """A forced tool that the new tool list no longer has falls back to ``auto``."""
    name = forced_tool_name(choice)
    return "auto" if name is not None and not any(t.name == name for t in tools) else choice


def parse_modalities(value: Any, *, where: str) -> list[str]:
    """``["text"]`` or ``["audio"]`` (spoken, with a transcript); beta's ``["text", "audio"]`` means audio."""
    if not isinstance(value, list) or not value or not all(isinstance(m, str) for m in value):
        raise ProtocolError(f"'{where}' must be a non-empty array", code="invalid_type", param=where)
    bad = [m for m in value if m not in ("text", "audio")]
    if bad:
        raise ProtocolError(f"'{where}': unknown modality {bad[0]!r}", code="invalid_value", param=where)
    return ["audio"] if "audio" in value else ["text"]


def parse_max_tokens(value: Any, *, where: str) -> int | None:
    """An integer token limit, or ``"inf"`` for none."""
    if value == "inf":
        return None
    if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= _MAX_TOKENS:
        raise ProtocolError(f"'{where}' must be an integer from 1 to {_MAX_TOKENS} or 'inf'", code="invalid_value",
                            param=where)
    return value


def parse_temperature(value: Any, *, where: str) -> float:
    """A sampling temperature from 0 to 2."""
    if not isinstance(value, int | float) or isinstance(value, bool) or not 0 <= value <= 2:
        raise ProtocolError(f"'{where}' must be a number from 0 to 2", code="invalid_value", param=where)
    return float(value)


def parse_speed(value: Any, *, where: str) -> float:
    """A speaking rate from 0.25 to 1.5 (1.0 is the voice's own pace)."""
    low, high = _SPEED
    if not isinstance(value, int | float) or isinstance(value, bool) or not low <= value <= high:
        raise ProtocolError(f"'{where}' must be a number from {low} to {high}", code="invalid_value", param=where)
    return float(value)


def parse_metadata(value: Any, *, where: str = "response.metadata") -> dict[str, str] | None:
    """Up to 16 string key/value pairs (keys <= 64 characters, values <= 512)."""
    if value is None:
        return None
    if (not isinstance(value, dict) or len(value) > _MAX_METADATA
            or not all(isinstance(k, str) and isinstance(v, str) and len(k) <= 64 and len(v) <= 512
                       for k, v in value.items())):
        raise ProtocolError(f"'{where}' must be an object of at most {_MAX_METADATA} string pairs (keys up to 64 "
                            "characters, values up to 512)", code="invalid_value", param=where)
    return dict(value)
