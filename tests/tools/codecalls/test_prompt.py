"""render_tools_prompt and format_code_call: the rules the model is given, and calls rendered the way it writes them."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.tools.codecalls.conftest import CALCULATOR, SEND, WEATHER
from voxcall.tools import Tool
from voxcall.tools.codecalls import format_code_call, parse_code_calls, render_tools_prompt


@pytest.mark.parametrize("voice", [True, False])
def test_prompt_lists_every_tool_and_the_rules(tools: list[Tool], voice: bool) -> None:
    prompt = render_tools_prompt(tools, voice=voice)
    for tool in tools:
        assert f"def {tool.code_name}(" in prompt
    assert "<code>" in prompt and "</code>" in prompt
    assert "named arguments only" in prompt
    assert "quote strings" in prompt
    assert "placeholders" in prompt and '"random"' in prompt and "null" in prompt
    assert "Never state a result before it arrives" in prompt
    assert "own <code></code> block" in prompt


@pytest.mark.parametrize("voice", [True, False])
def test_the_rules_come_before_the_tools_so_every_tool_set_shares_them(tools: list[Tool], voice: bool) -> None:
    """The rules are the same for every session of a mode: ahead of the stubs, they are a prefix that a new
    session's tools prompt shares with every other (the engine reuses it), and only the stubs and the example (a
    call of the first tool) are new."""
    one, other = render_tools_prompt(tools[:1], voice=voice), render_tools_prompt(tools[1:], voice=voice)
    head = one[:next(i for i, (a, b) in enumerate(zip(one, other, strict=False)) if a != b)]
    assert head.endswith("The functions:\n\ndef ") and "Never state a result" in head


def test_voice_and_text_variants_differ_on_preamble(tools: list[Tool]) -> None:
    voice = render_tools_prompt(tools, voice=True)
    text = render_tools_prompt(tools, voice=False)
    assert "spoken aloud" in voice and "one short sentence" in voice
    assert "no preamble" in text and "spoken aloud" not in text


def test_prompt_example_is_a_call_the_parser_accepts(tools: list[Tool]) -> None:
    prompt = render_tools_prompt(tools, voice=False)
    example = next(line for line in prompt.splitlines() if line.startswith("<code>"))
    result = parse_code_calls(example, tools)
    assert len(result.calls) == 1 and result.rejected == []


def test_tool_choice_forms(tools: list[Tool]) -> None:
    assert render_tools_prompt(tools, voice=False, tool_choice="none") == ""
    assert render_tools_prompt([], voice=True) == ""
    assert "must call a tool" in render_tools_prompt(tools, voice=False, tool_choice="required")
    assert "must call a tool" not in render_tools_prompt(tools, voice=False, tool_choice="auto")
    forced = render_tools_prompt(tools, voice=False, tool_choice={"type": "function", "name": "calculator"})
    assert "You must call calculator" in forced
    assert "def calculator(" in forced and "def get_weather(" not in forced
    nested = render_tools_prompt(tools, voice=False,
                                 tool_choice={"type": "function", "function": {"name": "calculator"}})
    assert nested == forced


@pytest.mark.parametrize("choice", ["sometimes", {"type": "function", "name": "nope"}, {"type": "function"}])
def test_bad_tool_choice_raises(tools: list[Tool], choice: Any) -> None:
    with pytest.raises(ValueError):
        render_tools_prompt(tools, voice=False, tool_choice=choice)


def test_format_code_call_uses_aliases_and_python_literals() -> None:
    text = format_code_call(SEND, {"from": "ann", "user-id": 3, "meta": {"ok": True, "n": None}})
    assert text == "<code>send_mail(from_='ann', user_id=3, meta={'ok': True, 'n': None})</code>"


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3), max_leaves=8)


@settings(max_examples=200, deadline=None)
@given(city=st.text(), meta=json_values)
def test_format_then_parse_round_trips(city: str, meta: Any) -> None:
    free = Tool("log", "", {"type": "object", "properties": {"city": {"type": "string"}, "meta": {}},
                            "required": ["city"]})
    arguments = {"city": city, "meta": meta}
    result = parse_code_calls("Ok. " + format_code_call(free, arguments) + " Done.", [free])
    assert result.rejected == []
    assert result.calls[0].arguments == arguments
    assert result.text == "Ok.  Done."


def test_round_trip_through_real_tools() -> None:
    for tool, args in [(WEATHER, {"city": "São Paulo", "unit": "f"}), (CALCULATOR, {"op": "div", "a": -1, "b": 2.5})]:
        assert parse_code_calls(format_code_call(tool, args), [tool]).calls[0].arguments == args
