"""The ``profiles:`` and ``twilio:`` sections: the agents that answer phone calls and devices, and Twilio Media
Streams."""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator


def ws_origin(value: str | None) -> str | None:
    """A ``ws://`` or ``wss://`` origin without a path, query or trailing slash (a ``public_url``)."""
    if value is None:
        return None
    value = value.rstrip("/")
    if not re.fullmatch(r"wss?://[^/?#\s]+", value):
        raise ValueError("must be a ws:// or wss:// origin such as wss://voice.example.com, with no path")
    return value


class AgentProfile(BaseModel):
    """One agent of the ``profiles:`` section: what a phone call (:mod:`voxcall.twilio`) or a device's session
    (:mod:`voxcall.xiaozhi`) answered by it is. Each field left out is the server's own (``session.instructions``,
    the default voice, the server's Whisper, server VAD, every server tool)."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    instructions: str | None = None
    """System instructions of the agent's calls."""
    voice: str | None = None
    """The voice it speaks with, by name (``voxcall voices``)."""
    tools: list[str] | None = None
    """The server tools (``tools:``, ``mcp:``) its calls may use, by name; ``[]``: none."""
    turn_detection: dict[str, Any] | None = None
    """How the end of a caller's turn is found: a Realtime ``turn_detection`` object
    (``{type: server_vad, silence_duration_ms: 500}``)."""
    language: str | None = None
    """The language its users speak (ISO 639-1: ``zh``), for the edges that honour it (xiaozhi devices): they are
    heard in it (by a multilingual Whisper when the server's does not know it), and answered by the voice for it
    unless :attr:`voice` names one (``baker`` for ``zh``, when installed)."""


class TwilioSettings(BaseModel):
    """The ``twilio:`` section: phone calls through Twilio Media Streams, at ``WS /v1/twilio/{profile}``."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    auth_token: SecretStr | None = None
    """The Twilio account's auth token (env ``VOXCALL_TWILIO__AUTH_TOKEN``): every stream must carry a valid
    ``X-Twilio-Signature`` made with it. Without it every stream is refused, unless :attr:`insecure_no_signature`."""
    public_url: str | None = None
    """The ``wss://`` origin Twilio connects to (``wss://voice.example.com``), when a proxy in front of voxcall
    changes the host or scheme: the signature is made over the URL Twilio used. None: the URL as the server sees
    it (its scheme from uvicorn's TLS or, behind a proxy, from ``X-Forwarded-Proto``)."""
    insecure_no_signature: bool = False
    """Accept streams without a valid signature (tests, a local tunnel); refused beyond a loopback ``host``."""
    dtmf_pause_ms: int = Field(default=1500, ge=0, le=30_000)
    """Keys the caller presses are gathered until ``#`` or this long without another key; then the model reads
    them as one user message (0: each key at once)."""

    @field_validator("public_url")
    @classmethod
    def _origin(cls, value: str | None) -> str | None:
        return ws_origin(value)
