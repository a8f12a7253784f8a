"""GBNF grammars (llama.cpp's grammar format) that only admit well-formed calls to the session's tools.

A local model asked to call a tool opens a ``<code>`` block; from there on, sampling is constrained by
:func:`calls_grammar`: the text can only be calls to declared tools, by their Python names (``Tool.code_name``),
with named arguments (the aliases of ``Tool.argument_aliases()``) in signature order, every required argument
present, and each value a literal of its schema's type: quoted strings, numbers, integers, ``True``/``False``,
enum values as literals; arrays and objects loosely (any literals inside unless the schema says more). Each call
is closed by ``</code>``; further blocks may follow, and nothing else.

:func:`format_grammar` does the same for a model's own tool format (:mod:`voxcall.tools.codecalls.formats`):
what follows the format's opener is calls as that format writes them — JSON objects naming a declared tool with
its arguments as a JSON object of the schema's types, or FunctionGemma's ``call:name{key:value}`` — closed by
the format's closer, further blocks allowed; the same schema rules, in the format's literals (:class:`_Dialect`).

Given the user's words (``said``: :class:`~voxcall.llm.local.said.Said`), a string argument whose schema says no
more than ``type: string`` (no enum, format or pattern, no description prescribing a form) must be a span of them
(one of :meth:`~voxcall.llm.local.said.Said.strings`): a tiny model otherwise copies a demonstration's placeholder
(``loc='text'``) or writes identifiers (``'bohemian_rhapsody'``) instead of what the user said. A string the tool
wants "in the format of 'City, State'" or 'YYYY-MM-DD' is written by the model (a date or a time in the shape
prescribed: :mod:`~voxcall.tools.forms`): the user said "Boston" or "March 1st". Likewise, when the user said
numbers (in digits or words), a number argument is one of them (an integer one, one of the whole numbers; a call's
required numbers use each no more often than it was said: :meth:`~voxcall.llm.local.said.Said.each_as_said`), not a
recomputed or demonstrated value; one that counts in a unit of time takes the lengths of time said in its unit ("two
hours": ``minutes=120``; :meth:`~voxcall.llm.local.said.Said.numbers_for`). A choice
(``enum``) the user named, alone among its values ("in fahrenheit"), is passed even when optional, and an optional
choice the user did not name is left out (the tool's default applies: not a choice the user never made). A colour or
a clothing size (:mod:`voxcall.llm.local.kinds`) is one said; a colour said is passed, and an optional colour
none of which was said is left out; an optional flag a sentence names unnegated ("including the hidden ones") is
passed, turned on (:meth:`~voxcall.llm.local.said.Said.sets`); a quoted value the words label with a parameter's name
("the title should be 'X'") is that argument's, passed, and no other's (:mod:`~voxcall.llm.local.labels`). Which tools
the words hold every copied value of is the planner's to ask (:meth:`~voxcall.llm.local.said.Said.holds`); the
grammar admits what it is given.

The grammar text is all this module makes; :mod:`voxcall.llm.local.llamacpp` checks it against the model's vocabulary
(llama.cpp crashes on an invalid grammar instead of reporting it) and samples with it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from voxcall.llm.local.compounds import whole_names
from voxcall.llm.local.labels import NO_LABELS
from voxcall.llm.local.said import Said, copied_string
from voxcall.llm.local.switches import switched
from voxcall.tools.codecalls.formats import GEMMA_ESCAPE, ToolFormat
from voxcall.tools.codecalls.prompt import python_literal
from voxcall.tools.codecalls.stream import CLOSE_TAG, OPEN_TAG
from voxcall.tools.forms import form_rule, shaped_spans
from voxcall.tools.schema import Tool
from voxcall.tools.signature import resolve_pointer

_MAX_DEPTH = 16  # schema nesting followed before a value is accepted as any literal

# Literal rules every grammar shares; a Python literal of each kind, in the forms the ``<code>`` parser reads.
_BASE_RULES = {
    "string": r'''"'" ([^'\\\n] | "\\" [^\n])+ "'" | "\"" ([^"\\\n] | "\\" [^\n])+ "\""''',
    "integer": r'"-"? ("0" | [1-9] [0-9]*)',
    "number": r'"-"? ("0" | [1-9] [0-9]*) ("." [0-9]+)?',
    "boolean": '"True" | "False"',
    "null": '"None"',
    "value": "string | number | boolean | null | array | object",
    "array": '"[" (value (", " value)*)? "]"',
    "object": '"{" (string ": " value (", " string ": " value)*)? "}"',
}
_JSON_RULES = {  # JSON literals, for the JSON tool formats
    "string": r'"\"" ([^"\\\n] | "\\" ["\\/bfnrt]) * "\""',
    "integer": _BASE_RULES["integer"],
    "number": _BASE_RULES["number"],
    "boolean": '"true" | "false"',
    "null": '"null"',
    "value": _BASE_RULES["value"],
    "array": _BASE_RULES["array"],
    "object": '"{" (string ": " value (", " string ": " value)*)? "}"',
}
_GEMMA_RULES = {  # FunctionGemma's literals: strings between <escape> tokens, bare keys, no spaces
    "string": f'"{GEMMA_ESCAPE}" [^<]* "{GEMMA_ESCAPE}"',
    "integer": _BASE_RULES["integer"],
    "number": _BASE_RULES["number"],
    "boolean": '"true" | "false"',
    "null": '"null"',
    "value": _BASE_RULES["value"],
    "array": '"[" (value ("," value)*)? "]"',
    "object": '"{" (key ":" value ("," key ":" value)*)? "}"',
    "key": "[A-Za-z_] [A-Za-z0-9_]*",
}
_BLOCK_GAP = r'[ \n]?'  # what may separate one call block from the next


@dataclass(frozen=True, slots=True)
class _Dialect:
    """How literals are written: the shared rules, the texts a literal value may be written as, and what separates
    arguments."""

    rules: Mapping[str, str]
    writings: Callable[[Any], tuple[str, ...]]
    key: Callable[[str], str]
    separator: str = ", "


def _gemma_literal(value: Any) -> str:
    """A value as FunctionGemma writes it: strings between ``<escape>`` tokens, the rest as JSON."""
    if isinstance(value, str):
        return GEMMA_ESCAPE + value + GEMMA_ESCAPE
    if isinstance(value, list):
        return "[" + ",".join(_gemma_literal(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ",".join(f"{k}:{_gemma_literal(v)}" for k, v in value.items()) + "}"
    return json.dumps(value)


def _python_writings(value: Any) -> tuple[str, ...]:
    """``value`` as the Python literals the parser reads back to it: ``repr``'s, and for a string with an apostrophe
    (which ``repr`` puts in double quotes: "Son's latest goal") the same in single quotes with the apostrophe
    escaped, which is how a model that opens every string with ``'`` goes on (else it could only pick a value
    without one: "latest goal")."""
    written = python_literal(value)
    if isinstance(value, str) and written.startswith('"') and "'" in value:
        return written, "'" + written[1:-1].replace("'", "\\'") + "'"
    return (written,)


_PYTHON = _Dialect(_BASE_RULES, _python_writings, lambda key: f"{python_literal(key)}: ")
_JSON = _Dialect(_JSON_RULES, lambda value: (json.dumps(value, ensure_ascii=False),),
                 lambda key: f"{json.dumps(key, ensure_ascii=False)}: ")
_GEMMA = _Dialect(_GEMMA_RULES, lambda value: (_gemma_literal(value),), lambda key: f"{key}:", ",")


def gbnf_literal(text: str) -> str:
    """``text`` as a GBNF string literal (double-quoted, with ``\\``, ``"`` and control characters escaped)."""
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\r", "\\r")
    return '"' + escaped.replace("\t", "\\t") + '"'


def calls_grammar(tools: Sequence[Tool], said: str = "", *, after_call: bool = False, write_forms: bool = True) -> str:
    """A grammar for what follows an opened ``<code>``: one or more calls to ``tools``, each closed by
    ``</code>``, blocks separated by at most a space or newline; with ``said`` (the user's words), plain string
    arguments are spans of them and numbers are numbers said; ``after_call``: what follows the first call's
    closing parenthesis (its ``</code>``, then further blocks as before); ``write_forms``: a string whose
    description prescribes a form is the model's to write (:func:`copied_string`; False: a span like any other, for
    a model that writes placeholders). Raises ``ValueError`` when ``tools`` is empty."""
    if not tools:
        raise ValueError("a calls grammar needs at least one tool")
    builder = _Builder(_PYTHON, Said(said), write_forms=write_forms)
    calls = [builder.call(tool) for tool in tools]
    builder.rules["call"] = " | ".join(calls)
    close, reopen = gbnf_literal(CLOSE_TAG), gbnf_literal(OPEN_TAG)
    builder.rules["root"] = f"{'' if after_call else 'call '}{close} ({_BLOCK_GAP} {reopen} call {close})*"
    return builder.text()


def format_grammar(tools: Sequence[Tool], tool_format: ToolFormat, said: str = "", *, write_forms: bool = True) -> str:
    """A grammar for what follows ``tool_format``'s opener: calls to ``tools`` as the format writes them, then its
    closer; further blocks may follow (a list of calls, for a format whose body is one JSON value). ``said`` and
    ``write_forms`` as for :func:`calls_grammar`. Raises ``ValueError`` when ``tools`` is empty."""
    if not tools:
        raise ValueError("a calls grammar needs at least one tool")
    builder = _Builder(_GEMMA if tool_format.body == "gemma" else _JSON, Said(said), write_forms=write_forms)
    builder.rules["call"] = " | ".join(builder.format_call(tool, tool_format) for tool in tools)
    opener = gbnf_literal(tool_format.opener)
    if tool_format.closer:
        close = gbnf_literal(tool_format.closer)
        gap = "" if tool_format.body == "gemma" else ' "\n"?'
        block = f"{gap} call{gap} {close}"
        builder.rules["root"] = f"{block} ({_BLOCK_GAP} {opener}{block})*"
    else:
        builder.rules["root"] = '"[" call (", " call)* "]" | call'
    return builder.text()


class _Builder:
    """Collects the rules of one grammar; equal rule bodies share one name, so repeated schemas cost nothing."""

    def __init__(self, dialect: _Dialect = _PYTHON, said: Said | None = None, *, write_forms: bool = True) -> None:
        self.dialect = dialect
        self.write_forms = write_forms  # whether a string whose description prescribes a form is the model's
        self.said = said or Said("")  # what plain strings, numbers and choices are taken from (anything: nothing)
        self.rules: dict[str, str] = dict(dialect.rules)
        self._by_body: dict[str, str] = {body: name for name, body in dialect.rules.items()}
        self._refs: dict[str, str] = {}  # $ref pointer -> rule name, so recursive schemas become recursive rules
        self._strings: list[str] = []  # what the current tool's plain strings may be (:meth:`Said.strings`)
        self._numbers: list[int | float] | None = None  # the current argument's numbers (None: any said)
        self._labels = NO_LABELS  # the quoted values the words label the current call's arguments with

    def text(self) -> str:
        """The grammar, ``root`` first."""
        order = ["root", *(name for name in self.rules if name != "root")]
        return "".join(f"{name} ::= {self.rules[name]}\n" for name in order)

    def add(self, hint: str, body: str) -> str:
        """The name of a rule with ``body``, made from ``hint`` unless an equal rule exists already."""
        if body in self._by_body:
            return self._by_body[body]
        name = self._fresh(hint)
        self.rules[name] = body
        self._by_body[body] = name
        return name

    def _fresh(self, hint: str) -> str:
        base = re.sub(r"[^a-zA-Z0-9]+", "-", hint).strip("-").lower() or "rule"
        name, n = base, 2
        while name in self.rules or name in ("root", "call"):
            name, n = f"{base}-{n}", n + 1
        return name

    # -- calls -----------------------------------------------------------------------------------------------

    def call(self, tool: Tool) -> str:
        """The rule for one call of ``tool``: its name, then its arguments in parentheses."""
        by_alias = {alias: prop for prop, alias in tool.argument_aliases().items()}
        keys = [(by_alias.get(alias, alias), alias, gbnf_literal(alias + "="))
                for alias in tool.signature().parameters]  # required first, then optional, each in schema order
        arguments = self._arguments(tool, keys, tool.code_name)
        body = gbnf_literal(tool.code_name + "(") + (f" {arguments}" if arguments else "") + ' ")"'
        return self.add(f"call-{tool.code_name}", body)

    def format_call(self, tool: Tool, tool_format: ToolFormat) -> str:
        """The rule for one call of ``tool`` in ``tool_format``: its own name, then its arguments by property name
        (required first, then optional, each in schema order), each value of its schema's type."""
        keys = [(prop, prop, gbnf_literal(f"{prop}:" if tool_format.body == "gemma" else f"{json.dumps(prop)}: "))
                for prop in tool.properties]
        arguments = self._arguments(tool, keys, tool.name)
        inner = f" {arguments}" if arguments else ""
        if tool_format.body == "gemma":
            body = f'{gbnf_literal(f"call:{tool.name}" + "{")}{inner} "}}"'
        else:
            head = f'{{"name": {json.dumps(tool.name)}, "{tool_format.arguments[0]}": {{'
            body = f'{gbnf_literal(head)}{inner} "}}}}"'
        return self.add(f"call-{tool.name}", body)

    def _arguments(self, tool: Tool, keys: list[tuple[str, str, str]], name: str) -> str:
        """The argument list of a call of ``tool``: for each ``(property, alias, key literal)`` of ``keys``, the key
        then a value of its schema (:meth:`_member`), required ones first. A plain string is one of :meth:`Said.
        strings` (no choice word, not only the tool's name), or any span when there is none (a call the request
        must make though the words hold none), a name its kind completes whole (:mod:`~voxcall.llm.local.compounds`)."""
        self._strings = self.said.strings(tool)
        listed = self._members([(prop, key, f"{name}-{alias}") for prop, alias, key in keys], tool.properties,
                               tool.required, tool.parameters, 0)
        self._strings = []
        return listed

    def _members(self, keys: list[tuple[str, str, str]], properties: Mapping[str, Any], required: Sequence[str],
                 root: Mapping[str, Any], depth: int) -> str:
        """The members of a call or an object: for each ``(property, key literal, rule hint)`` of ``keys``, the key
        then its value (:meth:`_member`), the required ones first, then the others in their order, each optional
        but a choice said and what the words pass (:meth:`Said.passes`), which stand at their place: moved ahead
        of the others, a flag the words set was written and the call closed before an argument the signature shows
        first (``getCurrentTime(include_date=True)`` for "the current time in 'Europe/Berlin', including the
        date"). A parameter the words label a quoted value with is that value (:meth:`Said.labelled`), and passed."""
        said_choices, labels = self.said.choices_of(properties), self.said.labelled(properties)
        outer, self._labels = self._labels, labels
        needed: list[str] = []
        optional: list[tuple[str, bool]] = []  # ``key value``, and whether it must be there
        counted: list[tuple[int, str, list[int | float]]] = []  # required numbers: where, key, what they may be
        for prop, key, hint in keys:
            schema = properties.get(prop)
            value = (self._literals(labels.values(prop), f"{hint}-label") if prop in labels.given
                     else self._member(prop, schema, said_choices, prop in required, root, hint, depth))
            if value is None:
                continue
            if prop in required and (numbers := self._said_numbers(prop, schema)):
                counted.append((len(needed), key, numbers))
            if prop in required:
                needed.append(f"{key} {value}")
            else:
                optional.append((f"{key} {value}", prop in labels.given or len(said_choices.get(prop, [])) == 1 or (
                    isinstance(schema, Mapping) and self.said.passes(prop, schema))))
        self._labels = outer
        return _argument_list(self._counted(needed, counted), optional, self.dialect.separator)

    def _said_numbers(self, prop: str, schema: Any) -> list[int | float]:
        """The numbers said that number parameter ``prop`` (of ``schema``) may take; empty for another kind."""
        if not self.said.spans or not isinstance(schema, Mapping) or "enum" in schema:
            return []
        kind = schema.get("type")
        said = self._labels.untaken(self.said.numbers_for(prop, schema)) if kind in ("number", "integer") else []
        return [n for n in said if isinstance(n, int)] if kind == "integer" else said

    def _counted(self, needed: list[str], counted: list[tuple[int, str, list[int | float]]]) -> list[str]:
        """``needed`` (required members, written ``key value``), where two or more are numbers (``counted``), as one
        alternative for each way of giving them numbers no more often than said (:meth:`Said.each_as_said`)."""
        ways = self.said.each_as_said([numbers for _, _, numbers in counted]) if len(counted) > 1 else []
        if not ways:
            return needed
        sep = gbnf_literal(self.dialect.separator)
        alternatives = []
        for way in ways:
            members = list(needed)
            for (index, key, _), number in zip(counted, way, strict=True):
                members[index] = f"{key} {self._literals([number], 'said-number')}"
            alternatives.append(f" {sep} ".join(members))
        return ["(" + " | ".join(f"({members})" for members in alternatives) + ")"]

    def _member(self, prop: str, schema: Any, said_choices: Mapping[str, list[str]], required: bool,
                root: Mapping[str, Any], hint: str, depth: int) -> str | None:
        """The value rule of property ``prop`` (of ``schema``) of a call or of an object in one, or None when it is
        left out. A choice the user said alone among its values (``said_choices``: :meth:`Said.choices_of`) is that
        value (its caller makes it required); an optional one none of whose values was said is left out (the tool
        applies its own default; the 0.5B model wrote ``unit='celsius'`` for "the temperature in Boston", which the
        tool's default says no better and a checker that wants the argument left or 'fahrenheit' counts wrong), as
        is an optional number, flag or colour the words give no value (:meth:`Said.gives`). An optional flag the
        words set is ``True`` (:meth:`Said.sets`; its caller makes it required); a flag that switches something on
        is what the words say, "on" or "off" ("turn the lights off" beside ``lights_on``: :func:`switched`), else
        the model's to write; a colour or a size said
        (:meth:`Said.of_kind`) is one of those, or a list of them (a colour made required: :meth:`Said.passes`);
        anything else a value of its schema, a number one said for it (:meth:`Said.numbers_for`)."""
        said = said_choices.get(prop, [])
        if len(said) == 1:
            return self._literals(said, f"{hint}-said")
        if (switch := switched(self.said.text, prop, schema)) is not None:
            return self._literals([switch], f"{hint}-switch")
        if not required and isinstance(schema, Mapping) and self.said.sets(prop, schema):
            return self._literals([True], f"{hint}-set")
        if isinstance(schema, Mapping) and (kinded := self.said.of_kind(prop, schema)):
            item = self._literals(kinded, f"{hint}-kind")
            return self.add(f"{hint}-kinds", f'"[" {item} ({gbnf_literal(self.dialect.separator)} {item})* "]"'
                            ) if schema.get("type") == "array" else item
        if self.said.names and not said and not required and prop in said_choices:
            return None  # none named: left to the tool (its default), not a choice the user never made
        numbers = self.said.numbers_for(prop, schema if isinstance(schema, Mapping) else None)
        if self.said.spans and not required and isinstance(schema, Mapping) and (not self.said.gives(prop, schema) or (
                schema.get("type") in ("number", "integer") and not self._labels.untaken(numbers, keep=False))):
            return None  # a number or a flag the words do not give (or give another argument): the tool's own
        outer, self._numbers = (self._numbers, self._strings), numbers
        self._strings = whole_names(prop, self._strings)  # a room's span is "laundry room", not "laundry"
        value = self.value(schema, root, hint, depth)
        self._numbers, self._strings = outer
        return value

    # -- values ----------------------------------------------------------------------------------------------

    def value(self, schema: Any, root: Mapping[str, Any], hint: str, depth: int) -> str:
        """The rule name (or inline expression) for a literal ``schema`` accepts; ``value`` when unsure."""
        if depth > _MAX_DEPTH or not isinstance(schema, Mapping):
            return "value"
        if "$ref" in schema:
            return self._ref(schema["$ref"], root, hint, depth)
        if "const" in schema:
            return self._literals([schema["const"]], hint)
        if isinstance(schema.get("enum"), list) and schema["enum"]:
            return self._literals(schema["enum"], hint)
        for key in ("anyOf", "oneOf"):
            members = schema.get(key)
            if isinstance(members, list) and members:
                return self._union([self.value(m, root, hint, depth + 1) for m in members], hint)
        if isinstance(schema.get("allOf"), list):
            informative = [v for m in schema["allOf"] if (v := self.value(m, root, hint, depth + 1)) != "value"]
            return informative[0] if informative else "value"
        kind = schema.get("type")
        if isinstance(kind, list):
            return self._union([self._typed(k, schema, root, hint, depth) for k in kind], hint)
        return self._typed(kind, schema, root, hint, depth)

    def _typed(self, kind: Any, schema: Mapping[str, Any], root: Mapping[str, Any], hint: str, depth: int) -> str:
        """The rule for one JSON type; arrays follow their ``items`` schema, objects are loose."""
        if kind == "array":
            item = self.value(schema.get("items"), root, f"{hint}-item", depth + 1)
            if item == "value":
                return "array"
            sep = gbnf_literal(self.dialect.separator)
            return self.add(f"{hint}-list", f'"[" ({item} ({sep} {item})*)? "]"')
        if (kind == "object" and isinstance(schema.get("properties"), Mapping) and schema["properties"]
                and schema.get("additionalProperties") in (None, False)):
            return self._object(schema, root, hint, depth)
        if kind == "string" and (places := self.said.places(schema)):
            return self._literals(places, f"{hint}-place")  # "Boston, MA": where the place is, not a guess
        if kind == "string" and (shaped := shaped_spans(schema, self.said.text)):
            return self._literals(shaped, f"{hint}-shaped")  # '34.0522, -118.2437' as '36.2522, -105.3437' is
        if kind == "string" and self.write_forms and (form := form_rule(schema, self.dialect.writings("")[0],
                                                                        gbnf_literal)):
            return self.add(f"{hint}-form", form)  # 'YYYY-MM-DD': that shape, whatever the words
        if kind == "string" and self.said.spans and copied_string(schema, write_forms=self.write_forms):
            return self._literals(self._labels.untaken(self._strings or self.said.spans), "said")
        said_numbers = self._labels.untaken(self._numbers if self._numbers is not None else self.said.numbers)
        whole = [n for n in said_numbers if isinstance(n, int)]
        if kind == "number" and said_numbers:
            return self._literals(said_numbers, "said-number")
        if kind == "integer" and whole:
            return self._literals(whole, "said-integer")
        if isinstance(kind, str) and kind in self.dialect.rules and kind not in ("value", "key"):
            return kind
        return "value"

    def _object(self, schema: Mapping[str, Any], root: Mapping[str, Any], hint: str, depth: int) -> str:
        """An object whose schema names its properties and says nothing of others (or forbids them): those keys
        alone, the required ones first, then any in-order subset of the others, each with a value of its own schema
        as a call's arguments have (:meth:`_member`: a choice said is required; left loose, a tiny model makes keys
        of the user's words, ``{'coconut milk': 'true'}`` for a drink's ``milk_type``, and wrote ``{}`` for an air
        conditioner's settings when told "set it to 'COOL' mode"). One that admits other properties
        (``additionalProperties``) stays loose."""
        listed = schema.get("required")
        properties: Mapping[str, Any] = schema["properties"]
        keys = [(str(prop), gbnf_literal(self.dialect.key(str(prop))), f"{hint}-{prop}") for prop in properties]
        inner = self._members(keys, properties, listed if isinstance(listed, list) else [], root, depth + 1)
        return self.add(f"{hint}-object", f'"{{" {inner} "}}"' if inner else '"{" "}"')

    def _literals(self, values: Iterable[Any], hint: str) -> str:
        """A rule admitting exactly ``values``, each written as a literal the parser reads back to it."""
        alternatives = list(dict.fromkeys(gbnf_literal(w) for v in values for w in self.dialect.writings(v)))
        return self.add(f"{hint}-enum", " | ".join(alternatives))

    def _union(self, members: list[str], hint: str) -> str:
        if "value" in members:
            return "value"
        unique = list(dict.fromkeys(members))
        return unique[0] if len(unique) == 1 else self.add(f"{hint}-union", " | ".join(unique))

    def _ref(self, ref: Any, root: Mapping[str, Any], hint: str, depth: int) -> str:
        """A named rule for the schema ``ref`` points to; a pointer met again while being built recurses."""
        if not isinstance(ref, str):
            return "value"
        if ref in self._refs:
            return self._refs[ref]
        target = resolve_pointer(ref, root)
        if not isinstance(target, Mapping):
            return "value"
        name = self._fresh(f"{hint}-ref")
        self._refs[ref] = name
        self.rules[name] = "value"  # placeholder while the target is built (a recursive pointer names this rule)
        built = self.value(target, root, name, depth + 1)
        self.rules[name] = "value" if built == name else built  # a pointer to itself accepts any literal
        return name


def _argument_list(needed: list[str], optional: list[tuple[str, bool]], separator: str = ", ") -> str:
    """The arguments: every required one in order, then an in-order subset of the others (``optional``: each with
    whether it must be there), comma-separated.

    With required arguments each optional one is ``(", " arg)?`` (one that must be there, ``", " arg``); without,
    the first present argument has no comma before it, so each choice of a first argument, up to the first that
    must be there, is an alternative.
    """
    sep = gbnf_literal(separator)

    def rest(after: int) -> list[str]:
        return [f"{sep} {arg}" if must else f"({sep} {arg})?" for arg, must in optional[after:]]

    if needed:
        return " ".join([f" {sep} ".join(needed), *rest(0)])
    if not optional:
        return ""
    last = next((i for i, (_, must) in enumerate(optional) if must), len(optional) - 1)
    choices = [" ".join([arg, *rest(i + 1)]) for i, (arg, _) in enumerate(optional[:last + 1])]
    alternatives = "(" + " | ".join(f"({choice})" for choice in choices) + ")"
    return alternatives if optional[last][1] else alternatives + "?"

