"""Protocol plumbing shared by the realtime modules: ids, server event construction, errors and dialects.

Server events are plain dicts in the GA shape of ``openai.types.realtime`` (the tests validate every one of them
against the SDK's ``RealtimeServerEvent`` union). Clients of the older beta protocol (``OpenAI-Beta: realtime=v1``)
get the same events under their beta names. Extension events are named ``voxcall.*``.
"""

from __future__ import annotations

import json
import re
import secrets
from typing import Any

Event = dict[str, Any]

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


def new_id(prefix: str) -> str:
    """A fresh id such as ``item_…``, ``resp_…`` or ``event_…`` (20 random URL-safe characters)."""
    return f"{prefix}_{secrets.token_urlsafe(15)}"


LONE_SURROGATE = re.compile("[\ud800-\udfff]")
"""Half a UTF-16 surrogate pair: text that cannot be encoded as UTF-8."""


def unicode_text(text: str) -> str:
    """``text`` with every lone UTF-16 surrogate (half a pair, which a provider's JSON ``\\ud800`` escape or a
    tool's output can carry) replaced by U+FFFD: such text cannot be encoded as UTF-8, so kept as is it would fail
    the socket and every later request that carries the conversation."""
    return text if text.isascii() else LONE_SURROGATE.sub("\ufffd", text)


def wire_text(ev: Event) -> str:
    """``ev`` as the JSON text of a WebSocket message: UTF-8 as is, or, should a lone surrogate have slipped into
    it, with every non-ASCII character escaped (still valid JSON; the event is not lost)."""
    text = json.dumps(ev, ensure_ascii=False)
    if text.isascii() or not LONE_SURROGATE.search(text):
        return text
    return json.dumps(ev)


def event(kind: str, **fields: Any) -> Event:
    """A server event of type ``kind`` with a fresh ``event_id``."""
    return {"type": kind, "event_id": new_id("event"), **fields}


class ProtocolError(Exception):
    """A client event the session cannot act on; becomes an ``error`` event, and the session stays open."""

    def __init__(self, message: str, *, code: str = "invalid_request_error", param: str | None = None,
                 kind: str = "invalid_request_error") -> None:
        super().__init__(message)
        self.message = message
        self.code = code
        self.param = param
        self.kind = kind


def error_event(err: ProtocolError, client_event_id: str | None) -> Event:
    """The ``error`` event for ``err``; ``error.event_id`` names the client event at fault."""
    return event("error", error={"type": err.kind, "code": err.code, "message": err.message,
                                 "param": err.param, "event_id": client_event_id})


def to_beta(ev: Event) -> Event | None:
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
