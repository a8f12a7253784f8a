"""``Tool``: one tool definition (name, description, JSON Schema parameters) and its renderings.

A tool is stored as JSON Schema, the form every source gives (OpenAI tool dicts, MCP servers, Python
functions). From it voxcall renders the OpenAI wire forms and, for local models, a Python signature and a
``def`` stub. The conversions live in :mod:`voxcall.tools.from_function` and :mod:`voxcall.tools.signature`.
"""

from __future__ import annotations

import copy
import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from voxcall.tools.from_function import function_schema
from voxcall.tools.names import alias_map, python_identifier
from voxcall.tools.signature import build_signature, render_stub

EMPTY_PARAMETERS: dict[str, Any] = {"type": "object", "properties": {}}


def _empty_parameters() -> dict[str, Any]:
    return copy.deepcopy(EMPTY_PARAMETERS)


@dataclass(eq=True)
class Tool:
    """One tool: ``name``, ``description`` and ``parameters`` (a JSON Schema object)."""

    name: str
    description: str = ""
    parameters: dict[str, Any] = field(default_factory=_empty_parameters)
    _validator: Any = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise ValueError("a tool needs a non-empty string name")
        if not isinstance(self.description, str):
            raise ValueError(f"tool {self.name!r}: description must be a string")
        if not isinstance(self.parameters, Mapping):
            raise ValueError(f"tool {self.name!r}: parameters must be a JSON Schema object")
        self.parameters = dict(self.parameters)

    # -- wire forms ------------------------------------------------------------------------------------------

    @classmethod
    def from_openai(cls, data: Mapping[str, Any]) -> Tool:
        """Read a tool from the flat Realtime/Responses form or the nested Chat Completions form.

        Raises ``ValueError`` with a message fit for a protocol error when the dict is not a function tool.
        """
        if not isinstance(data, Mapping):
            raise ValueError("a tool must be an object")
        kind = data.get("type", "function")
        if kind != "function":
            raise ValueError(f"unsupported tool type {kind!r}; expected 'function'")
        body = data.get("function", data)
        if not isinstance(body, Mapping):
            raise ValueError("'function' must be an object")
        name = body.get("name")
        if not isinstance(name, str) or not name:
            raise ValueError("a function tool needs a non-empty string 'name'")
        parameters = body.get("parameters")
        if parameters is None:
            parameters = _empty_parameters()
        description = body.get("description") or ""
        return cls(name=name, description=description, parameters=parameters)

    @classmethod
    def from_function(cls, fn: Callable[..., Any], *, name: str | None = None,
                      description: str | None = None) -> Tool:
        """Describe a Python function (sync or async) as a tool, from its type hints and docstring.

        ``name`` defaults to the function's name, ``description`` to its docstring summary; argument
        descriptions come from the docstring's ``Args:`` section or ``Annotated[T, "..."]`` hints.
        """
        summary, parameters = function_schema(fn)
        tool_name = name or getattr(fn, "__name__", None) or type(fn).__name__
        return cls(name=tool_name, description=summary if description is None else description,
                   parameters=parameters)

    def to_openai(self) -> dict[str, Any]:
        """The flat form used by the Realtime and Responses APIs."""
        return {"type": "function", "name": self.name, "description": self.description,
                "parameters": copy.deepcopy(self.parameters)}

    def to_chat(self) -> dict[str, Any]:
        """The nested form used by Chat Completions."""
        return {"type": "function", "function": {"name": self.name, "description": self.description,
                                                 "parameters": copy.deepcopy(self.parameters)}}

    # -- Python-side names -----------------------------------------------------------------------------------

    @property
    def properties(self) -> dict[str, Any]:
        """The schema's properties, or an empty dict when the schema has none (or a malformed one).

        Keys that are not strings (possible in a hand-built dict, never in JSON) are left out.
        """
        props = self.parameters.get("properties")
        return {k: v for k, v in props.items() if isinstance(k, str)} if isinstance(props, Mapping) else {}

    @property
    def required(self) -> list[str]:
        """Required property names that exist in ``properties``; unknown names in ``required`` are ignored."""
        req = self.parameters.get("required")
        if not isinstance(req, list):
            return []
        props = self.properties
        return [r for r in req if isinstance(r, str) and r in props]

    @property
    def code_name(self) -> str:
        """The tool's name as a Python identifier (``get-weather`` -> ``get_weather``)."""
        return python_identifier(self.name)

    def argument_aliases(self) -> dict[str, str]:
        """Map each property name to the Python identifier used for it in the signature."""
        return alias_map(self.properties)

    # -- Python renderings (local models) --------------------------------------------------------------------

    def signature(self) -> inspect.Signature:
        """The tool as a Python signature: aliased names, required parameters first, schema annotations.

        Never raises on a malformed schema: what cannot be understood is annotated ``Any``.
        """
        aliases = self.argument_aliases()
        return build_signature(self.properties, self.required, aliases, self.parameters)

    def to_code_prompt(self) -> str:
        """The ``def`` stub shown to local models: signature plus a docstring with the described arguments."""
        aliases = self.argument_aliases()
        arg_docs = {aliases[name]: schema["description"] for name, schema in self.properties.items()
                    if isinstance(schema, Mapping) and isinstance(schema.get("description"), str)}
        return render_stub(self.code_name, self.description, self.signature(), arg_docs)
