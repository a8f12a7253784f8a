"""Hypothesis strategies of client frames for the protocol fuzz test: what a buggy or hostile client may send.

Four kinds, mixed by :data:`frames`:

- **schema events**: every GA client event type, built by walking the SDK's pydantic models
  (``openai.types.realtime.RealtimeClientEvent``) field by field: required fields always, optional ones sometimes,
  unions, literals, lists, free-form objects. String fields that name things get values the session knows some of
  the time (placeholders such as ``$ITEM`` become a real item id when the frame is sent), so deep paths run too;
- **beta events**: the spellings of beta-protocol and lenient clients (a session without ``type``, top-level audio
  settings, formats by name, items without ``type``, a JSON value as a call's output);
- **mutants**: a schema or beta event with one change: a field dropped, an unknown field added, a value of a wrong
  JSON type, a huge value or a deeply nested one;
- **garbage**: bytes, text that is not JSON, JSON that is not an object, truncated events, invalid UTF-8, lone
  surrogates, numbers past any limit, arrays nested 10,000 deep.

A frame is a :class:`Frame`: its text or bytes as sent, and the ``event_id`` it carries (when a string), which
every ``error`` it causes must name. Frames are built when sent, so placeholders resolve against the session.
"""

from __future__ import annotations

import base64
import json
import re
import types
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal, Union, get_args, get_origin

from hypothesis import strategies as st
from openai.types.realtime import RealtimeClientEvent
from pydantic import BaseModel

Json = Any
SCRIPT_WORDS = ("weather", "add two and three", "both cities", "break it", "long story", "approve it", "hello")
"""User text the fuzz test's script answers in different ways (client call, server tool, failure, …)."""

# Placeholders a strategy puts in string fields; :func:`resolve` swaps them for what the session has when sent.
ITEM, FIRST_ITEM, CALL, RESPONSE, APPROVAL, EVENT_ID = "$ITEM", "$FIRST_ITEM", "$CALL", "$RESPONSE", "$APPROVAL", "$EVT"
_BIG = re.compile(r'"\\u0000(deep|text|emoji|list|object):(\d+)"')  # a big value, as it reads in an encoded frame


@dataclass(frozen=True)
class Frame:
    """One frame as the client sends it, and the ``event_id`` its errors must name (None: none, or not a string)."""

    data: str | bytes
    event_id: str | None


@dataclass(frozen=True)
class Known:
    """What the session has when a frame is sent: its latest ids (None when it has none of that kind)."""

    item: str | None
    first_item: str | None
    call: str | None
    response: str | None
    approval: str | None


# -- values ----------------------------------------------------------------------------------------------------------

json_scalars = st.one_of(st.none(), st.booleans(), st.integers(-(2**63), 2**63),
                         st.floats(allow_nan=False, allow_infinity=False),
                         st.text(max_size=12))
json_values: st.SearchStrategy[Json] = st.recursive(
    json_scalars, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=8)
"""Any JSON value, small."""

_ODD_FLOATS = st.sampled_from([float("nan"), float("inf"), -float("inf"), 1e308, -0.0, 5e-324])
_NUMBERS = st.one_of(st.integers(-5, 5), st.integers(-(2**64), 2**64), st.sampled_from([0, 1, 100, 5_000, 10**18]))
_pcm = st.binary(min_size=2, max_size=9_600).map(lambda b: base64.b64encode(b[: len(b) // 2 * 2]).decode())
_loud = st.integers(1, 25).map(lambda n: base64.b64encode(b"\x00\x40" * 960 * n).decode())  # n x 40 ms of a loud hum

_STRINGS: dict[str, st.SearchStrategy[str]] = {
    "audio": st.one_of(_pcm, _loud, st.text(max_size=8)),
    "item_id": st.one_of(st.sampled_from([ITEM, FIRST_ITEM, "root"]), st.text(max_size=8)),
    "previous_item_id": st.one_of(st.sampled_from([ITEM, FIRST_ITEM, "root"]), st.text(max_size=8)),
    "id": st.one_of(st.sampled_from([ITEM, FIRST_ITEM]), st.text(max_size=8)),
    "call_id": st.one_of(st.just(CALL), st.text(max_size=8)),
    "response_id": st.one_of(st.just(RESPONSE), st.text(max_size=8)),
    "approval_request_id": st.one_of(st.just(APPROVAL), st.text(max_size=8)),
    "event_id": st.one_of(st.just(EVENT_ID), st.text(max_size=8)),
    "name": st.one_of(st.sampled_from(["get_weather", "add", "guarded", "bad name", "x" * 65]), st.text(max_size=8)),
    "arguments": st.one_of(st.just('{"city": "Paris"}'), json_values.map(json.dumps), st.text(max_size=8)),
    "text": st.one_of(st.sampled_from(SCRIPT_WORDS), st.text(max_size=20)),
    "transcript": st.one_of(st.sampled_from(SCRIPT_WORDS), st.text(max_size=20)),
    "instructions": st.text(max_size=30),
}


def _string(field: str) -> st.SearchStrategy[str]:
    return _STRINGS.get(field, st.text(max_size=10))


def _values(kind: Any, field: str) -> st.SearchStrategy[Json]:
    """JSON values of the annotated type ``kind`` (of a field named ``field``)."""
    origin = get_origin(kind)
    if origin is Annotated:
        return _values(get_args(kind)[0], field)
    if origin in (Union, types.UnionType):
        return st.one_of(*(_values(member, field) for member in get_args(kind)))
    if origin is Literal:
        return st.sampled_from(get_args(kind))
    if origin is list:
        return st.lists(_values(get_args(kind)[0], field), max_size=3)
    if origin is dict:
        return st.dictionaries(st.text(max_size=8), _values(get_args(kind)[1], field), max_size=3)
    if kind is type(None):
        return st.none()
    if kind is bool:
        return st.booleans()
    if kind is int:
        return _NUMBERS
    if kind is float:
        return st.one_of(st.floats(-10, 10), _NUMBERS)
    if kind is str:
        return _string(field)
    if kind is object:
        return json_values
    if isinstance(kind, type) and issubclass(kind, BaseModel):
        return st.deferred(lambda: objects(kind))
    raise TypeError(f"no strategy for {kind!r} (field {field!r}): the SDK's models grew a new kind of type")


_MODELS: dict[type[BaseModel], st.SearchStrategy[dict[str, Json]]] = {}


def objects(model: type[BaseModel]) -> st.SearchStrategy[dict[str, Json]]:
    """JSON objects shaped like ``model``: its required fields, and some of its optional ones."""
    if model not in _MODELS:
        fields = model.model_fields
        _MODELS[model] = st.fixed_dictionaries(
            {name: _values(info.annotation, name) for name, info in fields.items() if info.is_required()},
            optional={(info.alias or name): _values(info.annotation, name)
                      for name, info in fields.items() if not info.is_required()})
    return _MODELS[model]


CLIENT_EVENT_MODELS: tuple[type[BaseModel], ...] = get_args(get_args(RealtimeClientEvent)[0])
schema_events = st.one_of(*(objects(model) for model in CLIENT_EVENT_MODELS))
"""Every GA client event, valid as far as the SDK's types say."""

# -- beta and lenient spellings ----------------------------------------------------------------------------------------

_formats = st.one_of(st.sampled_from(["pcm16", "g711_ulaw", "g711_alaw", "opus"]), json_values)
_beta_settings = st.fixed_dictionaries({}, optional={
    "modalities": st.lists(st.sampled_from(["text", "audio", "video"]), max_size=2),
    "max_response_output_tokens": st.one_of(st.just("inf"), _NUMBERS),
    "input_audio_format": _formats, "output_audio_format": _formats,
    "turn_detection": st.one_of(st.none(), st.fixed_dictionaries({}, optional={
        "type": st.sampled_from(["server_vad", "semantic_vad", "none"]), "threshold": st.floats(-1, 2),
        "silence_duration_ms": _NUMBERS, "prefix_padding_ms": _NUMBERS, "create_response": st.booleans(),
        "interrupt_response": st.booleans(), "idle_timeout_ms": _NUMBERS}), json_values),
    "input_audio_transcription": st.one_of(st.none(), st.fixed_dictionaries({"model": st.text(max_size=8)})),
    "voice": st.text(max_size=8), "speed": st.one_of(st.floats(0, 3), _ODD_FLOATS),
    "tool_choice": st.one_of(st.sampled_from(["auto", "none", "required"]),
                             st.fixed_dictionaries({"type": st.just("function"),
                                                    "function": st.fixed_dictionaries({"name": _string("name")})})),
    "instructions": _string("instructions"), "temperature": st.one_of(st.floats(0, 2), _ODD_FLOATS),
})
_beta_items = st.one_of(
    st.fixed_dictionaries({"role": st.sampled_from(["user", "assistant", "system"]),
                           "content": st.lists(st.fixed_dictionaries({
                               "type": st.sampled_from(["input_text", "text", "audio", "input_audio"]),
                               "text": _string("text")}), max_size=2)}),
    st.fixed_dictionaries({"type": st.just("function_call"), "call_id": _string("call_id"),
                           "name": _string("name")}),
    st.fixed_dictionaries({"type": st.just("function_call_output"), "call_id": _string("call_id"),
                           "output": json_values}),
)
beta_events = st.one_of(
    st.fixed_dictionaries({"type": st.just("session.update"), "session": _beta_settings},
                          optional={"event_id": _string("event_id")}),
    st.fixed_dictionaries({"type": st.just("response.create"), "response": _beta_settings},
                          optional={"event_id": _string("event_id")}),
    st.fixed_dictionaries({"type": st.just("conversation.item.create"), "item": _beta_items},
                          optional={"event_id": _string("event_id")}),
)
"""What beta-protocol and lenient clients send."""

# -- actions that move the session along ---------------------------------------------------------------------------

actions = st.one_of(
    st.sampled_from(SCRIPT_WORDS).map(lambda text: {"type": "conversation.item.create", "event_id": EVENT_ID, "item": {
        "type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}}),
    st.just({"type": "response.create", "event_id": EVENT_ID}),
    st.just({"type": "response.cancel", "event_id": EVENT_ID}),
    st.just({"type": "conversation.item.create", "event_id": EVENT_ID,
             "item": {"type": "function_call_output", "call_id": CALL, "output": "sunny"}}),
    st.booleans().map(lambda ok: {"type": "conversation.item.create", "event_id": EVENT_ID, "item": {
        "type": "mcp_approval_response", "approval_request_id": APPROVAL, "approve": ok}}),
    st.just({"type": "input_audio_buffer.commit", "event_id": EVENT_ID}),
    st.just({"type": "conversation.item.truncate", "event_id": EVENT_ID, "item_id": ITEM, "content_index": 0,
             "audio_end_ms": 50}),
)
"""Plain valid events, so responses run, calls get outputs and audio turns end while the fuzzing goes on."""

# -- mutants ---------------------------------------------------------------------------------------------------------

_wrong_values = st.one_of(json_scalars, _ODD_FLOATS, st.lists(json_scalars, max_size=2),
                          st.dictionaries(st.text(max_size=4), json_scalars, max_size=2))
def big(kind: str, size: int) -> str:
    """A placeholder for a big value (``deep``: arrays nested ``size`` deep; ``text``, ``emoji``: a string of
    ``size`` characters; ``list``, ``object``: ``size`` elements), built when the frame is sent, so a failing
    example prints short."""
    return f"\x00{kind}:{size}"


def _expand(match: re.Match[str]) -> str:
    kind, size = match.group(1), int(match.group(2))
    if kind == "deep":
        return "[" * size + "]" * size
    value = {"text": lambda: "x" * size, "emoji": lambda: "\U0001f600" * size, "list": lambda: list(range(size)),
             "object": lambda: {f"k{i}": i for i in range(size)}}[kind]()
    return json.dumps(value)


_huge_values = st.one_of(
    st.sampled_from([10_000, 300_000, 1_100_000]).map(lambda n: big("text", n)),
    st.sampled_from([1_000, 50_000]).map(lambda n: big("list", n)),
    st.sampled_from([1_000, 10_000]).map(lambda n: big("object", n)),
    st.just(big("emoji", 20_000)),
)
_deep_values = st.sampled_from([50, 300, 3_000, 20_000]).map(lambda depth: big("deep", depth))


def _places(value: Json, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every place inside ``value`` (keys of objects, indices of arrays), outermost first."""
    found: list[tuple[Any, ...]] = []
    if isinstance(value, dict):
        for key, inner in value.items():
            found += [(*path, key), *_places(inner, (*path, key))]
    elif isinstance(value, list):
        for index, inner in enumerate(value):
            found += [(*path, index), *_places(inner, (*path, index))]
    return found


def _container(ev: Json, path: tuple[Any, ...]) -> Any:
    for step in path[:-1]:
        ev = ev[step]
    return ev


@st.composite
def mutants(draw: st.DrawFn) -> dict[str, Json]:
    """A schema or beta event with one thing wrong with it."""
    ev = json.loads(json.dumps(draw(st.one_of(schema_events, beta_events))))  # a deep copy
    places = _places(ev)
    path = draw(st.sampled_from(places)) if places else ("type",)
    parent = _container(ev, path)
    key = path[-1]
    how = draw(st.sampled_from(["drop", "extra", "wrong", "wrong", "huge", "deep"]))
    if how == "drop" and isinstance(parent, dict):
        del parent[key]
    elif how == "extra":
        target = parent if isinstance(parent, dict) else ev
        target[draw(st.text(min_size=1, max_size=8))] = draw(_wrong_values)
    else:
        strategy = {"wrong": _wrong_values, "huge": _huge_values, "deep": _deep_values}.get(how, _wrong_values)
        parent[key] = draw(strategy)
    return ev


# -- garbage ---------------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Built:
    """A big raw frame, built when sent; it prints as its description."""

    description: str
    make: Callable[[], str] = field(repr=False)


def _nested(depth: int, opener: str = "[", closer: str = "]") -> Built:
    return Built(f"session nested {depth} deep with {opener!r}",
                 lambda: '{"type": "session.update", "session": ' + opener * depth + closer * depth + "}")


NASTY: tuple[str | bytes | Built, ...] = (
    "", "null", "[]", "{}", "0", '"text"', "true", "NaN", "{" * 3, '{"type": null}', '{"type": 5}', '{"type": "x"}',
    '{"type": "session.update", "session": "realtime"}', '{"type": "response.create", "type": "response.cancel"}',
    '{"type": "conversation.item.delete", "item_id": 1e999}',
    Built("truncate at a 5,000-digit millisecond", lambda: '{"type": "conversation.item.truncate", "item_id": "x", '
          '"content_index": 0, "audio_end_ms": ' + "9" * 5_000 + "}"),
    # lone surrogates: in the type, in an echoed string, in the event_id, raw in a binary frame
    '{"type": "\\ud800"}', '{"type": "session.update", "session": {"type": "realtime", "instructions": "\\udfff"}}',
    '{"type": "response.cancel", "event_id": "\\udbff"}', b'{"type": "response.cancel", "event_id": "\xed\xa0\x80"}',
    # NaN and Infinity where they would be echoed
    '{"type": "session.update", "session": {"type": "realtime", "tools": [{"type": "function", "name": "f", '
    '"parameters": {"type": "object", "properties": {"x": {"type": "number", "maximum": NaN}}}}]}}',
    '{"type": "response.create", "response": {"metadata": {"k": "v"}, "max_output_tokens": Infinity}}',
    b"\xff\xfe\x00", b'{"type": "\xc3"}', b"\x00" * 100, json.dumps({"type": "response.cancel"}).encode("utf-16"),
    json.dumps({"type": "input_audio_buffer.clear"}).encode("utf-32"),
    _nested(10_000), _nested(100_000, '{"a": ', "}"), _nested(1_000, '{"a": ', "}"),
    Built("a type of 1 MiB", lambda: '{"type": "' + "y" * 1_048_577 + '"}'),
    Built("instructions of 900,000 characters",
          lambda: '{"type": "session.update", "session": {"instructions": "' + "z" * 900_000 + '"}}'),
)
"""Hand-picked frames that broke, or could break, a session: every run sends them all (the test's ``@example``),
and the fuzzing mixes them in."""

garbage = st.one_of(
    st.binary(max_size=64),
    st.text(max_size=64),
    st.sampled_from(NASTY),
    schema_events.flatmap(lambda ev: st.integers(0, max(0, len(json.dumps(ev)) - 1)).map(
        lambda cut: json.dumps(ev)[:cut])),
)
"""Frames that are not events at all, or not JSON, or broken in transit."""

_KINDS = {"schema": schema_events, "beta": beta_events, "action": actions, "mutant": mutants(), "garbage": garbage}
_MIX = ("schema",) * 6 + ("beta",) * 2 + ("action",) * 5 + ("mutant",) * 4 + ("garbage",) * 3
frames = st.sampled_from(_MIX).flatmap(lambda kind: _KINDS[kind])
"""One client frame: an event (dict, placeholders unresolved) or raw text or bytes; 30 % schema events, 10 % beta
events, 25 % actions, 20 % mutants, 15 % garbage (``one_of`` would flatten the nested choices and weigh each
branch alike)."""


# -- sending ---------------------------------------------------------------------------------------------------------

def resolve(frame: dict[str, Json] | str | bytes | Built, known: Known, serial: int) -> Frame:
    """The frame as sent: placeholders replaced by what the session has (``$EVT`` by a fresh event id), big ones
    (:func:`big`) by their values."""
    if isinstance(frame, Built):
        return Frame(frame.make(), None)
    if not isinstance(frame, dict):
        return Frame(frame, None)
    swaps = {ITEM: known.item, FIRST_ITEM: known.first_item, CALL: known.call, RESPONSE: known.response,
             APPROVAL: known.approval, EVENT_ID: f"fuzz_{serial}"}

    def swap(value: Json) -> Json:
        if isinstance(value, str) and value in swaps:
            return swaps[value] if swaps[value] is not None else "missing_id"
        if isinstance(value, dict):
            return {k: swap(v) for k, v in value.items()}
        if isinstance(value, list):
            return [swap(v) for v in value]
        return value

    ev = swap(frame)
    event_id = ev.get("event_id")
    if isinstance(event_id, str) and (placeholder := _BIG.fullmatch(json.dumps(event_id))):
        event_id = json.loads(_expand(placeholder)) if placeholder.group(1) in ("text", "emoji") else None
    return Frame(_BIG.sub(_expand, json.dumps(ev)), event_id if isinstance(event_id, str) else None)
