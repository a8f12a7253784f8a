"""Turn the source of one call segment into validated :class:`ToolCall` objects or :class:`RejectedCall` reasons.

A segment is what the stream scanner cut out of a call block: one statement such as ``get_weather(city='Paris')``,
a list of calls ``[a(), b()]``, or (tolerated) ``x = f()`` and ``print(f())``. The source is parsed with
:mod:`ast` and only literal values are read from it — nothing is ever evaluated. Each call stands alone: a bad
call is rejected with a reason the model could act on, and its siblings survive.
"""

from __future__ import annotations

import ast
import difflib
import logging
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from voxcall.tools.calls import ToolCall
from voxcall.tools.codecalls.events import RejectedCall
from voxcall.tools.schema import Tool
from voxcall.tools.validation import ArgumentError, validate_arguments

log = logging.getLogger(__name__)

_JSON_NAMES: dict[str, Any] = {"true": True, "false": False, "null": None, "none": None}
_WRAPPERS = frozenset({"print"})
_MAX_DEPTH = 32
_MISSPELLING = 0.8  # similarity above which an unknown name is taken for a misspelt tool
_BLANK = " \t\r\n\f\v;"  # whitespace and the ';' that may separate calls
_NAME_GUESS = re.compile(r"\s*([A-Za-z_][\w.\-]*)\s*\(")


class _NotLiteral(ValueError):
    """A value in a call is not a plain literal."""


class ToolIndex:
    """Finds tools by the names a model writes: the real name, its Python alias, or a dotted form of either; and
    checks a call of one (:meth:`check`), the one check every tool-calling path makes.

    ``native``: the model was shown the tools by their own names (a native tool-calling API), so reasons name
    them so; otherwise by their Python names, as the local path's prompt shows them.
    """

    def __init__(self, tools: Iterable[Tool], *, native: bool = False) -> None:
        self.tools: list[Tool] = list(tools)
        self._native = native
        self._by_name: dict[str, Tool] = {}
        for tool in self.tools:
            self._by_name.setdefault(tool.name, tool)
            self._by_name.setdefault(tool.code_name, tool)
        self._params: dict[str, tuple[list[str], dict[str, str]]] = {}

    def resolve(self, written: str) -> Tool | None:
        """The tool that ``written`` names: ``get_weather``, ``functions.get_weather`` or ``music.play``."""
        if written in self._by_name:
            return self._by_name[written]
        parts = written.split(".")
        for candidate in (parts[-1], "_".join(parts)):
            if candidate in self._by_name:
                return self._by_name[candidate]
        return None

    def shown(self, tool: Tool) -> str:
        """The name the model was shown for ``tool``."""
        return tool.name if self._native else tool.code_name

    def closest(self, written: str, cutoff: float = 0.5) -> str | None:
        """The known tool name most like ``written`` (a likely misspelling), if any is close enough."""
        names = [self.shown(t) for t in self.tools]
        close = difflib.get_close_matches(written.split(".")[-1], names, n=1, cutoff=cutoff)
        return close[0] if close else None

    def suggest(self, written: str) -> str:
        """A hint naming the closest known tool, or listing the known ones."""
        close = self.closest(written)
        if close:
            return f"did you mean {close!r}?"
        names = [self.shown(t) for t in self.tools]
        return f"available tools: {', '.join(names)}" if names else "no tools are available"

    def unknown(self, written: str, source: str) -> RejectedCall:
        """The rejection of a call whose name ``written`` is no known tool's."""
        return RejectedCall(written, source, f"unknown tool {written!r}; {self.suggest(written)}")

    def check(self, tool: Tool, written: str, arguments: Any, source: str) -> ToolCall | RejectedCall:
        """A call of ``tool`` (written ``written``) with ``arguments``: validated and repaired as
        :func:`~voxcall.tools.validation.validate_arguments` allows, or rejected with the reason."""
        try:
            args, warnings = validate_arguments(tool, arguments)
        except ArgumentError as exc:
            return RejectedCall(written, source, f"{self.shown(tool)}: {exc}")
        for warning in warnings:
            log.info("tool call %s: %s", tool.name, warning)
        return ToolCall(name=tool.name, arguments=args, warnings=warnings)

    def means_tool(self, written: str) -> bool:
        """Whether ``written`` names a known tool or is an evident misspelling of one."""
        return self.resolve(written) is not None or self.closest(written, _MISSPELLING) is not None

    def parameters(self, tool: Tool) -> tuple[list[str], dict[str, str]]:
        """The tool's property names in signature order, and a map from written keyword to property name."""
        if tool.name not in self._params:
            aliases = tool.argument_aliases()
            by_alias = {alias: prop for prop, alias in aliases.items()}
            order = [by_alias.get(p, p) for p in tool.signature().parameters]
            keywords = {**{p: p for p in aliases}, **by_alias}
            self._params[tool.name] = (order, keywords)
        return self._params[tool.name]


def guess_name(source: str) -> str:
    """The tool name a broken call seems to start with, or ``""``."""
    match = _NAME_GUESS.match(source)
    return match.group(1) if match else ""


def dotted_name(node: ast.expr) -> str | None:
    """``a.b.c`` for a Name/Attribute chain, else None."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = dotted_name(node.value)
        return f"{base}.{node.attr}" if base else None
    return None


def literal(node: ast.expr, depth: int = 0) -> Any:
    """The JSON value a literal expression denotes; raises ``_NotLiteral`` with a reason otherwise."""
    if depth > _MAX_DEPTH:
        raise _NotLiteral("value is nested too deeply")
    if isinstance(node, ast.Constant):
        if node.value is None or isinstance(node.value, str | bool | int | float):
            return node.value
        raise _NotLiteral(f"{type(node.value).__name__} values are not supported")
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        value = literal(node.operand, depth + 1)
        if isinstance(value, int | float) and not isinstance(value, bool):
            return -value if isinstance(node.op, ast.USub) else value
        raise _NotLiteral("a sign can only precede a number")
    if isinstance(node, ast.Name):
        if node.id.lower() in _JSON_NAMES:
            return _JSON_NAMES[node.id.lower()]
        raise _NotLiteral(f"{node.id} is a name, not a value (quote strings)")
    if isinstance(node, ast.List | ast.Tuple | ast.Set):
        return [literal(e, depth + 1) for e in node.elts]
    if isinstance(node, ast.Dict):
        return _literal_dict(node, depth)
    if isinstance(node, ast.JoinedStr) and all(isinstance(v, ast.Constant) for v in node.values):
        return "".join(str(v.value) for v in node.values if isinstance(v, ast.Constant))
    if isinstance(node, ast.Call):
        inner = dotted_name(node.func) or "a function"
        raise _NotLiteral(f"it calls {inner}(); tools cannot be nested: call {inner} in its own block first "
                          "and use its result")
    raise _NotLiteral("only literal values are allowed (strings in quotes, numbers, True/False/None, lists, "
                      "dicts)")


def _literal_dict(node: ast.Dict, depth: int) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in zip(node.keys, node.values, strict=True):
        if key is None:
            raise _NotLiteral("** unpacking is not allowed")
        k = literal(key, depth + 1)
        if not isinstance(k, str):
            raise _NotLiteral("dict keys must be strings")
        out[k] = literal(value, depth + 1)
    return out


@dataclass(frozen=True, slots=True)
class Segment:
    """A segment's stripped source and its syntax tree (None, with ``error`` set, when it does not parse)."""

    text: str
    module: ast.Module | None
    error: str = ""

    @classmethod
    def parse(cls, source: str) -> Segment:
        """Parse ``source`` once; the scanner and the converters share the result."""
        text = source.strip(_BLANK)
        if not text:
            return cls("", None)
        try:
            return cls(text, ast.parse(text, mode="exec"))
        except SyntaxError as exc:
            return cls(text, None, exc.msg)
        except (ValueError, RecursionError, MemoryError):
            return cls(text, None, "unreadable")

    def statements(self) -> list[ast.AST]:
        """The call nodes (or offending statements) of the segment, in order."""
        body = self.module.body if self.module is not None else []
        return [node for stmt in body for node in _call_nodes(stmt)]


def parse_segment(segment: Segment, index: ToolIndex) -> list[ToolCall | RejectedCall]:
    """Convert a segment into calls and rejections, in source order."""
    if not segment.text:
        return []
    if segment.module is None:
        return [RejectedCall(guess_name(segment.text), segment.text,
                             f"not a valid call ({segment.error}); write calls like name(arg='value')")]
    events: list[ToolCall | RejectedCall] = []
    for node in segment.statements():
        if isinstance(node, ast.Call):
            events.append(_convert(node, segment.text, index))
        else:
            events.append(RejectedCall("", _source(segment.text, node),
                                       "only tool calls are allowed in a call block"))
    return events


def segment_is_call(segment: Segment, index: ToolIndex) -> bool | None:
    """Whether a segment reads as tool calls (to known or evidently misspelt tools): True/False, or None when it
    holds nothing. Decides whether a ```python fence is a call block or code meant to be shown."""
    if segment.module is None:
        return index.means_tool(guess_name(segment.text)) if segment.text else None
    nodes = segment.statements()
    if not nodes:
        return None
    calls = [n for n in nodes if isinstance(n, ast.Call)]
    if len(calls) != len(nodes):
        return False
    return any(index.means_tool(dotted_name(n.func) or "") for n in calls)


def _call_nodes(stmt: ast.stmt) -> Sequence[ast.AST]:
    """The call expressions a statement holds: ``f()``, ``[f(), g()]``, ``x = f()``, ``print(f())``."""
    value = stmt.value if isinstance(stmt, ast.Expr | ast.Assign | ast.AnnAssign) else None
    if value is None:
        return [stmt]
    if isinstance(value, ast.List | ast.Tuple):
        return value.elts
    if (isinstance(value, ast.Call) and dotted_name(value.func) in _WRAPPERS and len(value.args) == 1
            and not value.keywords and isinstance(value.args[0], ast.Call)):
        return [value.args[0]]
    return [value]


def _source(text: str, node: ast.AST) -> str:
    return ast.get_source_segment(text, node) or text


def _convert(node: ast.Call, text: str, index: ToolIndex) -> ToolCall | RejectedCall:
    """Bind, read and validate one call node."""
    source = _source(text, node)
    written = dotted_name(node.func)
    if written is None:
        return RejectedCall("", source, "call a tool by its name, like name(arg='value')")
    tool = index.resolve(written)
    if tool is None:
        return index.unknown(written, source)
    try:
        arguments = _bind(node, tool, index)
    except _NotLiteral as exc:
        return RejectedCall(written, source, f"{index.shown(tool)}: {exc}")
    return index.check(tool, written, arguments, source)


def _bind(node: ast.Call, tool: Tool, index: ToolIndex) -> dict[str, Any]:
    """Map positional and keyword arguments onto the tool's property names, reading each value as a literal."""
    order, keywords = index.parameters(tool)
    if any(isinstance(a, ast.Starred) for a in node.args):
        raise _NotLiteral("* unpacking is not allowed; name each argument")
    if len(node.args) > len(order):
        raise _NotLiteral(f"takes {len(order)} argument(s) but {len(node.args)} were given")
    arguments: dict[str, Any] = {}
    for name, arg in zip(order, node.args, strict=False):
        arguments[name] = _read(name, arg)
    for kw in node.keywords:
        if kw.arg is None:
            raise _NotLiteral("** unpacking is not allowed; name each argument")
        name = keywords.get(kw.arg, kw.arg)
        if name in arguments:
            raise _NotLiteral(f"got multiple values for argument {kw.arg!r}")
        arguments[name] = _read(kw.arg, kw.value)
    return arguments


def _read(name: str, node: ast.expr) -> Any:
    try:
        return literal(node)
    except _NotLiteral as exc:
        raise _NotLiteral(f"argument {name!r}: {exc}") from None
