"""JSON messages over a WebSocket, as every JSON edge reads and writes them: the receive loop, one frame read
strictly, one message written safely, and an event with a fresh id.

A frame is read as a JSON object with :func:`read_json`: at most ``max_bytes``, UTF-8, plain JSON (no ``NaN`` or
``Infinity``, no lone UTF-16 surrogate, which could never be echoed back); every problem is a
:class:`~voxcall.core.errors.SessionError` (``frame_too_large``, ``invalid_json``, ``invalid_event``) the edge
answers in its protocol.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from starlette.websockets import WebSocket, WebSocketDisconnect

from voxcall.core.errors import SessionError
from voxcall.core.ids import LONE_SURROGATE, new_id

Message = dict[str, Any]
"""A JSON object as a WebSocket message carries it (a client's event, or a server's)."""

Send = Callable[[Message], Awaitable[None]]
"""Writes one message to the client."""


async def frames(ws: WebSocket) -> AsyncIterator[str | bytes]:
    """The client's frames, text or binary, until it goes away."""
    try:
        while True:
            message = await ws.receive()
            if message["type"] == "websocket.disconnect":
                return
            text = message.get("text")
            yield text if text is not None else message.get("bytes") or b""
    except WebSocketDisconnect:
        return


def read_json(data: str | bytes, max_bytes: int) -> Message:
    """A client frame as a JSON object, read strictly: at most ``max_bytes``, UTF-8, plain JSON (no ``NaN``
    or ``Infinity``, no lone UTF-16 surrogate). Raises :class:`SessionError` (``frame_too_large``,
    ``invalid_json``, ``invalid_event``) otherwise."""
    if len(data) > max_bytes:
        raise SessionError(f"frame of {len(data)} bytes exceeds the limit of {max_bytes}",
                            code="frame_too_large")
    try:
        ev = json.loads(data, parse_constant=_not_a_json_number)
    except (ValueError, UnicodeDecodeError):
        raise SessionError("the frame is not valid JSON", code="invalid_json") from None
    except RecursionError:
        raise SessionError("the frame's JSON is nested too deeply", code="invalid_json") from None
    if not isinstance(ev, dict):
        raise SessionError("an event must be a JSON object", code="invalid_event")
    if _has_lone_surrogate(ev):
        raise SessionError("the frame holds a lone UTF-16 surrogate (such as \\ud800), which is not Unicode "
                            "text", code="invalid_json")
    return ev


def _not_a_json_number(constant: str) -> float:
    """``NaN``, ``Infinity`` and ``-Infinity`` are Python's extensions of JSON: refused, or an echo of them (a
    tool's schema in ``session.updated``) would be no JSON to the client."""
    raise SessionError(f"{constant} is not a JSON number", code="invalid_json")




def _has_lone_surrogate(value: Any) -> bool:
    """Whether a string of the decoded frame holds half a UTF-16 pair (JSON's ``\\ud800`` escape spells one, and
    a binary frame may carry one raw). UTF-8 cannot encode it, so any echo of it, even the ``event_id`` of an
    ``error``, would fail on the socket. ASCII strings (audio) are passed over at no cost."""
    stack: list[Any] = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if not item.isascii() and LONE_SURROGATE.search(item):
                return True
        elif isinstance(item, dict):
            stack.extend(item)
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return False


def json_text(ev: Message) -> str:
    """``ev`` as the JSON text of a WebSocket message: UTF-8 as is, or, should a lone surrogate have slipped into
    it, with every non-ASCII character escaped (still valid JSON; the event is not lost)."""
    text = json.dumps(ev, ensure_ascii=False)
    if text.isascii() or not LONE_SURROGATE.search(text):
        return text
    return json.dumps(ev)


def event(kind: str, **fields: Any) -> Message:
    """A server event of type ``kind`` with a fresh ``event_id``."""
    return {"type": kind, "event_id": new_id("event"), **fields}
