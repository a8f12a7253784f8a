"""Twilio Media Streams frames: what Twilio sends (``connected``, ``start``, ``media``, ``mark``, ``dtmf``,
``stop``) read into small typed records, and what voxcall sends back (``media``, ``mark``, ``clear``).

Every frame is a JSON text message with an ``event`` field. :func:`parse_frame` reads the fields voxcall uses and
ignores the rest (Twilio adds fields over time); a frame that is not JSON, names no known event or lacks a field
voxcall needs raises :class:`FrameError` saying which, so the call can log it and go on.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

MULAW = "audio/x-mulaw"
"""The encoding a Media Stream carries (Twilio's name for G.711 µ-law); always 8 kHz, mono."""

MULAW_RATE = 8000


class FrameError(ValueError):
    """A frame from Twilio that voxcall cannot read; the message says why."""


@dataclass(frozen=True)
class Connected:
    """The stream's first frame: the WebSocket is up."""


@dataclass(frozen=True)
class Start:
    """The stream begins: its id (every frame back must name it), the call, and the audio's format."""

    stream_sid: str
    call_sid: str
    encoding: str
    sample_rate: int
    channels: int
    parameters: dict[str, str]
    """The ``<Parameter>`` values of the TwiML ``<Stream>``."""


@dataclass(frozen=True)
class Media:
    """A chunk of the caller's audio: base64 µ-law, as it goes into ``input_audio_buffer.append``."""

    payload: str
    track: str


@dataclass(frozen=True)
class Mark:
    """Twilio played the audio sent before the mark of this name (or dropped it, after a ``clear``)."""

    name: str


@dataclass(frozen=True)
class Dtmf:
    """The caller pressed a key: ``0``–``9``, ``*`` or ``#``."""

    digit: str


@dataclass(frozen=True)
class Stop:
    """The stream ended: the caller hung up, or the call moved on."""


Frame = Connected | Start | Media | Mark | Dtmf | Stop


def parse_frame(text: str | bytes) -> Frame:
    """Read one frame from Twilio; :class:`FrameError` says what is wrong with a bad one."""
    try:
        data = json.loads(text)
    except (ValueError, UnicodeDecodeError) as exc:
        raise FrameError(f"not JSON: {exc}") from None
    if not isinstance(data, dict):
        raise FrameError(f"a frame must be a JSON object, not {type(data).__name__}")
    kind = data.get("event")
    if kind == "connected":
        return Connected()
    if kind == "start":
        start = _part(data, "start")
        fmt = _part(start, "mediaFormat", "start.")
        params = start.get("customParameters") or {}
        return Start(stream_sid=_text(start, "streamSid", "start."), call_sid=_text(start, "callSid", "start."),
                     encoding=_text(fmt, "encoding", "start.mediaFormat."),
                     sample_rate=_number(fmt, "sampleRate", "start.mediaFormat."),
                     channels=_number(fmt, "channels", "start.mediaFormat."),
                     parameters={str(k): str(v) for k, v in params.items()} if isinstance(params, dict) else {})
    if kind == "media":
        media = _part(data, "media")
        return Media(payload=_text(media, "payload", "media."), track=str(media.get("track") or "inbound"))
    if kind == "mark":
        return Mark(name=_text(_part(data, "mark"), "name", "mark."))
    if kind == "dtmf":
        digit = _text(_part(data, "dtmf"), "digit", "dtmf.")
        if digit not in "0123456789*#" or len(digit) != 1:
            raise FrameError(f"dtmf.digit must be one of 0-9, * or #, not {digit!r}")
        return Dtmf(digit=digit)
    if kind == "stop":
        return Stop()
    raise FrameError(f"unknown event {kind!r}; expected connected, start, media, mark, dtmf or stop")


def media_frame(stream_sid: str, payload: str) -> str:
    """Audio for the caller: base64 µ-law at 8 kHz."""
    return json.dumps({"event": "media", "streamSid": stream_sid, "media": {"payload": payload}})


def mark_frame(stream_sid: str, name: str) -> str:
    """Ask Twilio to say (with a ``mark`` back) when the audio sent so far has been played."""
    return json.dumps({"event": "mark", "streamSid": stream_sid, "mark": {"name": name}})


def clear_frame(stream_sid: str) -> str:
    """Drop the audio Twilio holds and has not played yet (barge-in); its marks come back at once."""
    return json.dumps({"event": "clear", "streamSid": stream_sid})


def _part(data: dict[str, Any], name: str, where: str = "") -> dict[str, Any]:
    value = data.get(name)
    if not isinstance(value, dict):
        raise FrameError(f"{where}{name} must be an object")
    return value


def _text(data: dict[str, Any], name: str, where: str = "") -> str:
    value = data.get(name)
    if not isinstance(value, str) or not value:
        raise FrameError(f"{where}{name} must be a non-empty string")
    return value


def _number(data: dict[str, Any], name: str, where: str) -> int:
    value = data.get(name)
    if isinstance(value, bool) or not isinstance(value, int | str) or not str(value).isdigit():
        raise FrameError(f"{where}{name} must be a whole number")
    return int(value)
