"""OpenAIChatBackend against a real OpenAI-compatible server: llama.cpp's (from the prebuilt wheel, as
``python -m voxcall.llm.local.serve`` runs it), serving Qwen2.5-Coder-0.5B, whose chat template renders tools.

Only the protocol's shape is asserted (text arrives as text, the tools reach the model's prompt, the stream ends
with Usage and Done): a small model's answers are not worth asserting. The server's own tool-call handling is not
asserted: this llama.cpp accepts ``tool_choice`` "required" or a named tool without enforcing it (llama.cpp issue
27217) and left Qwen's unwrapped calls in the text; the Chat Completions tool-call stream is covered against a
scripted server (``tests/llm/test_openai_chat.py``).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest

from tests.llm.helpers import collect
from tests.llm.llama_serve import llama_serve
from tests.requirements import require_catalog_model
from voxcall.llm import Done, LLMRequest, Message, OpenAIChatBackend, RejectedCall, TextDelta, ToolCall, Usage
from voxcall.tools import Tool

QWEN = require_catalog_model("qwen2.5-coder-0.5b")


@pytest.fixture(scope="module")
def llama_server() -> Iterator[str]:
    """llama.cpp's server (the launcher of the prebuilt wheel), whose OpenAI-compatible API renders tools with the
    model's chat template (jinja) and constrains a forced call with a grammar."""
    with llama_serve(QWEN, parallel=1) as root:
        yield f"{root}/v1"


@pytest.fixture
async def backend(llama_server: str) -> AsyncIterator[OpenAIChatBackend]:
    chat = OpenAIChatBackend("qwen", base_url=llama_server, timeout=60.0)
    yield chat
    await chat.aclose()


WEATHER = Tool(name="get_weather", description="Get the current weather for a city.",
               parameters={"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]})


async def test_declared_tools_reach_the_model_and_the_stream_keeps_its_shape(backend: OpenAIChatBackend) -> None:
    def ask(tools: list[Tool]) -> LLMRequest:
        return LLMRequest(items=[Message("user", "What is the weather in Paris?")], tools=tools,
                          max_output_tokens=24, temperature=0.0)

    bare, with_tools = [await collect(backend.stream(ask(tools))) for tools in ([], [WEATHER])]
    for events in (bare, with_tools):
        assert isinstance(events[-2], Usage) and isinstance(events[-1], Done)
        assert all(isinstance(e, TextDelta | ToolCall | RejectedCall | Usage | Done) for e in events)
    assert with_tools[-2].input_tokens > bare[-2].input_tokens + 40  # the tool's schema is in the prompt
    for call in (e for e in with_tools if isinstance(e, ToolCall)):
        assert call.name == "get_weather" and isinstance(call.arguments, dict)


async def test_plain_text_reply(backend: OpenAIChatBackend) -> None:
    request = LLMRequest(items=[Message("user", "Say hello.")], instructions="You are a helpful assistant.",
                         max_output_tokens=16, temperature=0.0)
    events = await collect(backend.stream(request))
    assert "".join(e.text for e in events if isinstance(e, TextDelta)).strip()
    assert isinstance(events[-2], Usage)
    assert isinstance(events[-1], Done) and events[-1].finish_reason in ("stop", "length")
