"""relevance and most_relevant: the lexical evidence that a request is meant for a tool."""

from __future__ import annotations

from voxcall.llm.local.relevance import most_relevant, readable, relevance, unrivalled, words
from voxcall.tools import Tool


def _tool(name: str, description: str, properties: dict[str, object], required: list[str]) -> Tool:
    return Tool(name, description, {"type": "object", "properties": properties, "required": required})


WEATHER = _tool("get_weather", "Get the weather forecast for a city.", {"city": {"type": "string"}}, ["city"])
VOLUME = _tool("setVolume", "Set the speaker volume.", {"level": {"type": "integer"}}, ["level"])
UNITS = _tool("convert", "Convert a length.", {"unit": {"type": "string", "enum": ["metres", "feet"]}}, ["unit"])


def test_words_split_identifiers_drop_plurals_and_stop_words() -> None:
    assert words("getWeather for the Cities of set_volume_levels 12") == ["weather", "citie", "volume", "level",
                                                                            "12"]


def test_a_request_naming_a_tool_with_its_values_is_evident() -> None:
    found = relevance("What's the weather in Oslo?", WEATHER)
    assert found.name_hits == 1 and found.values == 1.0
    assert relevance("Tell me a joke.", WEATHER).hits == 0


def test_a_word_of_the_name_in_another_form_names_the_tool() -> None:
    multiply = _tool("multiply", "Multiply two numbers.", {"a": {"type": "integer"}, "b": {"type": "integer"}},
                     ["a", "b"])
    assert relevance("What is the multiplication of 3 and 2", multiply).evident
    assert relevance("I'm searching for a recipe", _tool("search_recipe", "", {}, [])).name_hits == 2
    lights = _tool("set_lights", "Turn the lights on or off.", {"room": {"type": "string"}}, ["room"])
    assert relevance("Was that lightning?", lights).name_hits == 0  # a stem too short to tell
    assert relevance("Make a playlist", _tool("play_music", "", {}, [])).name_hits == 0


def test_a_word_that_says_the_operation_a_tools_name_says_names_the_tool() -> None:
    """"How much is 394 times 213?" beside ``CalcProduct`` was answered with the product, not the call wanted."""
    operands = {"a": {"type": "integer"}, "b": {"type": "integer"}}
    product = _tool("CalcProduct", "Calculates the product of two numeric values.", operands, ["a", "b"])
    assert relevance("How much is 394 times 213?", product).evident
    assert relevance("What is 12 multiplied by 3?", product).evident
    assert not relevance("What is 12 plus 3?", product).evident  # another operation
    assert not relevance("How much is 394 times 213?", _tool("sum", "Adds two integers.", operands, ["a", "b"])).evident


def test_latin_words_are_read_as_english_where_enough_of_them_are_its_stop_words() -> None:
    assert readable("Can you fetch the domain report of amazon.com on VirusTotal?")
    assert readable("Got any Bob Marley?")  # too few words to tell
    assert not readable("¿Podrías decirme las condiciones actuales del clima en Cancún?")
    assert not readable("Qual a temperatura atual em Divinópolis, MG?")


def test_a_chinese_request_is_matched_through_its_glosses() -> None:
    found = relevance("北京的天气怎么样？", WEATHER)
    assert found.name_hits == 1 and found.values == 1.0
    assert relevance("把音量调到百分之三十。", VOLUME).values == 1.0
    assert relevance("给我讲个笑话。", WEATHER).hits == 0
    order = _tool("uber.eat.order", "Place an order for food delivery.", {"restaurant": {"type": "string"}},
                  ["restaurant"])
    assert relevance("我想在肯德基买10个汉堡", order).evident  # 买 "buy": the 0.5B model answered in words
    workspace = _tool("create_workspace", "Create a workspace.", {"name": {"type": "string"}}, ["name"])
    assert relevance("我想创建一个新的工作空间，名字叫做 'DevelopersHub'", workspace).name_hits == 2  # not start_oncall


def test_the_weathers_own_words_name_the_weather_in_english_too() -> None:
    for said in ("Will it rain in Berlin today?", "Is it sunny in Lisbon?", "What's the temperature in Madrid?"):
        found = relevance(said, WEATHER)
        assert found.name_hits == 1 and found.values == 1.0, said
    assert relevance("Is the coffee hot?", WEATHER).hits == 0  # a word of other senses is not glossed


def test_a_phrase_that_asks_about_the_weather_names_it_only_with_a_name_said() -> None:
    for said in ("Is it cold in Moscow?", "How hot is it in Cairo?", "Do I need an umbrella in Seattle?",
                 "Should I bring a jacket in San Francisco?", "北京冷不冷？"):
        assert relevance(said, WEATHER).evident, said
    for said in ("How cold is space?", "How hot is the surface of the sun?", "What is an umbrella term?"):
        found = relevance(said, WEATHER)
        assert not found.evident and found.hits == 1, said  # not evident, but not unrelated either


CALCULATOR = _tool("calculator", "Calculate a op b.", {"op": {"type": "string", "enum": ["add", "sub", "mul", "div"]},
                                                     "a": {"type": "number"}, "b": {"type": "number"}},
                   ["op", "a", "b"])


def test_a_named_choice_with_every_value_held_is_evident_without_the_tools_name() -> None:
    assert relevance("Add 15 and 27.", CALCULATOR).evident
    assert relevance("What is 12 times 8?", CALCULATOR).evident  # "times" is glossed "mul"
    assert relevance("12乘以8等于多少？", CALCULATOR).evident
    assert not relevance("Add milk to the list.", CALCULATOR).evident  # no numbers: values missing
    assert not relevance("What is 12 and 8?", CALCULATOR).evident  # no choice named


def test_a_numeric_or_enum_parameter_needs_its_value_said() -> None:
    assert relevance("Volume up.", VOLUME).values == 0.0
    assert relevance("Volume 30.", VOLUME).values == 1.0
    assert relevance("Volume thirty.", VOLUME).values == 1.0
    assert relevance("Convert this length.", UNITS).values == 0.0
    assert relevance("Convert 3 metres to a length in feet.", UNITS).values == 1.0
    timer = Tool("set_timer", "Set a timer.", {"type": "object", "properties": {"minutes": {"type": "integer"}},
                                               "required": ["minutes"]})
    assert relevance("Set a timer for an hour.", timer).evident  # a length of time holds a count of minutes
    assert not relevance("Volume up for an hour.", VOLUME).evident  # but no level


def test_most_relevant_keeps_the_best_in_declared_order() -> None:
    fillers = [_tool(f"tool_{n}", "Does something else.", {}, []) for n in range(6)]
    tools = [WEATHER, *fillers, VOLUME]
    assert most_relevant("Set the volume to 30.", tools, 1) == [VOLUME]
    assert most_relevant("Volume 30, and the weather in Oslo", tools, 2) == [WEATHER, VOLUME]
    assert most_relevant("Volume 30.", tools, 2) == [WEATHER, VOLUME]  # a tie keeps the earlier tool
    assert most_relevant("anything", tools, 8) == tools


def test_an_earlier_choice_is_kept_while_it_holds_what_the_request_names() -> None:
    tools = [WEATHER, VOLUME, UNITS]
    earlier = {"get_weather", "convert"}
    assert most_relevant("What about Paris?", tools, 2, keep=earlier) == [WEATHER, UNITS]  # no tool named: kept
    assert most_relevant("Weather in Paris?", tools, 2, keep=earlier) == [WEATHER, UNITS]  # the named one is in it
    assert most_relevant("Set the volume to 30.", tools, 2, keep=earlier) == [WEATHER, VOLUME]  # not: chosen anew
    assert most_relevant("Weather in Paris?", tools, 2, keep={"get_weather"}) == [WEATHER, VOLUME]  # too few kept


def test_the_fields_of_an_object_parameter_relate_a_request_to_its_tool() -> None:
    fields = {"mode": {"type": "string", "description": "The job mode of the air conditioner."},
              "target_temperature": {"type": "integer"}}
    appliance = Tool(name="ThinQ_Connect", description="Sends a command to an appliance.", parameters={
        "type": "object", "required": ["body"],
        "properties": {"body": {"type": "object", "properties": fields}}})
    batch = Tool(name="send_batch", description="Sends commands.", parameters={
        "type": "object", "properties": {"items": {"type": "array", "items": {"type": "object",
                                                                              "properties": fields}}}})
    said = "Set my air conditioner to 22 degrees."
    assert relevance(said, appliance).hits >= 2 and relevance(said, batch).hits >= 2  # "air", "conditioner"
    assert relevance("Play some jazz.", appliance).hits == 0


def test_a_code_said_as_the_identifier_a_tool_requires_makes_it_evident() -> None:
    stock = _tool("inventory_management", "Checks a product's availability.",
                  {"product_id": {"type": "string"}, "sizes": {"type": "array"}}, ["product_id"])
    assert relevance("When will size 40 be ready with id 12345-67890?", stock).evident
    assert not relevance("When will size 40 be ready?", stock).evident  # no identifier said
    assert not relevance("When will it be ready with id 12345-67890?", WEATHER).evident  # no identifier required


def test_tools_named_by_the_same_words_vie_and_the_better_described_wins() -> None:
    postgres = _tool("add_postgres_server", "Add a PostgreSQL server.", {"host": {"type": "string"}}, ["host"])
    rds = _tool("add_mtnards_server", "Add an MTNA Rich Data Services server.", {"api_key": {"type": "string"}},
                ["api_key"])
    assert unrivalled("Add a new Rich Data Services server, API key 1234", [postgres, rds]) == [rds]
    assert unrivalled("Add a new PostgreSQL server at example.org", [postgres, rds]) == [postgres]
    timer = _tool("set_timer", "Set a timer.", {"minutes": {"type": "integer"}}, ["minutes"])
    said = "Set a timer for 5 minutes and get the weather in Oslo"
    assert unrivalled(said, [timer, WEATHER]) == [timer, WEATHER]  # named by other words: each may be asked for
    stock = _tool("inventory_management", "Checks a product's availability.", {"product_id": {"type": "string"}},
                  ["product_id"])
    order = _tool("order_status_check", "The status of an order.", {"order_id": {"type": "string"}}, ["order_id"])
    said = "What is the status of my order, id 12345-67890?"
    assert relevance(said, stock).evident and relevance(said, order).evident
    assert unrivalled(said, [stock, order]) == [order]  # evident by the identifier alone: yields to the one named


def test_list_names_a_tool_whose_name_says_it() -> None:
    """"list" is a stop word (no value, no evidence of another tool), but it names ``list_servers``: the MTNA tool,
    better described, was called for "I need to see all the MTNA servers we have. Could you fetch that list?"."""
    servers = _tool("list_servers", "List the servers of the environment.", {"type": {"type": "string"}}, [])
    rds = _tool("add_mtnards_server", "Add an MTNA Rich Data Services (RDS) server.",
                {"host": {"type": "string"}}, [])
    said = "I need to see all the MTNA servers we have. Could you fetch that list for me?"
    assert relevance(said, servers).named == {"list", "server"}
    assert unrivalled(said, [servers, rds]) == [servers]
    assert unrivalled("Add an MTNA Rich Data Services server", [servers, rds]) == [rds]
    assert "list" not in words(said)  # still no content word: no value, no other tool's evidence


def test_a_parameter_whose_schema_is_no_object_is_weighed_without_failing() -> None:
    """JSON Schema allows ``true`` for a property: a client's tool so declared is no identifier, and no error."""
    item = Tool("get_item", "Get an item.",
                {"type": "object", "properties": {"item_id": True}, "required": ["item_id"]})
    assert not relevance("Get the item with id 12345", item).identified
    assert relevance("Get the item with id 12345", item).evident  # "item" named, the value held
