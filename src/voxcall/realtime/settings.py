"""Session and per-response settings: read from ``session.update`` / ``response.create``, checked in full first.

A ``session.update`` either applies completely or not at all: every field is parsed into a new
:class:`SessionSettings` before anything changes, and the first problem becomes a protocol error naming the
parameter (``session.tools[2].parameters``). ``response.create`` overrides are read by the same code.
GA names are primary; beta aliases (``modalities``, ``max_response_output_tokens``) are accepted.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field
from typing import Any

from jsonschema import exceptions as js_exceptions
from jsonschema import validators

from voxcall.realtime.protocol import ProtocolError
from voxcall.tools import Tool
from voxcall.tools.codecalls.prompt import ToolChoice, forced_tool_name

_TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
_MAX_TOKENS = 1_000_000
_MAX_METADATA = 16
# Fields of the GA and beta session objects that voxcall accepts without acting on them (yet).
_TOLERATED = frozenset({
    "type", "object", "id", "model", "audio", "include", "tracing", "truncation", "prompt", "parallel_tool_calls",
    "reasoning", "expires_at", "client_secret", "voice", "input_audio_format", "output_audio_format",
    "input_audio_transcription", "input_audio_noise_reduction", "turn_detection", "speed",
})
_SETTINGS = frozenset({"instructions", "tools", "tool_choice", "output_modalities", "modalities", "max_output_tokens",
                       "max_response_output_tokens", "temperature"})
_RESPONSE_ONLY = frozenset({"metadata", "conversation", "input"})


@dataclass
class SessionSettings:
    """What a response is generated with, unless ``response.create`` overrides it."""

    instructions: str = ""
    tools: list[Tool] = field(default_factory=list)
    tool_choice: ToolChoice = "auto"
    output_modalities: list[str] = field(default_factory=lambda: ["text"])
    max_output_tokens: int | None = None
    temperature: float | None = None

    def to_wire(self) -> dict[str, Any]:
        """The settings as fields of a GA session object."""
        return {"instructions": self.instructions, "tools": [t.to_openai() for t in self.tools],
                "tool_choice": _choice_wire(self.tool_choice), "output_modalities": list(self.output_modalities),
                "max_output_tokens": "inf" if self.max_output_tokens is None else self.max_output_tokens}


def _choice_wire(choice: ToolChoice) -> Any:
    name = forced_tool_name(choice)
    return {"type": "function", "name": name} if name else choice


def apply_settings(current: SessionSettings, data: dict[str, Any], *, where: str,
                   extra: frozenset[str] = frozenset()) -> SessionSettings:
    """A copy of ``current`` with the fields of ``data`` applied; a ``ProtocolError`` for the first bad one.

    ``extra`` names further fields the caller reads itself (``response.create``'s metadata, input …).
    """
    unknown = sorted(set(data) - _SETTINGS - _TOLERATED - extra)
    if unknown:
        raise ProtocolError(f"unknown parameter '{where}{unknown[0]}'", code="unknown_parameter",
                            param=f"{where}{unknown[0]}")
    new = dataclasses.replace(current)
    if data.get("instructions") is not None:
        new.instructions = _typed(data, "instructions", str, where)
    if data.get("tools") is not None:
        new.tools = parse_tools(data["tools"], where=f"{where}tools")
    if data.get("tool_choice") is not None:
        new.tool_choice = parse_tool_choice(data["tool_choice"], new.tools, where=f"{where}tool_choice")
    elif data.get("tools") is not None:
        new.tool_choice = _still_valid_choice(new.tool_choice, new.tools)
    modalities = data.get("output_modalities", data.get("modalities"))
    if modalities is not None:
        new.output_modalities = parse_modalities(modalities, where=f"{where}output_modalities")
    tokens_key = "max_output_tokens" if "max_output_tokens" in data else "max_response_output_tokens"
    if data.get(tokens_key) is not None:
        new.max_output_tokens = parse_max_tokens(data[tokens_key], where=f"{where}{tokens_key}")
    if data.get("temperature") is not None:
        new.temperature = parse_temperature(data["temperature"], where=f"{where}temperature")
    return new


def response_settings(current: SessionSettings, data: dict[str, Any]) -> SessionSettings:
    """The settings of one response: the session's with the ``response.create`` overrides applied."""
    return apply_settings(current, data, where="response.", extra=_RESPONSE_ONLY)


def only_metadata(data: dict[str, Any]) -> bool:
    """Whether a ``response.create`` asks for nothing but the default response (metadata aside)."""
    return all(k == "metadata" or (k == "conversation" and data[k] in ("auto", None)) for k in data)


def _typed(data: dict[str, Any], key: str, kind: type, where: str) -> Any:
    value = data[key]
    if not isinstance(value, kind):
        raise ProtocolError(f"'{where}{key}' must be a {kind.__name__}", code="invalid_type", param=f"{where}{key}")
    return value


def parse_tools(value: Any, *, where: str) -> list[Tool]:
    """Read a tools array: function tools with valid names and JSON Schema parameters."""
    if not isinstance(value, list):
        raise ProtocolError(f"'{where}' must be an array of tools", code="invalid_type", param=where)
    tools: list[Tool] = []
    for n, data in enumerate(value):
        param = f"{where}[{n}]"
        if isinstance(data, dict) and data.get("type") == "mcp":
            raise ProtocolError(f"'{param}': MCP tools are not supported yet", code="unsupported_tool_type",
                                param=param)
        try:
            tool = Tool.from_openai(data)
        except ValueError as exc:
            raise ProtocolError(f"'{param}': {exc}", code="invalid_tool", param=param) from None
        if not _TOOL_NAME.match(tool.name):
            raise ProtocolError(f"'{param}.name' must match ^[a-zA-Z0-9_-]{{1,64}}$", code="invalid_tool",
                                param=f"{param}.name")
        if any(t.name == tool.name for t in tools):
            raise ProtocolError(f"'{param}.name': duplicate tool name {tool.name!r}", code="invalid_tool",
                                param=f"{param}.name")
        _check_schema(tool.parameters, f"{param}.parameters")
        tools.append(tool)
    return tools


def _check_schema(schema: dict[str, Any], param: str) -> None:
    if schema.get("type", "object") != "object":
        raise ProtocolError(f"'{param}' must be a JSON Schema with type 'object'", code="invalid_tool", param=param)
    try:
        validators.validator_for(schema).check_schema(schema)
    except js_exceptions.SchemaError as exc:
        where = "/".join(str(p) for p in exc.absolute_path)
        raise ProtocolError(f"'{param}' is not a valid JSON Schema: {exc.message}" + (f" (at {where})" if where
                            else ""), code="invalid_tool", param=param) from None


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
    """Output modalities; text only until speech output exists."""
    if not isinstance(value, list) or not value or not all(isinstance(m, str) for m in value):
        raise ProtocolError(f"'{where}' must be a non-empty array", code="invalid_type", param=where)
    bad = [m for m in value if m not in ("text", "audio")]
    if bad:
        raise ProtocolError(f"'{where}': unknown modality {bad[0]!r}", code="invalid_value", param=where)
    if "audio" in value:
        raise ProtocolError("audio output is not available in this server yet; use [\"text\"]",
                            code="unsupported_modality", param=where)
    return ["text"]


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
