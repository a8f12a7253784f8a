"""Beta and lenient spellings of client events, rewritten into the GA shape before the SDK's models read them.

Clients of the beta protocol (``OpenAI-Beta: realtime=v1``) and lenient clients send:

- a ``session`` without ``type`` (``realtime`` is meant);
- ``modalities`` and ``max_response_output_tokens`` (GA: ``output_modalities``, ``max_output_tokens``);
- ``input_audio_format``, ``turn_detection``, ``input_audio_transcription``, ``input_audio_noise_reduction``,
  ``output_audio_format``, ``voice``, ``speed`` at the top level (GA: under ``audio.input`` / ``audio.output``),
  formats by name (``pcm16``, ``g711_ulaw``, ``g711_alaw``), a ``turn_detection`` without ``type``;
- the Chat Completions ``tool_choice`` (``{"type": "function", "function": {"name": ...}}``);
- items without ``type`` (a message) or ``id``, a function call without ``arguments``, a JSON value as a call's
  output, assistant parts named ``text`` / ``audio``.

A GA field wins over its beta alias. Server events go the other way: :func:`to_beta` gives a beta client the same
events under their beta names (and drops ``conversation.item.done``, which beta has not).
"""

from __future__ import annotations

import json
from typing import Any

from voxcall.audio.formats import AudioFormatError, parse_format
from voxcall.core.errors import SessionError
from voxcall.core.ids import new_id
from voxcall.serving.frames import Message

__all__ = ["from_beta", "to_beta"]


_BETA_AUDIO = {"input_audio_format": ("input", "format"), "turn_detection": ("input", "turn_detection"),
               "input_audio_transcription": ("input", "transcription"),
               "input_audio_noise_reduction": ("input", "noise_reduction"),
               "output_audio_format": ("output", "format"), "voice": ("output", "voice"),
               "speed": ("output", "speed")}
_BETA_RENAMES = {"modalities": "output_modalities", "max_response_output_tokens": "max_output_tokens"}
_BETA_ASSISTANT_PARTS = {"text": "output_text", "audio": "output_audio"}
_BETA_NAMES = {
    "conversation.item.added": "conversation.item.created",
    "response.output_text.delta": "response.text.delta",
    "response.output_text.done": "response.text.done",
    "response.output_audio.delta": "response.audio.delta",
    "response.output_audio.done": "response.audio.done",
    "response.output_audio_transcript.delta": "response.audio_transcript.delta",
    "response.output_audio_transcript.done": "response.audio_transcript.done",
}
_BETA_DROPPED = frozenset({"conversation.item.done"})
_BETA_CONTENT_TYPES = {"output_text": "text", "output_audio": "audio"}


def from_beta(ev: Message) -> Message:
    """``ev`` in the GA shape (a new dict; ``ev`` is not changed). Values that are not objects are left for the
    validation to name."""
    kind = ev.get("type")
    if kind == "session.update" and isinstance(ev.get("session"), dict):
        session = _beta_settings(ev["session"], "session.")
        session.setdefault("type", "realtime")
        return {**ev, "session": session}
    if kind == "response.create" and isinstance(ev.get("response"), dict):
        response = _beta_settings(ev["response"], "response.")
        if isinstance(response.get("input"), list):
            response["input"] = [_item(i) for i in response["input"]]
        return {**ev, "response": response}
    if kind == "conversation.item.create" and isinstance(ev.get("item"), dict):
        return {**ev, "item": _item(ev["item"])}
    return ev


def _beta_settings(data: Message, where: str) -> Message:
    """Session or response settings with beta names moved to their GA places (a GA field wins over its alias)."""
    out = {_BETA_RENAMES.get(k, k): v for k, v in data.items() if k not in _BETA_AUDIO}
    for old, new in _BETA_RENAMES.items():
        if old in data and new in data:
            out[new] = data[new]
    beta = {k: v for k, v in data.items() if k in _BETA_AUDIO}
    audio = out.get("audio")
    if isinstance(audio, dict) or (audio is None and beta):
        audio = {side: dict(part) if isinstance(part, dict) else part for side, part in (audio or {}).items()}
        for name, value in beta.items():
            side, key = _BETA_AUDIO[name]
            section = audio.setdefault(side, {})
            if isinstance(section, dict):
                section.setdefault(key, _beta_format(value, f"{where}{name}") if key == "format" else value)
        heard = audio.get("input")
        if isinstance(heard, dict) and isinstance(heard.get("turn_detection"), dict):
            heard["turn_detection"] = {"type": "server_vad", **heard["turn_detection"]}
        out["audio"] = audio
    if isinstance(out.get("tool_choice"), dict) and isinstance(out["tool_choice"].get("function"), dict):
        out["tool_choice"] = {"type": "function", "name": out["tool_choice"]["function"].get("name")}
    return out


def _beta_format(value: Any, where: str) -> Any:
    """A beta format name (``pcm16``, ``g711_ulaw``, ``g711_alaw``) as the GA object; anything else as it is."""
    if not isinstance(value, str):
        return value
    try:
        return parse_format(value).to_wire()
    except AudioFormatError as exc:
        raise SessionError(f"'{where}': {exc}", code="invalid_value", param=where) from None


def _item(item: Any) -> Any:
    """A client item with today's conveniences filled in: ``type`` message, a fresh ``id``, ``arguments`` ``{}``,
    a JSON value as a call's output, beta's assistant part names."""
    if not isinstance(item, dict):
        return item
    out = {"type": "message", **item}
    if not out.get("id") and out["type"] != "item_reference":
        out["id"] = new_id("item")
    if out["type"] == "function_call" and out.get("arguments") is None:
        out["arguments"] = "{}"
    if out["type"] == "function_call_output" and out.get("output") is not None and not isinstance(out["output"], str):
        out["output"] = json.dumps(out["output"])
    if out["type"] == "message" and out.get("role") == "assistant" and isinstance(out.get("content"), list):
        out["content"] = [_assistant_part(p) for p in out["content"]]
    return out


def _assistant_part(part: Any) -> Any:
    """An assistant content part with its GA type name."""
    kind = part.get("type") if isinstance(part, dict) else None
    if not isinstance(kind, str) or kind not in _BETA_ASSISTANT_PARTS:  # any other value: the validation names it
        return part
    return {**part, "type": _BETA_ASSISTANT_PARTS[kind]}


def to_beta(ev: Message) -> Message | None:
    """The event as a beta-protocol client expects it, or None when beta has no such event."""
    kind = ev["type"]
    if kind in _BETA_DROPPED:
        return None
    out = dict(ev, type=_BETA_NAMES.get(kind, kind))
    if isinstance(out.get("item"), dict):
        out["item"] = _beta_item(out["item"])
    if isinstance(out.get("response"), dict) and isinstance(out["response"].get("output"), list):
        out["response"] = dict(out["response"], output=[_beta_item(i) for i in out["response"]["output"]])
    return out


def _beta_item(item: dict[str, Any]) -> dict[str, Any]:
    """Beta names assistant content parts ``text`` / ``audio`` where GA says ``output_text`` / ``output_audio``."""
    content = item.get("content")
    if not isinstance(content, list):
        return item
    return dict(item, content=[dict(p, type=_BETA_CONTENT_TYPES.get(p.get("type"), p.get("type"))) for p in content])
