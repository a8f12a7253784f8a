"""JSON Schema -> Python: the signature, annotations and code stub that local models see for a tool.

Local models call tools by writing Python, so each tool is shown as a ``def`` stub. Schemas come from clients
and MCP servers and are often sloppy (required after optional, keyword names, unknown types, refs that loop),
so everything here degrades to ``Any`` instead of raising: a tool must never vanish because of its schema.
"""

from __future__ import annotations

import copy
import inspect
import re
import types
import typing
from collections.abc import Collection, Mapping
from typing import Any, Literal, Union

_MAX_DEPTH = 32  # schema nesting followed before giving up, far beyond real schemas, well within the stack
_TYPES: dict[str, Any] = {"string": str, "number": float, "integer": int, "boolean": bool, "null": None}
_LITERAL_TYPES = (str, int, float, bool, type(None))


def build_signature(properties: Mapping[str, Any], required: Collection[str], aliases: Mapping[str, str],
                    root: Mapping[str, Any]) -> inspect.Signature:
    """The signature for a tool's ``properties``: required parameters first, then optional ones.

    Both groups keep schema order (a signature cannot put a parameter without a default after one with a
    default). Parameter names come from ``aliases``; optional parameters default to their schema ``default``,
    else ``None``. ``root`` is the whole parameters schema, against which ``$ref`` pointers resolve.
    """
    annotator = _Annotator(root)
    params = [_parameter(aliases[n], s, annotator, required=n in required) for n, s in properties.items()]
    return inspect.Signature(sorted(params, key=lambda p: p.default is not inspect.Parameter.empty))


def schema_annotation(schema: Any, root: Mapping[str, Any]) -> Any:
    """The Python annotation for ``schema``: ``str``, ``list[int]``, ``Literal['a']``, ``int | None`` …"""
    return _Annotator(root).annotation(schema)


def format_annotation(annotation: Any) -> str:
    """Render an annotation as written in source: ``list[str]``, ``str | None``, ``Literal['a']``."""
    if annotation is None or annotation is type(None):
        return "None"
    if annotation is Any:
        return "Any"
    if annotation is Ellipsis:
        return "..."
    if isinstance(annotation, str):
        return annotation
    if isinstance(annotation, list):
        return "[" + ", ".join(format_annotation(a) for a in annotation) + "]"
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is Literal:
        return "Literal[" + ", ".join(repr(v) for v in args) + "]"
    if origin is Union or origin is types.UnionType:
        return " | ".join(format_annotation(a) for a in args)
    if origin is typing.Annotated:
        return format_annotation(args[0])
    if origin is not None and args:
        return f"{format_annotation(origin)}[{', '.join(format_annotation(a) for a in args)}]"
    if isinstance(annotation, type):
        return annotation.__name__
    return repr(annotation).removeprefix("typing.")


def render_stub(name: str, description: str, signature: inspect.Signature,
                arg_docs: Mapping[str, str]) -> str:
    """A compact ``def`` stub: the signature and a Google-style docstring (summary, then ``Args:``).

    ``arg_docs`` maps parameter names to descriptions; only those parameters are listed under ``Args:``, but for
    a description that only restates its parameter's name (:func:`_restates_name`), and a docstring that would be
    empty is left out (the body is then ``...``).
    """
    params = ", ".join(_format_parameter(p) for p in signature.parameters.values())
    head = f"def {name}({params}):"
    doc = _docstring(description, arg_docs)
    return f"{head}\n{doc}" if doc else f"{head} ..."


def _restates_name(name: str, description: str) -> bool:
    """Whether ``description`` says no more than the parameter ``name`` (``contact``: "the contact",
    ``orderNumber``: "The order number."): a local model reads such a line as prompt tokens before every fresh
    session's first reply (about seven each) and learns nothing from it that the signature does not say."""
    words = _words(description)
    return bool(words) and (words[1:] if words[0] in ("the", "a", "an") else words) == _words(name)


def _words(text: str) -> list[str]:
    """``text``'s words in lower case: ``order_number``, ``orderNumber`` and "Order number." alike."""
    return re.sub(r"[^a-z0-9]+", " ", re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", text).lower()).split()


# -- parameters ----------------------------------------------------------------------------------------------


def _parameter(name: str, schema: Any, annotator: _Annotator, *, required: bool) -> inspect.Parameter:
    """One positional-or-keyword parameter; optional ones get their schema default or ``None``."""
    default: Any = inspect.Parameter.empty
    if not required:
        default = copy.deepcopy(schema.get("default")) if isinstance(schema, Mapping) else None
    return inspect.Parameter(name, inspect.Parameter.POSITIONAL_OR_KEYWORD, default=default,
                             annotation=annotator.annotation(schema))


def _format_parameter(param: inspect.Parameter) -> str:
    """``name: annotation = default`` with the annotation written as source."""
    text = param.name
    if param.annotation is not inspect.Parameter.empty:
        text += f": {format_annotation(param.annotation)}"
        if param.default is not inspect.Parameter.empty:
            text += f" = {param.default!r}"
    elif param.default is not inspect.Parameter.empty:
        text += f"={param.default!r}"
    return text


# -- annotations ---------------------------------------------------------------------------------------------


class _Annotator:
    """Turns the schemas of one tool into annotations, resolving ``$ref`` pointers against ``root``.

    Each pointer is followed once and its annotation reused, so shared definitions cost nothing extra and a
    pointer met again while it is still being resolved (a recursive definition) becomes ``Any``.
    """

    def __init__(self, root: Mapping[str, Any]) -> None:
        self.root = root
        self._done: dict[str, Any] = {}
        self._active: set[str] = set()

    def annotation(self, schema: Any, depth: int = 0) -> Any:
        """Annotation for ``schema``, most specific keyword first: $ref, const, enum, unions, allOf, type."""
        if depth > _MAX_DEPTH or not isinstance(schema, Mapping):
            return Any  # booleans as schemas, junk values and absurd nesting all accept anything
        if "$ref" in schema:
            return self._ref(schema["$ref"], depth)
        if "const" in schema and (literal := _literal([schema["const"]])) is not None:
            return literal
        if isinstance(schema.get("enum"), list) and (literal := _literal(schema["enum"])) is not None:
            return literal
        for key in ("anyOf", "oneOf"):
            members = schema.get(key)
            if isinstance(members, list) and members:
                return _union([self.annotation(m, depth + 1) for m in members])
        if isinstance(schema.get("allOf"), list):
            informative = (a for m in schema["allOf"] if (a := self.annotation(m, depth + 1)) is not Any)
            if (found := next(informative, Any)) is not Any:
                return found
        kind = schema.get("type")
        if isinstance(kind, list):
            return _union([self._named_type(k, schema, depth) for k in kind])
        return self._named_type(kind, schema, depth)

    def _ref(self, ref: Any, depth: int) -> Any:
        """Annotation of the schema ``ref`` points to; ``Any`` for cycles and pointers that lead nowhere."""
        if not isinstance(ref, str) or ref in self._active:
            return Any
        if ref not in self._done:
            self._active.add(ref)
            try:
                self._done[ref] = self.annotation(resolve_pointer(ref, self.root), depth + 1)
            finally:
                self._active.discard(ref)
        return self._done[ref]

    def _named_type(self, kind: Any, schema: Mapping[str, Any], depth: int) -> Any:
        """Annotation for one JSON type name; arrays and maps carry their item type when it is known."""
        if kind == "array":
            items = self.annotation(schema.get("items"), depth + 1)
            return list if items is Any else list[items]  # type: ignore[valid-type]
        if kind == "object":
            values = schema.get("additionalProperties")
            value = self.annotation(values, depth + 1) if isinstance(values, Mapping) else Any
            return dict if value is Any else dict[str, value]  # type: ignore[valid-type]
        return _TYPES.get(kind, Any) if isinstance(kind, str) else Any


def _literal(values: list[Any]) -> Any:
    """``Literal[values]``, or ``None`` when the values are empty or not all plain scalars."""
    if not values or not all(isinstance(v, _LITERAL_TYPES) for v in values):
        return None
    return Literal[tuple(values)]


def _union(members: list[Any]) -> Any:
    """``X | Y`` of the members; ``Any`` absorbs the union since it already accepts everything."""
    if not members or any(m is Any for m in members):
        return Any
    return Union[tuple(members)]  # noqa: UP007 (built at run time from a list)


def resolve_pointer(ref: Any, root: Mapping[str, Any]) -> Any:
    """The schema a local JSON pointer names (``#/$defs/Item``, ``#/definitions/X``, ``#``), or ``None``."""
    if not isinstance(ref, str) or not ref.startswith("#"):
        return None
    node: Any = root
    for token in ref[1:].split("/")[1:]:
        key = token.replace("~1", "/").replace("~0", "~")
        if isinstance(node, Mapping):
            node = node.get(key)
        elif isinstance(node, list) and key.isdigit() and int(key) < len(node):
            node = node[int(key)]
        else:
            return None
    return node


# -- docstring -----------------------------------------------------------------------------------------------


def _docstring(description: str, arg_docs: Mapping[str, str]) -> str:
    """The indented docstring block, or ``""`` when there is nothing to say."""
    lines = description.strip().splitlines()
    documented = {name: text.strip() for name, text in arg_docs.items()
                  if text.strip() and not _restates_name(name, text)}
    if documented:
        lines += [""] * bool(lines) + ["Args:"]
        for name, text in documented.items():
            first, *rest = text.splitlines()
            lines += [f"    {name}: {first}"] + [f"        {line}" for line in rest]
    if not lines:
        return ""
    body = [_escape(line) for line in lines]
    if len(body) == 1 and not body[0].endswith(('"', "\\")):
        return f'    """{body[0]}"""'
    inner = "\n".join(f"    {line}".rstrip() for line in body)
    return f'    """{inner.lstrip()}\n    """'


def _escape(line: str) -> str:
    """Keep a description from closing the docstring early."""
    return line.replace('"""', '\\"\\"\\"')
