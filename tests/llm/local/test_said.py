"""Said: the spans of the user's words, the strings a tool's plain string arguments may be, and whether the words
hold every value a call of a tool must copy."""

from __future__ import annotations

from typing import Any

import pytest

from voxcall.llm.local.said import MAX_SPAN_WORDS, Said, spans
from voxcall.tools import Tool


def tool(name: str, properties: dict[str, Any], required: list[str]) -> Tool:
    return Tool(name, "", {"type": "object", "properties": properties, "required": required})


WEATHER = tool("get_weather", {"city": {"type": "string"},
                               "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}}, ["city"])
TIMER = tool("set_timer", {"minutes": {"type": "number"}}, ["minutes"])
MUSIC = tool("play_music", {"query": {"type": "string"}}, ["query"])
FORECAST = tool("get_forecast", {"city": {"type": "string"}, "day": {"type": "string", "description": "Which day."}},
                ["city", "day"])
DATED = tool("book_flight", {"date": {"type": "string", "description": "The date, in the format YYYY-MM-DD."},
                             "seat": {"type": "string", "enum": ["aisle", "window"]}}, ["date", "seat"])


def test_spans_are_runs_of_the_words_said_without_edge_punctuation() -> None:
    found = spans("Weather in New York, please!")
    assert {"Weather", "New York", "Weather in New York", "York"} <= set(found)
    assert "York," not in found and "please!" not in found and len(found) == len(set(found))
    # no span begins or ends with a joining word: no value does ("in New York", "New York, please", "Can")
    assert not {"in New York", "New York, please", "please", "in"} & set(found)
    assert set(spans("Can you book The Beatles for May")) >= {"The Beatles", "May", "book The Beatles"}
    assert not {"Can", "you book", "Beatles for"} & set(spans("Can you book The Beatles for May"))


def test_no_span_ends_with_an_article_or_keeps_a_quote_mark_at_its_ends() -> None:
    """BFCL's "news about `Son's latest goal` in the Sports category": the 0.5B model wrote "latest goal` in the"."""
    found = spans("Find news about `Son's latest goal` in the Sports category")
    assert "Son's latest goal" in found and "the Sports category" in found
    assert not [span for span in found if span.endswith((" the", "`"))]
    assert "Vitamin A" in spans("Tell me about Vitamin A")  # a capital letter is no article


def test_an_escaped_line_break_parts_words_and_emphasis_marks_are_no_part_of_a_span() -> None:
    """Text escaped twice ("question:\\n\\n**Logistic ...**"): the answer it holds is a span, and a Windows path's
    letters stay together."""
    said = r"Here is the answer:\n\n**Logistic regression is not in the text, so I cannot answer.**"
    assert "Logistic regression is not in the text, so I cannot answer" in spans(said)
    assert not [span for span in spans(said) if "\\n" in span or span.startswith("*") or span.endswith("*")]
    assert r"C:\new_folder\notes.txt" in spans(r"open C:\new_folder\notes.txt now")
    # a break after another parts the word it is glued to; a text whose every backslash opens a break is a list
    assert "The text does not define regression" in spans(r"The answer:\n\nThe text does not define regression.")
    listed = spans(r"classify these sentences\nlink my account\nconnect my accounts\nhello")
    assert {"link my account", "connect my accounts", "hello"} <= set(listed)
    assert not [span for span in listed if "\\" in span]
    assert r"C:\notes\new" in spans(r"open C:\notes\new now")  # one break and another backslash: a path
    beside = spans(r"C:\notes\new holds two logos.\nGreen circle logo.")  # a break after a sentence's end
    assert {r"C:\notes\new", "Green circle logo"} <= set(beside)


def test_a_phrase_in_quotes_is_a_span_whatever_is_glued_to_it() -> None:
    """A quoted phrase is the value as the user wants it written, also where a Korean particle is glued to its
    closing quote; an apostrophe inside a word opens no quote."""
    said = "인터넷에서 '임진왜란'이라는 키워드로 검색해 주세요."
    assert "임진왜란" in spans(said)
    assert "임진왜란" not in spans("인터넷에서 임진왜란이라는 키워드로 검색해 주세요.")
    assert "Son's latest goal" in spans("news about `Son's latest goal` in sports")
    assert "s book, and Tom" not in spans("Ann's book, and Tom's pen")


def test_a_span_ends_where_its_quotes_do() -> None:
    """"nickname it 'X', use 'http://plga.ca' as the host": the 0.5B model wrote the nickname "X', use
    'http://plga.ca' as the host, and the standard port 5432"; a span may hold quotes whole, between words of its
    own, and a plural's apostrophe is no quote."""
    found = spans("I'd like to nickname it 'X', use 'http://plga.ca' as the host, and the standard port 5432.")
    assert {"X", "http://plga.ca", "nickname it 'X', use 'http://plga.ca' as the host"} <= set(found)
    assert not [span for span in found if span.startswith(("X'", "http://plga.ca'")) or span.endswith("use 'X")]
    message = spans("Send a 'Happy Birthday!' message to Bob")
    assert "Happy Birthday" in message and "a 'Happy Birthday!' message" in message
    assert not [span for span in message if span.startswith(("Happy Birthday!'", "Birthday!'"))]
    assert "the Beatles' songs" in spans("Search the Beatles' songs")


def test_no_span_runs_on_past_the_end_of_a_question() -> None:
    """The 0.5B model wrote ``user_id='project is "Adriel" working on? exclude any that'``."""
    found = spans('What\'s project is "Adriel" working on? exclude any that are completed?')
    assert "Adriel" in found and "exclude any that are completed" in found
    assert not [span for span in found if "? " in span]
    assert "Are you coming? I'm outside" in spans('Text Anna "Are you coming? I\'m outside"')  # a quote is whole


@pytest.mark.parametrize(("said", "whole", "part"), [
    ("Weather in Naples, Florida?", "Naples, Florida", "Naples"),  # a qualified name is said whole
    ("I'm at London, UK in fahrenheit", "London, UK", "London"),
    ("I'm at Riga, Latvia, Can you tell me", "Riga, Latvia", "Riga"),  # "Can" begins a new clause
])
def test_a_name_a_qualifier_follows_is_no_span_alone(said: str, whole: str, part: str) -> None:
    assert whole in spans(said) and part not in spans(said)


def test_chinese_spans_are_runs_of_characters_that_no_joining_word_begins_or_ends() -> None:
    found = set(spans("打开厨房的灯。"))
    assert {"厨房", "灯", "打开厨房"} <= found
    assert not {"厨房的", "的灯", "打开厨房的灯。"} & found  # 的 joins; punctuation is no part of a value
    assert "爵士乐" in spans("播放一些爵士乐。")
    assert "Take Five" in spans("播放Take Five吧")  # the English words stay whole, with their space


def test_no_span_cuts_a_word_the_lexicon_knows() -> None:
    assert "天" not in spans("天气怎么样？") and "么样" not in spans("天气怎么样？")  # 天气, 怎么样
    assert {"天气", "怎么样", "北京"} <= set(spans("北京的天气怎么样？"))
    assert "爵士乐" in spans("播放一些爵士乐。") and "些爵士乐" not in spans("播放一些爵士乐。")  # 一些, "some"


def test_a_listed_name_stays_a_span() -> None:
    assert {"Oslo", "Rome", "Madrid"} <= set(spans("Weather in Oslo, Rome and Madrid"))
    longer = [s for s in spans(" ".join(["w"] * 20) + ". x") if len(s.split()) > MAX_SPAN_WORDS]
    assert longer and all(s.endswith("w") and "x" not in s for s in longer)  # only to the end of the sentence


def test_a_longer_span_runs_to_the_end_of_its_sentence() -> None:
    said = "Text Maria saying the train is stuck near the bridge so dinner will wait an hour. Thanks!"
    message = "the train is stuck near the bridge so dinner will wait an hour"
    assert len(message.split()) > MAX_SPAN_WORDS and message in spans(said)
    assert "the train is stuck near the bridge so dinner will" not in spans(said)  # ends mid-sentence
    assert "the bridge. Thanks" not in spans(said)  # runs over the sentence's end
    clause = "call the dentist about moving my appointment to Thursday afternoon"
    assert clause in spans(f"Remind me to {clause}; it is urgent.")
    question = "是否可以把会议改到下周四下午三点钟在第二会议室"  # 22 characters, each a word
    assert question in spans(f"请告诉张经理：{question}。谢谢")


def test_a_plain_string_is_a_span_with_a_content_word_that_neither_chooses_nor_names_the_tool() -> None:
    strings = Said("What's the weather in Paris?").strings(WEATHER)
    assert "Paris" in strings and not {"What's", "the", "weather", "the weather"} & set(strings)
    assert "Celsius" not in Said("The weather in Moscow in Celsius").strings(WEATHER)  # a choice, not a city
    assert "the weather" in spans("What's the weather?") and Said("What's the weather?").strings(WEATHER) == []
    assert "Play" not in Said("Play some jazz").strings(MUSIC)  # it only names the tool
    assert "jazz" in Said("Play some jazz").strings(MUSIC)
    assert Said("打开厨房的灯").strings(tool("set_lights", {"room": {"type": "string"}}, ["room"])) != []
    assert Said("天气怎么样？").strings(WEATHER) == []  # the weather named, and words that ask
    assert set(Said("上海天气怎么样？").strings(WEATHER)) == {"上海", "上", "海"}  # a name no table knows: any part
    assert Said("Is it going to be hot tomorrow?").strings(WEATHER) == []  # a word of a phrase that asks it
    assert "outside" not in Said("How's it looking outside in Chicago?").strings(WEATHER)


def test_a_time_is_a_value_only_of_a_tool_that_takes_one() -> None:
    assert Said("What will the weather be tomorrow?").strings(WEATHER) == []  # no city is "tomorrow"
    assert Said("明天天气怎么样？").strings(WEATHER) == []
    assert "tomorrow" in Said("The forecast for Oslo tomorrow").strings(FORECAST)  # a day is
    assert "Oslo" in Said("The weather in Oslo tomorrow").strings(WEATHER)
    assert "Yesterday" in Said("Play the song Yesterday.").strings(MUSIC)  # capitalised: a name


@pytest.mark.parametrize(("request_text", "held", "not_held"), [
    ("What's the weather?", [MUSIC.name], [WEATHER.name, TIMER.name]),  # the weather named, no city said
    ("What's the weather like?", [], [WEATHER.name]),  # "like" is no city
    ("Can you play something for me?", [], [MUSIC.name]),  # nor is "something" a query
    ("Set a timer.", [MUSIC.name], [TIMER.name]),  # no number said
    ("天气怎么样？", [], [WEATHER.name]),
    ("设一个计时器。", [], [TIMER.name]),  # 一个 is "a", no number
    ("What will the weather be tomorrow?", [], [WEATHER.name]),
    ("What's the weather in Oslo?", [WEATHER.name], [TIMER.name]),
    ("Set a timer for five minutes.", [TIMER.name], []),
    ("Book me a flight for March 1st, window seat", [DATED.name], []),  # a form is the model's to write
])
def test_a_tool_is_held_when_the_words_hold_every_value_a_call_copies(
        request_text: str, held: list[str], not_held: list[str]) -> None:
    said = Said(request_text)
    tools = {t.name: t for t in (WEATHER, TIMER, MUSIC, DATED)}
    assert all(said.holds(tools[name]) for name in held)
    assert not any(said.holds(tools[name]) for name in not_held)


def test_an_address_is_held_only_where_one_is_said() -> None:
    fetch = Tool("requests_get", "Send a GET request.", {"type": "object", "required": ["url"],
                                                         "properties": {"url": {"type": "string"}}})
    assert Said("Get https://api.example.com/v1/data for me").holds(fetch)
    assert Said("Fetch the report of paypal.com").holds(fetch) and Said("Query 192.168.1.1 now").holds(fetch)
    assert Said("I want to see last year's stock prices").missing(fetch) == ["url"]


def test_a_length_of_time_holds_a_count_of_its_unit() -> None:
    assert Said("Ping me in half an hour.").holds(TIMER) and Said("一个小时后提醒我").holds(TIMER)
    assert Said("Set a timer for two hours.").numbers_for("minutes", TIMER.properties["minutes"]) == [120]
    assert not Said("Set a timer for a while.").holds(TIMER)


def test_a_number_a_word_implies_is_a_number_said() -> None:
    """"Double 37" is 37 times 2: a call of a calculator may carry the 2, which no word of the request spells."""
    assert Said("Double 37 for me.").numbers == [37, 2]
    assert Said("What is half of ninety?").numbers == [90, 2]
    assert Said("A double room for 3 nights.").numbers == [3]  # "double" before a word says no number


def test_every_tool_is_held_when_nothing_was_said_or_nothing_is_copied() -> None:
    assert Said("").holds(WEATHER) and Said("").holds(TIMER)  # strings not copied: the planner passes no words
    no_values = tool("stop_music", {}, [])
    assert Said("Stop it.").holds(no_values)


@pytest.mark.parametrize(("said", "name", "schema", "gives"), [
    ("Switch the air conditioner to air dry mode", "targetTemperature", {"type": "integer"}, False),
    ("Set it to cool mode at 24 degrees", "targetTemperature", {"type": "integer"}, True),
    ("Set a timer for two hours", "minutes", {"type": "integer"}, True),  # a length of time in its unit
    ("set it to 'AIR_CLEAN' mode, with monitoring", "monitoringEnabled", {"type": "boolean"}, True),
    ("Switch the air conditioner to air dry mode", "powerSaveEnabled", {"type": "boolean"}, False),
    ("Close the project and make sure it's archived", "archive", {"type": "boolean"}, True),  # in another form
    ("Switch the air conditioner to air dry mode", "note", {"type": "string"}, True),  # a string: the model's
    ("Switch the air conditioner to air dry mode", "speed", {"type": "integer", "enum": [1, 2]}, True),
    ("The weather in Seoul, South Korea in Celsius", "api_key", {"type": "string"}, False),  # never invented
    ("Get me the report, my API key is RST495", "api_key", {"type": "string"}, True),
    ("The temperature in Boston, MA", "url", {"type": "string"}, False),  # no address said
    ("Fetch https://example.org/feed for me", "url", {"type": "string"}, True),
])
def test_an_optional_number_or_flag_is_given_only_by_words_for_it(said: str, name: str, schema: dict[str, Any],
                                                                   gives: bool) -> None:
    assert Said(said).gives(name, schema) is gives


@pytest.mark.parametrize(("said", "name", "sets"), [
    ("Show me all the .sav files, including any hidden ones?", "include_hidden", True),
    ("Set it to cool mode, with monitoring", "monitoringEnabled", True),  # "enabled" says it is a flag
    ("Buy a house with three bedrooms. It must have a garage.", "has_garage", True),
    ("Rent a home in Austin. I don't care about the garage.", "has_garage", False),  # negated
    ("Which projects is Adriel on? Exclude any that are completed.", "include_completed", False),
    ("Show me the files, including the ones in subfolders", "include_hidden", False),  # not every word said
    ("I made a purchase in California, how much tax?", "tax_exempt", False),
    ("Search for a 3-star hotel in New York City that allows smoking", "smoking_allowed", True),  # a verb's forms
    ("Find a hotel in Kuala Lumpur; I don't care whether smoking is allowed", "smoking_allowed", False),
])
def test_a_flag_is_set_by_a_sentence_that_says_its_name_unnegated(said: str, name: str, sets: bool) -> None:
    assert Said(said).sets(name, {"type": "boolean"}) is sets
    assert Said(said).passes(name, {"type": "boolean"}) is sets
    assert not Said(said).sets(name, {"type": "string"})


def test_numbers_are_given_as_often_as_said() -> None:
    double = Said("Double 37 for me.")
    assert double.each_as_said([[37, 2], [37, 2]]) == [(37, 2), (2, 37)]
    assert Said("What is 5 times 5?").each_as_said([[5], [5]]) == [(5, 5)]
    assert Said("Make both sides 10").each_as_said([[10], [10]]) == []
    # a length in another unit is no number said: not counted
    assert Said("Remind me in two hours, twice").each_as_said([[120], [120, 2]]) == [(120, 120), (120, 2)]


def test_numbers_are_given_in_the_order_said() -> None:
    """The 0.5B model wrote ``multiply(a=10, b=3)`` for "If each of my three friends gave me 10 euros"."""
    friends = Said("If each of my three friends gave me 10 euros, how much do I have?")
    assert friends.each_as_said([[3, 10], [3, 10]]) == [(3, 10)]
    assert Said("Subtract 9 from 30.").each_as_said([[9, 30], [9, 30]]) == [(9, 30), (30, 9)]  # "from": either
    rooms = Said("A room for 2 adults and 1 child, then one for 1 adult and 2 children.")
    assert (1, 2) in rooms.each_as_said([[2, 1], [2, 1]])  # a number said again stands later too
    assert Said("Double 37 for me.").each_as_said([[37, 2], [37, 2]]) == [(37, 2), (2, 37)]  # 2 is implied


@pytest.mark.parametrize(("words", "values", "named"), [
    ("Switch it to air dry mode", ["AIR_CLEAN", "AIR_DRY"], ["AIR_DRY"]),  # an underscore read as a space
    ("Show me the temperature in fahrenheit", ["celsius", "fahrenheit"], ["fahrenheit"]),
    ("List all PostgreSQL servers", ["all", "postgres", "graphql"], ["postgres"]),  # another form; "all" yields
    ("List all the servers", ["all", "postgres", "graphql"], ["all"]),  # a stop word named alone stands
    ("Sort them, reversed", ["reverse", "forward"], ["reverse"]),
    ("Play it loud", ["all", "postgres"], []),
    ("Show me all the text files", ["py", "txt", "md"], ["txt"]),  # an abbreviation drops vowels
    ("Find the contact", ["cat", "dog"], []),  # "cat" keeps a vowel: a word of its own, no abbreviation
    ("Play the python song", ["py", "txt"], []),  # two letters abbreviate too many words
])
def test_a_choice_is_named_as_spelled_spaced_or_in_another_form_and_a_stop_word_yields(
        words: str, values: list[str], named: list[str]) -> None:
    assert Said(words).choices(values) == named
