"""Kinds of value a word says on its own: which parameters take a colour or a size, and what the words say of each."""

from __future__ import annotations

from typing import Any

import pytest

from voxcall.llm.local.kinds import Kind, kind_of, said_of_kind
from voxcall.llm.local.said import Said, spans

SIZES = {"type": "array", "items": {"type": "string"}}


@pytest.mark.parametrize(("name", "schema", "kind"), [
    ("color", {"type": "string"}, Kind.COLOUR),
    ("dominant_color", {"type": "string"}, Kind.COLOUR),
    ("backgroundColour", {"type": "string"}, Kind.COLOUR),
    ("color1", {"type": "string"}, Kind.COLOUR),
    ("color_mode", {"type": "string"}, None),  # "RGB" or "grayscale": no colour's name
    ("replacement_color", {"type": "string", "description": "The hex code of the color."}, None),
    ("color", {"type": "string", "enum": ["red", "blue"]}, None),  # a choice: named among its values
    ("color", {"type": "integer"}, None),
    ("size", {"type": "string"}, Kind.SIZE),
    ("sizes", SIZES, Kind.SIZE),
    ("page_size", {"type": "integer"}, None),
    ("windowSize", {"type": "string"}, None),
    ("sizes", {"type": "array", "items": {"type": "integer"}}, None),
])
def test_a_parameter_takes_a_kind_by_its_name_and_type(name: str, schema: dict[str, Any], kind: Kind | None) -> None:
    assert kind_of(name, schema) is kind


@pytest.mark.parametrize(("said", "colours", "sizes"), [
    ("Do you have any red shoes in size 8?", ["red"], ["8"]),
    ("Do you have any medium red skirt", ["red"], ["medium"]),  # "medium red" is a size and a colour
    ('the maroon "V-neck sweate"s, specifically in sizes M and L?', ["maroon"], ["M", "L"]),
    ("ka kapan ready stok ukuran L lagi, id 111?", [], ["L"]),
    ("What are the RGB values of Sea Green in the U.S. standard?", ["Sea Green", "Green"], []),  # no "S" of U.S.
    ("Change my painting's size to 12x18, red dominant color.", ["red"], ["12x18"]),
    ("我想要红色的衣服", ["红色"], []),
    ("Is a bronze sculpture a good gift at L'Oréal?", [], []),  # a material; a name
])
def test_the_words_say_colours_and_sizes(said: str, colours: list[str], sizes: list[str]) -> None:
    assert said_of_kind(Kind.COLOUR, said, spans(said)) == colours
    assert said_of_kind(Kind.SIZE, said, spans(said)) == sizes


def test_an_optional_colour_is_given_only_where_one_is_said() -> None:
    """The 0.5B model wrote ``color='M. Saya ingin menukarkan ukuran'`` where the user said no colour."""
    colour = {"type": "string", "description": "The specific color to check for stock availability."}
    assert not Said("Saya melihat bahwa produk dengan ID XY123 masih memiliki stok ukuran M.").gives("color", colour)
    assert Said("Is the white iPhone 12 still available?").gives("color", colour)
    assert Said("Is the white iPhone 12 still available?").of_kind("color", colour) == ["white"]
    assert Said("Is the white iPhone 12 still available?").of_kind("product_id", {"type": "string"}) == []


def test_a_colour_said_must_be_passed_and_a_size_may_be() -> None:
    """"compared to the size 34 pants I purchased previously" asks for no size."""
    said = Said("Any red pants in size 34?")
    assert said.passes("color", {"type": "string"})
    assert not said.passes("size", {"type": "string"}) and said.of_kind("size", {"type": "string"}) == ["34"]
    assert not Said("Any pants in size 34?").passes("color", {"type": "string"})
