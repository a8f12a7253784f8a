"""CodeCallStream: eager text, eager calls, and chunking invariance (property-tested)."""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.tools.codecalls.conftest import ALL_TOOLS
from voxcall.tools import Tool, ToolCall
from voxcall.tools.codecalls import CodeCallStream, RejectedCall, TextDelta, parse_code_calls


def normalise(events: list[Any]) -> list[tuple[Any, ...]]:
    """Merge adjacent text and drop call ids, so two event lists can be compared."""
    out: list[tuple[Any, ...]] = []
    for event in events:
        if isinstance(event, TextDelta):
            if out and out[-1][0] == "text":
                out[-1] = ("text", out[-1][1] + event.text)
            elif event.text:
                out.append(("text", event.text))
        elif isinstance(event, ToolCall):
            out.append(("call", event.name, event.arguments, tuple(event.warnings)))
        else:
            assert isinstance(event, RejectedCall)
            out.append(("rejected", event.name, event.source, event.reason))
    return out


def stream_chunks(chunks: list[str], tools: list[Tool]) -> list[Any]:
    stream = CodeCallStream(tools)
    events: list[Any] = []
    for chunk in chunks:
        events += stream.feed(chunk)
    return events + stream.close()


def cut(text: str, points: list[int]) -> list[str]:
    bounds = sorted({0, len(text), *(p % (len(text) + 1) for p in points)})
    return [text[a:b] for a, b in itertools.pairwise(bounds)]


PIECES = [
    "Hello there. ", "Let me check. ", "ok", " ", "\n", "<", "`", "``", "```", "```python\n", "```py\n",
    "```json\n", "<code>", "</code>", "<co", "de>", "</co", "'", '"', "'''", "\\", "(", ")", "[", "]", ";", "#",
    "get_weather(city='Paris')", "get_weather(city=\"it's\")", "get_weather(city='a</code>b')",
    "calculator(op='add', a=1, b=2)", "calculator('mul', -2, +3.5)", "set_timer(seconds=30)",
    "get_wether(city='x')", "get_weather(city=x)", "send_mail(from_='me', user_id=1)", "[get_weather(city='z'), "
    "set_timer(seconds=1)]", "print(get_weather(city='q'))", "city=", "日本語", "true", "null", "\t",
]
texts = st.lists(st.one_of(st.sampled_from(PIECES), st.text(max_size=6)), max_size=30).map("".join)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=texts, points=st.lists(st.integers(min_value=0, max_value=10_000), max_size=40))
def test_any_chunking_gives_the_same_events(text: str, points: list[int]) -> None:
    whole = normalise(stream_chunks([text], ALL_TOOLS))
    assert normalise(stream_chunks(cut(text, points), ALL_TOOLS)) == whole
    assert normalise(stream_chunks(list(text), ALL_TOOLS)) == whole
    parsed = parse_code_calls(text, ALL_TOOLS)
    assert "".join(e[1] for e in whole if e[0] == "text") == parsed.text
    assert [e[1:] for e in whole if e[0] == "call"] == [
        (c.name, c.arguments, tuple(c.warnings)) for c in parsed.calls]
    assert [e[1:] for e in whole if e[0] == "rejected"] == [
        (r.name, r.source, r.reason) for r in parsed.rejected]


prose = st.text(alphabet=st.characters(blacklist_characters="<`", blacklist_categories=["Cs"]), max_size=20)
calls = st.sampled_from([
    "get_weather(city='Paris')", "get_weather(city='a</code>b)')", "calculator(op='div', a=1, b=0)",
    "get_wether(city='x')", "get_weather(city=nope)", "set_timer(seconds=", "[set_timer(seconds=1)]",
])
blocks = calls.flatmap(lambda c: st.sampled_from([f"<code>{c}</code>", f"```python\n{c}\n```"]))


@settings(max_examples=300, deadline=None)
@given(parts=st.lists(st.tuples(prose, blocks), max_size=6), tail=prose,
       points=st.lists(st.integers(min_value=0, max_value=10_000), max_size=20))
def test_tool_syntax_never_reaches_text(parts: list[tuple[str, str]], tail: str, points: list[int]) -> None:
    text = "".join(p + b for p, b in parts) + tail
    spoken = "".join(e.text for e in stream_chunks(cut(text, points), ALL_TOOLS) if isinstance(e, TextDelta))
    assert spoken == "".join(p for p, _ in parts) + tail


def test_text_is_released_at_once_holding_only_an_opener_prefix(tools: list[Tool]) -> None:
    stream = CodeCallStream(tools)
    assert stream.feed("Hello world") == [TextDelta("Hello world")]
    assert stream.feed(", one moment <co") == [TextDelta(", one moment ")]
    assert stream.feed("ol stuff") == [TextDelta("<cool stuff")]
    assert stream.feed(" ``") == [TextDelta(" ")]
    assert stream.feed("`pyt") == []
    assert stream.feed("hon") == []
    assert stream.feed("ic") == [TextDelta("```pythonic")]


def test_a_call_is_emitted_by_the_feed_that_completes_it(tools: list[Tool]) -> None:
    stream = CodeCallStream(tools)
    assert stream.feed("Checking.<code>get_weather(") == [TextDelta("Checking.")]
    assert stream.feed("city='Oslo'") == []
    events = stream.feed(")")
    assert len(events) == 1 and isinstance(events[0], ToolCall)
    assert events[0].arguments == {"city": "Oslo"}
    assert stream.feed("\nset_timer(seconds=3)")[0].arguments == {"seconds": 3}  # type: ignore[union-attr]
    assert stream.feed("</code> Done") == [TextDelta(" Done")]
    assert stream.close() == []


def test_close_settles_unclosed_block_and_held_text(tools: list[Tool]) -> None:
    stream = CodeCallStream(tools)
    assert stream.feed("Hi <code>set_timer(seconds=5") == [TextDelta("Hi ")]
    events = stream.close()
    assert len(events) == 1 and isinstance(events[0], RejectedCall)
    held = CodeCallStream(tools)
    assert held.feed("a <cod") == [TextDelta("a ")]
    assert held.close() == [TextDelta("<cod")]


def test_feed_after_close_is_an_error(tools: list[Tool]) -> None:
    stream = CodeCallStream(tools)
    stream.close()
    with pytest.raises(RuntimeError):
        stream.feed("x")
    assert stream.close() == []
