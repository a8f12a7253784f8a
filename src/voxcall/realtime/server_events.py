"""Server events checked against the SDK's models: on in tests and when debugging, off (and free) in production.

Server events are built as plain dicts in the GA shape (:func:`voxcall.serving.frames.event`). With
``VOXCALL_VALIDATE_EVENTS=1`` in the environment (the test suite sets it) or ``Outbox(validate=True)``, every event
is validated against the SDK's model for its type before it is queued, so a misspelt field fails the test that
produced it, at the line that produced it. Extension events (``voxcall.*``) have no SDK model and are not checked.

Why validate rather than build events from the SDK's models: building costs a model construction and a
``model_dump`` for every event in production, a hot path during speech (an audio delta every 20-40 ms per session),
while a dict costs nearly nothing; validation gives the same guarantee wherever the code is exercised, which the
tests do for every event the server sends. ``benchmarks/bench_protocol.py`` prints both costs per event.
"""

from __future__ import annotations

import os
from typing import Any, get_args

from openai.types.realtime import RealtimeServerEvent
from pydantic import BaseModel, ValidationError

from voxcall.validation import first_problem

__all__ = ["ENV_VAR", "SERVER_EVENT_MODELS", "InvalidServerEvent", "check_server_event", "validation_enabled"]

ENV_VAR = "VOXCALL_VALIDATE_EVENTS"

SERVER_EVENT_MODELS: dict[str, type[BaseModel]] = {
    get_args(model.model_fields["type"].annotation)[0]: model for model in get_args(get_args(RealtimeServerEvent)[0])}
"""The SDK's model for each GA server event type."""


class InvalidServerEvent(Exception):
    """voxcall built a server event its clients' SDK would not accept: a bug in voxcall, never the client's fault."""


def validation_enabled() -> bool:
    """Whether ``VOXCALL_VALIDATE_EVENTS`` asks for server events to be validated (``1``, ``true``, ``yes``)."""
    return os.environ.get(ENV_VAR, "").strip().lower() in ("1", "true", "yes")


def check_server_event(ev: dict[str, Any]) -> None:
    """Raise :class:`InvalidServerEvent` unless ``ev`` is a valid GA server event or a ``voxcall.*`` extension."""
    kind = ev.get("type")
    if isinstance(kind, str) and kind.startswith("voxcall."):
        return
    model = SERVER_EVENT_MODELS.get(kind) if isinstance(kind, str) else None
    if model is None:
        raise InvalidServerEvent(f"{kind!r} is not a server event type of the Realtime protocol")
    try:
        model.model_validate(ev, strict=True)
    except ValidationError as exc:
        problem = first_problem(exc)
        raise InvalidServerEvent(f"invalid {kind} event at '{problem.where}': {problem.message}") from exc
