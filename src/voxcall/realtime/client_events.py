"""Client events read with the SDK's own models: beta spellings mapped to GA first, then one pydantic validation.

A decoded frame goes through three steps:

1. its ``type`` is checked by hand (missing, not a string, unknown), so those keep their own error codes;
2. :func:`voxcall.realtime.beta.from_beta` rewrites what beta-protocol and lenient clients send into the GA shape;
3. a strict pydantic ``TypeAdapter`` over the members of ``openai.types.realtime.RealtimeClientEvent``,
   discriminated by ``type``, checks every field's JSON type. ``response.input`` may also hold
   ``{"type": "item_reference", "id": ...}`` (the API documents it; the SDK's types lack it).

The first validation error becomes a :class:`~voxcall.core.errors.SessionError` whose ``param`` is the
error's location as a client writes it (``session.tools[2].parameters``, ``item.content[0].text``); the SDK's
union labels are left out. The SDK's models allow unknown fields, and voxcall's own checks
(:mod:`voxcall.core.settings`, :mod:`voxcall.core.conversation.items`: tool names, schemas, limits, supported values)
run on top of this one. Strict mode matches JSON: ``"5"`` is not a number and ``1`` is not a boolean.

The cost is small next to decoding the JSON: about 5 µs for an audio append, 10-50 µs for an item or a
``session.update`` on a 2-core machine (``benchmarks/bench_protocol.py``).
"""

from __future__ import annotations

import types
from dataclasses import dataclass
from typing import Annotated, Any, Literal, Union, get_args, get_origin

from openai.types.realtime import ConversationItem, RealtimeClientEvent, RealtimeResponseCreateParams
from openai.types.realtime import ResponseCreateEvent as SDKResponseCreateEvent
from pydantic import BaseModel, Field, TypeAdapter, ValidationError
from pydantic_core import ErrorDetails

from voxcall.core.errors import SessionError
from voxcall.realtime.beta import from_beta
from voxcall.serving.frames import Message

__all__ = ["ItemReference", "ParsedEvent", "event_id_of", "parse_client_event"]



class ItemReference(BaseModel):
    """An existing conversation item named in ``response.input``."""

    type: Literal["item_reference"]
    id: str


_INPUT_ITEM = Union[(*get_args(get_args(ConversationItem)[0]), ItemReference)]  # type: ignore[valid-type]


class ResponseCreateParams(RealtimeResponseCreateParams):
    """The SDK's ``response.create`` parameters, with item references allowed in ``input``."""

    input: list[_INPUT_ITEM] | None = None  # type: ignore[valid-type]


class ResponseCreateEvent(SDKResponseCreateEvent):
    """The SDK's ``response.create`` event, with :class:`ResponseCreateParams`."""

    response: ResponseCreateParams | None = None


_MEMBERS: tuple[type[BaseModel], ...] = tuple(
    ResponseCreateEvent if model is SDKResponseCreateEvent else model
    for model in get_args(get_args(RealtimeClientEvent)[0]))
_BY_KIND: dict[str, type[BaseModel]] = {get_args(m.model_fields["type"].annotation)[0]: m for m in _MEMBERS}
_ADAPTER: TypeAdapter[Any] = TypeAdapter(
    Annotated[Union[_MEMBERS], Field(discriminator="type")])  # type: ignore[arg-type]  # noqa: UP007

_JSON_TYPES = {"model_type": "an object", "model_attributes_type": "an object", "dict_type": "an object",
               "list_type": "an array", "string_type": "a string", "int_type": "an integer", "float_type": "a number",
               "bool_type": "a boolean"}


@dataclass(frozen=True)
class ParsedEvent:
    """A client event that passed the SDK's validation: its model, and the GA-shaped dict it was read from."""

    kind: str
    model: BaseModel
    data: Message


def event_id_of(ev: Message) -> str | None:
    """The client's ``event_id`` of a decoded event, when it gave a string one."""
    event_id = ev.get("event_id")
    return event_id if isinstance(event_id, str) else None


def parse_client_event(ev: Message) -> ParsedEvent:
    """Check ``ev`` (a decoded JSON object) against the SDK's client event models; a ``SessionError`` if not."""
    kind = ev.get("type")
    if kind is None:
        raise SessionError("missing required parameter 'type'", code="missing_required_parameter", param="type")
    if not isinstance(kind, str):
        raise SessionError("invalid type for 'type': expected a string", code="invalid_type", param="type")
    if kind not in _BY_KIND:
        raise SessionError(f"unknown event type {kind!r}", code="unknown_event_type", param="type")
    data = from_beta(ev)
    try:
        model = _ADAPTER.validate_python(data, strict=True)
    except ValidationError as exc:
        raise _protocol_error(_BY_KIND[kind], exc.errors(include_url=False)) from None
    return ParsedEvent(kind, model, data)


# -- validation errors --------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class _Problem:
    """One validation error, located as a client writes it."""

    param: str
    depth: int
    in_mapping: bool  # inside a free-form object (metadata, tool parameters): the object's value is wrong
    end: int  # how much of the error's location the parameter covers
    members: tuple[tuple[Any, ...], ...]  # the location up to each union member chosen on the way
    error: ErrorDetails

    @property
    def member(self) -> tuple[Any, ...]:
        """The location up to the innermost union member the error belongs to (``()`` when none)."""
        return self.members[-1] if self.members else ()

    @property
    def wrong_member(self) -> bool:
        """Whether the error says its union member's ``type`` is not the one sent: the client meant another."""
        loc = self.error["loc"]
        return bool(self.members) and loc[len(self.member):] == ("type",) and self.error["type"] == "literal_error"


def _protocol_error(model: type[BaseModel], errors: list[ErrorDetails]) -> SessionError:
    """The error to report. Union members whose ``type`` differs from the one sent are left out; of the others,
    the member with the fewest errors is the one the client meant, and its deepest error is reported."""
    problems = [_locate(model, e) for e in errors]
    wrong = {p.member for p in problems if p.wrong_member}
    meant = [p for p in problems if not wrong.intersection(p.members)]
    if not meant:  # no member has the type sent: the value is none of the kinds allowed
        return _no_such_kind([p for p in problems if p.wrong_member])
    counts: dict[tuple[Any, ...], int] = {}
    for p in meant:
        counts[p.member] = counts.get(p.member, 0) + 1
    fewest = min(counts.values())
    closest = [p for p in meant if counts[p.member] == fewest]
    best = max(closest, key=lambda p: p.depth)  # max keeps the first of equals
    return _as_protocol_error(best, [p for p in closest if p.param == best.param])


def _no_such_kind(wrong: list[_Problem]) -> SessionError:
    """The error for a value whose ``type`` matches no member of the union at the deepest place it was tried."""
    best = max(wrong, key=lambda p: p.depth)
    allowed = [str(p.error.get("ctx", {}).get("expected")) for p in wrong if p.param == best.param]
    param = best.param.removesuffix(".type")
    return SessionError(f"invalid value for '{param}': its type must be {' or '.join(dict.fromkeys(allowed))}",
                         code="invalid_value", param=param)


def _as_protocol_error(problem: _Problem, same_param: list[_Problem]) -> SessionError:
    """The protocol error for ``problem``; literal errors of equally close members list every value allowed."""
    param, error = problem.param, problem.error
    if error["type"] == "missing":
        return SessionError(f"missing required parameter '{param}'", code="missing_required_parameter", param=param)
    if error["type"] == "literal_error":
        allowed = [str(p.error.get("ctx", {}).get("expected")) for p in same_param
                   if p.error["type"] == "literal_error"]
        return SessionError(f"invalid value for '{param}': expected {' or '.join(dict.fromkeys(allowed))}",
                             code="invalid_value", param=param)
    expected = _JSON_TYPES.get(error["type"])
    reason = f"expected {expected}" if expected else error["msg"]
    if problem.in_mapping:
        inner = ".".join(str(s) for s in error["loc"][problem.end:])
        return SessionError(f"invalid value for '{param}'" + (f" at {inner!r}" if inner else "") + f": {reason}",
                             code="invalid_value", param=param)
    code = "invalid_type" if expected else "invalid_value"
    return SessionError(f"invalid {'type' if expected else 'value'} for '{param}': {reason}", code=code, param=param)


def _locate(model: type[BaseModel], error: ErrorDetails) -> _Problem:
    """Walk the error's location through the model's types: field names and list indices make the parameter,
    union labels are skipped (and remembered), and a key of a free-form object ends it."""
    loc = error["loc"]
    parts: list[str] = []
    members: list[tuple[Any, ...]] = []
    kind: Any = model
    in_mapping = False
    end = len(loc)
    for n, seg in enumerate(loc[1:], start=1):  # loc[0] is the event's type, the discriminator's tag
        kind = _unwrap(kind)
        choices = _union_members(kind)
        if choices is not None:
            kind = next((m for m in choices if getattr(_unwrap(m), "__name__", None) == seg), None)
            if kind is None:  # a label of a scalar choice (``int``, ``literal['inf']``): the parameter ends here
                end = n + 1
                break
            members.append(tuple(loc[:n + 1]))
            continue
        if isinstance(kind, type) and issubclass(kind, BaseModel) and isinstance(seg, str):
            parts.append(seg)
            info = kind.model_fields.get(seg)
            kind = info.annotation if info is not None else Any
        elif get_origin(kind) is list and isinstance(seg, int):
            parts[-1:] = [f"{parts[-1] if parts else ''}[{seg}]"]
            kind = get_args(kind)[0]
        else:  # a key of a mapping, or inside a value of no declared shape
            in_mapping, end = True, n
            break
    return _Problem(".".join(parts) or "type", len(parts), in_mapping, end, tuple(members), error)


def _unwrap(kind: Any) -> Any:
    """``kind`` without ``Annotated`` and without an ``Optional`` around a single type."""
    while True:
        if get_origin(kind) is Annotated:
            kind = get_args(kind)[0]
            continue
        members = _union_members(kind, keep_single=True)
        if members is not None and len(members) == 1:
            kind = members[0]
            continue
        return kind


def _union_members(kind: Any, *, keep_single: bool = False) -> list[Any] | None:
    """The non-null members of a union type (None when ``kind`` is no union, or a single-member one)."""
    if get_origin(kind) not in (Union, types.UnionType):
        return None
    members = [m for m in get_args(kind) if m is not type(None)]
    return members if keep_single or len(members) > 1 else None
