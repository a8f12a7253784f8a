"""A session's settings: one frozen value, the session's own, and each response's (the session's with a request's
overrides applied).

The fields are the GA session object's nouns (instructions, tools, output modalities, audio formats, turn detection,
transcription, voice …). A protocol edge reads its clients' settings into a :class:`SessionSettings`
(:mod:`voxcall.realtime.settings` for the Realtime protocol's ``session.update``); the core compares two of them
(a hidden follow-up is claimed only by a request with the settings it was generated with) and never changes one.
The values that every edge reads alike (tools and the tool choice, the token limit) are read here, each problem a
:class:`~voxcall.core.errors.SessionError` naming the parameter.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from jsonschema import exceptions as js_exceptions
from jsonschema import validators

from voxcall.audio.formats import PCM24K, AudioFormat
from voxcall.config import AudioInput
from voxcall.core.errors import SessionError
from voxcall.core.hearing.turn_detection import TurnDetection
from voxcall.speech.voices import PACKAGED_VOICE
from voxcall.tools import Tool
from voxcall.tools.codecalls.prompt import ToolChoice, forced_tool_name
from voxcall.tools.names import TOOL_NAME_PATTERN
from voxcall.tools.validation import MAX_SCHEMA_DEPTH, nesting_depth

DEFAULT_VOICE = PACKAGED_VOICE
"""The name of the server's default voice unless its operator chose another (the embedded Piper voice)."""

MAX_TOKENS = 1_000_000
"""The largest ``max_output_tokens`` a client may set."""


@dataclass(frozen=True)
class SessionSettings:
    """What a response is generated with, unless a request overrides it.

    ``transcription`` and ``mcp_servers`` are kept as the client set them (checked when set); ``voice`` is a voice
    of the server or an OpenAI voice name (spoken by the default); ``audio_input`` ``direct``: the model hears the
    user's audio itself.
    """

    instructions: str = ""
    tools: tuple[Tool, ...] = ()
    tool_choice: ToolChoice = "auto"
    output_modalities: tuple[str, ...] = ("text",)
    max_output_tokens: int | None = None
    temperature: float | None = None
    input_format: AudioFormat = PCM24K
    output_format: AudioFormat = PCM24K
    turn_detection: TurnDetection | None = field(default_factory=TurnDetection)
    transcription: Mapping[str, Any] | None = None
    voice: str = DEFAULT_VOICE
    speed: float = 1.0
    parallel_tool_calls: bool = True
    mcp_servers: tuple[Mapping[str, Any], ...] = ()
    audio_input: AudioInput = "transcribe"

    @property
    def audio_out(self) -> bool:
        """Whether responses are spoken (audio with a transcript) rather than written."""
        return "audio" in self.output_modalities


def parse_tools(value: Any, *, where: str, limit: int | None = None,
                ) -> tuple[tuple[Tool, ...], tuple[dict[str, Any], ...]]:
    """Read a tools array: function tools with valid names and JSON Schema parameters, and MCP server entries
    (``{type: "mcp", ...}``, checked when the session starts them)."""
    if not isinstance(value, list):
        raise SessionError(f"'{where}' must be an array of tools", code="invalid_type", param=where)
    if limit is not None and len(value) > limit:
        raise SessionError(f"'{where}' holds {len(value)} tools; this server allows at most {limit} "
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
            raise SessionError(f"'{param}': {exc}", code="invalid_tool", param=param) from None
        except RecursionError:
            raise SessionError(f"'{param}.parameters' is nested too deeply", code="invalid_tool",
                                param=f"{param}.parameters") from None
        if not TOOL_NAME_PATTERN.match(tool.name):
            raise SessionError(f"'{param}.name' must match ^[a-zA-Z0-9_-]{{1,64}}$", code="invalid_tool",
                                param=f"{param}.name")
        if tool.name in names:
            raise SessionError(f"'{param}.name': duplicate tool name {tool.name!r}", code="invalid_tool",
                                param=f"{param}.name")
        _check_schema(tool.parameters, f"{param}.parameters")
        tools.append(tool)
        names.add(tool.name)
    return tuple(tools), tuple(servers)


def _check_schema(schema: dict[str, Any], param: str) -> None:
    if schema.get("type", "object") != "object":
        raise SessionError(f"'{param}' must be a JSON Schema with type 'object'", code="invalid_tool", param=param)
    if nesting_depth(schema, MAX_SCHEMA_DEPTH) > MAX_SCHEMA_DEPTH:
        raise SessionError(f"'{param}' is nested more than {MAX_SCHEMA_DEPTH} levels deep", code="invalid_tool",
                            param=param)
    try:
        validators.validator_for(schema).check_schema(schema)
    except js_exceptions.SchemaError as exc:
        where = "/".join(str(p) for p in exc.absolute_path)
        raise SessionError(f"'{param}' is not a valid JSON Schema: {exc.message}" + (f" (at {where})" if where
                            else ""), code="invalid_tool", param=param) from None
    except RecursionError:
        raise SessionError(f"'{param}' is nested too deeply", code="invalid_tool", param=param) from None
    except (TypeError, AttributeError, KeyError, ValueError) as exc:  # jsonschema trips on e.g. "$schema": 5
        raise SessionError(f"'{param}' is not a valid JSON Schema ({type(exc).__name__} while checking it; look at "
                            "its \"$schema\" and keyword values)", code="invalid_tool", param=param) from None


def parse_tool_choice(value: Any, tools: tuple[Tool, ...], *, where: str) -> ToolChoice:
    """``auto`` / ``none`` / ``required`` or ``{"type": "function", "name": N}`` naming a declared tool."""
    if value in ("auto", "none", "required"):
        return str(value)
    name = forced_tool_name(value) if isinstance(value, dict) and value.get("type") == "function" else None
    if name is None:
        raise SessionError(f"'{where}' must be 'auto', 'none', 'required' or {{\"type\": \"function\", "
                            "\"name\": ...}", code="invalid_value", param=where)
    if not any(t.name == name for t in tools):
        raise SessionError(f"'{where}' names tool {name!r}, which is not among the tools", code="invalid_value",
                            param=where)
    return {"type": "function", "name": name}


def still_valid_choice(choice: ToolChoice, tools: tuple[Tool, ...]) -> ToolChoice:
    """A forced tool that the new tool list no longer has falls back to ``auto``."""
    name = forced_tool_name(choice)
    return "auto" if name is not None and not any(t.name == name for t in tools) else choice


def parse_max_tokens(value: Any, *, where: str) -> int | None:
    """An integer token limit, or ``"inf"`` for none."""
    if value == "inf":
        return None
    if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= MAX_TOKENS:
        raise SessionError(f"'{where}' must be an integer from 1 to {MAX_TOKENS} or 'inf'", code="invalid_value",
                            param=where)
    return value
