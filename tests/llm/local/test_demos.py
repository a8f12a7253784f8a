"""demo_messages: demonstration turns generated from tool schemas, never written per tool."""

from __future__ import annotations

from voxcall.llm import Message
from voxcall.llm.local.demos import PLAIN_DEMOS, demo_messages, demo_request
from voxcall.tools import Tool
from voxcall.tools.codecalls import parse_code_calls

WEATHER = Tool("get_weather", "Get the **weather** for a city. Uses a public service.",
               {"type": "object", "properties": {"city": {"type": "string", "examples": ["Oslo"]},
                                                 "unit": {"type": "string", "enum": ["c", "f"]}},
                "required": ["city"]})
LIGHTS = Tool("set_lights", "Turn the lights in a room on or off.",
              {"type": "object", "properties": {"room": {"type": "string", "enum": ["kitchen", "hall"]},
                                                "on": {"type": "boolean"}, "level": {"type": "integer",
                                                                                     "default": 70}},
               "required": ["room", "on", "level"]})
STOP = Tool("stop_music")
UNSATISFIABLE = Tool("pick", "Pick one.", {"type": "object", "properties": {"n": {"type": "integer",
                                                                                 "minimum": 5}},
                                           "required": ["n"]})


def test_request_is_the_description_then_the_values() -> None:
    assert demo_request(WEATHER, {"city": "Oslo"}) == "Get the weather for a city: Oslo."
    assert demo_request(LIGHTS, {"room": "kitchen", "on": True, "level": 70}) == \
        "Turn the lights in a room on or off: kitchen, on, 70."
    assert demo_request(STOP, {}) == "Stop music."


def test_each_tool_gets_a_request_and_a_call_the_parser_accepts() -> None:
    tools = [WEATHER, LIGHTS, STOP]
    messages = demo_messages(tools, with_plain=False)
    assert [m.role for m in messages] == ["user", "assistant"] * 3
    for tool, answer in zip(tools, messages[1::2], strict=True):
        [call] = parse_code_calls(answer.text, tools).calls
        assert call.name == tool.name
    assert "city='Oslo'" in messages[1].text and "room='kitchen', on=True, level=70" in messages[3].text


def test_plain_exchanges_are_interleaved_and_a_call_is_not_last() -> None:
    messages = demo_messages([WEATHER, LIGHTS, STOP], with_plain=True)
    plain = [message for request, answer in PLAIN_DEMOS
             for message in (Message(role="user", text=request), Message(role="assistant", text=answer))]
    assert [m for m in messages if m in plain] == plain
    assert messages[:2] == plain[:2] and messages[-2:] == plain[-2:]
    assert len(messages) == len(plain) + 6


def test_a_tool_whose_example_would_be_refused_gets_no_demonstration() -> None:
    assert demo_messages([UNSATISFIABLE], with_plain=False) == []


def test_follow_up_ends_with_the_last_calls_result_relayed() -> None:
    messages = demo_messages([WEATHER, LIGHTS, STOP], with_plain=True, with_follow_up=True)
    assert messages[-2:] == [Message(role="user", text="Result of stop_music: done"),
                             Message(role="assistant", text="Done.")]
    assert messages[-3].text == "<code>stop_music()</code>"
    assert [m.text for m in messages[:2]] == list(PLAIN_DEMOS[0])
    assert demo_messages([WEATHER], with_plain=False, with_follow_up=True) == demo_messages([WEATHER],
                                                                                          with_plain=False)
