"""LlamaCppBackend with a model whose chat template declares a tool format: the format is used end to end.

No other model can be downloaded, so SmolLM2-135M is loaded with fake metadata: its GGUF's chat template is
replaced by a Qwen 2.5-style one (ChatML with Hermes ``<tool_call>`` tools, written from Qwen's public template),
which SmolLM2's ChatML turns read as well. The model is no Hermes caller; the grammar makes it write one.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest

from tests.llm.local.test_llamacpp import TOOLS, collect, ends_properly
from tests.requirements import require_smollm2
from voxcall.llm import (
    FunctionCallItem,
    FunctionOutputItem,
    LlamaCppBackend,
    LLMRequest,
    Message,
    RejectedCall,
    TextDelta,
    ToolCall,
)
from voxcall.llm.local import vocabulary
from voxcall.llm.local.engine import Item, Sink
from voxcall.tools.validation import validate_arguments

require_smollm2()

QWEN_TEMPLATE = """{%- if tools %}<|im_start|>system
{% if messages[0]['role'] == 'system' %}{{ messages[0]['content'] }}{% else %}You are Qwen.{% endif %}

# Tools

You may call one or more functions to assist with the user query.

You are provided with function signatures within <tools></tools> XML tags:
<tools>{% for tool in tools %}
{{ tool | tojson }}{% endfor %}
</tools>

For each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:
<tool_call>
{"name": <function-name>, "arguments": <args-json-object>}
</tool_call><|im_end|>
{% elif messages[0]['role'] == 'system' %}<|im_start|>system
{{ messages[0]['content'] }}<|im_end|>
{% endif %}
{%- for message in messages %}
{%- if message.role == "user" or (message.role == "assistant" and not message.tool_calls) -%}
<|im_start|>{{ message.role }}
{{ message.content }}<|im_end|>
{% elif message.role == "assistant" %}<|im_start|>assistant{% if message.content %}
{{ message.content }}{% endif %}
{%- for tool_call in message.tool_calls %}{% set tool_call = tool_call.function %}
<tool_call>
{"name": "{{ tool_call.name }}", "arguments": {{ tool_call.arguments | tojson }}}
</tool_call>{% endfor %}<|im_end|>
{% elif message.role == "tool" %}{% if loop.previtem.role != "tool" %}<|im_start|>user{% endif %}
<tool_response>
{{ message.content }}
</tool_response>{% if loop.last or loop.nextitem.role != "tool" %}<|im_end|>
{% endif %}{% endif %}
{%- endfor %}
{%- if add_generation_prompt %}<|im_start|>assistant
{% endif %}"""


@pytest.fixture(scope="module")
def backend() -> Iterator[LlamaCppBackend]:
    original = vocabulary.read_metadata

    def qwen_metadata(path: Any) -> dict[str, Any]:
        return {**original(path), "tokenizer.chat_template": QWEN_TEMPLATE}

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(vocabulary, "read_metadata", qwen_metadata)
        model = LlamaCppBackend(n_ctx=1024)
    yield model
    asyncio.run(model.aclose())


def test_the_template_chooses_the_format(backend: LlamaCppBackend) -> None:
    assert backend.tool_format is not None and backend.tool_format.name == "hermes"


def test_the_template_renders_tools_calls_and_results(backend: LlamaCppBackend) -> None:
    request = LLMRequest(items=[Message(role="user", text="Weather in Oslo?"),
                                FunctionCallItem("call_1", "get_weather", '{"city": "Oslo"}'),
                                FunctionOutputItem("call_1", "12 C and rain")],
                         instructions="Be brief.", tools=TOOLS)
    builder = backend.planner.prompt
    prompt = builder.render(builder.fit(request, TOOLS, "").messages, add_generation_prompt=True, offered=TOOLS)
    assert prompt.startswith("<|im_start|>system\nBe brief.") and "# Tools" in prompt
    assert '{"type": "function", "function": {"name": "get_weather"' in prompt
    assert '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Oslo"}}\n</tool_call>' in prompt
    assert "<tool_response>\n12 C and rain\n</tool_response>" in prompt
    assert "<code>" not in prompt and "def get_weather" not in prompt  # no code stubs, no code demonstrations


async def test_a_required_call_is_written_in_hermes_format(backend: LlamaCppBackend,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """The reply is prefilled with ``<tool_call>`` and constrained by the Hermes grammar (slow on a busy machine:
    SmolLM2's likeliest tokens seldom fit, so the grammar often checks the whole vocabulary)."""
    written: list[str] = []
    put = Sink.put

    def recorded(sink: Sink, item: Item) -> None:
        if isinstance(item, str):
            written.append(item)
        put(sink, item)

    monkeypatch.setattr(Sink, "put", recorded)
    request = LLMRequest(items=[Message(role="user", text="What's the weather in Oslo?")], tools=TOOLS,
                         tool_choice="required", max_output_tokens=40)
    async with asyncio.timeout(300):
        events = [event async for event in backend.stream(request)]
    ends_properly(events)
    calls = [e for e in events if isinstance(e, ToolCall)]
    assert calls, events
    assert all(events.index(c) < events.index(r) for c in calls for r in events if isinstance(r, RejectedCall))
    assert not "".join(e.text for e in events if isinstance(e, TextDelta)).strip()
    for call in calls:
        validate_arguments(next(t for t in TOOLS if t.name == call.name), call.arguments)
    reply = "".join(written).removeprefix("<tool_call>")
    assert reply.lstrip().startswith('{"name": ') and "</tool_call>" in reply
    assert events[-1].finish_reason in ("tool_calls", "length")  # a second block may be cut off by the cap


async def test_tool_choice_none_gets_plain_text(backend: LlamaCppBackend) -> None:
    request = LLMRequest(items=[Message(role="user", text="Hello!")], tools=TOOLS, tool_choice="none",
                         max_output_tokens=12)
    events = await collect(backend.stream(request))
    ends_properly(events)
    assert not [e for e in events if isinstance(e, ToolCall | RejectedCall)]
