"""The tool-call formats local models are trained on, as one table, and how a call block of each is read.

Many GGUF models were fine-tuned to call tools in a syntax of their own, and their chat template says which:
it renders the tools, shows earlier calls and results, and names the syntax it expects. :func:`detect_format`
reads the template's text and returns the matching :class:`ToolFormat`, or None (the model then takes the
``<code>`` path). The formats differ only in data — the text that opens a call block, the text that closes it
(or none: the block is one JSON value), the key holding the arguments, the syntax of the block's body — so they
are rows of one table, :data:`FORMATS`, read by one scanner (:class:`~voxcall.tools.codecalls.format_stream.
FormatCallStream`) and one grammar builder, rather than a module each that would repeat the scanner.

- ``hermes``: ``<tool_call>{"name": …, "arguments": {…}}</tool_call>`` (Qwen 2.5/3, Hermes and many fine-tunes);
- ``llama3``: ``{"name": …, "parameters": {…}}`` as the whole reply, or after ``<|python_tag|>`` (Llama 3.1-3.3);
- ``mistral``: ``[TOOL_CALLS][{"name": …, "arguments": {…}}, …]`` (Mistral 7B v0.3, Nemo, Small);
- ``functiongemma``: ``<start_function_call>call:name{key:<escape>text<escape>,n:5}<end_function_call>``.

A block's body is decoded here into :class:`ToolCall` or :class:`RejectedCall` events, each call checked by the
one validator every path uses (:meth:`ToolIndex.check`); a bad call is rejected with a reason, its siblings survive.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from voxcall.tools.calls import ToolCall
from voxcall.tools.codecalls.events import RejectedCall
from voxcall.tools.codecalls.segments import ToolIndex

GEMMA_ESCAPE = "<escape>"
"""FunctionGemma's string delimiter (a token of its own): ``<escape>text<escape>``."""

_JSON_NAME = re.compile(r'"name"\s*:\s*"([^"\\]*)"')
_GEMMA_NAME = re.compile(r"\s*call:([A-Za-z_][\w.\-]*)")
_GEMMA_BARE = re.compile(r"[^,}\]]*")
_NUMBER = re.compile(r"-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?")


@dataclass(frozen=True, slots=True)
class ToolFormat:
    """One model family's tool-call syntax.

    ``markers``: texts a chat template of the family holds (all of them); ``openers``: texts that open a call
    block (the first is the one a backend writes or prefills); ``closer``: the text that ends a block, or ``""``
    when the block is one JSON value ended by its own last bracket; ``at_start``: a character that opens a block
    when it is the first non-blank character of a reply (and belongs to the body); ``body``: ``"json"`` (a call
    object, or a list of them) or ``"gemma"`` (``call:name{…}``); ``arguments``: the keys a JSON call object
    may hold its arguments under, the one the template shows first.
    """

    name: str
    markers: tuple[str, ...]
    openers: tuple[str, ...]
    closer: str = ""
    at_start: str = ""
    body: Literal["json", "gemma"] = "json"
    arguments: tuple[str, ...] = ("arguments", "parameters")

    @property
    def opener(self) -> str:
        """The text a backend writes to open a call block."""
        return self.openers[0]

    @property
    def string_delimiter(self) -> str:
        """What opens and closes a string inside a block's body."""
        return GEMMA_ESCAPE if self.body == "gemma" else '"'

    def decode(self, body: str, index: ToolIndex) -> list[ToolCall | RejectedCall]:
        """The calls a block's ``body`` (the text between opener and closer) holds, each valid or rejected."""
        source = body.strip()
        if not source:
            return []
        if self.body == "gemma":
            return [_gemma_call(source, index)]
        try:
            value = json.loads(source)
        except ValueError as exc:
            match = _JSON_NAME.search(source)
            reason = getattr(exc, "msg", str(exc))
            return [RejectedCall(match.group(1) if match else "", source,
                                 f'not valid JSON ({reason}); write {{"name": …, "{self.arguments[0]}": {{…}}}}')]
        items = value if isinstance(value, list) else [value]
        return [self._json_call(item, source if len(items) == 1 else json.dumps(item), index) for item in items]

    def _json_call(self, item: Any, source: str, index: ToolIndex) -> ToolCall | RejectedCall:
        if isinstance(item, Mapping) and isinstance(item.get("function"), Mapping):
            item = item["function"]  # the OpenAI shape, which some fine-tunes write
        name = item.get("name") if isinstance(item, Mapping) else None
        if not isinstance(name, str) or not name:
            return RejectedCall("", source, f'a call is an object with a "name" and its "{self.arguments[0]}"')
        arguments: Any = next((item[key] for key in self.arguments if key in item), {})
        if isinstance(arguments, str):  # arguments as JSON text, as the OpenAI API writes them
            with contextlib.suppress(ValueError):  # else the validator reports a non-object
                arguments = json.loads(arguments) if arguments.strip() else {}
        tool = index.resolve(name)
        if tool is None:
            return index.unknown(name, source)
        return index.check(tool, name, arguments, source)


FORMATS: tuple[ToolFormat, ...] = (
    ToolFormat("functiongemma", markers=("<start_function_call>",), openers=("<start_function_call>",),
               closer="<end_function_call>", body="gemma"),
    ToolFormat("hermes", markers=("<tool_call>", "</tool_call>"), openers=("<tool_call>",), closer="</tool_call>"),
    ToolFormat("mistral", markers=("[TOOL_CALLS]",), openers=("[TOOL_CALLS]",)),
    ToolFormat("llama3", markers=("<|start_header_id|>", '"parameters"'), openers=("<|python_tag|>",), at_start="{",
               arguments=("parameters", "arguments")),
)
"""The known formats, in the order :func:`detect_format` tries them (the most specific markers first)."""


def detect_format(template: str | None) -> ToolFormat | None:
    """The tool format a chat template declares, or None when it declares none (or there is no template)."""
    if not template:
        return None
    for tool_format in FORMATS:
        if all(marker in template for marker in tool_format.markers):
            return tool_format
    return None


def format_named(name: str) -> ToolFormat:
    """The format called ``name``; raises ``KeyError`` for an unknown one."""
    for tool_format in FORMATS:
        if tool_format.name == name:
            return tool_format
    raise KeyError(name)


# -- FunctionGemma's body ------------------------------------------------------------------------------------


class _GemmaSyntaxError(ValueError):
    """A FunctionGemma call body that does not read."""


def _gemma_call(source: str, index: ToolIndex) -> ToolCall | RejectedCall:
    """``call:name{key:value,…}``, read and checked."""
    match = _GEMMA_NAME.match(source)
    if match is None:
        return RejectedCall("", source, "write a call as call:name{key:value}")
    name = match.group(1)
    try:
        arguments, end = _gemma_value(source, match.end())
        if not isinstance(arguments, dict) or source[end:].strip():
            raise _GemmaSyntaxError("the arguments are one {…} after the name")
    except _GemmaSyntaxError as exc:
        return RejectedCall(name, source, f"not a valid call ({exc}); write call:name{{key:<escape>text<escape>}}")
    tool = index.resolve(name)
    if tool is None:
        return index.unknown(name, source)
    return index.check(tool, name, arguments, source)


def _gemma_value(s: str, i: int) -> tuple[Any, int]:
    """The value at ``s[i:]`` and where it ends: ``<escape>text<escape>``, ``{k:v,…}``, ``[v,…]`` or a bare word
    (a number, true/false/null, else text)."""
    if s.startswith(GEMMA_ESCAPE, i):
        end = s.find(GEMMA_ESCAPE, i + len(GEMMA_ESCAPE))
        if end < 0:
            raise _GemmaSyntaxError("a string is not closed")
        return s[i + len(GEMMA_ESCAPE):end], end + len(GEMMA_ESCAPE)
    if s.startswith("{", i):
        return _gemma_items(s, i + 1, "}", keyed=True)
    if s.startswith("[", i):
        return _gemma_items(s, i + 1, "]", keyed=False)
    word = _GEMMA_BARE.match(s, i)
    text = word.group(0).strip() if word else ""
    end = word.end() if word else i
    if text in ("true", "false"):
        return text == "true", end
    if text == "null":
        return None, end
    if _NUMBER.fullmatch(text):
        return (float(text) if any(c in text for c in ".eE") else int(text)), end
    if not text:
        raise _GemmaSyntaxError("a value is missing")
    return text, end


def _gemma_items(s: str, i: int, close: str, *, keyed: bool) -> tuple[Any, int]:
    """The members of an object (``keyed``) or a list, from after its opening bracket to its ``close``."""
    obj: dict[str, Any] = {}
    items: list[Any] = []
    if s.startswith(close, i):
        return (obj if keyed else items), i + 1
    while True:
        if keyed:
            colon = s.find(":", i)
            key = s[i:colon].strip() if colon >= 0 else ""
            if not key or any(c in key for c in ",{}[]<"):
                raise _GemmaSyntaxError("an argument has no name")
            obj[key], i = _gemma_value(s, colon + 1)
        else:
            value, i = _gemma_value(s, i)
            items.append(value)
        if s.startswith(",", i):
            i += 1
        elif s.startswith(close, i):
            return (obj if keyed else items), i + 1
        else:
            raise _GemmaSyntaxError(f"expected ',' or '{close}'")
