"""FormatCallStream: each model family's own call syntax, read from recorded replies under every chunking, and the
properties CodeCallStream has (chunking invariance, no tool syntax in speech), property-tested for each format."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.tools.codecalls.conftest import ALL_TOOLS
from tests.tools.codecalls.test_stream import cut, normalise
from voxcall.tools import ToolCall
from voxcall.tools.codecalls import RejectedCall, TextDelta
from voxcall.tools.codecalls.format_stream import FormatCallStream, parse_format_calls
from voxcall.tools.codecalls.formats import FORMATS, ToolFormat, detect_format, format_named

HERMES, LLAMA3, MISTRAL, GEMMA = (format_named(n) for n in ("hermes", "llama3", "mistral", "functiongemma"))


def stream_chunks(tool_format: ToolFormat, chunks: list[str]) -> list[Any]:
    stream = FormatCallStream(tool_format, ALL_TOOLS)
    events: list[Any] = []
    for chunk in chunks:
        events += stream.feed(chunk)
    return events + stream.close()


def every_split(text: str) -> list[list[str]]:
    """The text whole, one character at a time, and cut in two at every point."""
    return [[text], list(text), *([text[:k], text[k:]] for k in range(1, len(text)))]


PARIS = ("call", "get_weather", {"city": "Paris"}, ())
TIMER30 = ("call", "set_timer", {"seconds": 30}, ())

# Replies as each family writes them (from the formats' public documentation and chat templates), and what they say.
RECORDED: list[tuple[ToolFormat, str, list[tuple[Any, ...]]]] = [
    (HERMES, '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>', [PARIS]),
    (HERMES, 'Let me check.\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>\n'
             '<tool_call>\n{"name": "set_timer", "arguments": {"seconds": 30}}\n</tool_call>',
     [("text", "Let me check.\n"), PARIS, ("text", "\n"), TIMER30]),
    (HERMES, '<tool_call>\n{"name": "get_weather", "arguments": {"city": "a</tool_call>b"}}\n</tool_call>',
     [("call", "get_weather", {"city": "a</tool_call>b"}, ())]),
    (HERMES, "It's sunny <3 in Paris.", [("text", "It's sunny <3 in Paris.")]),
    (HERMES, '<tool_call>\n{"name": "get_wether", "arguments": {"city": "Paris"}}\n</tool_call>',
     [("rejected", "get_wether", '{"name": "get_wether", "arguments": {"city": "Paris"}}',
       "unknown tool 'get_wether'; did you mean 'get_weather'?")]),
    (LLAMA3, '{"name": "get_weather", "parameters": {"city": "Paris"}}', [PARIS]),
    (LLAMA3, '<|python_tag|>{"name": "get_weather", "parameters": {"city": "Paris"}}', [PARIS]),
    (LLAMA3, 'The weather is {"mild"} today.', [("text", 'The weather is {"mild"} today.')]),
    (MISTRAL, '[TOOL_CALLS][{"name": "get_weather", "arguments": {"city": "Paris"}}, '
              '{"name": "set_timer", "arguments": {"seconds": 30}}]', [PARIS, TIMER30]),
    (MISTRAL, "See [1] and [TOOL] docs.", [("text", "See [1] and [TOOL] docs.")]),
    (GEMMA, "<start_function_call>call:get_weather{city:<escape>Paris<escape>}<end_function_call>", [PARIS]),
    (GEMMA, "<start_function_call>call:calculator{a:2,b:3.5,op:<escape>mul<escape>}<end_function_call>"
            "<start_function_call>call:set_timer{seconds:30}<end_function_call>",
     [("call", "calculator", {"op": "mul", "a": 2, "b": 3.5}, ()), TIMER30]),
    (GEMMA, "<start_function_call>call:get_weather{city:<escape>a,}<end_function_call>b<escape>}"
            "<end_function_call>", [("call", "get_weather", {"city": "a,}<end_function_call>b"}, ())]),
]


@pytest.mark.parametrize(("tool_format", "text", "expected"), RECORDED)
def test_recorded_replies_under_every_chunking(tool_format: ToolFormat, text: str,
                                               expected: list[tuple[Any, ...]]) -> None:
    for chunks in every_split(text):
        assert normalise(stream_chunks(tool_format, chunks)) == expected, chunks


def test_a_bad_call_is_rejected_and_its_sibling_survives() -> None:
    text = ('[TOOL_CALLS][{"name": "calculator", "arguments": {"op": "pow", "a": 1, "b": 2}}, '
            '{"name": "get_weather", "arguments": {"city": "Paris"}}]')
    result = parse_format_calls(text, MISTRAL, ALL_TOOLS)
    assert [c.name for c in result.calls] == ["get_weather"]
    assert len(result.rejected) == 1 and "calculator" in result.rejected[0].reason
    assert result.text == ""


def test_broken_json_is_rejected_with_the_name_it_gave() -> None:
    result = parse_format_calls('<tool_call>{"name": "get_weather", "arguments": {"city": }}</tool_call>',
                                HERMES, ALL_TOOLS)
    assert result.calls == [] and result.text == ""
    assert result.rejected[0].name == "get_weather" and "not valid JSON" in result.rejected[0].reason


def test_a_block_cut_off_by_the_end_of_the_stream_is_settled_not_spoken() -> None:
    stream = FormatCallStream(HERMES, ALL_TOOLS)
    assert normalise(stream.feed('Sure. <tool_call>{"name": "get_weather", "arguments": {"city": "Oslo"}}')) == [
        ("text", "Sure. ")]
    assert normalise(stream.close()) == [("call", "get_weather", {"city": "Oslo"}, ())]


def test_a_call_is_emitted_by_the_feed_that_completes_it() -> None:
    stream = FormatCallStream(MISTRAL, ALL_TOOLS)
    assert stream.feed('[TOOL_CALLS][{"name": "get_weather", "arguments": {"city": "Paris"}}') == []
    assert [type(e) for e in stream.feed("]")] == [ToolCall]


def test_text_is_released_at_once_holding_only_an_opener_prefix() -> None:
    stream = FormatCallStream(HERMES, ALL_TOOLS)
    assert stream.feed("Hello <tool_") == [TextDelta("Hello ")]
    assert stream.feed("box>") == [TextDelta("<tool_box>")]


@pytest.mark.parametrize(("template", "expected"), [
    ("{% for tool in tools %}{{ tool | tojson }}{% endfor %}<tool_call>\n{...}\n</tool_call>", "hermes"),
    ("<|start_header_id|>{{ 'Respond in the format {\"name\": function name, \"parameters\": …}' }}", "llama3"),
    ("{%- if message.tool_calls %}[TOOL_CALLS][{% endif %}", "mistral"),
    ("<start_function_declaration>…<start_function_call>", "functiongemma"),
    ("<|im_start|>{{ message['content'] }}<|im_end|>", None),
    (None, None),
])
def test_detect_format_from_the_template_text(template: str | None, expected: str | None) -> None:
    found = detect_format(template)
    assert (found.name if found else None) == expected


# -- properties, for each format -----------------------------------------------------------------------------

def call_blocks(tool_format: ToolFormat) -> list[str]:
    """Call blocks in ``tool_format``: good, misnamed, with markers inside strings, and cut short."""
    if tool_format.body == "gemma":
        bodies = ["call:get_weather{city:<escape>Paris<escape>}", "call:get_wether{city:<escape>x<escape>}",
                  "call:get_weather{city:<escape>a<end_function_call>}<escape>}", "call:set_timer{seconds:",
                  "call:calculator{a:1,b:0,op:<escape>div<escape>}"]
    else:
        key = tool_format.arguments[0]
        bodies = [f'{{"name": "get_weather", "{key}": {{"city": "Paris"}}}}',
                  f'{{"name": "get_wether", "{key}": {{"city": "x"}}}}',
                  f'{{"name": "get_weather", "{key}": {{"city": "a</tool_call>]}}\\"b"}}}}',
                  f'{{"name": "set_timer", "{key}": {{"seconds": ',
                  f'[{{"name": "set_timer", "{key}": {{"seconds": 1}}}}]']
    return [tool_format.opener + body + tool_format.closer for body in bodies]


PIECES = ["Hello there. ", "ok", " ", "\n", "<", "[", "{", "}", "]", '"', "\\", "<escape>", ":", ",", "call:",
          '"name"', "get_weather", "日本語", "\t"]


def texts_for(tool_format: ToolFormat) -> st.SearchStrategy[str]:
    markers = [*tool_format.openers, tool_format.closer, tool_format.closer[:4], tool_format.opener[:3]]
    pieces = [*PIECES, *markers, *call_blocks(tool_format)]
    return st.lists(st.one_of(st.sampled_from(pieces), st.text(max_size=6)), max_size=25).map("".join)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), tool_format=st.sampled_from(FORMATS),
       points=st.lists(st.integers(min_value=0, max_value=10_000), max_size=30))
def test_any_chunking_gives_the_same_events(data: st.DataObject, tool_format: ToolFormat,
                                           points: list[int]) -> None:
    text = data.draw(texts_for(tool_format))
    whole = normalise(stream_chunks(tool_format, [text]))
    assert normalise(stream_chunks(tool_format, cut(text, points))) == whole
    assert normalise(stream_chunks(tool_format, list(text))) == whole
    parsed = parse_format_calls(text, tool_format, ALL_TOOLS)
    assert "".join(e[1] for e in whole if e[0] == "text") == parsed.text
    assert [e[1:] for e in whole if e[0] == "call"] == [(c.name, c.arguments, tuple(c.warnings))
                                                      for c in parsed.calls]
    assert [e[1:] for e in whole if e[0] == "rejected"] == [(r.name, r.source, r.reason) for r in parsed.rejected]


def prose_for(tool_format: ToolFormat) -> st.SearchStrategy[str]:
    """Prose that holds no marker's first character (and, for a format opened by a reply's first character, does
    not begin a reply with it)."""
    banned = "".join({m[0] for m in (*tool_format.openers, tool_format.closer) if m} | set(tool_format.at_start))
    return st.text(alphabet=st.characters(blacklist_characters=banned, blacklist_categories=["Cs"]), max_size=20)


@settings(max_examples=150, deadline=None)
@given(data=st.data(), tool_format=st.sampled_from(FORMATS),
       points=st.lists(st.integers(min_value=0, max_value=10_000), max_size=20))
def test_tool_syntax_never_reaches_text(data: st.DataObject, tool_format: ToolFormat, points: list[int]) -> None:
    closed = [b for b in call_blocks(tool_format) if tool_format.closer or b.endswith(("}", "]"))]
    prose, blocks = prose_for(tool_format), st.sampled_from(closed)  # without a closer, a cut-off block ends a reply
    parts = data.draw(st.lists(st.tuples(prose, blocks), max_size=5))
    tail = data.draw(prose)
    text = "".join(p + b for p, b in parts) + tail
    events = stream_chunks(tool_format, cut(text, points))
    spoken = "".join(e.text for e in events if isinstance(e, TextDelta))
    assert spoken == "".join(p for p, _ in parts) + tail
    assert all(isinstance(e, TextDelta | ToolCall | RejectedCall) for e in events)
