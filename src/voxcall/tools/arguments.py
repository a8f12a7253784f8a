"""Tool arguments: from the model's validated JSON object to the keyword arguments a handler takes.

JSON alone cannot express every annotated type a handler may declare (pydantic models, dataclasses, Enum members,
tuples ...): those parameters get a ``pydantic.TypeAdapter`` that converts their value. A JSON property whose name
is not an identifier (``from``) reaches the handler under its alias (``from_``). The registry
(:mod:`voxcall.tools.registry`) applies these per registered tool.
"""

from __future__ import annotations

import inspect
import logging
import types
import typing
from collections.abc import Callable, Mapping, Sequence
from typing import Annotated, Any, Literal, Union, get_args, get_origin

from pydantic import PydanticUserError, TypeAdapter, ValidationError

from voxcall.tools.context import ToolContext
from voxcall.tools.schema import Tool
from voxcall.tools.validation import ArgumentError
from voxcall.validation import first_problem

__all__ = ["convert", "handler_hints", "keyword_parameters", "parameter_renames", "type_adapters"]

log = logging.getLogger(__name__)

# Types that JSON values already are once validated: arguments of these types are passed through unchanged.
_JSON_TYPES: tuple[object, ...] = (str, int, float, bool, type(None), object, Any)
# Generic origins whose JSON form is the Python form itself: only their arguments may need converting.
_JSON_CONTAINERS: tuple[object, ...] = (list, dict, Sequence, Mapping, Union, types.UnionType)
_KEYWORD_KINDS = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)


def _needs_conversion(annotation: Any) -> bool:
    """Whether a JSON value must be converted to fit ``annotation`` (``list[Color]``: yes, ``int``: no)."""
    if annotation in _JSON_TYPES:
        return False
    origin = get_origin(annotation)
    if origin is Literal:
        return False
    if origin is Annotated:
        return _needs_conversion(get_args(annotation)[0])
    if origin in _JSON_CONTAINERS:
        return any(_needs_conversion(arg) for arg in get_args(annotation))
    return True


def handler_hints(handler: Callable[..., Any]) -> dict[str, Any]:
    """The handler's resolved type hints (empty when they cannot be resolved), without ``return``."""
    try:
        hints = typing.get_type_hints(handler, include_extras=True)
    except Exception as exc:  # unresolvable hints, or a callable get_type_hints does not take
        log.debug("no type hints for tool handler %r (%s); arguments are passed as JSON values", handler, exc)
        return {}
    hints.pop("return", None)
    return hints


def type_adapters(handler: Callable[..., Any]) -> dict[str, TypeAdapter[Any]]:
    """A ``TypeAdapter`` for each parameter of ``handler`` whose JSON value needs converting to its type."""
    hints = handler_hints(handler)
    adapters: dict[str, TypeAdapter[Any]] = {}
    for param, annotation in hints.items():
        if annotation is ToolContext or not _needs_conversion(annotation):
            continue
        try:
            adapters[param] = TypeAdapter(annotation)
        except PydanticUserError as exc:  # a type pydantic cannot build: pass the JSON value as it is
            log.warning("cannot convert argument %r of %r to %r (%s)", param, handler, annotation, exc)
    return adapters


def convert(param: str, adapter: TypeAdapter[Any], value: Any) -> Any:
    """Convert one argument, turning a pydantic error into an :class:`ArgumentError` for the model."""
    try:
        return adapter.validate_python(value)
    except ValidationError as exc:
        problem = first_problem(exc, within=param)
        raise ArgumentError(f"argument {problem.where!r}: {problem.message}") from None


def keyword_parameters(handler: Callable[..., Any]) -> frozenset[str] | None:
    """The names ``handler`` takes as keywords, or ``None`` when it takes any (``**kwargs``, no signature)."""
    try:
        params = inspect.signature(handler).parameters.values()
    except (TypeError, ValueError):  # some builtins and C callables have no signature
        return None
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params):
        return None
    return frozenset(p.name for p in params if p.kind in _KEYWORD_KINDS)


def parameter_renames(tool: Tool, keywords: frozenset[str] | None) -> dict[str, str]:
    """Map property names that are not identifiers to the handler's alias for them (``from``: ``from_``)."""
    if keywords is None:
        return {}
    aliases = tool.argument_aliases()
    return {prop: alias for prop, alias in aliases.items() if prop != alias and alias in keywords}
