"""Kinds of value a word says on its own: which parameters take a colour, a size or an identifier, and what the words
say of each."""

from __future__ import annotations

from typing import Any

import pytest

from voxcall.llm.local.kinds import Kind, identifies, kind_of, said_of_kind
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
    ("product_id", {"type": "string"}, Kind.CODE),
    ("sensorSerial", {"type": "string"}, Kind.CODE),
    ("event_identifier", {"type": "string"}, Kind.CODE),
    ("ids", {"type": "array", "items": {"type": "string"}}, Kind.CODE),
    ("user_id", {"type": "integer"}, None),  # a number: one of the numbers said
    ("idle", {"type": "string"}, None),
    ("country", {"type": "string", "description": "Use ISO 3166-1 alpha-2 country codes."}, Kind.COUNTRY),
    ("country_code", {"type": "string"}, Kind.COUNTRY),
    ("country", {"type": "string", "description": "The country's name."}, None),  # copied as said
    ("url", {"type": "string", "description": "The API uses ISO 3166-1 alpha-2 country codes."}, None),
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


@pytest.mark.parametrize(("said", "codes"), [
    ("the sensor with serial number Q3CC-CRT3-SZ2G, 10 per page", ["Q3CC-CRT3-SZ2G"]),
    ("Do you have red skirt product ID SK123 is available?", ["SK123"]),
    ("When will size 40 be ready with id 12345-67890?", ["12345-67890"]),  # "40": too short for a code
    ("my order ID is #123, and the product is a pair of sneakers.", ["#123"]),
    ("The event identifier is 'med123'. Reschedule 'Alice-One-one-One' to 8pm", ["med123", "Alice-One-one-One"]),
    ("five 'burgers' and six 'chicken wings' from uber eat with id: McDonald's.", []),  # quoted, no identifiers
    ('trace details for id "grgr", using retrieval size of 1024.', ["grgr", "1024"]),
    ("version 2.5.1 of the U.S. release", []),  # a version's dots and an abbreviation: no code
])
def test_the_words_say_codes(said: str, codes: list[str]) -> None:
    assert said_of_kind(Kind.CODE, said, spans(said)) == codes


@pytest.mark.parametrize(("said", "named"), [
    ("When will size 40 be ready with id 12345-67890?", True),
    ("My user ID is 12345.", True),
    ("the sensor with serial number Q3CC-CRT3-SZ2G", True),
    ("stok kemeja dengan ID produk ABC123", True),
    ("Produk ini masih tersedia.https://shopee.co.id/product/418901918/9568919778/", False),  # an address's path
    ("Is the iPhone 12 still available?", False),  # no word says it identifies anything
    ("Book table 12 at 8pm.", False),
])
def test_a_code_is_said_as_an_identifier_right_after_a_word_saying_so(said: str, named: bool) -> None:
    assert identifies(said) is named


def test_an_optional_colour_is_given_only_where_one_is_said() -> None:
    """The 0.5B model wrote ``color='M. Saya ingin menukarkan ukuran'`` where the user said no colour."""
    colour = {"type": "string", "description": "The specific color to check for stock availability."}
    assert not Said("Saya melihat bahwa produk dengan ID XY123 masih memiliki stok ukuran M.").gives("color", colour)
    assert Said("Is the white iPhone 12 still available?").gives("color", colour)
    assert Said("Is the white iPhone 12 still available?").of_kind("color", colour) == ["white"]
    assert Said("Is the white iPhone 12 still available?").of_kind("product_id", {"type": "string"}) == []


def test_an_optional_size_or_country_is_given_only_where_one_is_said() -> None:
    """The 0.5B model wrote ``sizes=['Shopee']`` where the user said no size."""
    shopee = Said("I saw this product on the Shopee page and I'm interested in buying 30 units.")
    assert not shopee.gives("sizes", SIZES)
    assert Said("Is it back in stock in sizes M and L?").gives("sizes", SIZES)
    country = {"type": "string", "description": "The ISO 3166-1 alpha-2 code of the country."}
    assert not Said("What is the weather like?").gives("country", country)
    assert Said("What is the weather like in Paris?").gives("country", country)
    assert Said("What is the weather like in Paris?").of_kind("country", country) == ["FR"]


def test_a_colour_said_must_be_passed_and_a_size_may_be() -> None:
    """"compared to the size 34 pants I purchased previously" asks for no size."""
    said = Said("Any red pants in size 34?")
    assert said.passes("color", {"type": "string"})
    assert not said.passes("size", {"type": "string"}) and said.of_kind("size", {"type": "string"}) == ["34"]
    assert not Said("Any pants in size 34?").passes("color", {"type": "string"})
