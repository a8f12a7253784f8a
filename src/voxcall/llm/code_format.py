"""``CodeFormatBackend``: tool calling for models without native tools, as Python calls in ``<code>`` blocks.

The tools are described in the system prompt as Python signatures; the model writes
``<code>get_weather(city='Paris')</code>`` in its text, and the stream is parsed as it arrives so that tool
syntax never reaches speech. Earlier calls are shown to the model in the same syntax (as its own assistant
text), and their outputs as a user message per run of results, one line each: ``Result of get_weather: …``.
Downstream sees the same events as on the native path: each call as start, one arguments delta, the call.
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator
from contextlib import aclosing
from dataclasses import replace
from typing import Any, Literal

from voxcall.llm.base import (
    ChatItem,
    Done,
    FunctionCallItem,
    FunctionOutputItem,
    LLMBackend,
    LLMEvent,
    LLMRequest,
    Message,
    Usage,
    media_of,
    warm,
)
from voxcall.llm.calls import CallLimit, announce_call, finish_reason
from voxcall.llm.history import pair_calls_with_outputs
from voxcall.tools.calls import ToolCall
from voxcall.tools.codecalls import CodeCallEvent, CodeCallStream, format_code_call, render_tools_prompt
from voxcall.tools.codecalls.events import TextDelta
from voxcall.tools.schema import Tool

RESULT_FORMAT = "Result of {name}: {output}"
"""How a tool's output is shown to the model, one line per result."""


def code_items(items: list[ChatItem], tools: list[Tool]) -> list[ChatItem]:
    """The conversation with calls rewritten as ``<code>`` text in the assistant's message, and each run of
    outputs as one user message (plain messages alternate better with strict chat templates)."""
    by_name = {tool.name: tool for tool in tools}
    names: dict[str, str] = {}
    result: list[ChatItem] = []
    for item in pair_calls_with_outputs(items):
        if isinstance(item, FunctionCallItem):
            names[item.call_id] = item.name
            tool = by_name.get(item.name) or Tool(name=item.name)
            code = format_code_call(tool, stored_arguments(item.arguments))
            _append(result, "assistant", code, separator="")
        elif isinstance(item, FunctionOutputItem):
            line = RESULT_FORMAT.format(name=names[item.call_id], output=item.output)
            _append(result, "user", line, separator="\n")
        else:
            result.append(item)
    return result


class CodeFormatBackend:
    """Wraps a text backend: tools go into the prompt, calls come out of the text."""

    def __init__(self, inner: LLMBackend) -> None:
        self.inner = inner
        self.name = f"{inner.name}+code"
        self.media = media_of(inner)  # the messages pass through with their images or audio

    def inner_request(self, request: LLMRequest) -> LLMRequest:
        """What the wrapped backend is asked: no native tools, the tools' prompt after the instructions."""
        tools_prompt = render_tools_prompt(request.tools, voice=request.voice,
                                           tool_choice=request.tool_choice)
        instructions = "\n\n".join(part for part in (request.instructions, tools_prompt) if part)
        return replace(request, items=code_items(request.items, request.tools), instructions=instructions,
                       tools=[], tool_choice="auto")

    async def stream(self, request: LLMRequest) -> AsyncGenerator[LLMEvent, None]:
        """Stream the wrapped backend's reply with ``<code>`` blocks turned into call events."""
        parser = CodeCallStream(request.tools)
        limit = CallLimit(request.parallel_tool_calls)
        parser_open = True
        made_calls = False
        async with aclosing(self.inner.stream(self.inner_request(request))) as inner_events:
            async for event in inner_events:
                if isinstance(event, TextDelta):
                    events = _announced(limit.apply(parser.feed(event.text)))
                elif isinstance(event, Usage | Done) and parser_open:
                    parser_open = False  # the text is over: flush a call still being written
                    events = [*_announced(limit.apply(parser.close())), event]
                else:
                    events = [event]
                for out in events:
                    made_calls = made_calls or isinstance(out, ToolCall)
                    yield Done(finish_reason(out.finish_reason, made_calls)) if isinstance(out, Done) else out

    async def warm(self, request: LLMRequest) -> None:
        """Let the wrapped backend prepare the request it will be asked (when it can: see
        :func:`~voxcall.llm.base.warm`)."""
        await warm(self.inner, self.inner_request(request))

    async def aclose(self) -> None:
        """Close the wrapped backend."""
        await self.inner.aclose()


def _announced(parsed: list[CodeCallEvent]) -> list[LLMEvent]:
    """The parser's events, each call preceded by the start and arguments events the native path streams."""
    return [event for item in parsed
            for event in (announce_call(item) if isinstance(item, ToolCall) else [item])]


def _append(items: list[ChatItem], role: Literal["assistant", "user"], text: str, *, separator: str) -> None:
    """Add ``text`` as a ``role`` message, joined onto the last message when that has the same role."""
    last = items[-1] if items else None
    if isinstance(last, Message) and last.role == role:
        items[-1] = replace(last, text=last.text + separator + text)  # any images or audio stay
    else:
        items.append(Message(role=role, text=text))


def stored_arguments(arguments: str) -> dict[str, Any]:
    """A stored call's arguments as a dict; unreadable ones as ``{}`` (the call is only being shown)."""
    try:
        parsed = json.loads(arguments) if arguments.strip() else {}
    except json.JSONDecodeError:
        return {}
    return parsed if isinstance(parsed, dict) else {}
