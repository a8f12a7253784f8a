"""``Tool``: wire forms, Python-side names, the signature built from a schema and the local-model stub."""

from __future__ import annotations

import ast
import inspect
from typing import Any, Literal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from voxcall.tools import Tool
from voxcall.tools.signature import format_annotation, schema_annotation

WEATHER = {
    "type": "object",
    "properties": {
        "city": {"type": "string", "description": "The city name."},
        "unit": {"type": "string", "enum": ["c", "f"], "default": "c", "description": "Temperature unit."},
    },
    "required": ["city"],
}


def weather() -> Tool:
    return Tool("get_weather", "Get the current weather.", WEATHER)


def params(tool: Tool) -> list[tuple[str, str, Any]]:
    """(name, rendered annotation, default) for each parameter of the tool's signature."""
    return [(p.name, format_annotation(p.annotation), p.default) for p in tool.signature().parameters.values()]


def annotation(schema: Any, root: dict[str, Any] | None = None) -> str:
    return format_annotation(schema_annotation(schema, root or {}))


# -- wire forms ------------------------------------------------------------------------------------------------


def test_from_openai_flat() -> None:
    tool = Tool.from_openai({"type": "function", "name": "get_weather", "description": "Weather.",
                             "parameters": WEATHER})
    assert (tool.name, tool.description, tool.parameters) == ("get_weather", "Weather.", WEATHER)


def test_from_openai_nested() -> None:
    tool = Tool.from_openai({"type": "function", "function": {"name": "get_weather", "parameters": WEATHER}})
    assert (tool.name, tool.description, tool.parameters) == ("get_weather", "", WEATHER)


def test_from_openai_defaults_missing_parameters_to_empty_object() -> None:
    tool = Tool.from_openai({"name": "ping", "description": None})
    assert tool.parameters == {"type": "object", "properties": {}}
    assert tool.description == ""


@pytest.mark.parametrize(("data", "message"), [
    ({"type": "web_search"}, "unsupported tool type"),
    ({"type": "function"}, "non-empty string 'name'"),
    ({"type": "function", "name": ""}, "non-empty string 'name'"),
    ({"type": "function", "function": {"description": "x"}}, "non-empty string 'name'"),
    ({"type": "function", "function": "get_weather"}, "'function' must be an object"),
    ("get_weather", "must be an object"),
])
def test_from_openai_rejects(data: Any, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        Tool.from_openai(data)


def test_constructor_rejects_bad_fields() -> None:
    with pytest.raises(ValueError, match="name"):
        Tool("")
    with pytest.raises(ValueError, match="parameters"):
        Tool("t", "", ["not", "a", "schema"])  # type: ignore[arg-type]


def test_to_openai_round_trip() -> None:
    tool = weather()
    wire = tool.to_openai()
    assert wire == {"type": "function", "name": "get_weather", "description": "Get the current weather.",
                    "parameters": WEATHER}
    assert Tool.from_openai(wire) == tool


def test_to_chat_round_trip() -> None:
    tool = weather()
    wire = tool.to_chat()
    assert wire["function"]["name"] == "get_weather"
    assert wire["function"]["parameters"] == WEATHER
    assert Tool.from_openai(wire) == tool


def test_wire_forms_copy_the_schema() -> None:
    tool = weather()
    tool.to_openai()["parameters"]["properties"].clear()
    tool.to_chat()["function"]["parameters"]["required"].append("unit")
    assert tool.parameters == WEATHER


# -- Python-side names ---------------------------------------------------------------------------------------


def test_properties_and_required_ignore_malformed_parts() -> None:
    tool = Tool("t", "", {"properties": {"a": {}, 3: {}}, "required": ["a", "ghost", 7]})
    assert list(tool.properties) == ["a"]
    assert tool.required == ["a"]
    assert Tool("t", "", {"properties": ["a"], "required": "a"}).properties == {}
    assert Tool("t", "", {"properties": ["a"], "required": "a"}).required == []


def test_code_name_and_aliases() -> None:
    tool = Tool("get-weather", "", {"properties": {"from": {}, "user-id": {}, "city": {}, "x²": {}}})
    assert tool.code_name == "get_weather"
    aliases = tool.argument_aliases()
    assert aliases["from"] == "from_"
    assert aliases["user-id"] == "user_id"
    assert aliases["city"] == "city"
    assert aliases["x²"].isidentifier()  # a character \w accepts but identifiers do not


# -- signature: schema features ------------------------------------------------------------------------------


def test_signature_of_a_plain_tool() -> None:
    sig = weather().signature()
    assert list(sig.parameters) == ["city", "unit"]
    assert sig.parameters["city"].default is inspect.Parameter.empty
    assert sig.parameters["city"].annotation is str
    assert sig.parameters["unit"].annotation == Literal["c", "f"]
    assert sig.parameters["unit"].default == "c"
    assert str(sig) == "(city: str, unit: Literal['c', 'f'] = 'c')"


@pytest.mark.parametrize(("schema", "expected"), [
    ({"type": "string"}, "str"),
    ({"type": "number"}, "float"),
    ({"type": "integer"}, "int"),
    ({"type": "boolean"}, "bool"),
    ({"type": "null"}, "None"),
    ({"type": "object"}, "dict"),
    ({"type": "object", "title": "Address", "properties": {"street": {"type": "string"}}}, "dict"),
    ({"type": "object", "additionalProperties": {"type": "integer"}}, "dict[str, int]"),
    ({"type": "object", "additionalProperties": True}, "dict"),
    ({"type": "array"}, "list"),
    ({"type": "array", "items": {"type": "string"}}, "list[str]"),
    ({"type": "array", "items": {"type": "array", "items": {"type": "number"}}}, "list[list[float]]"),
    ({"type": "array", "items": [{"type": "string"}]}, "list"),
    ({"enum": ["a", "b"]}, "Literal['a', 'b']"),
    ({"type": "string", "enum": ["a", "b"]}, "Literal['a', 'b']"),
    ({"enum": ["a", 1, None, True, 2.5]}, "Literal['a', 1, None, True, 2.5]"),
    ({"type": "string", "enum": ["a", {"b": 1}]}, "str"),
    ({"enum": []}, "Any"),
    ({"const": "x"}, "Literal['x']"),
    ({"const": 3}, "Literal[3]"),
    ({"anyOf": [{"type": "string"}, {"type": "integer"}]}, "str | int"),
    ({"oneOf": [{"type": "string"}, {"type": "null"}]}, "str | None"),
    ({"anyOf": [{"type": "string"}, {}]}, "Any"),
    ({"anyOf": [], "type": "string"}, "str"),
    ({"allOf": [{"description": "nothing typed"}, {"type": "integer"}]}, "int"),
    ({"allOf": [{}], "type": "boolean"}, "bool"),
    ({"type": ["string", "null"]}, "str | None"),
    ({"type": ["integer", "string"]}, "int | str"),
    ({"type": ["string", "mystery"]}, "Any"),
    ({"type": []}, "Any"),
    ({"type": "mystery"}, "Any"),
    ({"type": 5}, "Any"),
    ({"description": "no type at all"}, "Any"),
    ({}, "Any"),
    (True, "Any"),
    (False, "Any"),
    ("string", "Any"),
    (None, "Any"),
])
def test_annotation_for_schema(schema: Any, expected: str) -> None:
    assert annotation(schema) == expected


@pytest.mark.parametrize("defs_key", ["$defs", "definitions"])
def test_annotation_resolves_refs(defs_key: str) -> None:
    root = {defs_key: {"Unit": {"enum": ["c", "f"]}, "Cities": {"type": "array", "items": {"type": "string"}}}}
    assert annotation({"$ref": f"#/{defs_key}/Unit"}, root) == "Literal['c', 'f']"
    assert annotation({"type": "array", "items": {"$ref": f"#/{defs_key}/Cities"}}, root) == "list[list[str]]"


@pytest.mark.parametrize("ref", ["#/$defs/Missing", "#/$defs/Unit/enum/9", "other.json#/Unit", 42, "#/$defs/a~1b"])
def test_annotation_of_unresolvable_ref_is_any(ref: Any) -> None:
    assert annotation({"$ref": ref}, {"$defs": {"Unit": {"enum": ["c"]}}}) == "Any"


def test_annotation_ref_pointer_escapes_and_list_indices() -> None:
    root = {"$defs": {"a/b": {"type": "integer"}, "list": [{"type": "string"}]}}
    assert annotation({"$ref": "#/$defs/a~1b"}, root) == "int"
    assert annotation({"$ref": "#/$defs/list/0"}, root) == "str"
    assert annotation({"$ref": "#"}, {"type": "object"}) == "dict"


def test_annotation_of_recursive_refs_terminates() -> None:
    root = {"$defs": {
        "Self": {"$ref": "#/$defs/Self"},
        "Tree": {"anyOf": [{"type": "array", "items": {"$ref": "#/$defs/Tree"}}, {"type": "string"}]},
        "Wide": {"anyOf": [{"$ref": "#/$defs/Wide"}] * 50},
    }}
    assert annotation({"$ref": "#/$defs/Self"}, root) == "Any"
    assert annotation({"$ref": "#/$defs/Tree"}, root) == "list | str"
    assert annotation({"$ref": "#/$defs/Wide"}, root) == "Any"


def test_annotation_of_absurd_nesting_is_any_inside() -> None:
    schema: dict[str, Any] = {"type": "string"}
    for _ in range(200):
        schema = {"type": "array", "items": schema}
    assert annotation(schema).startswith("list[list[")
    assert annotation(schema).count("list") < 200


def test_signature_resolves_refs_into_defs() -> None:
    tool = Tool("t", "", {"type": "object", "properties": {"addr": {"$ref": "#/$defs/Address"},
                                                         "kind": {"$ref": "#/definitions/Kind"}},
                          "$defs": {"Address": {"type": "object", "properties": {"street": {"type": "string"}}}},
                          "definitions": {"Kind": {"enum": ["home", "work"]}}, "required": ["addr"]})
    assert params(tool) == [("addr", "dict", inspect.Parameter.empty), ("kind", "Literal['home', 'work']", None)]


# -- signature: never raises ---------------------------------------------------------------------------------


def test_signature_puts_required_first_keeping_schema_order() -> None:
    tool = Tool("t", "", {"properties": {"a": {"type": "string", "default": "x"}, "b": {"type": "integer"},
                                         "c": {"type": "boolean"}, "d": {"type": "number"}},
                          "required": ["d", "b"]})
    assert params(tool) == [("b", "int", inspect.Parameter.empty), ("d", "float", inspect.Parameter.empty),
                            ("a", "str", "x"), ("c", "bool", None)]
    assert str(tool.signature()) == "(b: int, d: float, a: str = 'x', c: bool = None)"


def test_signature_aliases_keyword_and_non_identifier_names() -> None:
    tool = Tool("t", "", {"properties": {"from": {"type": "string"}, "user-id": {"type": "integer"},
                                         "class": {}, "2fa": {"type": "boolean"}, "x²": {}},
                          "required": ["user-id", "from"]})
    names = list(tool.signature().parameters)
    assert names[:2] == ["from_", "user_id"]
    assert set(names[2:]) == {"class_", "_2fa", tool.argument_aliases()["x²"]}
    assert names == [tool.argument_aliases()[n] for n in ("from", "user-id", "class", "2fa", "x²")]


def test_signature_alias_clashing_with_a_real_name() -> None:
    tool = Tool("t", "", {"properties": {"user_id": {"type": "string"}, "user-id": {"type": "integer"}}})
    assert [(name, ann) for name, ann, _ in params(tool)] == [("user_id", "str"), ("user_id2", "int")]


def test_signature_keeps_defaults_that_do_not_match_the_type() -> None:
    tool = Tool("t", "", {"properties": {"n": {"type": "integer", "default": "ten"},
                                         "xs": {"type": "array", "default": {"not": "a list"}}}})
    assert params(tool) == [("n", "int", "ten"), ("xs", "list", {"not": "a list"})]


def test_signature_defaults_are_copies() -> None:
    tool = Tool("t", "", {"properties": {"xs": {"type": "array", "default": [1]}}})
    tool.signature().parameters["xs"].default.append(2)
    assert tool.parameters["properties"]["xs"]["default"] == [1]


def test_signature_ignores_non_standard_keys() -> None:
    tool = Tool("t", "", {"type": "object", "x-vendor": {"a": 1}, "strict": True, "additionalProperties": False,
                          "properties": {"a": {"type": "string", "x-order": 2, "format": "date-time",
                                               "nullable": True, "examples": ["2024-01-01"]}}})
    assert params(tool) == [("a", "str", None)]


@pytest.mark.parametrize("properties", [None, [], "a, b", 3, {}])
def test_signature_without_usable_properties_is_empty(properties: Any) -> None:
    tool = Tool("t", "", {"type": "object", "properties": properties, "required": ["a"]})
    assert str(tool.signature()) == "()"


def test_signature_of_empty_schema() -> None:
    assert str(Tool("t", "", {}).signature()) == "()"


def test_signature_with_required_naming_unknown_properties() -> None:
    tool = Tool("t", "", {"properties": {"a": {"type": "string"}}, "required": ["zz", "a", "yy"]})
    assert params(tool) == [("a", "str", inspect.Parameter.empty)]


def test_signature_with_mixed_type_enum() -> None:
    tool = Tool("t", "", {"properties": {"level": {"enum": [1, "high", None, False]}}, "required": ["level"]})
    assert params(tool) == [("level", "Literal[1, 'high', None, False]", inspect.Parameter.empty)]


def test_signature_with_boolean_and_junk_property_schemas() -> None:
    tool = Tool("t", "", {"properties": {"yes": True, "no": False, "junk": "string", "n": None, "l": [1]},
                          "required": ["no", "junk"]})
    assert params(tool) == [("no", "Any", inspect.Parameter.empty), ("junk", "Any", inspect.Parameter.empty),
                            ("yes", "Any", None), ("n", "Any", None), ("l", "Any", None)]


# -- annotations as source -----------------------------------------------------------------------------------


@pytest.mark.parametrize(("annotation_", "expected"), [
    (str, "str"), (None, "None"), (type(None), "None"), (Any, "Any"), (list[str], "list[str]"),
    (dict[str, list[int]], "dict[str, list[int]]"), (Literal["a", 1], "Literal['a', 1]"),
    (str | None, "str | None"), (Literal["a"] | None, "Literal['a'] | None"),
    (tuple[int, ...], "tuple[int, ...]"), ("Forward", "Forward"),
])
def test_format_annotation(annotation_: Any, expected: str) -> None:
    assert format_annotation(annotation_) == expected


def test_format_annotation_of_typing_aliases_is_modern() -> None:
    from typing import Annotated, Callable, Dict, List, Optional, Union  # noqa: UP035 (the old forms on purpose)

    assert format_annotation(List[int]) == "list[int]"  # noqa: UP006
    assert format_annotation(Dict[str, int]) == "dict[str, int]"  # noqa: UP006
    assert format_annotation(Optional[int]) == "int | None"  # noqa: UP045
    assert format_annotation(Union[int, str]) == "int | str"  # noqa: UP007
    assert format_annotation(Annotated[int, "a count"]) == "int"
    assert format_annotation(Callable[[int], str]) == "Callable[[int], str]"


# -- code prompt ---------------------------------------------------------------------------------------------


def test_code_prompt_of_a_documented_tool() -> None:
    assert weather().to_code_prompt() == (
        "def get_weather(city: str, unit: Literal['c', 'f'] = 'c'):\n"
        '    """Get the current weather.\n'
        "\n"
        "    Args:\n"
        "        city: The city name.\n"
        "        unit: Temperature unit.\n"
        '    """'
    )


def test_code_prompt_lists_only_described_args_under_their_aliases() -> None:
    tool = Tool("send-mail", "Send an email.", {"properties": {
        "from": {"type": "string", "description": "Sender address."},
        "to": {"type": "array", "items": {"type": "string"}},
        "cc": {"type": ["string", "null"], "description": "   "},
    }, "required": ["to"]})
    prompt = tool.to_code_prompt()
    assert prompt.splitlines()[0] == "def send_mail(to: list[str], from_: str = None, cc: str | None = None):"
    assert "        from_: Sender address." in prompt
    assert "to:" not in prompt.split("Args:")[1]
    assert "cc:" not in prompt.split("Args:")[1]
    ast.parse(prompt)


def test_code_prompt_without_any_description_is_one_line() -> None:
    tool = Tool("ping", "", {"properties": {"host": {"type": "string"}}, "required": ["host"]})
    assert tool.to_code_prompt() == "def ping(host: str): ..."


def test_code_prompt_with_summary_only() -> None:
    assert Tool("now", "Current time.").to_code_prompt() == 'def now():\n    """Current time."""'


def test_code_prompt_args_without_summary() -> None:
    tool = Tool("t", "", {"properties": {"a": {"type": "integer", "description": "An age."}}})
    assert tool.to_code_prompt() == 'def t(a: int = None):\n    """Args:\n        a: An age.\n    """'


def test_code_prompt_leaves_out_descriptions_that_restate_the_name() -> None:
    tool = Tool("send", "Send a message.", {"properties": {
        "contact": {"type": "string", "description": "the contact"},
        "orderNumber": {"type": "string", "description": "The order number."},
        "body": {"type": "string", "description": "the body of the message"},
        "to": {"type": "string", "description": "A to"},
    }})
    prompt = tool.to_code_prompt()
    assert prompt.split("Args:")[1].splitlines()[1:] == ["        body: the body of the message", '    """']
    ast.parse(prompt)
    alone = Tool("t", "", {"properties": {"city": {"type": "string", "description": "City"}}})
    assert alone.to_code_prompt() == "def t(city: str = None): ..."


def test_code_prompt_keeps_multiline_text_indented_and_parseable() -> None:
    tool = Tool("t", 'Line one.\n\nSays """hi""" and ends with "quotes"', {"properties": {
        "a": {"type": "string", "description": "First line.\nSecond line."}}})
    prompt = tool.to_code_prompt()
    assert prompt == (
        "def t(a: str = None):\n"
        '    """Line one.\n'
        "\n"
        '    Says \\"\\"\\"hi\\"\\"\\" and ends with "quotes"\n'
        "\n"
        "    Args:\n"
        "        a: First line.\n"
        "            Second line.\n"
        '    """'
    )
    function = ast.parse(prompt).body[0]
    assert isinstance(function, ast.FunctionDef)
    assert 'Says """hi"""' in (ast.get_docstring(function) or "")


def test_code_prompt_one_line_summary_ending_in_a_quote() -> None:
    prompt = Tool("t", 'Say "hi"').to_code_prompt()
    assert prompt == 'def t():\n    """Say "hi"\n    """'
    function = ast.parse(prompt).body[0]
    assert isinstance(function, ast.FunctionDef)
    assert (ast.get_docstring(function) or "").strip() == 'Say "hi"'


def test_code_prompt_renders_every_schema_feature_as_source() -> None:
    tool = Tool("t", "", {"properties": {
        "a": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
        "b": {"type": "object", "additionalProperties": {"type": "number"}},
        "c": {"$ref": "#/$defs/C"},
        "d": {"const": True},
        "e": {"type": "string", "default": "it's"},
    }, "$defs": {"C": {"type": "array", "items": {"enum": ["x", "y"]}}}})
    assert tool.to_code_prompt() == ("def t(a: int | None = None, b: dict[str, float] = None, "
                                     "c: list[Literal['x', 'y']] = None, d: Literal[True] = None, "
                                     "e: str = \"it's\"): ...")


# -- property: any JSON-like schema ----------------------------------------------------------------------------

def _mostly(good: st.SearchStrategy[Any], junk: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """``good`` four times in five, else ``junk`` (``|`` would weigh every flattened branch equally)."""
    return st.integers(0, 4).flatmap(lambda n: good if n else junk)


_KEYS = st.sampled_from(["type", "properties", "items", "enum", "anyOf", "oneOf", "allOf", "required",
                         "default", "$ref", "const", "description", "additionalProperties", "$defs",
                         "definitions", "title"])
_TYPE_NAMES = st.sampled_from(["string", "number", "integer", "boolean", "null", "object", "array", "bogus"])
_REFS = st.sampled_from(["#", "#/$defs/A", "#/$defs/B", "#/$defs/A/anyOf/0", "#/properties/a", "#/definitions/A",
                         "other.json#/A", "#/$defs/A/items"])
_NAMES = st.text(max_size=8) | st.sampled_from(["from", "user-id", "class", "a", "A", "2fa", "x²"])
_SCALARS = (st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False)
            | st.text(max_size=8) | _TYPE_NAMES | _REFS)
_JSON = st.recursive(_SCALARS, lambda inner: st.lists(inner, max_size=4)
                     | st.dictionaries(_KEYS | st.text(max_size=6), inner, max_size=5), max_leaves=20)
_LEAF_KEYWORDS = {
    "enum": _mostly(st.lists(_SCALARS, max_size=4), _JSON), "default": _JSON,
    "description": _mostly(st.text(max_size=20), _SCALARS),
}
_TYPE = _mostly(_TYPE_NAMES | st.lists(_TYPE_NAMES, max_size=3), _SCALARS)
_LEAVES = _mostly(
    _mostly(st.fixed_dictionaries({"type": _TYPE}, optional=_LEAF_KEYWORDS),
            st.fixed_dictionaries({"$ref": _REFS}) | st.fixed_dictionaries({"const": _JSON})),
    st.booleans() | _SCALARS | st.fixed_dictionaries({}, optional={**_LEAF_KEYWORDS, "type": _TYPE}))


def _schema_node(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """A schema-shaped dict whose sub-schemas come from ``inner``."""
    return st.fixed_dictionaries({}, optional={
        **_LEAF_KEYWORDS, "type": _TYPE, "items": inner, "additionalProperties": inner,
        "anyOf": st.lists(inner, max_size=3), "oneOf": _mostly(st.lists(inner, max_size=3), _JSON),
        "allOf": st.lists(inner, max_size=3), "properties": st.dictionaries(_NAMES, inner, max_size=3)})


_NODES = st.recursive(_LEAVES, _schema_node, max_leaves=15)


@st.composite
def _schemas(draw: st.DrawFn) -> dict[str, Any]:
    """Top-level parameter schemas: mostly object-shaped with odd parts, sometimes any dict at all."""
    if not draw(st.integers(0, 9)):
        return draw(st.dictionaries(_KEYS, _JSON, max_size=6))
    properties = draw(_mostly(st.dictionaries(_NAMES, _NODES, min_size=1, max_size=6), _JSON))
    names = list(properties) if isinstance(properties, dict) else []
    required = st.lists(st.sampled_from(names) | _NAMES if names else _NAMES, max_size=5)
    schema: dict[str, Any] = {"type": "object", "properties": properties, "required": draw(_mostly(required, _JSON))}
    for key in draw(st.sets(st.sampled_from(["$defs", "definitions"]))):
        schema[key] = draw(st.dictionaries(st.sampled_from(["A", "B"]), _NODES, max_size=2))
    return schema


@settings(max_examples=200, deadline=None)
@given(_schemas())
def test_any_schema_gives_a_signature_and_a_stub(schema: dict[str, Any]) -> None:
    tool = Tool("t", "", schema)
    sig = tool.signature()
    assert list(sig.parameters) == [tool.argument_aliases()[n] for n in _signature_order(tool)]
    prompt = tool.to_code_prompt()
    assert prompt.startswith("def t(")
    head = prompt.split("\n", 1)[0]
    ast.parse(head if head.endswith("...") else head + " ...")  # the signature line is valid Python


def _signature_order(tool: Tool) -> list[str]:
    required = [n for n in tool.properties if n in tool.required]
    return required + [n for n in tool.properties if n not in required]
