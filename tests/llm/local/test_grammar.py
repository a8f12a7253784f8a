"""calls_grammar: the GBNF text for several schemas, and (with llama.cpp's grammar sampler) what it admits."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from voxcall.llm.local.grammar import calls_grammar, gbnf_literal
from voxcall.tools import Tool
from voxcall.tools.codecalls import format_code_call, parse_code_calls
from voxcall.tools.codecalls.prompt import example_arguments

if TYPE_CHECKING:
    from tests.llm.local.gbnf import GrammarChecker


def tool(name: str, properties: dict[str, Any], required: list[str], **extra: Any) -> Tool:
    return Tool(name, "", {"type": "object", "properties": properties, "required": required, **extra})


WEATHER = tool("get_weather", {"city": {"type": "string"}, "unit": {"type": "string", "enum": ["c", "f"]}},
               ["city"])
CALCULATOR = tool("calculator", {"op": {"type": "string", "enum": ["add", "sub"]}, "a": {"type": "number"},
                                 "b": {"type": "number"}}, ["op", "a", "b"])
SEND = tool("send-mail", {"from": {"type": "string"}, "user-id": {"type": "integer"}, "cc": {"type": "boolean"}},
            ["from"])
STOP = Tool("stop_music", "Stop the music.")
OPTIONS = tool("configure", {"mode": {"enum": ["fast", "safe", 3]}, "depth": {"type": "integer"},
                             "verbose": {"type": "boolean"}}, [])
MATRIX = tool("matrix", {"rows": {"type": "array", "items": {"type": "array", "items": {"type": "integer"}}},
                         "meta": {"type": "object"}, "tags": {"type": "array"}}, ["rows"])
TREE = tool("tree", {"node": {"$ref": "#/$defs/node"}}, ["node"],
            **{"$defs": {"node": {"type": "array", "items": {"$ref": "#/$defs/node"}}}})
NULLABLE = tool("note", {"text": {"type": ["string", "null"]}, "level": {"anyOf": [{"type": "integer"},
                                                                                    {"const": "max"}]}},
                ["text", "level"])
ALL = [WEATHER, CALCULATOR, SEND, STOP, OPTIONS, MATRIX, TREE, NULLABLE]


def rules(grammar: str) -> dict[str, str]:
    return dict(line.split(" ::= ", 1) for line in grammar.splitlines())


def test_root_is_calls_closed_by_code_tags() -> None:
    grammar = calls_grammar([WEATHER, STOP])
    assert grammar.startswith("root ::= ")
    assert rules(grammar)["root"] == 'call "</code>" ([ \\n]? "<code>" call "</code>")*'
    assert rules(grammar)["call"] == "call-get-weather | call-stop-music"


def test_required_then_optional_arguments_with_enum_literals() -> None:
    found = rules(calls_grammar([WEATHER]))
    assert found["call-get-weather"] == '"get_weather(" "city=" string (", " "unit=" get-weather-unit-enum)? ")"'
    assert found["get-weather-unit-enum"] == "\"'c'\" | \"'f'\""


def test_keyword_and_dashed_names_use_their_python_aliases() -> None:
    found = rules(calls_grammar([SEND]))
    assert found["call-send-mail"] == ('"send_mail(" "from_=" string (", " "user_id=" integer)? '
                                       '(", " "cc=" boolean)? ")"')


def test_tool_without_parameters() -> None:
    assert rules(calls_grammar([STOP]))["call-stop-music"] == '"stop_music(" ")"'


def test_only_optional_arguments_any_in_order_subset() -> None:
    body = rules(calls_grammar([OPTIONS]))["call-configure"]
    assert body.startswith('"configure(" ((')
    assert body.count('"mode="') == 1 and body.count('"depth="') == 2 and body.count('"verbose="') == 3


def test_nested_arrays_loose_objects_and_recursive_refs() -> None:
    found = rules(calls_grammar([MATRIX, TREE]))
    assert found["matrix-rows-item-list"] == '"[" (integer (", " integer)*)? "]"'
    assert found["matrix-rows-list"] == '"[" (matrix-rows-item-list (", " matrix-rows-item-list)*)? "]"'
    assert '"meta=" object' in found["call-matrix"] and '"tags=" array' in found["call-matrix"]
    assert found["call-tree"] == '"tree(" "node=" tree-node-ref ")"'
    assert found["tree-node-ref"] == "tree-node-ref-list"  # the pointer's rule, recursive through its list
    assert found["tree-node-ref-list"] == '"[" (tree-node-ref (", " tree-node-ref)*)? "]"'


def test_an_object_whose_properties_are_named_takes_those_keys_alone(checker: GrammarChecker) -> None:
    drink = tool("change_drink", {"drink_id": {"type": "string"}, "preferences": {
        "type": "object", "required": ["size"], "properties": {
            "size": {"type": "string", "enum": ["small", "large"]},
            "milk_type": {"type": "string", "enum": ["regular", "coconut"]},
            "note": {"type": "string"}}}}, ["drink_id", "preferences"])
    grammar = calls_grammar([drink], said="Make my latte large with coconut milk")
    assert checker.accepts(grammar, "change_drink(drink_id='latte', preferences={'size': 'large', "
                                    "'milk_type': 'coconut', 'note': 'coconut milk'})</code>")
    # the choice said ("coconut") is required inside the object as among a call's arguments
    assert not checker.accepts(grammar, "change_drink(drink_id='latte', preferences={'size': 'large'})</code>")
    assert not checker.accepts(grammar, "change_drink(drink_id='latte', preferences={'coconut milk': 'true'})</code>")
    assert not checker.accepts(grammar, "change_drink(drink_id='latte', preferences={'milk_type': 'coconut'})</code>")
    assert not checker.accepts(grammar, "change_drink(drink_id='latte', preferences={'size': 'huge'})</code>")
    call, = parse_code_calls("<code>change_drink(drink_id='latte', preferences={'size': 'large', "
                             "'milk_type': 'coconut'})</code>", [drink]).calls
    assert call.arguments["preferences"] == {"size": "large", "milk_type": "coconut"}
    headers = tool("fetch", {"headers": {"type": "object", "properties": {"Accept": {"type": "string"}},
                                         "additionalProperties": {"type": "string"}}}, ["headers"])
    assert checker.accepts(calls_grammar([headers]), "fetch(headers={'Authorization': 'Bearer x'})</code>")


def test_a_choice_said_inside_an_object_is_required(checker: GrammarChecker) -> None:
    settings = {"type": "object", "properties": {
        "job_mode": {"type": "string", "enum": ["AIR_CLEAN", "COOL", "AIR_DRY"], "default": "COOL"},
        "wind": {"type": "string", "enum": ["LOW", "MID", "HIGH"], "default": "MID"},
        "target": {"type": "integer"}}}
    aircon = tool("aircon", {"body": settings}, ["body"])
    grammar = calls_grammar([aircon], said="Switch the air conditioner to air dry mode at 24 degrees")
    assert checker.accepts(grammar, "aircon(body={'job_mode': 'AIR_DRY'})</code>")  # "air dry" is AIR_DRY
    assert checker.accepts(grammar, "aircon(body={'job_mode': 'AIR_DRY', 'target': 24})</code>")
    assert not checker.accepts(grammar, "aircon(body={})</code>")  # the mode said is not left out
    assert not checker.accepts(grammar, "aircon(body={'job_mode': 'COOL'})</code>")
    assert not checker.accepts(grammar, "aircon(body={'job_mode': 'AIR_DRY', 'wind': 'MID'})</code>")  # unsaid
    assert not checker.accepts(grammar, "aircon(body={'job_mode': 'AIR_DRY', 'target': 22})</code>")
    fan = tool("fan", {"mode": {"type": "string", "enum": ["AIR_CLEAN", "AIR_DRY"]}}, [])
    assert checker.accepts(calls_grammar([fan], said="start the air clean mode"), "fan(mode='AIR_CLEAN')</code>")
    assert not checker.accepts(calls_grammar([fan], said="start the air clean mode"), "fan()</code>")


def test_an_optional_number_or_flag_the_words_do_not_give_is_left_out(checker: GrammarChecker) -> None:
    aircon = tool("aircon", {"mode": {"type": "string"}, "target": {"type": "integer"},
                             "power_save": {"type": "boolean"}}, ["mode"])
    plain = calls_grammar([aircon], said="Switch the air conditioner to dry mode")
    assert checker.accepts(plain, "aircon(mode='dry')</code>")
    assert not checker.accepts(plain, "aircon(mode='dry', target=22)</code>")  # no number said
    assert not checker.accepts(plain, "aircon(mode='dry', power_save=True)</code>")  # nothing said of it
    given = calls_grammar([aircon], said="Switch the air conditioner to dry mode at 24 with power save")
    assert checker.accepts(given, "aircon(mode='dry', target=24, power_save=True)</code>")
    assert checker.accepts(given, "aircon(mode='dry', power_save=True)</code>")  # the number still optional
    assert not checker.accepts(given, "aircon(mode='dry')</code>")  # a flag the words set is passed, turned on
    assert not checker.accepts(given, "aircon(mode='dry', power_save=False)</code>")
    unset = calls_grammar([aircon], said="Switch the air conditioner to dry mode, not with power save")
    assert checker.accepts(unset, "aircon(mode='dry')</code>")  # said, but negated: the model's to pass or not
    assert checker.accepts(unset, "aircon(mode='dry', power_save=False)</code>")
    lights = tool("lights", {"room": {"type": "string"}, "lights_on": {"type": "boolean"}}, ["room", "lights_on"])
    required = calls_grammar([lights], said="Turn the lights off in the kitchen")  # a switch said: its value
    assert checker.accepts(required, "lights(room='kitchen', lights_on=False)</code>")
    assert not checker.accepts(required, "lights(room='kitchen', lights_on=True)</code>")


@pytest.mark.parametrize(("said", "room", "written", "refused"), [
    ("Switch the lounge lights on.", "lounge", "True", "False"),  # the 0.5B thinker wrote on=False
    ("Lights off in the bathroom.", "bathroom", "False", "True"),
    ("把书房的灯打开。", "书房", "True", "False"),
    ("关掉客厅的灯。", "客厅", "False", "True"),
])
def test_a_flag_that_switches_is_what_the_words_say(checker: GrammarChecker, said: str, room: str, written: str,
                                                    refused: str) -> None:
    lights = tool("set_lights", {"room": {"type": "string"}, "on": {"type": "boolean"}}, ["room", "on"])
    grammar = calls_grammar([lights], said=said)
    assert checker.accepts(grammar, f"set_lights(room='{room}', on={written})</code>")
    assert not checker.accepts(grammar, f"set_lights(room='{room}', on={refused})</code>")


def test_a_room_is_the_whole_name_said(checker: GrammarChecker) -> None:
    lights = tool("set_lights", {"room": {"type": "string"}, "on": {"type": "boolean"}}, ["room", "on"])
    grammar = calls_grammar([lights], said="Switch the laundry room lights on.")
    assert checker.accepts(grammar, "set_lights(room='laundry room', on=True)</code>")
    assert not checker.accepts(grammar, "set_lights(room='laundry', on=True)</code>")  # the 0.5B thinker's
    mode = tool("aircon", {"mode": {"type": "string"}}, ["mode"])  # a mode's word is no part of the mode's name
    dry = calls_grammar([mode], said="Switch the air conditioner to dry mode")
    assert checker.accepts(dry, "aircon(mode='dry')</code>")


def test_a_flag_the_words_switch_both_ways_or_that_switches_nothing_is_the_models(checker: GrammarChecker) -> None:
    lights = tool("set_lights", {"room": {"type": "string"}, "on": {"type": "boolean"}}, ["room", "on"])
    both = calls_grammar([lights], said="Turn off the lights on the porch")
    assert checker.accepts(both, "set_lights(room='porch', on=False)</code>")
    assert checker.accepts(both, "set_lights(room='porch', on=True)</code>")
    other = tool("mail", {"to": {"type": "string"}, "urgent": {"type": "boolean"}}, ["to", "urgent"])
    grammar = calls_grammar([other], said="Send it off to Ann")  # "off" switches no flag named otherwise
    assert checker.accepts(grammar, "mail(to='Ann', urgent=True)</code>")
    assert checker.accepts(grammar, "mail(to='Ann', urgent=False)</code>")
    held = tool("orders", {"include_on_hold": {"type": "boolean"}}, ["include_on_hold"])  # "on" not at its end
    listed = calls_grammar([held], said="List the orders on my account")
    assert checker.accepts(listed, "orders(include_on_hold=True)</code>")
    assert checker.accepts(listed, "orders(include_on_hold=False)</code>")


def test_numbers_are_used_as_often_as_said(checker: GrammarChecker) -> None:
    calc = tool("calculator", {"op": {"type": "string", "enum": ["add", "mul"]}, "a": {"type": "number"},
                               "b": {"type": "number"}}, ["op", "a", "b"])
    double = calls_grammar([calc], said="Double 37 for me.")  # 37 once, and the 2 "double" says
    assert checker.accepts(double, "calculator(op='mul', a=37, b=2)</code>")
    assert checker.accepts(double, "calculator(op='mul', a=2, b=37)</code>")
    assert not checker.accepts(double, "calculator(op='mul', a=37, b=37)</code>")
    square = calls_grammar([calc], said="What is 5 times 5?")  # said twice: used twice
    assert checker.accepts(square, "calculator(op='mul', a=5, b=5)</code>")
    sides = tool("resize", {"width": {"type": "integer"}, "height": {"type": "integer"}}, ["width", "height"])
    both = calls_grammar([sides], said="Make both sides 10")  # no way to count: the numbers said, as before
    assert checker.accepts(both, "resize(width=10, height=10)</code>")


def test_type_unions() -> None:
    found = rules(calls_grammar([NULLABLE]))
    assert found["note-text-union"] == "string | null"
    assert found["note-level-union"] in ("integer | note-level-enum", "note-level-enum | integer")


def test_gbnf_literal_escapes() -> None:
    assert gbnf_literal('a"b\\c\nd') == '"a\\"b\\\\c\\nd"'


def test_no_tools_is_an_error() -> None:
    with pytest.raises(ValueError):
        calls_grammar([])


# -- with llama.cpp's grammar sampler --------------------------------------------------------------------------


@pytest.mark.parametrize("chosen", [[t] for t in ALL] + [ALL], ids=[t.name for t in ALL] + ["all"])
def test_llama_cpp_parses_every_grammar(checker: GrammarChecker, chosen: list[Tool]) -> None:
    assert checker.parses(calls_grammar(chosen))


@pytest.mark.parametrize(("text", "admitted"), [
    ("</code>", True),
    ("</code> <code>stop_music()</code>", True),
    ("get_weather(city='Paris')</code>", False),  # a call is under way: only its close may follow
    (")</code>", False),
])
def test_what_follows_a_closed_call_is_its_block_end_then_further_blocks(checker: GrammarChecker, text: str,
                                                                          admitted: bool) -> None:
    grammar = calls_grammar(ALL, after_call=True)
    assert checker.parses(grammar) and checker.accepts(grammar, text) is admitted


EXAMPLES = [(t, example_arguments(t)) for t in ALL if t not in (TREE, NULLABLE)] + [
    (TREE, {"node": [[], [[]]]}), (NULLABLE, {"text": "it's", "level": 2}), (NULLABLE, {"text": None, "level": "max"}),
    (SEND, {"from": "ann", "user-id": -4, "cc": False}), (MATRIX, {"rows": [[1]], "meta": {"a": {"b": [1.5]}}}),
]


@pytest.mark.parametrize(("subject", "arguments"), EXAMPLES)
def test_rendered_calls_are_admitted_and_parse_back(checker: GrammarChecker, subject: Tool,
                                                     arguments: dict[str, Any]) -> None:
    """What the prompt's examples and the history show (``format_code_call``) is what the grammar admits."""
    call = format_code_call(subject, arguments)
    assert checker.accepts(calls_grammar(ALL), call.removeprefix("<code>"))
    assert [c.arguments for c in parse_code_calls(call, ALL).calls] == [arguments]


@pytest.mark.parametrize("text", [
    "get_weather(city='Paris', unit='f')</code>",
    "get_weather(city='It\\'s here')</code>",
    'get_weather(city="It\'s here")</code>',
    "calculator(op='sub', a=-2.5, b=10)</code> <code>stop_music()</code>",
    "send_mail(from_='ann', cc=True)</code>",
    "configure(depth=3, verbose=False)</code>",
    "configure(mode=3)</code>",
    "matrix(rows=[[1, 2], []], meta={'k': [None, 'v']})</code>",
    "tree(node=[[], [[]]])</code>",
    "note(text=None, level='max')</code>",
])
def test_well_formed_calls_are_admitted(checker: GrammarChecker, text: str) -> None:
    assert checker.accepts(calls_grammar(ALL), text)


@pytest.mark.parametrize("text", [
    "get_weather('Paris')</code>",  # positional
    "get_weather(unit='c')</code>",  # a required argument missing
    "get_weather(city='Paris', unit='k')</code>",  # not an enum value
    "get_weather(unit='c', city='Paris')</code>",  # out of signature order
    "get_weather(city='')</code>",  # an empty placeholder
    "get_wether(city='Paris')</code>",  # unknown tool
    "calculator(op='add', a='1', b=2)</code>",  # a string for a number
    "send_mail(from='ann')</code>",  # the keyword instead of its alias
    "send_mail(from_='ann', cc=true)</code>",  # JSON-style boolean
    "matrix(rows=[1])</code>",  # an integer where a list is due
    "stop_music()",  # not closed
    "stop_music()</code> Done.",  # words after the call
])
def test_malformed_calls_are_refused(checker: GrammarChecker, text: str) -> None:
    assert not checker.accepts(calls_grammar(ALL), text)


def test_a_choice_said_is_passed_and_no_plain_string_is_a_choice_word(checker: GrammarChecker) -> None:
    grammar = calls_grammar([WEATHER], "Weather in Oslo in F please")
    assert checker.accepts(grammar, "get_weather(city='Oslo', unit='f')</code>")
    assert not checker.accepts(grammar, "get_weather(city='Oslo')</code>")  # "F" was said: the unit is passed
    assert not checker.accepts(grammar, "get_weather(city='F', unit='f')</code>")  # the unit's word is no city
    assert not checker.accepts(grammar, "get_weather(city='Oslo', unit='c')</code>")
    either = calls_grammar([WEATHER], "Weather in Oslo, c or f?")  # both choices said: the model picks, or not
    assert checker.accepts(either, "get_weather(city='Oslo')</code>")
    assert checker.accepts(either, "get_weather(city='Oslo', unit='c')</code>")


LIGHTS = tool("set_lights", {"room": {"type": "string"}}, ["room"])


def test_no_plain_string_is_only_words_of_the_tools_name(checker: GrammarChecker) -> None:
    grammar = calls_grammar([LIGHTS], "Turn on the kitchen lights")
    assert checker.accepts(grammar, "set_lights(room='kitchen')</code>")
    assert not checker.accepts(grammar, "set_lights(room='lights')</code>")
    assert checker.accepts(grammar, "set_lights(room='kitchen lights')</code>")  # a name may be part of a value
    chinese = calls_grammar([LIGHTS], "打开厨房的灯")  # 灯 is "light" in the lexicon's glosses
    assert checker.accepts(chinese, "set_lights(room='厨房')</code>")
    assert not checker.accepts(chinese, "set_lights(room='灯')</code>")
    only = calls_grammar([LIGHTS], "Lights")  # every span holds one: any span, rather than none
    assert checker.accepts(only, "set_lights(room='Lights')</code>")
    forecast = tool("get_current_weather", {"location": {"type": "string"}}, ["location"])
    glossed = calls_grammar([forecast], "What is the temperature going to be in Bangkok?")
    assert checker.accepts(glossed, "get_current_weather(location='Bangkok')</code>")
    assert not checker.accepts(glossed, "get_current_weather(location='temperature')</code>")  # glossed "weather"
    exports = tool("lexv2_list_exports", {"version": {"type": "string"}}, ["version"])
    versioned = calls_grammar([exports], "List the exports of version v2")  # a name's digits are no word of it
    assert checker.accepts(versioned, "lexv2_list_exports(version='v2')</code>")
    assert not checker.accepts(versioned, "lexv2_list_exports(version='exports')</code>")


def test_a_choice_said_in_other_words_is_passed(checker: GrammarChecker) -> None:
    grammar = calls_grammar([CALCULATOR], "What is 7 plus 5?")  # the lexicon glosses "plus" as "add"
    assert checker.accepts(grammar, "calculator(op='add', a=7, b=5)</code>")
    assert not checker.accepts(grammar, "calculator(op='sub', a=7, b=5)</code>")
    assert not checker.accepts(calls_grammar([CALCULATOR], "7减5等于多少"), "calculator(op='add', a=7, b=5)</code>")


def test_an_operation_a_word_says_with_its_number_is_passed_with_it(checker: GrammarChecker) -> None:
    multiplying = tool("calculator", {"op": {"type": "string", "enum": ["add", "mul"]}, "a": {"type": "number"},
                                      "b": {"type": "number"}}, ["op", "a", "b"])
    grammar = calls_grammar([multiplying], "Double 37 for me.")  # "double" says mul, and the 2
    assert checker.accepts(grammar, "calculator(op='mul', a=37, b=2)</code>")
    assert not checker.accepts(grammar, "calculator(op='add', a=37, b=2)</code>")
    assert not checker.accepts(calls_grammar([multiplying], "Book a double room for 3 nights."),
                               "calculator(op='mul', a=3, b=2)</code>")  # "double" before a word says none


def test_plain_strings_are_spans_of_the_words_said(checker: GrammarChecker) -> None:
    grammar = calls_grammar([WEATHER, SEND], said="What's the weather in New York?")
    assert "said-enum" in rules(grammar)
    assert checker.accepts(grammar, "get_weather(city='New York')</code>")
    assert not checker.accepts(grammar, "get_weather(city='New York', unit='f')</code>")  # no choice named
    assert not checker.accepts(grammar, "get_weather(city='text')</code>")
    assert not checker.accepts(grammar, "get_weather(city='new_york')</code>")
    assert checker.accepts(grammar, "get_weather(city='York')</code> <code>get_weather(city='New York')</code>")
    assert calls_grammar([WEATHER]) == calls_grammar([WEATHER], said="")


def test_a_span_with_an_apostrophe_may_be_written_in_either_quotes(checker: GrammarChecker) -> None:
    grammar = calls_grammar([WEATHER], said="Weather for Son's town")
    assert checker.accepts(grammar, "get_weather(city='Son\\'s town')</code>")  # a model that opens with '
    assert checker.accepts(grammar, 'get_weather(city="Son\'s town")</code>')  # repr's quotes
    assert not checker.accepts(grammar, "get_weather(city='Son's town')</code>")  # not Python
    calls = parse_code_calls("<code>get_weather(city='Son\\'s town')</code>", [WEATHER]).calls
    assert calls[0].arguments == {"city": "Son's town"}


def test_a_string_shaped_as_its_sample_is_a_span_of_that_shape(checker: GrammarChecker) -> None:
    pricing = tool("price", {"geolocation": {"type": "string", "description": "In the format of 'Latitude, "
                                             "Longitude', such as '36.2522, -105.3437'."}}, ["geolocation"])
    grammar = calls_grammar([pricing], "a customer located at 34.0522, -118.2437, with a base price of 100")
    assert checker.accepts(grammar, "price(geolocation='34.0522, -118.2437')</code>")
    assert not checker.accepts(grammar, "price(geolocation='text')</code>")  # what the 0.5B model wrote
    assert not checker.accepts(grammar, "price(geolocation='34.0522')</code>")
    unsaid = calls_grammar([pricing], "a customer in Los Angeles")  # no such span: the model writes it
    assert checker.accepts(unsaid, "price(geolocation='34.05, -118.24')</code>")


def test_a_string_whose_description_prescribes_a_form_is_written_not_copied(checker: GrammarChecker) -> None:
    forecast = tool("get_current_weather", {
        "location": {"type": "string", "description": "The city, in the format of 'City, State'."},
        "note": {"type": "string"}}, ["location"])
    grammar = calls_grammar([forecast], "weather today in Boston?")
    assert checker.accepts(grammar, "get_current_weather(location='Boston, MA')</code>")  # not a span said
    assert checker.accepts(grammar, "get_current_weather(location='Boston')</code>")
    assert checker.accepts(grammar, "get_current_weather(location='Boston', note='Boston')</code>")
    assert not checker.accepts(grammar, "get_current_weather(location='Boston', note='MA')</code>")  # no form: a span
    copying = calls_grammar([forecast], "weather today in Boston?", write_forms=False)  # a model that writes 'text'
    assert checker.accepts(copying, "get_current_weather(location='Boston')</code>")
    assert not checker.accepts(copying, "get_current_weather(location='Boston, MA')</code>")


def test_an_optional_choice_not_named_is_left_out(checker: GrammarChecker) -> None:
    forecast = tool("get_current_weather", {"location": {"type": "string"}, "unit": {
        "type": "string", "enum": ["celsius", "fahrenheit"], "default": "fahrenheit"}}, ["location"])
    grammar = calls_grammar([forecast], "What's the weather in Boston?")
    assert checker.accepts(grammar, "get_current_weather(location='Boston')</code>")
    # the declared default is the tool's to apply, not a choice to write
    assert not checker.accepts(grammar, "get_current_weather(location='Boston', unit='fahrenheit')</code>")
    assert not checker.accepts(grammar, "get_current_weather(location='Boston', unit='celsius')</code>")
    named = calls_grammar([forecast], "What's the weather in Boston in celsius?")
    assert checker.accepts(named, "get_current_weather(location='Boston', unit='celsius')</code>")
    servers = tool("list_servers", {"type": {"type": "string", "enum": ["all", "mtna"], "default": "all"}}, [])
    both = calls_grammar([servers], "Show me all of my MTNA servers")  # both said: the model picks
    assert checker.accepts(both, "list_servers(type='mtna')</code>")
    # without a declared default (WEATHER's unit) a choice none named is left to the tool
    oslo = calls_grammar([WEATHER], "Weather in Oslo")
    assert checker.accepts(oslo, "get_weather(city='Oslo')</code>")
    assert not checker.accepts(oslo, "get_weather(city='Oslo', unit='c')</code>")
    in_f = calls_grammar([WEATHER], "Weather in Oslo, in F")
    assert checker.accepts(in_f, "get_weather(city='Oslo', unit='f')</code>")
    assert checker.accepts(calls_grammar([WEATHER]), "get_weather(city='Oslo', unit='c')</code>")  # nothing said


def test_numbers_are_numbers_said_when_some_were(checker: GrammarChecker) -> None:
    grammar = calls_grammar([CALCULATOR, SEND], said="add 12 and 8.5 for user 7")
    assert checker.accepts(grammar, "calculator(op='add', a=12, b=8.5)</code>")
    assert not checker.accepts(grammar, "calculator(op='add', a=12, b=20.5)</code>")
    assert checker.accepts(grammar, "send_mail(from_='user', user_id=7)</code>")
    assert not checker.accepts(grammar, "send_mail(from_='user', user_id=8.5)</code>")  # integers are whole
    assert checker.accepts(calls_grammar([CALCULATOR], said="add them"), "calculator(op='add', a=3, b=4)</code>")


def test_a_count_of_a_unit_of_time_is_the_length_said_in_its_unit(checker: GrammarChecker) -> None:
    timer = tool("set_timer", {"minutes": {"type": "integer"}, "label": {"type": "string"}}, ["minutes"])
    hours = calls_grammar([timer], said="Set a timer for two hours")
    assert checker.accepts(hours, "set_timer(minutes=120)</code>")
    assert not checker.accepts(hours, "set_timer(minutes=2)</code>")  # a timer that rings 118 minutes early
    assert checker.accepts(calls_grammar([timer], said="Ping me in half an hour"), "set_timer(minutes=30)</code>")
    wait = tool("wait", {"seconds": {"type": "number"}, "times": {"type": "integer"}}, ["seconds", "times"])
    both = calls_grammar([wait], said="Wait a minute and a half, 3 times")  # a number no part of a length stays
    assert checker.accepts(both, "wait(seconds=90, times=3)</code>")
    assert not checker.accepts(both, "wait(seconds=1.5, times=3)</code>")
    assert not checker.accepts(both, "wait(seconds=3, times=3)</code>")  # 3 said once is used once
    volume = tool("set_volume", {"level": {"type": "integer"}}, ["level"])  # no unit: the numbers as said
    assert checker.accepts(calls_grammar([volume], said="Volume 2 for two hours"), "set_volume(level=2)</code>")


def test_a_colour_said_is_passed_a_size_is_one_said_and_neither_is_invented(checker: GrammarChecker) -> None:
    """"Do you have any red shoes in size 8?": the 0.5B model left the colour out; for "ukuran L lagi" it wrote
    ``sizes=['L lagi']``, and a colour the user never said."""
    stock = tool("stock", {"product_id": {"type": "string"}, "sizes": {"type": "array", "items": {"type": "string"}},
                           "color": {"type": "string"}}, ["product_id"])
    said = calls_grammar([stock], said="Do you have the red skirt SK123 in sizes M and L?")
    assert checker.accepts(said, "stock(product_id='SK123', sizes=['M', 'L'], color='red')</code>")
    assert checker.accepts(said, "stock(product_id='SK123', sizes=['L'], color='red')</code>")
    assert checker.accepts(said, "stock(product_id='SK123', color='red')</code>")  # a size may be said in passing
    assert not checker.accepts(said, "stock(product_id='SK123', sizes=['M', 'L'])</code>")  # the colour is passed
    assert not checker.accepts(said, "stock(product_id='SK123', sizes=['M and L'], color='red')</code>")
    assert not checker.accepts(said, "stock(product_id='SK123', sizes=['M', 'L'], color='red skirt')</code>")
    unsaid = calls_grammar([stock], said="kapan ready stok ukuran L lagi, id 111?")
    assert checker.accepts(unsaid, "stock(product_id='111', sizes=['L'])</code>")
    assert not checker.accepts(unsaid, "stock(product_id='111', sizes=['L lagi'])</code>")
    assert not checker.accepts(unsaid, "stock(product_id='111', sizes=['L'], color='lagi')</code>")  # no colour said


def test_an_identifier_is_a_code_said(checker: GrammarChecker) -> None:
    """The 0.5B model wrote ``sensorSerial='the list of today's alerts for the sensor with serial number …'``."""
    alerts = tool("get_sensor_alerts", {"perPage": {"type": "integer"}, "sensorSerial": {"type": "string"}},
                  ["perPage"])
    said = calls_grammar([alerts], said="Today's alerts for the sensor with serial number Q3CC-CRT3-SZ2G, 10 per page")
    assert checker.accepts(said, "get_sensor_alerts(perPage=10, sensorSerial='Q3CC-CRT3-SZ2G')</code>")
    assert checker.accepts(said, "get_sensor_alerts(perPage=10)</code>")  # optional: the model's to pass
    assert not checker.accepts(said, "get_sensor_alerts(perPage=10, sensorSerial='the sensor with serial number "
                                     "Q3CC-CRT3-SZ2G')</code>")
    order = tool("order_status", {"order_id": {"type": "string"}}, ["order_id"])
    assert checker.accepts(calls_grammar([order], said="Where is my order? Its ID is #123."),
                           "order_status(order_id='#123')</code>")
    named = calls_grammar([order], said="Where is my sneakers order?")  # no code said: a span, as before
    assert checker.accepts(named, "order_status(order_id='sneakers')</code>")


def test_what_must_be_passed_stands_at_its_place_in_the_signature(checker: GrammarChecker) -> None:
    """Moved ahead of the others, a flag the words set was written first and the call closed:
    ``getCurrentTime(include_date=True)`` for "the current time in 'Europe/Berlin', including the date"."""
    clock = tool("getCurrentTime", {"timezone": {"type": "string"}, "include_date": {"type": "boolean"}}, [])
    grammar = calls_grammar([clock], said="Tell me the current time in 'Europe/Berlin', including the date")
    assert checker.parses(grammar)
    assert checker.accepts(grammar, "getCurrentTime(timezone='Europe/Berlin', include_date=True)</code>")
    assert checker.accepts(grammar, "getCurrentTime(include_date=True)</code>")
    assert not checker.accepts(grammar, "getCurrentTime(include_date=True, timezone='Europe/Berlin')</code>")
    assert not checker.accepts(grammar, "getCurrentTime(timezone='Europe/Berlin')</code>")
    assert not checker.accepts(grammar, "getCurrentTime()</code>")
