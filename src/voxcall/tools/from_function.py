"""Python function -> JSON Schema: the parameters a :class:`~voxcall.tools.schema.Tool` gets from a function.

Types come from the function's type hints, descriptions from its Google-style docstring. Every annotation maps
to some schema: the forms below are written by hand so that the result stays small and readable for models;
anything else goes through pydantic, and what pydantic cannot describe becomes the empty schema (any value),
so a tool is never lost to one exotic annotation.
"""

from __future__ import annotations

import enum
import inspect
import json
import logging
import types
import typing
from collections.abc import Callable, Mapping, Sequence
from typing import Annotated, Any, Literal, Union

import docstring_parser
import pydantic
from pydantic.fields import FieldInfo

from voxcall.tools.context import context_parameter

log = logging.getLogger(__name__)

_SCALARS: dict[type, str] = {str: "string", bool: "boolean", int: "integer", float: "number"}
_ARRAYS: tuple[Any, ...] = (list, set, frozenset, Sequence)
_SKIPPED_KINDS = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)


def function_schema(fn: Callable[..., Any]) -> tuple[str, dict[str, Any]]:
    """Return ``(description, parameters)`` for ``fn``: its docstring summary and its JSON Schema object.

    Parameters without a default are ``required``; ``self``/``cls``, ``*args``/``**kwargs`` and a
    :class:`~voxcall.tools.context.ToolContext` parameter are left out.
    """
    doc = docstring_parser.parse(inspect.getdoc(fn) or "")
    arg_docs = {p.arg_name: p.description for p in doc.params if p.description}
    hints = _type_hints(fn)
    defs: dict[str, Any] = {}
    properties: dict[str, Any] = {}
    required: list[str] = []
    for param in _parameters(fn):
        if param.name == context_parameter(hints):  # injected at call time, never filled by the model
            continue
        prop = annotation_schema(hints.get(param.name, param.annotation), defs)
        if param.name in arg_docs and "description" not in prop:
            prop["description"] = arg_docs[param.name]
        if param.default is inspect.Parameter.empty:
            required.append(param.name)
        else:
            _set_default(prop, param.default)
        properties[param.name] = prop
    parameters: dict[str, Any] = {"type": "object", "properties": properties, "required": required}
    if defs:
        parameters["$defs"] = defs
    return _summary(doc), parameters


def annotation_schema(annotation: Any, defs: dict[str, Any]) -> dict[str, Any]:
    """The JSON Schema for one annotation; named sub-schemas (pydantic models) are added to ``defs``.

    Never raises: an annotation that cannot be described becomes ``{}`` and a debug line is logged.
    """
    try:
        return _dispatch(annotation, defs)
    except Exception as exc:  # any annotation, however odd, must leave the tool usable
        log.debug("no JSON Schema for annotation %r (%s); accepting any value", annotation, exc)
        return {}


# -- signature and docstring ---------------------------------------------------------------------------------


def _parameters(fn: Callable[..., Any]) -> list[inspect.Parameter]:
    """The parameters that become tool arguments, in declaration order."""
    params = [p for p in inspect.signature(fn).parameters.values() if p.kind not in _SKIPPED_KINDS]
    if params and params[0].name in ("self", "cls"):
        params = params[1:]
    return params


def _type_hints(fn: Callable[..., Any]) -> dict[str, Any]:
    """Resolved hints for ``fn``; when the whole set cannot be resolved, each parameter is resolved alone."""
    try:
        return typing.get_type_hints(fn, include_extras=True)
    except Exception as exc:  # unresolvable forward reference, or a callable get_type_hints does not take
        log.debug("type hints of %r not resolvable together (%s); resolving one by one", fn, exc)
    globalns = getattr(inspect.unwrap(fn), "__globals__", {})
    hints: dict[str, Any] = {}
    for param in _parameters(fn):
        if param.annotation is inspect.Parameter.empty:
            continue
        holder = types.SimpleNamespace(__annotations__={param.name: param.annotation})
        try:
            hints.update(typing.get_type_hints(holder, globalns=globalns, include_extras=True))
        except Exception as exc:
            log.debug("type hint of %r not resolvable (%s); accepting any value", param.name, exc)
    return hints


def _summary(doc: docstring_parser.Docstring) -> str:
    """The docstring text before its sections (``Args:``, ``Returns:`` …)."""
    parts = [doc.short_description, doc.long_description]
    return "\n\n".join(p.strip() for p in parts if p and p.strip())


def _set_default(prop: dict[str, Any], default: Any) -> None:
    """Record a Python default in ``prop`` when it has a JSON form (enum members give their value)."""
    if isinstance(default, enum.Enum):
        default = default.value
    if isinstance(default, tuple | set | frozenset):
        default = list(default)
    try:
        json.dumps(default)
    except (TypeError, ValueError):
        log.debug("default %r has no JSON form; left out of the schema", default)
        return
    prop["default"] = default


# -- annotations ---------------------------------------------------------------------------------------------


def _dispatch(tp: Any, defs: dict[str, Any]) -> dict[str, Any]:
    """Pick the schema builder for the annotation's form; see :func:`annotation_schema`."""
    if tp is Any or tp is inspect.Parameter.empty or isinstance(tp, str | typing.ForwardRef):
        return {}
    if tp is None or tp is type(None):
        return {"type": "null"}
    if isinstance(tp, type) and tp in _SCALARS:
        return {"type": _SCALARS[tp]}
    origin = typing.get_origin(tp)
    if origin is Annotated:
        return _annotated_schema(tp, defs)
    if origin is Union or origin is types.UnionType:
        return _union_schema(typing.get_args(tp), defs)
    if origin is Literal:
        return _enum_schema([_plain(v) for v in typing.get_args(tp)])
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return _enum_schema([member.value for member in tp])
    if tp in _ARRAYS or origin in _ARRAYS or tp is tuple or origin is tuple:
        return _array_schema(tp, origin, defs)
    if tp in (dict, Mapping) or origin in (dict, Mapping):
        return _object_schema(typing.get_args(tp), defs)
    return _pydantic_schema(tp, defs)


def _annotated_schema(tp: Any, defs: dict[str, Any]) -> dict[str, Any]:
    """``Annotated[T, meta…]``: T's schema plus a description from a string or a ``pydantic.Field``."""
    base, *metadata = typing.get_args(tp)
    schema = annotation_schema(base, defs)
    for meta in metadata:
        if isinstance(meta, str):
            schema["description"] = meta
        elif isinstance(meta, FieldInfo) and meta.description:
            schema["description"] = meta.description
    return schema


def _union_schema(members: tuple[Any, ...], defs: dict[str, Any]) -> dict[str, Any]:
    """A union: a type list when every member is a bare type (``["string", "null"]``), else ``anyOf``."""
    schemas = [annotation_schema(m, defs) for m in members]
    if any(not s for s in schemas):
        return {}
    if all(s.keys() == {"type"} and isinstance(s["type"], str) for s in schemas):
        return {"type": list(dict.fromkeys(s["type"] for s in schemas))}
    return {"anyOf": schemas}


def _enum_schema(values: list[Any]) -> dict[str, Any]:
    """An ``enum`` with the JSON type(s) of its values, so both loose and strict validators understand it."""
    kinds = list(dict.fromkeys(_json_type(v) for v in values))
    if None in kinds:
        return {"enum": values}
    return {"enum": values, "type": kinds[0] if len(kinds) == 1 else kinds}


def _array_schema(tp: Any, origin: Any, defs: dict[str, Any]) -> dict[str, Any]:
    """Lists, sequences, sets and tuples; a fixed-length tuple gets one schema per position."""
    args = typing.get_args(tp)
    schema: dict[str, Any] = {"type": "array"}
    if (tp is tuple or origin is tuple) and args and args[-1] is not Ellipsis:
        positions = [annotation_schema(a, defs) for a in args]
        schema.update(prefixItems=positions, minItems=len(args), maxItems=len(args))
        return schema
    if args and (items := annotation_schema(args[0], defs)):
        schema["items"] = items
    if tp in (set, frozenset) or origin in (set, frozenset):
        schema["uniqueItems"] = True
    return schema


def _object_schema(args: tuple[Any, ...], defs: dict[str, Any]) -> dict[str, Any]:
    """``dict[str, T]``: an object whose values follow T's schema."""
    schema: dict[str, Any] = {"type": "object"}
    if len(args) == 2 and (values := annotation_schema(args[1], defs)):
        schema["additionalProperties"] = values
    return schema


def _pydantic_schema(tp: Any, defs: dict[str, Any]) -> dict[str, Any]:
    """Pydantic models (and whatever else pydantic can describe: dataclasses, ``datetime`` …).

    The model's own ``$defs`` are lifted into ``defs``; a name already taken by a different schema is renamed
    and the references to it rewritten, so two models called ``Item`` from different modules both survive.
    """
    if isinstance(tp, type) and issubclass(tp, pydantic.BaseModel):
        schema = tp.model_json_schema()
    else:
        schema = pydantic.TypeAdapter(tp).json_schema()
    local_defs: dict[str, Any] = schema.pop("$defs", {})
    renames = {name: _free_name(name, body, defs) for name, body in local_defs.items()}
    refs = {f"#/$defs/{old}": f"#/$defs/{new}" for old, new in renames.items() if old != new}
    for old, body in local_defs.items():
        defs[renames[old]] = _rewrite_refs(body, refs)
    result: dict[str, Any] = _rewrite_refs(schema, refs)
    return result


def _free_name(name: str, body: Any, defs: Mapping[str, Any]) -> str:
    """``name`` if it is free in ``defs`` or holds the same schema, else ``name2``, ``name3`` …"""
    candidate, n = name, 2
    while candidate in defs and defs[candidate] != body:
        candidate, n = f"{name}{n}", n + 1
    return candidate


def _rewrite_refs(node: Any, refs: Mapping[str, str]) -> Any:
    """A copy of ``node`` with every ``$ref`` found in ``refs`` replaced."""
    if isinstance(node, dict):
        return {k: refs.get(v, v) if k == "$ref" and isinstance(v, str) else _rewrite_refs(v, refs)
                for k, v in node.items()}
    if isinstance(node, list):
        return [_rewrite_refs(v, refs) for v in node]
    return node


def _plain(value: Any) -> Any:
    """A ``Literal`` value as JSON: enum members give their value."""
    return value.value if isinstance(value, enum.Enum) else value


def _json_type(value: Any) -> str | None:
    """The JSON Schema type name of a scalar value, ``None`` when it has none."""
    if value is None:
        return "null"
    return next((name for py, name in _SCALARS.items() if isinstance(value, py)), None)
