"""format_grammar: for each model family's tool format, llama.cpp parses the grammar, and what it admits is what
FormatCallStream reads back as the same calls."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import pytest

from tests.llm.local.test_grammar import ALL, EXAMPLES
from voxcall.llm.local.grammar import format_grammar
from voxcall.tools import Tool
from voxcall.tools.codecalls.format_stream import parse_format_calls
from voxcall.tools.codecalls.formats import FORMATS, ToolFormat

if TYPE_CHECKING:
    from tests.llm.local.gbnf import GrammarChecker


def gemma(value: Any) -> str:
    if isinstance(value, str):
        return f"<escape>{value}<escape>"
    if isinstance(value, list):
        return "[" + ",".join(gemma(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ",".join(f"{k}:{gemma(v)}" for k, v in value.items()) + "}"
    return json.dumps(value)


def written(tool_format: ToolFormat, subject: Tool, arguments: dict[str, Any]) -> str:
    """A call as the format writes it after its opener: arguments required first, then in schema order."""
    order = [*subject.required, *(p for p in subject.properties if p not in subject.required)]
    ordered = {p: arguments[p] for p in order if p in arguments}
    if tool_format.body == "gemma":
        return f"call:{subject.name}{gemma(ordered)}{tool_format.closer}"
    call = json.dumps({"name": subject.name, tool_format.arguments[0]: ordered}, ensure_ascii=False)
    return f"\n{call}\n{tool_format.closer}" if tool_format.closer else call


@pytest.mark.parametrize("tool_format", FORMATS, ids=[f.name for f in FORMATS])
def test_llama_cpp_parses_the_grammar_of_every_format(checker: GrammarChecker, tool_format: ToolFormat) -> None:
    for chosen in [[t] for t in ALL] + [ALL]:
        assert checker.parses(format_grammar(chosen, tool_format)), (tool_format.name, chosen[0].name)


@pytest.mark.parametrize("tool_format", FORMATS, ids=[f.name for f in FORMATS])
@pytest.mark.parametrize(("subject", "arguments"), EXAMPLES)
def test_admitted_calls_parse_back(checker: GrammarChecker, tool_format: ToolFormat, subject: Tool,
                                   arguments: dict[str, Any]) -> None:
    if tool_format.body == "gemma" and any(isinstance(v, dict) and not v for v in arguments.values()):
        pytest.skip("FunctionGemma has no empty-object example")
    text = written(tool_format, subject, arguments)
    assert checker.accepts(format_grammar(ALL, tool_format), text), text
    parsed = parse_format_calls(tool_format.opener + text, tool_format, ALL)
    assert [(c.name, c.arguments) for c in parsed.calls] == [(subject.name, arguments)], parsed.rejected
    assert parsed.text == ""


@pytest.mark.parametrize(("tool_format", "text"), [
    (FORMATS[1], '\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>\n<tool_call>\n'
                 '{"name": "stop_music", "arguments": {}}\n</tool_call>'),
    (FORMATS[2], '[{"name": "get_weather", "arguments": {"city": "Paris"}}, '
                 '{"name": "calculator", "arguments": {"op": "add", "a": 1, "b": 2.5}}]'),
    (FORMATS[3], '{"name": "get_weather", "parameters": {"city": "Paris", "unit": "c"}}'),
    (FORMATS[0], "call:get_weather{city:<escape>Paris<escape>}<end_function_call><start_function_call>"
                 "call:stop_music{}<end_function_call>"),
])
def test_recorded_replies_are_admitted(checker: GrammarChecker, tool_format: ToolFormat, text: str) -> None:
    assert checker.accepts(format_grammar(ALL, tool_format), text)


@pytest.mark.parametrize(("tool_format", "text"), [
    (FORMATS[1], '\n{"name": "get_wether", "arguments": {"city": "Paris"}}\n</tool_call>'),  # unknown tool
    (FORMATS[1], '\n{"name": "get_weather", "arguments": {}}\n</tool_call>'),  # a required argument missing
    (FORMATS[1], '\n{"name": "calculator", "arguments": {"op": "pow", "a": 1, "b": 2}}\n</tool_call>'),  # enum
    (FORMATS[2], '[{"name": "send-mail", "arguments": {"from": "a", "user-id": 1.5}}]'),  # not an integer
    (FORMATS[3], '{"name": "get_weather", "arguments": {"city": "Paris"}}'),  # Llama's key is "parameters"
    (FORMATS[0], "call:get_weather{city:Paris}<end_function_call>"),  # a string needs <escape>
    (FORMATS[1], 'Sure! \n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'),  # words
])
def test_malformed_calls_are_refused(checker: GrammarChecker, tool_format: ToolFormat, text: str) -> None:
    assert not checker.accepts(format_grammar(ALL, tool_format), text)


def test_no_tools_is_an_error() -> None:
    with pytest.raises(ValueError, match="at least one tool"):
        format_grammar([], FORMATS[1])

