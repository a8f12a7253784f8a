"""parse_code_calls: values, call forms, binding, validation and rejection reasons."""

from __future__ import annotations

from typing import Any

import pytest

from voxcall.tools import Tool
from voxcall.tools.codecalls import parse_code_calls


def one_call(text: str, tools: list[Tool]) -> dict[str, Any]:
    result = parse_code_calls(text, tools)
    assert not result.rejected, result.rejected
    assert len(result.calls) == 1, result.calls
    return result.calls[0].arguments


@pytest.mark.parametrize(("literal", "value"), [
    ("'single'", "single"),
    ('"double"', "double"),
    ("'''triple'''", "triple"),
    ('"""triple d"""', "triple d"),
    ("r'raw\\n'", "raw\\n"),
    ("'esc\\'aped\\n'", "esc'aped\n"),
    ("'\\u00e9t\\u00e9'", "été"),
    ("'日本'", "日本"),
    ("'a' 'b'", "ab"),
    ("f'plain'", "plain"),
])
def test_string_literals(tools: list[Tool], literal: str, value: str) -> None:
    assert one_call(f"<code>get_weather(city={literal})</code>", tools) == {"city": value}


@pytest.mark.parametrize(("literal", "value"), [
    ("3", 3), ("-3", -3), ("+3", 3), ("2.5", 2.5), ("-0.5", -0.5), ("1e3", 1000.0), ("0x10", 16),
])
def test_numbers(tools: list[Tool], literal: str, value: float) -> None:
    assert one_call(f"<code>calculator(op='add', a={literal}, b=0)</code>", tools)["a"] == value


def test_integral_float_for_integer_becomes_int(tools: list[Tool]) -> None:
    args = one_call("<code>set_timer(seconds=30.0)</code>", tools)
    assert args == {"seconds": 30}
    assert isinstance(args["seconds"], int)


@pytest.mark.parametrize(("literal", "value"), [
    ("True", True), ("False", False), ("true", True), ("false", False),
])
def test_booleans_python_and_json_style(literal: str, value: bool) -> None:
    tool = Tool("switch", "", {"type": "object", "properties": {"on": {"type": "boolean"}}, "required": ["on"]})
    assert one_call(f"<code>switch(on={literal})</code>", [tool]) == {"on": value}


@pytest.mark.parametrize("literal", ["None", "null"])
def test_null_accepted_where_schema_allows(literal: str) -> None:
    tool = Tool("f", "", {"type": "object", "properties": {"x": {"type": ["string", "null"]}}, "required": ["x"]})
    assert one_call(f"<code>f(x={literal})</code>", [tool]) == {"x": None}


def test_lists_tuples_dicts_nested(tools: list[Tool]) -> None:
    args = one_call("<code>send_mail(from_='me', tags=('a', 'b'), meta={'k': [1, {'n': None}], 'ok': true})"
                    "</code>", tools)
    assert args == {"from": "me", "tags": ["a", "b"], "meta": {"k": [1, {"n": None}], "ok": True}}


def test_keyword_and_non_identifier_names_map_back(tools: list[Tool]) -> None:
    result = parse_code_calls("<code>send_mail(from_='ann', user_id=7)</code>", tools)
    assert result.calls[0].name == "send-mail"
    assert result.calls[0].arguments == {"from": "ann", "user-id": 7}


def test_positional_arguments_bind_in_signature_order(tools: list[Tool]) -> None:
    assert one_call("<code>calculator('mul', 6, 7)</code>", tools) == {"op": "mul", "a": 6, "b": 7}
    # required parameters come first in the signature even when the schema lists an optional one first
    assert one_call("<code>set_timer(90, 'tea')</code>", tools) == {"seconds": 90, "label": "tea"}


def test_dotted_names_resolve(tools: list[Tool]) -> None:
    for text in ("<code>functions.get_weather(city='x')</code>", "<code>default_api.get_weather(city='x')</code>"):
        assert parse_code_calls(text, tools).calls[0].name == "get_weather"
    music = Tool("music_play", "", {"type": "object", "properties": {}})
    assert parse_code_calls("<code>music.play()</code>", [music]).calls[0].name == "music_play"


def test_several_calls_newlines_semicolons_and_list_form(tools: list[Tool]) -> None:
    text = ("<code>\n    get_weather(city='a')\n    get_weather(city='b'); calculator(op='add', a=1, b=2);\n"
            "[get_weather(city='c'), set_timer(seconds=5)]\n</code>")
    result = parse_code_calls(text, tools)
    assert [c.name for c in result.calls] == ["get_weather", "get_weather", "calculator", "get_weather",
                                              "set_timer"]
    assert result.rejected == []
    assert result.text == ""


def test_arguments_over_lines_with_trailing_comma_and_comments(tools: list[Tool]) -> None:
    text = "<code>get_weather(\n    city='Oslo',  # the capital\n    unit='c',\n)</code>"
    assert one_call(text, tools) == {"city": "Oslo", "unit": "c"}


def test_assignment_and_print_wrappers_are_tolerated(tools: list[Tool]) -> None:
    assert one_call("<code>w = get_weather(city='x')</code>", tools) == {"city": "x"}
    assert one_call("<code>print(get_weather(city='y'))</code>", tools) == {"city": "y"}


def test_python_fence_with_known_calls(tools: list[Tool]) -> None:
    result = parse_code_calls("Sure.\n```python\nget_weather(city='Rome')\n```\nDone.", tools)
    assert [c.arguments for c in result.calls] == [{"city": "Rome"}]
    assert result.text == "Sure.\n\nDone."


def test_other_fences_stay_text(tools: list[Tool]) -> None:
    text = "Code:\n```python\nprint('hi')\nx = 1\n```\nand\n```json\n{\"a\": 1}\n```\n"
    result = parse_code_calls(text, tools)
    assert result.calls == [] and result.rejected == []
    assert result.text == text


def test_string_contents_never_end_a_block_or_call(tools: list[Tool]) -> None:
    text = "<code>get_weather(city='a</code>b) \"c\\' ```')</code>after"
    result = parse_code_calls(text, tools)
    assert [c.arguments for c in result.calls] == [{"city": "a</code>b) \"c' ```"}]
    assert result.text == "after"


def test_unclosed_block_never_leaks(tools: list[Tool]) -> None:
    result = parse_code_calls("One moment. <code>get_weather(city='Par", tools)
    assert result.text == "One moment. "
    assert result.calls == []
    assert result.rejected[0].name == "get_weather"
    complete = parse_code_calls("<code>get_weather(city='Paris')", tools)
    assert [c.arguments for c in complete.calls] == [{"city": "Paris"}]


def test_stray_closer_and_partial_openers(tools: list[Tool]) -> None:
    assert parse_code_calls("a </code> b", tools).text == "a  b"
    assert parse_code_calls("x < y and `z` <co", tools).text == "x < y and `z` <co"
    assert parse_code_calls("see ```py", tools).text == "see "


def test_broken_quote_closes_block_at_the_visible_closer(tools: list[Tool]) -> None:
    result = parse_code_calls("<code>get_weather(city='it's')</code> Then more.\nNext line.", tools)
    assert result.calls == []
    assert result.rejected[0].name == "get_weather"
    assert result.text == " Then more.\nNext line."


def test_unknown_tool_suggests_closest(tools: list[Tool]) -> None:
    result = parse_code_calls("<code>get_wether(city='x')</code>", tools)
    assert result.rejected[0].name == "get_wether"
    assert "did you mean 'get_weather'" in result.rejected[0].reason
    other = parse_code_calls("<code>zzz()</code>", tools).rejected[0]
    assert "available tools" in other.reason and "calculator" in other.reason


@pytest.mark.parametrize(("call", "reason"), [
    ("get_weather()", "missing required argument: city"),
    ("get_weather(city=3)", "not of type 'string'"),
    ("get_weather(city='x', unit='k')", "is not one of"),
    ("get_weather(city=paris)", "quote strings"),
    ("get_weather(city=get_location())", "cannot be nested"),
    ("get_weather(city='a' + 'b')", "only literal values"),
    ("get_weather(*args)", "unpacking"),
    ("get_weather(**kw)", "unpacking"),
    ("get_weather('a', city='b')", "multiple values"),
    ("calculator('add', 1, 2, 3)", "takes 3 argument"),
    ("calculator(op='add', a=True, b=1)", "not of type 'number'"),
    ("get_weather(city=b'x')", "bytes"),
    ("get_weather(city='x'", "never closed"),
    ("x + 1", "only tool calls"),
    ("get_weather", "only tool calls"),
])
def test_bad_calls_rejected_with_reason(tools: list[Tool], call: str, reason: str) -> None:
    result = parse_code_calls(f"<code>{call}</code>", tools)
    assert result.calls == []
    assert len(result.rejected) == 1
    assert reason in result.rejected[0].reason
    assert result.text == ""


def test_bad_sibling_does_not_lose_good_calls(tools: list[Tool]) -> None:
    text = ("<code>get_weather(city='a')</code><code>get_weather(city=x)</code>"
            "<code>[calculator(op='pow', a=1, b=2), set_timer(seconds=3)]</code>")
    result = parse_code_calls(text, tools)
    assert [c.name for c in result.calls] == ["get_weather", "set_timer"]
    assert [r.name for r in result.rejected] == ["get_weather", "calculator"]


def test_unknown_arguments_dropped_with_warning(tools: list[Tool]) -> None:
    call = parse_code_calls("<code>get_weather(city='x', mood='sunny')</code>", tools).calls[0]
    assert call.arguments == {"city": "x"}
    assert any("mood" in w for w in call.warnings)


def test_null_for_optional_argument_is_dropped(tools: list[Tool]) -> None:
    call = parse_code_calls("<code>get_weather(city='x', unit=None)</code>", tools).calls[0]
    assert call.arguments == {"city": "x"}
    assert any("unit" in w for w in call.warnings)


def test_parser_never_evaluates(tools: list[Tool], tmp_path: Any) -> None:
    marker = tmp_path / "pwned"
    text = f"<code>get_weather(city=__import__('pathlib').Path({str(marker)!r}).touch())</code>"
    result = parse_code_calls(text, tools)
    assert not marker.exists()
    assert result.calls == [] and len(result.rejected) == 1


def test_deeply_nested_values_are_rejected_not_crashing(tools: list[Tool]) -> None:
    deep = "[" * 60 + "]" * 60
    result = parse_code_calls(f"<code>send_mail(from_='a', tags={deep})</code>", tools)
    assert result.calls == [] and len(result.rejected) == 1


def test_call_ids_are_fresh(tools: list[Tool]) -> None:
    calls = parse_code_calls("<code>get_weather(city='a')\nget_weather(city='a')</code>", tools).calls
    assert calls[0].call_id != calls[1].call_id
    assert all(c.call_id.startswith("call_") and len(c.call_id) == 29 for c in calls)


def test_unicode_names_are_aliased_the_way_python_reads_them() -> None:
    tool = Tool("note", "", {"type": "object", "properties": {"ﬁle": {"type": "string"}, "x²": {"type": "integer"}}})
    result = parse_code_calls("<code>note(file='a.txt', x2=4)</code>", [tool])
    assert result.calls[0].arguments == {"ﬁle": "a.txt", "x²": 4}
