"""The xiaozhi WebSocket protocol's JSON messages (binary protocol 1): what a device says, read into typed values,
and what the server says, built here.

A text frame is one JSON object with a ``type``: ``hello``, ``listen`` (``start`` in a mode, ``stop``, ``detect``
with the wake word or typed text), ``abort``, ``mcp`` (JSON-RPC 2.0 in ``payload``), and a few the server has no use
for (``iot``, ``goodbye``, ``ping``, which gets a ``pong``). A binary frame is one raw Opus packet. The firmware's own
rules (``78/xiaozhi-esp32``: ``docs/websocket.md``, ``main/application.cc``) decide what the server sends: a
``hello`` with ``transport`` ``websocket``, its ``session_id`` and the audio it really sends; ``stt`` with the user's
words; ``tts`` ``start``, ``sentence_start`` with the words whose audio follows, ``stop``; ``llm`` with the face's
emotion. A message that cannot be read is a :class:`MessageError`; a device never gets an error message back (the
protocol has none), the server logs it and reads on.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from voxcall.core.errors import SessionError
from voxcall.serving.frames import Message, read_json

BINARY_PROTOCOL = 1
"""The binary protocol voxcall speaks: one raw Opus packet per binary frame. Protocols 2 and 3 (headers with
timestamps for server-side echo cancellation) are refused."""

PACKET_MS = 60
"""The length of every Opus packet sent to a device (the ``frame_duration`` of the server's ``hello``)."""

DEVICE_RATE = 16_000
"""The rate devices send their microphone's Opus at (and announce in their ``hello``)."""

MAX_MESSAGE_BYTES = 65_536
"""The largest JSON message read from a device (a page of MCP tools is at most 8,000 bytes)."""

ListenMode = Literal["auto", "manual", "realtime"]
"""How a device listens: ``manual`` until ``listen``/``stop`` (push to talk); ``auto`` until the server hears the end
of the turn (the device mutes its microphone while it speaks); ``realtime`` likewise, with the microphone open while
it speaks (its own echo cancellation), so the user can talk over it."""

_MODES: dict[Any, ListenMode] = {"auto": "auto", "manual": "manual", "realtime": "realtime"}


class MessageError(ValueError):
    """A device's message that cannot be read (its reason, for the log)."""


@dataclass(frozen=True, slots=True)
class AudioParams:
    """The audio one side sends: Opus, mono, at ``sample_rate``, in packets of ``frame_duration`` ms."""

    sample_rate: int = DEVICE_RATE
    frame_duration: int = PACKET_MS
    channels: int = 1
    format: str = "opus"


@dataclass(frozen=True, slots=True)
class Hello:
    """The device's first message: its protocol ``version``, whether it serves MCP tools, whether it asks for the
    server's echo cancellation (``aec``), and its microphone's audio."""

    version: int
    mcp: bool
    aec: bool
    audio: AudioParams


@dataclass(frozen=True, slots=True)
class Listen:
    """``listen``: the device starts listening (in ``mode``), stops, or reports ``text`` (its wake word, or words
    its user typed: ``detect``)."""

    state: Literal["start", "stop", "detect"]
    mode: ListenMode | None = None
    text: str = ""


@dataclass(frozen=True, slots=True)
class Abort:
    """``abort``: the user stopped the device's speech (a button, or the wake word: ``reason``)."""

    reason: str = ""


@dataclass(frozen=True, slots=True)
class Mcp:
    """``mcp``: a JSON-RPC 2.0 message of the device's MCP server (an answer to the server's request)."""

    payload: Any


@dataclass(frozen=True, slots=True)
class Ping:
    """``ping`` (some clients): answered with ``pong``."""


@dataclass(frozen=True, slots=True)
class Ignored:
    """A message the server has no use for (``iot``, ``goodbye``, a type it does not know)."""

    kind: str


DeviceMessage = Hello | Listen | Abort | Mcp | Ping | Ignored
"""Any message a device sends as text."""


def read_message(data: str | bytes) -> DeviceMessage:
    """A device's text frame as its message; :class:`MessageError` when it cannot be read."""
    try:
        message = read_json(data, MAX_MESSAGE_BYTES)
    except SessionError as exc:
        raise MessageError(exc.message) from None
    kind = message.get("type")
    if kind == "hello":
        return _hello(message)
    if kind == "listen":
        return _listen(message)
    if kind == "abort":
        return Abort(_text(message, "reason"))
    if kind == "mcp":
        return Mcp(message.get("payload"))
    if kind == "ping":
        return Ping()
    if not isinstance(kind, str):
        raise MessageError("a message needs a string 'type'")
    return Ignored(kind)


def _hello(message: Message) -> Hello:
    features = message.get("features")
    features = features if isinstance(features, dict) else {}
    params = message.get("audio_params")
    audio = AudioParams()
    if isinstance(params, dict):  # the browser page sends none: 16 kHz, 60 ms
        rate, frame = params.get("sample_rate", DEVICE_RATE), params.get("frame_duration", PACKET_MS)
        if not _count(rate) or not _count(frame):
            raise MessageError("hello.audio_params: sample_rate and frame_duration must be positive integers")
        if params.get("format", "opus") != "opus":
            raise MessageError(f"hello.audio_params.format {params.get('format')!r}: voxcall takes Opus")
        audio = AudioParams(rate, frame)
    version = message.get("version", BINARY_PROTOCOL)
    if not _count(version):
        raise MessageError("hello.version must be a positive integer")
    return Hello(version, features.get("mcp") is True, features.get("aec") is True, audio)


def _listen(message: Message) -> Listen:
    state = message.get("state")
    if state == "start":
        mode = _MODES.get(message.get("mode", "auto"))
        if mode is None:
            raise MessageError(f"listen.mode {message.get('mode')!r}: expected auto, manual or realtime")
        return Listen("start", mode)
    if state == "stop":
        return Listen("stop")
    if state == "detect":
        return Listen("detect", text=_text(message, "text"))
    raise MessageError(f"listen.state {state!r}: expected start, stop or detect")


def _text(message: Message, key: str) -> str:
    value = message.get(key, "")
    if not isinstance(value, str):
        raise MessageError(f"{message.get('type')}.{key} must be a string")
    return value


def _count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value > 0


# -- what the server says (only its hello carries the session id: the firmware reads it nowhere else) ----------


def server_hello(session_id: str, sample_rate: int) -> Message:
    """The server's ``hello``: the session, and the audio the server sends (Opus packets of :data:`PACKET_MS`)."""
    return {"type": "hello", "transport": "websocket", "session_id": session_id,
            "audio_params": {"format": "opus", "sample_rate": sample_rate, "channels": 1,
                             "frame_duration": PACKET_MS}}


def stt(text: str) -> Message:
    """The user's words, for the device to show."""
    return {"type": "stt", "text": text}


def tts(state: Literal["start", "stop"]) -> Message:
    """The server starts speaking (the device turns to its speaker and plays what comes), or has finished."""
    return {"type": "tts", "state": state}


def sentence_start(text: str) -> Message:
    """The words whose audio follows."""
    return {"type": "tts", "state": "sentence_start", "text": text}


def llm(face: tuple[str, str]) -> Message:
    """The device's face shows an emotion: ``face`` is its name and its emoji."""
    emotion, emoji = face
    return {"type": "llm", "emotion": emotion, "text": emoji}


def mcp(payload: Message) -> Message:
    """A JSON-RPC message to the device's MCP server."""
    return {"type": "mcp", "payload": payload}


PONG: Message = {"type": "pong"}
"""The answer to a ``ping``."""
