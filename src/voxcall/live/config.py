"""A GPT-Live session's configuration: read from ``session.start``, changed by ``session.update``, shown back.

The SDK's models (``openai.types.live``) say what each field may hold; on top of them, as OpenAI's service does, a
field the protocol does not know is refused (``unknown_parameter``), and so is a change to a field that is
immutable after startup (everything but ``delegation`` and ``triggers``). What voxcall cannot do is refused by name
rather than ignored: ``decisions`` delegation, decision triggers, ``store: true`` (voxcall keeps no recordings), a
Responses backend tool that runs on OpenAI's side (web search, file search …), and a backend ``model`` the server
does not have. Every refusal is a :class:`LiveError` naming the parameter, which the session answers with an
``error`` event.
"""

from __future__ import annotations

import copy
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from openai.types.live import SessionConfig, SessionUpdateConfig
from pydantic import BaseModel, ValidationError

from voxcall.audio.formats import PCM24K, PCMA, PCMU, AudioFormat
from voxcall.core.errors import SessionError, refuse_unknown
from voxcall.validation import Problem, first_problem

DelegationKind = Literal["client", "responses"]

LIVE_FORMATS: dict[tuple[str, int], AudioFormat] = {
    ("audio/pcm", PCM24K.rate): PCM24K, ("audio/pcm", 16000): PCM24K, ("audio/pcmu", 8000): PCMU,
    ("audio/pcma", 8000): PCMA,
}
"""The Live wire formats and the core format each is carried in: PCM16 at 16 kHz is resampled to and from 24 kHz
at the edge; the others are the core's own."""

DEFAULT_FORMAT = PCM24K.to_wire()
"""The format of a session that names none (the protocol does not say; OpenAI's examples use PCM16 at 24 kHz)."""

_IMMUTABLE = ("model", "instructions", "audio", "input", "client", "store", "safety_identifier")
_START_FIELDS = frozenset({*_IMMUTABLE, "delegation", "triggers"})
_AUDIO_FIELDS = frozenset({"format", "output"})
_DELEGATION_FIELDS = frozenset({"type", "acknowledgement_delay_ms", "responses", "decisions"})
_RESPONSES_FIELDS = frozenset({"model", "instructions", "max_output_tokens", "parallel_tool_calls", "reasoning",
                               "service_tier", "text", "tool_choice", "tools"})
_TOOL_TYPES_RUN_HERE = frozenset({"function", "mcp"})


class LiveError(SessionError):
    """A client command voxcall refuses, as the Live protocol reports it (see :func:`error_wire`)."""

    def __init__(self, message: str, *, code: str = "invalid_value", param: str | None = None,
                 kind: str = "invalid_request_error") -> None:
        super().__init__(message, code=code, param=param, kind=kind)



def error_wire(err: SessionError, client_event_id: str | None) -> dict[str, Any]:
    """The ``error`` object of an ``error`` event, for any error of a Live session (its own or its core's)."""
    error: dict[str, Any] = {"type": err.kind, "code": err.code, "message": err.message}
    if err.param is not None:
        error["param"] = err.param
    if client_event_id is not None:
        error["client_event_id"] = client_event_id
    return error


@dataclass(frozen=True)
class Delegation:
    """Who handles the tasks the voice delegates, and how long the voice waits before it acknowledges one."""

    kind: DelegationKind = "client"
    acknowledgement_delay_ms: int = 0
    responses: Mapping[str, Any] = field(default_factory=dict)
    """The Responses backend's settings (``responses`` delegation): model, instructions, tools, tool_choice …"""

    def to_wire(self) -> dict[str, Any]:
        wire: dict[str, Any] = {"type": self.kind, "acknowledgement_delay_ms": self.acknowledgement_delay_ms}
        if self.kind == "responses":
            wire["responses"] = copy.deepcopy(dict(self.responses))
        return wire


@dataclass(frozen=True)
class LiveConfig:
    """One session's resolved configuration."""

    model: str
    wire_format: Mapping[str, Any]
    instructions: str | None = None
    voice: str | None = None
    delegation: Delegation = Delegation()
    input: tuple[Mapping[str, Any], ...] = ()
    safety_identifier: str | None = None

    @property
    def core_format(self) -> AudioFormat:
        """The core format the wire format is carried in (see :data:`LIVE_FORMATS`)."""
        return LIVE_FORMATS[(self.wire_format["type"], self.wire_format["rate"])]

    @property
    def wire_rate(self) -> int:
        return int(self.wire_format["rate"])

    def to_wire(self, *, session_id: str, expires_at: int) -> dict[str, Any]:
        """The ``SessionResource`` of ``session.started``/``.updated``/``.closed``."""
        audio: dict[str, Any] = {"format": dict(self.wire_format)}
        if self.voice is not None:
            audio["output"] = {"voice": self.voice}
        wire: dict[str, Any] = {"id": session_id, "object": "live.session", "expires_at": expires_at,
                                "model": self.model, "status": "active", "audio": audio,
                                "delegation": self.delegation.to_wire(), "triggers": [], "store": False}
        if self.instructions is not None:
            wire["instructions"] = self.instructions
        if self.input:
            wire["input"] = [copy.deepcopy(dict(item)) for item in self.input]
        if self.safety_identifier is not None:
            wire["safety_identifier"] = self.safety_identifier
        return wire


def read_start(data: Any, *, backend_models: Collection[str] | None) -> LiveConfig:
    """The configuration of ``session.start``'s ``session``; ``backend_models`` are the names a Responses
    delegation's ``model`` may take (the server's LLM backends; None: any, the unknown ones served by the server's
    own)."""
    session = _object(data, "session")
    _known(session, _START_FIELDS, "session")
    _validate(SessionConfig, session, "session")
    if session.get("store"):
        raise LiveError("voxcall does not store sessions (no forks, no recordings): 'store' must be false",
                        code="unsupported_parameter", param="session.store")
    _check_triggers(session.get("triggers"))
    audio = session.get("audio") or {}
    _known(audio, _AUDIO_FIELDS, "session.audio")
    wire_format = dict(audio.get("format") or DEFAULT_FORMAT)
    if (wire_format.get("type"), wire_format.get("rate")) not in LIVE_FORMATS:
        raise LiveError(f"{wire_format.get('type')} audio is only supported at 8000 Hz",
                        param="session.audio.format.rate")
    voice = (audio.get("output") or {}).get("voice")
    if isinstance(voice, Mapping):
        voice = voice.get("id")
    instructions = session.get("instructions")
    return LiveConfig(model=session["model"], wire_format=wire_format,
                      instructions=instructions if instructions and instructions.strip() else None,
                      voice=voice, delegation=_delegation(session.get("delegation"), None, backend_models),
                      input=tuple(session.get("input") or ()), safety_identifier=session.get("safety_identifier"))


def read_update(current: LiveConfig, data: Any, *, backend_models: Collection[str] | None) -> LiveConfig:
    """``current`` changed by ``session.update``'s ``session``: only ``delegation`` (of the same type) and
    ``triggers`` may change."""
    update = _object(data, "session")
    for name in _IMMUTABLE:
        if name in update:
            raise LiveError(f"'session.{name}' cannot change after the session started; only 'delegation' and "
                            "'triggers' can", code="immutable_parameter", param=f"session.{name}")
    _known(update, frozenset({"delegation", "triggers"}), "session")
    _validate(SessionUpdateConfig, update, "session")
    _check_triggers(update.get("triggers"))
    if update.get("delegation") is None:
        return current
    return replace(current, delegation=_delegation(update["delegation"], current.delegation, backend_models))


def _delegation(data: Any, current: Delegation | None, backend_models: Collection[str] | None) -> Delegation:
    """A delegation from its wire form; under ``current`` (an update) omitted settings keep their values and the
    type may not change."""
    if data is None:
        return Delegation()
    _known(data, _DELEGATION_FIELDS, "session.delegation")
    kind = data.get("type")
    if kind == "decisions":
        raise LiveError("voxcall does not support 'decisions' delegation; use 'client' (your application handles "
                        "the task) or 'responses' (voxcall's own LLM and tools do)", code="unsupported_parameter",
                        param="session.delegation.type")
    if current is not None and kind != current.kind:
        raise LiveError(f"the delegation type cannot change from {current.kind!r} to {kind!r} after startup",
                        code="immutable_parameter", param="session.delegation.type")
    delay = data.get("acknowledgement_delay_ms")
    if delay is None:
        delay = current.acknowledgement_delay_ms if current is not None else 0
    if delay < 0:
        raise LiveError("'acknowledgement_delay_ms' must not be negative",
                        param="session.delegation.acknowledgement_delay_ms")
    if kind != "responses":
        return Delegation("client", delay)
    responses = {**(current.responses if current is not None else {}), **(data.get("responses") or {})}
    _check_responses(responses, backend_models)
    return Delegation("responses", delay, responses)


def _check_responses(responses: dict[str, Any], backend_models: Collection[str] | None) -> None:
    where = "session.delegation.responses"
    _known(responses, _RESPONSES_FIELDS, where)
    model = responses.get("model")
    if backend_models is not None and model not in backend_models:
        raise LiveError(f"no backend model {model!r} on this server; its models are {sorted(backend_models)} "
                        "(the operator configures them)", code="model_not_found", param=f"{where}.model")
    for n, tool in enumerate(responses.get("tools") or []):
        if tool.get("type") not in _TOOL_TYPES_RUN_HERE:
            raise LiveError(f"voxcall's Responses backend cannot run {tool.get('type')!r} tools; it takes "
                            "'function' tools (your application runs them) and 'mcp' servers",
                            code="unsupported_tool_type", param=f"{where}.tools[{n}].type")
    choice = responses.get("tool_choice")
    if isinstance(choice, Mapping) and choice.get("type") != "function":
        raise LiveError("'tool_choice' may be 'auto', 'none', 'required' or a function",
                        code="unsupported_parameter", param=f"{where}.tool_choice")


def _check_triggers(triggers: Any) -> None:
    if triggers:
        raise LiveError("voxcall does not run Decisions triggers; send no 'triggers' (or an empty list)",
                        code="unsupported_parameter", param="session.triggers")


def _object(data: Any, where: str) -> dict[str, Any]:
    if not isinstance(data, dict):
        raise LiveError(f"'{where}' must be an object", code="invalid_type", param=where)
    return data


def _known(data: Any, fields: frozenset[str], where: str) -> None:
    """Refuse a field the protocol does not have (the SDK's models would let it pass)."""
    if not isinstance(data, dict):
        raise LiveError(f"'{where}' must be an object", code="invalid_type", param=where)
    refuse_unknown(data, fields, where)


def _validate(model: type[BaseModel], data: dict[str, Any], where: str) -> None:
    """Check ``data`` against the SDK's ``model``; the first problem becomes a :class:`LiveError`."""
    try:
        model.model_validate(data)
    except ValidationError as exc:
        raise invalid(first_problem(exc, within=where)) from None


def invalid(problem: Problem) -> LiveError:
    """The error a client gets for a value the SDK's models refuse."""
    code = "missing_required_parameter" if problem.missing else "invalid_value"
    return LiveError(f"invalid '{problem.where}': {problem.message}", code=code, param=problem.where)
