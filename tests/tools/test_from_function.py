"""``Tool.from_function``: JSON Schema from type hints and Google-style docstrings."""

# No ``from __future__ import annotations`` here: some tests need annotations that are real objects, and the
# forward-reference test writes its strings by hand.

import datetime
import enum
import logging
from collections.abc import Sequence
from typing import Annotated, Any, Literal, Optional

import jsonschema
import pydantic
import pytest

from voxcall.tools import Tool


class Color(enum.Enum):
    RED = "red"
    GREEN = "green"


class Level(enum.IntEnum):
    LOW = 1
    HIGH = 2


class Address(pydantic.BaseModel):
    street: str
    city: str


class Person(pydantic.BaseModel):
    name: str
    address: Address
    previous: list[Address] = []


class Opaque:
    """A class pydantic cannot describe."""


def schema_of(fn: Any) -> dict[str, Any]:
    parameters = Tool.from_function(fn).parameters
    jsonschema.Draft202012Validator.check_schema(parameters)
    return parameters


def prop(fn: Any, name: str) -> dict[str, Any]:
    result: dict[str, Any] = schema_of(fn)["properties"][name]
    return result


# -- the whole tool --------------------------------------------------------------------------------------------


def get_weather(city: str, unit: Literal["c", "f"] = "c") -> dict[str, Any]:
    """Get the current weather.

    Args:
        city: The city name.
        unit: Temperature unit.
    """
    return {}


def test_from_function_builds_the_tool() -> None:
    tool = Tool.from_function(get_weather)
    assert tool.name == "get_weather"
    assert tool.description == "Get the current weather."
    assert tool.parameters == {
        "type": "object",
        "properties": {
            "city": {"type": "string", "description": "The city name."},
            "unit": {"enum": ["c", "f"], "type": "string", "description": "Temperature unit.", "default": "c"},
        },
        "required": ["city"],
    }


def test_from_function_renders_back_to_the_same_stub() -> None:
    assert Tool.from_function(get_weather).to_code_prompt() == (
        "def get_weather(city: str, unit: Literal['c', 'f'] = 'c'):\n"
        '    """Get the current weather.\n\n'
        "    Args:\n"
        "        city: The city name.\n"
        "        unit: Temperature unit.\n"
        '    """'
    )


def test_name_and_description_overrides() -> None:
    tool = Tool.from_function(get_weather, name="weather", description="")
    assert (tool.name, tool.description) == ("weather", "")


def test_description_keeps_text_before_the_sections_only() -> None:
    def search(query: str) -> list[str]:
        """Search the web.

        Results are ranked by relevance.

        Args:
            query (str): What to look for,
                in plain words.

        Returns:
            The titles found.
        """
        return []

    tool = Tool.from_function(search)
    assert tool.description == "Search the web.\n\nResults are ranked by relevance."
    assert tool.properties["query"]["description"] == "What to look for,\nin plain words."


def test_function_without_docstring_or_parameters() -> None:
    def ping() -> None:
        pass

    tool = Tool.from_function(ping)
    assert tool.description == ""
    assert tool.parameters == {"type": "object", "properties": {}, "required": []}


async def test_async_function() -> None:
    async def fetch(url: str, retries: int = 2) -> str:
        """Fetch a page."""
        return url

    tool = Tool.from_function(fetch)
    assert tool.description == "Fetch a page."
    assert tool.properties == {"url": {"type": "string"}, "retries": {"type": "integer", "default": 2}}
    assert tool.required == ["url"]
    assert await fetch("x") == "x"


def test_callable_instance_is_named_after_its_class() -> None:
    class Lookup:
        """Look a word up."""

        def __call__(self, word: str) -> str:
            return word

    tool = Tool.from_function(Lookup())
    assert (tool.name, tool.description) == ("Lookup", "Look a word up.")
    assert tool.properties == {"word": {"type": "string"}}


# -- which parameters ------------------------------------------------------------------------------------------


def test_skips_self_cls_and_variadics() -> None:
    class Service:
        def method(self, a: int, *args: int, b: str, **kwargs: Any) -> None:
            """Do it."""

        @classmethod
        def build(cls, size: float) -> None:
            """Build it."""

    assert list(Tool.from_function(Service.method).properties) == ["a", "b"]
    assert list(Tool.from_function(Service().method).properties) == ["a", "b"]
    assert Tool.from_function(Service.method).required == ["a", "b"]
    assert list(Tool.from_function(Service.build).properties) == ["size"]


def test_required_are_the_parameters_without_defaults() -> None:
    def f(a: int, b: int = 1, *, c: str, d: str = "x") -> None:
        pass

    parameters = schema_of(f)
    assert parameters["required"] == ["a", "c"]
    assert parameters["properties"]["b"]["default"] == 1
    assert parameters["properties"]["d"]["default"] == "x"


def test_defaults_get_their_json_form() -> None:
    def f(color: Color = Color.GREEN, pair: tuple[int, int] = (1, 2), marker: object = object(),
          nothing: str | None = None) -> None:
        pass

    parameters = schema_of(f)
    assert parameters["properties"]["color"]["default"] == "green"
    assert parameters["properties"]["pair"]["default"] == [1, 2]
    assert "default" not in parameters["properties"]["marker"]
    assert parameters["properties"]["nothing"]["default"] is None
    assert parameters["required"] == []


# -- type forms ------------------------------------------------------------------------------------------------


def test_scalars() -> None:
    def f(s: str, i: int, x: float, b: bool) -> None:
        pass

    assert schema_of(f)["properties"] == {"s": {"type": "string"}, "i": {"type": "integer"},
                                          "x": {"type": "number"}, "b": {"type": "boolean"}}


def test_optional_forms() -> None:
    def f(a: Optional[str], b: int | None, c: Optional[list[int]] = None,  # noqa: UP045 (the old form on purpose)
          d: None = None) -> None:
        pass

    props = schema_of(f)["properties"]
    assert props["a"] == {"type": ["string", "null"]}
    assert props["b"] == {"type": ["integer", "null"]}
    assert props["c"] == {"anyOf": [{"type": "array", "items": {"type": "integer"}}, {"type": "null"}],
                          "default": None}
    assert props["d"] == {"type": "null", "default": None}


def test_union_of_several_types() -> None:
    def f(a: int | str, b: int | Any) -> None:
        pass

    assert schema_of(f)["properties"] == {"a": {"type": ["integer", "string"]}, "b": {}}


def test_literal() -> None:
    def f(mode: Literal["fast", "slow"], n: Literal[1, 2], mixed: Literal["a", 1],
          maybe: Literal["x", None], color: Literal[Color.RED]) -> None:
        pass

    props = schema_of(f)["properties"]
    assert props["mode"] == {"enum": ["fast", "slow"], "type": "string"}
    assert props["n"] == {"enum": [1, 2], "type": "integer"}
    assert props["mixed"] == {"enum": ["a", 1], "type": ["string", "integer"]}
    assert props["maybe"] == {"enum": ["x", None], "type": ["string", "null"]}
    assert props["color"] == {"enum": ["red"], "type": "string"}


def test_enum_classes() -> None:
    def f(color: Color, level: Level = Level.LOW) -> None:
        pass

    props = schema_of(f)["properties"]
    assert props["color"] == {"enum": ["red", "green"], "type": "string"}
    assert props["level"] == {"enum": [1, 2], "type": "integer", "default": 1}


def test_sequences() -> None:
    def f(a: list[str], b: list, c: Sequence[int], d: set[str], e: tuple[float, ...],  # type: ignore[type-arg]
          g: tuple[int, str], h: list[Any]) -> None:
        pass

    props = schema_of(f)["properties"]
    assert props["a"] == {"type": "array", "items": {"type": "string"}}
    assert props["b"] == {"type": "array"}
    assert props["c"] == {"type": "array", "items": {"type": "integer"}}
    assert props["d"] == {"type": "array", "items": {"type": "string"}, "uniqueItems": True}
    assert props["e"] == {"type": "array", "items": {"type": "number"}}
    assert props["g"] == {"type": "array", "prefixItems": [{"type": "integer"}, {"type": "string"}],
                          "minItems": 2, "maxItems": 2}
    assert props["h"] == {"type": "array"}


def test_mappings() -> None:
    def f(a: dict[str, int], b: dict, c: dict[str, Any], d: dict[str, list[bool]]) -> None:  # type: ignore[type-arg]
        pass

    props = schema_of(f)["properties"]
    assert props["a"] == {"type": "object", "additionalProperties": {"type": "integer"}}
    assert props["b"] == {"type": "object"}
    assert props["c"] == {"type": "object"}
    assert props["d"] == {"type": "object", "additionalProperties": {"type": "array", "items": {"type": "boolean"}}}


def test_annotated_descriptions() -> None:
    def f(a: Annotated[int, "How many."], b: Annotated[str, pydantic.Field(description="The b.")],
          c: Annotated[str | None, "Maybe."] = None, d: Annotated[float, 42] = 1.0) -> None:
        """Do it.

        Args:
            a: Overridden by the annotation.
            d: From the docstring.
        """

    props = schema_of(f)["properties"]
    assert props["a"] == {"type": "integer", "description": "How many."}
    assert props["b"] == {"type": "string", "description": "The b."}
    assert props["c"] == {"type": ["string", "null"], "description": "Maybe.", "default": None}
    assert props["d"] == {"type": "number", "description": "From the docstring.", "default": 1.0}


def test_any_and_missing_hints_accept_anything() -> None:
    def f(a: Any, b, c=3) -> None:  # type: ignore[no-untyped-def]
        pass

    parameters = schema_of(f)
    assert parameters["properties"] == {"a": {}, "b": {}, "c": {"default": 3}}
    assert parameters["required"] == ["a", "b"]


def test_other_types_go_through_pydantic() -> None:
    def f(when: datetime.datetime, day: datetime.date) -> None:
        pass

    props = schema_of(f)["properties"]
    assert props["when"] == {"type": "string", "format": "date-time"}
    assert props["day"] == {"type": "string", "format": "date"}


def test_unsupported_annotations_become_any(caplog: pytest.LogCaptureFixture) -> None:
    def f(a: Opaque, b: list[Opaque], c: dict[str, Opaque], n: int) -> None:
        pass

    with caplog.at_level(logging.DEBUG, logger="voxcall.tools.from_function"):
        props = schema_of(f)["properties"]
    assert props == {"a": {}, "b": {"type": "array"}, "c": {"type": "object"}, "n": {"type": "integer"}}
    assert "Opaque" in caplog.text


def test_unresolvable_forward_references_do_not_lose_the_other_hints() -> None:
    def f(a: "NoSuchType", b: "int", c: "list[str]") -> None:  # type: ignore[name-defined]  # noqa: F821
        pass

    assert schema_of(f)["properties"] == {"a": {}, "b": {"type": "integer"},
                                          "c": {"type": "array", "items": {"type": "string"}}}


# -- pydantic models -------------------------------------------------------------------------------------------


def test_model_parameters_lift_defs_to_the_top() -> None:
    def register(person: Person, home: Address | None = None) -> None:
        """Register a person."""

    parameters = schema_of(register)
    assert set(parameters["$defs"]) == {"Address"}
    assert parameters["$defs"]["Address"]["required"] == ["street", "city"]
    person = parameters["properties"]["person"]
    assert person["type"] == "object"
    assert "$defs" not in person
    assert person["properties"]["address"] == {"$ref": "#/$defs/Address"}
    assert person["properties"]["previous"]["items"] == {"$ref": "#/$defs/Address"}
    home = parameters["properties"]["home"]
    assert home["anyOf"][1] == {"type": "null"}
    assert home["anyOf"][0]["title"] == "Address"
    assert parameters["required"] == ["person"]


def test_model_schema_validates_real_arguments() -> None:
    def register(person: Person) -> None:
        pass

    validator = jsonschema.Draft202012Validator(schema_of(register))
    good = {"person": {"name": "Ada", "address": {"street": "1 Main", "city": "Oslo"}}}
    bad = {"person": {"name": "Ada", "address": {"street": "1 Main"}}}
    assert validator.is_valid(good)
    assert not validator.is_valid(bad)


def test_models_with_clashing_def_names_are_renamed() -> None:
    item_a = pydantic.create_model("Item", count=(int, ...))
    item_b = pydantic.create_model("Item", label=(str, ...))
    order = pydantic.create_model("Order", item=(item_a, ...))
    basket = pydantic.create_model("Basket", item=(item_b, ...), more=(list[item_b], []))  # type: ignore[valid-type]

    def f(order: order, basket: basket) -> None:  # type: ignore[valid-type]
        pass

    parameters = schema_of(f)
    assert set(parameters["$defs"]) == {"Item", "Item2"}
    assert parameters["properties"]["order"]["properties"]["item"] == {"$ref": "#/$defs/Item"}
    assert parameters["properties"]["basket"]["properties"]["item"] == {"$ref": "#/$defs/Item2"}
    assert parameters["properties"]["basket"]["properties"]["more"]["items"] == {"$ref": "#/$defs/Item2"}
    validator = jsonschema.Draft202012Validator(parameters)
    assert validator.is_valid({"order": {"item": {"count": 1}}, "basket": {"item": {"label": "x"}}})
    assert not validator.is_valid({"order": {"item": {"count": 1}}, "basket": {"item": {"count": 1}}})


def test_recursive_model() -> None:
    class Node(pydantic.BaseModel):
        value: int
        children: list["Node"] = []

    def walk(tree: Node) -> None:
        pass

    tool = Tool.from_function(walk)
    jsonschema.Draft202012Validator.check_schema(tool.parameters)
    validator = jsonschema.Draft202012Validator(tool.parameters)
    assert validator.is_valid({"tree": {"value": 1, "children": [{"value": 2}]}})
    assert not validator.is_valid({"tree": {"value": 1, "children": [{"value": "x"}]}})
    assert str(tool.signature()) == "(tree: dict)"
