"""CodeFormatBackend: tools in the prompt, ``<code>`` calls parsed out of the text stream."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator

from tests.llm.helpers import TIMEOUT, arguments_text, collect
from voxcall.llm import (
    ChatItem,
    CodeFormatBackend,
    Done,
    FunctionCallItem,
    FunctionOutputItem,
    LLMEvent,
    LLMRequest,
    Message,
    RejectedCall,
    ScriptedBackend,
    TextDelta,
    ToolCall,
    ToolCallArgumentsDelta,
    ToolCallStart,
    Usage,
    warm,
)
from voxcall.llm.code_format import code_items
from voxcall.tools import Tool
from voxcall.tools.codecalls import render_tools_prompt


class TextBackend:
    """A backend that streams fixed text chunks and records what it was asked."""

    name = "text"

    def __init__(self, *chunks: str) -> None:
        self.chunks = chunks
        self.requests: list[LLMRequest] = []
        self.closed = False
        self.stream_closed = False

    async def stream(self, request: LLMRequest) -> AsyncGenerator[LLMEvent, None]:
        self.requests.append(request)
        try:
            for chunk in self.chunks:
                yield TextDelta(chunk)
                await asyncio.sleep(0)
            yield Usage(5, 7)
            yield Done("stop")
        finally:
            self.stream_closed = True

    async def aclose(self) -> None:
        self.closed = True


class WarmableTextBackend(TextBackend):
    """A :class:`TextBackend` that can be warmed, and records the requests it was warmed with."""

    def __init__(self) -> None:
        super().__init__()
        self.warmed: list[LLMRequest] = []

    async def warm(self, request: LLMRequest) -> None:
        self.warmed.append(request)


def said(events: list[LLMEvent]) -> str:
    return "".join(e.text for e in events if isinstance(e, TextDelta))


async def test_scripted_inner_reply_becomes_text_and_a_call(calculator_tool: Tool) -> None:
    inner = ScriptedBackend({"default": "Sure.<code>calculator(op='add', a=1, b=2)</code>"})
    request = LLMRequest(items=[Message("user", "1+2?")], tools=[calculator_tool])
    events = await collect(CodeFormatBackend(inner).stream(request))
    assert said(events) == "Sure."
    assert not any("<" in e.text for e in events if isinstance(e, TextDelta))
    [call] = [e for e in events if isinstance(e, ToolCall)]
    assert (call.name, call.arguments) == ("calculator", {"op": "add", "a": 1, "b": 2})
    calls = events[events.index(call) - 2:events.index(call) + 1]
    assert calls == [ToolCallStart(call.call_id, "calculator"),
                     ToolCallArgumentsDelta(call.call_id, call.arguments_json), call]
    assert arguments_text(events, call.call_id) == call.arguments_json
    assert isinstance(events[-2], Usage) and events[-1] == Done("tool_calls")


async def test_call_split_across_chunks(calculator_tool: Tool) -> None:
    inner = TextBackend("Let me ", "work it out. <co", "de>calcul", "ator(op='mul', a=3", ", b=4)</c", "ode>")
    events = await collect(CodeFormatBackend(inner).stream(
        LLMRequest(items=[Message("user", "3*4")], tools=[calculator_tool])))
    assert said(events).strip() == "Let me work it out."
    assert [(e.name, e.arguments) for e in events if isinstance(e, ToolCall)] == [
        ("calculator", {"op": "mul", "a": 3, "b": 4})]
    assert events[-2:] == [Usage(5, 7), Done("tool_calls")]


async def test_unknown_tool_is_rejected_not_spoken(calculator_tool: Tool) -> None:
    inner = TextBackend("OK. <code>launch_rockets(count=3)</code>")
    events = await collect(CodeFormatBackend(inner).stream(
        LLMRequest(items=[Message("user", "go")], tools=[calculator_tool])))
    assert "launch" not in said(events)
    assert any(isinstance(e, RejectedCall) for e in events)
    assert not any(isinstance(e, ToolCall) for e in events)
    assert events[-1] == Done("stop")


async def test_inner_request_has_prompt_and_no_native_tools(calculator_tool: Tool) -> None:
    inner = TextBackend("Hi.")
    request = LLMRequest(items=[Message("user", "hey")], instructions="Be kind.", tools=[calculator_tool],
                         tool_choice="required", voice=True, max_output_tokens=30)
    await collect(CodeFormatBackend(inner).stream(request))
    [sent] = inner.requests
    prompt = render_tools_prompt([calculator_tool], voice=True, tool_choice="required")
    assert sent.instructions == "Be kind.\n\n" + prompt
    assert (sent.tools, sent.tool_choice, sent.max_output_tokens, sent.voice) == ([], "auto", 30, True)


async def test_tool_choice_none_adds_no_prompt(calculator_tool: Tool) -> None:
    inner = TextBackend("Hi.")
    await collect(CodeFormatBackend(inner).stream(
        LLMRequest(items=[Message("user", "hey")], instructions="Be kind.", tools=[calculator_tool],
                   tool_choice="none")))
    assert inner.requests[0].instructions == "Be kind."


def test_history_calls_become_code_text_and_outputs_user_messages(calculator_tool: Tool) -> None:
    items: list[ChatItem] = [
        Message("user", "1+2 and 3*4?"),
        Message("assistant", "Sure."),
        FunctionCallItem("c1", "calculator", '{"op":"add","a":1,"b":2}'),
        FunctionCallItem("c2", "calculator", '{"op":"mul","a":3,"b":4}'),
        FunctionOutputItem("c1", "3"),
        FunctionOutputItem("c2", "12"),
        FunctionCallItem("c3", "calculator", "{}"),  # no output: dropped
    ]
    assert code_items(items, [calculator_tool]) == [
        Message("user", "1+2 and 3*4?"),
        Message("assistant", "Sure.<code>calculator(op='add', a=1, b=2)</code>"
                             "<code>calculator(op='mul', a=3, b=4)</code>"),
        Message("user", "Result of calculator: 3\nResult of calculator: 12"),
    ]


def test_history_call_of_an_unknown_tool_with_bad_arguments_still_renders() -> None:
    items: list[ChatItem] = [FunctionCallItem("c1", "gone-tool", "not json"),
                             FunctionOutputItem("c1", "error: unknown tool")]
    assert code_items(items, []) == [Message("assistant", "<code>gone_tool()</code>"),
                                     Message("user", "Result of gone-tool: error: unknown tool")]


async def test_closing_the_stream_closes_the_inner_stream(calculator_tool: Tool) -> None:
    inner = TextBackend("one ", "two ", "three")
    stream = CodeFormatBackend(inner).stream(LLMRequest(items=[Message("user", "count")], tools=[]))
    async with asyncio.timeout(TIMEOUT):
        await anext(stream)
        await stream.aclose()
    assert inner.stream_closed


async def test_aclose_closes_the_inner_backend() -> None:
    inner = TextBackend()
    backend = CodeFormatBackend(inner)
    assert backend.name == "text+code"
    await backend.aclose()
    assert inner.closed


async def test_calls_made_natively_by_the_inner_backend_pass_through_once() -> None:
    inner = ScriptedBackend({"default": "On it.", "rules": [
        {"match": "x", "reply": "On it.", "calls": [{"name": "ping", "arguments": {}}]}]})
    events = await collect(CodeFormatBackend(inner).stream(LLMRequest(items=[Message("user", "x")])))
    assert sum(isinstance(e, ToolCallStart) for e in events) == 1
    assert sum(isinstance(e, ToolCall) for e in events) == 1
    assert events[-1] == Done("tool_calls")


async def test_warm_forwards_the_inner_request_to_a_warmable_inner_backend(calculator_tool: Tool) -> None:
    inner = WarmableTextBackend()
    backend = CodeFormatBackend(inner)
    request = LLMRequest(items=[Message("user", "hey")], instructions="Be kind.", tools=[calculator_tool])
    await warm(backend, request)
    assert inner.warmed == [backend.inner_request(request)]
    await warm(CodeFormatBackend(TextBackend("Hi.")), request)  # an inner backend without warm: nothing to do
