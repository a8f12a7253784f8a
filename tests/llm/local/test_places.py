"""places: the places a request names, written in the form a tool's argument asks for, and the call grammar that
admits only those."""

from __future__ import annotations

import pytest

from tests.llm.local.gbnf import GrammarChecker
from voxcall.llm.local.grammar import calls_grammar
from voxcall.llm.local.places import (
    PlaceForm,
    asks_of_place,
    countries_for,
    mentions_place,
    place_form,
    places_for,
    read_forms,
    said_places,
    states_for,
    written,
)
from voxcall.llm.local.said import Said
from voxcall.tools import Tool

STATES = "The city, in the format of 'City, State', such as 'Berkeley, CA' or 'New York, NY'."
SHOWN = "The name of the city, such as 'New York, NY' or 'London, UK'."
COUNTRIES = "The location, specified in the format of 'City, Country' in English. For example: 'Seoul, South Korea'."


def test_the_form_is_read_from_the_descriptions_examples_of_known_cities() -> None:
    assert place_form(STATES) == PlaceForm(states=True)
    assert place_form(SHOWN) == PlaceForm(states=True, spellings={"GB": "UK"})  # the country as the example spells it
    assert place_form(COUNTRIES) == PlaceForm(states=False)
    # no example, or none of a city: no form (an airport code, an address, a placeholder)
    assert place_form("The city to search in.") is None
    assert place_form("The IATA code such as 'LAX' for Los Angeles.") is None
    assert place_form("The address, such as '2150 Shattuck Ave, Berkeley, CA'.") is None
    assert place_form("In the format of 'City, State'.") is None


@pytest.mark.parametrize(("said", "values"), [
    ("What's the weather like in Boston and San Francisco?", ["Boston, MA", "San Francisco, CA"]),
    ("What's the snow like in Paris and Bordeaux?", ["Paris, France", "Bordeaux, France"]),  # the most populous
    ("Get weather of Ha Noi for me", ["Ha Noi, Vietnam"]),  # the user's spelling, another name of Hanoi
    ("Could you tell me the current weather in Lang Son?", ["Lang Son, Vietnam"]),  # Lạng Sơn without accents
    ("请问北京的天气如何？上海呢？", ["Beijing, China", "Shanghai, China"]),  # another script: the English name
    ("查一下广州市的天气", ["Guangzhou, China"]),  # the longest name read (广州市, not 广州 then 市)
    ("Could you tell me the weather in New York?", ["New York, NY"]),  # "New York", not "York"
    # qualified by the user: kept as said, and the qualifier is no place of its own ("Florida", a town in Cuba)
    ("Could you tell me the current weather conditions in Naples, Florida?", ["Naples, Florida"]),
    ("Im at Riga, Latvia, Can you tell me the current temperature?", ["Riga, Latvia"]),  # "Can" opens a question
    ("I'm starting from New York, NY. Could you plan a trip?", ["New York, NY"]),  # the qualifier ends its sentence
    ("Is it sunny in Washington, D.C. Tomorrow?", ["Washington, D.C."]),  # an abbreviation's dots stay
    ("Is it cold in Moscow? Tell me in March", ["Moscow, Russia"]),  # no month, no question word is a place
    ("Pick me up at 2020 Addison Street, Berkeley, CA", ["Berkeley, CA"]),  # a street's name is no city's
    ("I'm camping in Big Sur this weekend", []),  # not in the table: nothing to write
])
def test_the_places_said_are_written_in_the_form(said: str, values: list[str]) -> None:
    assert places_for(said, SHOWN) == values


def test_a_us_city_is_written_with_its_country_where_no_example_shows_a_state() -> None:
    boston, = said_places("How warm is it in Boston?")
    assert written(boston, PlaceForm(states=False)) == "Boston, United States"
    assert written(boston, PlaceForm(states=True)) == "Boston, MA"
    assert places_for("How warm is it in Boston?", "The city where it is.") == []  # no form: nothing


WEATHER = Tool("get_current_weather", "Current weather.", {
    "type": "object", "required": ["location"],
    "properties": {"location": {"type": "string", "description": STATES},
                   "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}}})


def test_the_grammar_admits_only_the_places_said_in_the_form(checker: GrammarChecker) -> None:
    """The 0.5B model wrote 'Boston, CA' (the example's state) and 'Paris, CO' for a form it was free to write."""
    grammar = calls_grammar([WEATHER], said="What's the weather in Boston and Paris?")
    assert checker.parses(grammar)
    assert checker.accepts(grammar, "get_current_weather(location='Boston, MA')</code>")
    assert checker.accepts(grammar, "get_current_weather(location='Paris, France')</code>")
    assert not checker.accepts(grammar, "get_current_weather(location='Boston, CA')</code>")
    assert not checker.accepts(grammar, "get_current_weather(location='Boston')</code>")
    # no place named: the form is the model's to write, as before
    free = calls_grammar([WEATHER], said="What's the weather in Big Sur?")
    assert checker.accepts(free, "get_current_weather(location='Big Sur, CA')</code>")


STATE_CODE = "The U.S. state abbreviation where the purchase is made, such as 'CA' for California or 'NY' for New York."


@pytest.mark.parametrize(("said", "codes"), [
    ("I made a purchase of $59.99 in San Francisco, California.", ["CA"]),  # by name
    ("I bought a laptop in NY for $999", ["NY"]),  # by code
    ("A purchase of $20 in Austin, then one in Seattle", ["TX", "WA"]),  # by a city in it, in the order said
    ("A purchase of $20 in Paris", []),  # no US state
])
def test_a_state_wanted_by_its_code_is_the_code_of_one_named(said: str, codes: list[str]) -> None:
    assert states_for(said) == codes
    assert places_for(said, STATE_CODE) == codes
    assert places_for(said, "The state the purchase is in.") == []  # no code asked for: copied as said


def test_the_grammar_admits_only_the_codes_of_the_states_named(checker: GrammarChecker) -> None:
    """The 0.5B model wrote ``state='California'`` where the tool asked for 'CA'."""
    tax = Tool("calculate_tax", "Sales tax.", {"type": "object", "required": ["amount", "state"], "properties": {
        "amount": {"type": "number"}, "state": {"type": "string", "description": STATE_CODE}}})
    grammar = calls_grammar([tax], said="I've just made a purchase of $59.99 in San Francisco, California.")
    assert checker.accepts(grammar, "calculate_tax(amount=59.99, state='CA')</code>")
    assert not checker.accepts(grammar, "calculate_tax(amount=59.99, state='California')</code>")


@pytest.mark.parametrize(("said", "codes"), [
    ("the weather for London in the UK", ["GB"]),  # the city's country, and the UK as users call it
    ("What is the temperature in London, UK?", ["GB"]),
    ("Flights from Seoul, South Korea to Malabo, Equatorial Guinea", ["KR", "GQ"]),  # not Guinea's GN
    ("Is it raining in France or in the U.S.?", ["FR", "US"]),
    ("Tell us the weather in the USA", ["US"]),  # "us" is a pronoun
    ("What time is it?", []),
])
def test_a_country_wanted_by_its_code_is_the_code_of_one_named(said: str, codes: list[str]) -> None:
    assert countries_for(said) == codes


def test_the_grammar_admits_only_the_codes_of_the_countries_named(checker: GrammarChecker) -> None:
    """The 0.5B model copied ``country='UK'`` where the tool asked for ISO 3166-1 alpha-2 codes ('GB')."""
    weather = Tool("get_weather", "Current weather.", {"type": "object", "required": ["city", "country"],
                                                       "properties": {
        "city": {"type": "string", "description": "The name of the city, e.g., 'Los Angeles'."},
        "country": {"type": "string", "description": "The country, e.g., 'US'. Use ISO 3166-1 alpha-2 codes."}}})
    grammar = calls_grammar([weather], said="The current weather for London in the UK?")
    assert checker.accepts(grammar, "get_weather(city='London', country='GB')</code>")
    assert not checker.accepts(grammar, "get_weather(city='London', country='UK')</code>")
    qualified = calls_grammar([weather], said="What is the temperature in London, UK?")
    assert checker.accepts(qualified, "get_weather(city='London', country='GB')</code>")  # the country is apart
    assert "London" not in Said("What is the temperature in London, UK?").spans  # qualified, where none is apart


def test_the_forms_of_a_sessions_tools_are_read_at_its_warm_up() -> None:
    """``read_forms`` (the backend's warm-up) reads each description's form, so the first request finds it read."""
    place_form.cache_clear()
    read_forms([WEATHER])
    before = place_form.cache_info()
    assert place_form(STATES) == PlaceForm(states=True)
    assert place_form.cache_info().hits == before.hits + 1


def test_the_table_of_places_is_read_at_the_warm_up_of_a_tool_that_requires_a_place() -> None:
    """A tool whose ``city`` has no form still needs the table where a request names a place (:func:`asks_of_place`):
    the warm-up reads it; a tool that takes no place does not."""
    from voxcall.llm.local import places

    song = Tool("play_music", "Play music.", {"type": "object", "required": ["query"],
                                              "properties": {"query": {"type": "string"}}})
    city = Tool("get_weather", "Get the weather.", {"type": "object", "required": ["city"],
                                                     "properties": {"city": {"type": "string"}}})
    places._table.cache_clear()
    read_forms([song])
    assert places._table.cache_info().currsize == 0
    read_forms([song, city])
    assert places._table.cache_info().currsize == 1


@pytest.mark.parametrize(("said", "mentions"), [
    ("weather in san francisco please", True),  # in any case
    ("How warm is it in Boston?", True),
    ("北京天气怎么样", True),
    ("the weather in Yosemite, which is at Mariposa, CA", True),  # too small for the table, but qualified
    ("the weather in Mariposa, California", True),  # by a state's name
    ("the weather conditions in El Gastor, Andalusia?", True),  # by a province the table does not hold
    ("Hello, Can you fetch amazon.com?", False),  # "Can" qualifies nothing
    ("Today, I want the weather for 37.8651 N, 119.5383 W", False),
    ("Can I get a VirusTotal report for 10.10.0.0 using my API key RST495?", False),
    ("Can you fetch the domain report of amazon.com on VirusTotal?", False),
    ("What's the weather like today?", False),
])
def test_words_mention_a_place_when_some_run_of_them_names_a_city(said: str, mentions: bool) -> None:
    assert mentions_place(said) is mentions


def test_a_place_in_a_form_is_missing_where_the_words_could_name_no_city() -> None:
    forecast = Tool("get_current_weather", "Get the weather.", {"type": "object", "required": ["location"],
                                                                "properties": {"location": {"type": "string",
                                                                                            "description": STATES}}})
    assert Said("Get a VirusTotal report for 10.10.0.0").missing(forecast) == ["location"]
    assert Said("What's the weather in Berkeley?").missing(forecast) == []
    assert Said("what's the weather in berkeley").missing(forecast) == []


def test_a_request_names_a_place_for_a_tool_that_requires_one() -> None:
    city = Tool("get_weather", "Get the weather.", {"type": "object", "required": ["city"],
                                                     "properties": {"city": {"type": "string"}}})
    formed = Tool("get_current_weather", "Get the weather.", {"type": "object", "required": ["where"], "properties": {
        "where": {"type": "string", "description": STATES}}})
    song = Tool("play_music", "Play music.", {"type": "object", "required": ["query"],
                                              "properties": {"query": {"type": "string"}}})
    for said in ("东京天气如何？", "What's the weather in Paris?"):
        assert asks_of_place(said, [city]) and asks_of_place(said, [song, formed]), said  # by name, by form
    assert not asks_of_place("What causes rain?", [city])  # no place named
    assert not asks_of_place("Play Paris by Taylor Swift", [song])  # no tool that takes a place
    location = Tool("find", "Find.", {"type": "object", "required": ["userLocation"],
                                      "properties": {"userLocation": {"type": "string"}}})
    assert asks_of_place("Find a cafe in Berlin", [location])  # a word of the parameter's name: "userLocation"
