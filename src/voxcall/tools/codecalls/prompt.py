"""The tools section of a local model's system prompt, rendered from Jinja2 templates shipped with the package.

Tools are shown as Python stubs and the model is taught to answer with ``<code>name(arg='v')</code>`` blocks,
which :class:`~voxcall.tools.codecalls.CodeCallStream` parses. :func:`format_code_call` renders a call the same
way, so earlier calls in the history look exactly like what the model is asked to write.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from functools import cache
from typing import Any

import jinja2

from voxcall.tools.schema import Tool

ToolChoice = str | Mapping[str, Any]

_PLACEHOLDERS: dict[str, Any] = {"string": "text", "integer": 1, "number": 1.5, "boolean": True,
                                 "array": [], "object": {}}


@cache
def _environment() -> jinja2.Environment:
    return jinja2.Environment(loader=jinja2.PackageLoader("voxcall.tools.codecalls", "templates"),
                              autoescape=False, keep_trailing_newline=False, undefined=jinja2.StrictUndefined)


def forced_tool_name(tool_choice: ToolChoice) -> str | None:
    """The tool a ``{"type": "function", "name": N}`` choice (flat or nested) forces, else None."""
    if isinstance(tool_choice, Mapping):
        body = tool_choice.get("function", tool_choice)
        name = body.get("name") if isinstance(body, Mapping) else None
        return name if isinstance(name, str) else None
    return None


def render_tools_prompt(tools: Iterable[Tool], *, voice: bool, tool_choice: ToolChoice = "auto") -> str:
    """The tools section of the system prompt ("" when there are no tools or ``tool_choice`` is ``"none"``).

    ``tool_choice`` is ``"auto"``, ``"none"``, ``"required"`` or ``{"type": "function", "name": N}``; a named tool
    must be among ``tools``. Raises ``ValueError`` for any other choice.
    """
    tools = list(tools)
    forced = forced_tool_name(tool_choice)
    if forced is None and tool_choice not in ("auto", "none", "required"):
        raise ValueError(f"unsupported tool_choice {tool_choice!r}")
    if tool_choice == "none" or not tools:
        return ""
    if forced is not None:
        chosen = [t for t in tools if t.name == forced]
        if not chosen:
            raise ValueError(f"tool_choice names unknown tool {forced!r}")
        tools = chosen
    template = _environment().get_template("tools_voice.j2" if voice else "tools_text.j2")
    return template.render(
        stubs=[t.to_code_prompt() for t in tools],
        example=format_code_call(tools[0], example_arguments(tools[0])),
        required=tool_choice == "required",
        forced=tools[0].code_name if forced else "",
    ).strip() + "\n"


def example_arguments(tool: Tool) -> dict[str, Any]:
    """Plausible values for a tool's required arguments, taken from the schema (examples, enum, default, type)."""
    values: dict[str, Any] = {}
    for name in tool.required:
        schema = tool.properties.get(name)
        schema = schema if isinstance(schema, Mapping) else {}
        if isinstance(schema.get("examples"), list) and schema["examples"]:
            values[name] = schema["examples"][0]
        elif isinstance(schema.get("enum"), list) and schema["enum"]:
            values[name] = schema["enum"][0]
        elif "default" in schema:
            values[name] = schema["default"]
        else:
            kind = schema.get("type")
            values[name] = _PLACEHOLDERS.get(kind if isinstance(kind, str) else "string", "text")
    return values


def python_literal(value: Any) -> str:
    """``value`` (a JSON value) written as a Python literal the parser reads back to the same value."""
    if isinstance(value, float) and not math.isfinite(value):
        return repr(str(value))
    if isinstance(value, list):
        return "[" + ", ".join(python_literal(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{python_literal(str(k))}: {python_literal(v)}" for k, v in value.items()) + "}"
    return repr(value)


def format_code_call(tool: Tool, arguments: Mapping[str, Any]) -> str:
    """Render a call the way the model is asked to write it: ``<code>name(arg='v')</code>``."""
    aliases = tool.argument_aliases()
    args = ", ".join(f"{aliases.get(k, k)}={python_literal(v)}" for k, v in arguments.items())
    return f"<code>{tool.code_name}({args})</code>"
