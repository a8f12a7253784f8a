"""Argument validation shared by every tool path: the ``<code>`` parser and the registry use the same rules.

Arguments are checked with ``jsonschema`` against the tool's schema. Only lossless repairs are made, each recorded
as a warning: unknown extra arguments are dropped, ``None`` for an optional argument that does not accept null is
treated as omitted, an integral float for an ``integer`` argument becomes an int, and a date or a time in the form
its description prescribes gets the form's width (``'2023-10-1'`` for 'YYYY-MM-DD': ``'2023-10-01'``;
:func:`~voxcall.tools.forms.padded`).

``jsonschema`` recurses once per level of nesting (several frames each), so arguments or a schema nested deeply
enough raise ``RecursionError`` deep inside it. Neither ever gets that far: arguments nested more than
:data:`MAX_ARGUMENT_DEPTH` levels are refused, and so is a call of a tool whose schema nests more than
:data:`MAX_SCHEMA_DEPTH` (both measured without recursion, by :func:`nesting_depth`); a schema that still recurses
without end (a ``$ref`` to itself) is refused as well.
"""

from __future__ import annotations

import logging
from typing import Any

from jsonschema import exceptions as js_exceptions
from jsonschema import validators
from referencing.exceptions import Unresolvable

from voxcall.tools.forms import padded
from voxcall.tools.schema import Tool

log = logging.getLogger(__name__)


MAX_ARGUMENT_DEPTH = 32
"""The deepest nesting of objects and arrays accepted in a call's arguments."""

MAX_SCHEMA_DEPTH = 64
"""The deepest nesting accepted in a tool's schema (each level of arguments takes two or three in a schema)."""


class ArgumentError(ValueError):
    """The arguments do not fit the tool's schema; the message is written for the model and the client."""


def nesting_depth(value: Any, limit: int) -> int:
    """How deeply objects and arrays nest in a JSON value (a scalar is 0), counted with a stack, not recursion,
    and only up to ``limit + 1``: a value deeper than that costs no more to measure."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, dict | list):
            depth += 1
            deepest = max(deepest, depth)
            if depth > limit:
                break
            stack.extend((child, depth) for child in (node.values() if isinstance(node, dict) else node))
    return deepest


def _accepts_null(schema: Any) -> bool:
    if not isinstance(schema, dict) or not {"type", "enum", "const", "anyOf", "oneOf", "$ref"} & schema.keys():
        return True  # unconstrained: null is as good as any value
    kind = schema.get("type")
    if kind == "null" or (isinstance(kind, list) and "null" in kind):
        return True
    if None in (schema.get("enum") or []) or ("const" in schema and schema["const"] is None):
        return True
    return any(_accepts_null(s) for key in ("anyOf", "oneOf") for s in schema.get(key) or [])


def _is_integer_schema(schema: Any) -> bool:
    return isinstance(schema, dict) and schema.get("type") == "integer"


def _allows_extra(parameters: dict[str, Any]) -> bool:
    extra = parameters.get("additionalProperties", False)
    return extra is not False and "properties" in parameters


def _describe(error: js_exceptions.ValidationError) -> str:
    where = ".".join(str(p) for p in error.absolute_path)
    if error.validator == "required":
        return f"missing required argument: {error.message.split(' is a required')[0]}"
    return f"argument {where!r}: {error.message}" if where else error.message


def _validator(tool: Tool) -> Any:
    """The tool's compiled validator, built once and kept on the tool."""
    if tool._validator is None:
        tool._validator = validators.validator_for(tool.parameters)(tool.parameters)
    return tool._validator


def validate_arguments(tool: Tool, arguments: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """Check ``arguments`` against ``tool``'s schema; return the repaired arguments and the warnings.

    Raises :class:`ArgumentError` with one clear reason when the arguments cannot be used.
    """
    if not isinstance(arguments, dict):
        raise ArgumentError(f"arguments of {tool.name!r} must be an object, got {type(arguments).__name__}")
    if nesting_depth(arguments, MAX_ARGUMENT_DEPTH) > MAX_ARGUMENT_DEPTH:
        raise ArgumentError(f"arguments of {tool.name!r} are nested more than {MAX_ARGUMENT_DEPTH} levels deep")
    if nesting_depth(tool.parameters, MAX_SCHEMA_DEPTH) > MAX_SCHEMA_DEPTH:
        raise ArgumentError(f"the schema of {tool.name!r} is nested more than {MAX_SCHEMA_DEPTH} levels deep; "
                            "the tool cannot be called")
    props = tool.properties
    required = set(tool.required)
    warnings: list[str] = []
    args: dict[str, Any] = {}
    for key, value in arguments.items():
        if key not in props and props and not _allows_extra(tool.parameters):
            known = ", ".join(props) or "none"
            warnings.append(f"dropped unknown argument {key!r} (known arguments: {known})")
            continue
        if value is None and key not in required and not _accepts_null(props.get(key)):
            warnings.append(f"dropped null for optional argument {key!r} (omit it instead)")
            continue
        if isinstance(value, float) and value.is_integer() and _is_integer_schema(props.get(key)):
            value = int(value)
        if isinstance(value, str) and (wide := padded(value, props.get(key))) != value:
            warnings.append(f"wrote {key!r} {value!r} as {wide!r}, in the form its description prescribes")
            value = wide
        args[key] = value
    missing = [r for r in tool.required if r not in args]
    if missing:
        raise ArgumentError(f"missing required argument{'s' if len(missing) > 1 else ''}: "
                            + ", ".join(missing))
    try:
        error = js_exceptions.best_match(_validator(tool).iter_errors(args))
    except (js_exceptions.SchemaError, js_exceptions.UnknownType, Unresolvable, TypeError, ValueError) as exc:
        # A malformed schema must not make the tool unusable: the required check above still holds.
        log.warning("tool %r has a schema jsonschema cannot apply (%s); arguments checked loosely",
                    tool.name, exc)
        return args, warnings
    except RecursionError:  # a schema that refers to itself without end
        raise ArgumentError(f"the schema of {tool.name!r} recurses without end; the tool cannot be called") from None
    if error is not None:
        raise ArgumentError(_describe(error))
    return args, warnings
