"""``OpenAIChatBackend``: any Chat Completions server (OpenAI, vLLM, llama.cpp, Ollama), native tools.

Streamed tool-call deltas arrive keyed by index; each call is announced as soon as its name is known (under
voxcall's own id: :class:`~voxcall.llm.calls.NativeCall`), its argument fragments are forwarded as they come,
and the checked :class:`ToolCall` (or its rejection) is yielded the moment the call is complete (the next call
begins, text follows, or the stream ends), so a client tool can start before the model has finished writing its
sibling calls.

Reasoning: with ``disable_reasoning`` the request carries ``chat_template_kwargs={"enable_thinking": False}``,
which vLLM, SGLang and llama.cpp hand to the chat template (Qwen3 and similar models then answer without a
thinking block, the right trade for voice latency). It goes only to non-OpenAI servers: OpenAI rejects unknown
body fields. Servers that stream a separate ``reasoning_content`` have it ignored; it is never spoken.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from contextlib import aclosing
from dataclasses import dataclass, field
from typing import Any

import openai
from openai.types.chat import ChatCompletionChunk

from voxcall.llm.base import (
    AudioPart,
    ChatItem,
    Done,
    FunctionCallItem,
    FunctionOutputItem,
    LLMError,
    LLMEvent,
    LLMRequest,
    Media,
    Message,
    Usage,
    check_media,
)
from voxcall.llm.calls import NativeCall, finish_reason
from voxcall.llm.history import provider_items
from voxcall.llm.openai_client import (
    DEFAULT_TIMEOUT,
    is_openai_url,
    make_client,
    resolve_base_url,
    translate_errors,
)
from voxcall.tools.calls import ToolCall
from voxcall.tools.codecalls.events import TextDelta
from voxcall.tools.codecalls.prompt import ToolChoice, forced_tool_name
from voxcall.tools.codecalls.segments import ToolIndex
from voxcall.tools.schema import Tool


def chat_messages(instructions: str, items: list[ChatItem]) -> list[dict[str, Any]]:
    """The Chat Completions ``messages`` for a conversation: instructions first as a system message, each
    assistant text merged with the calls that follow it, each output as a ``tool`` message after its call."""
    messages: list[dict[str, Any]] = [{"role": "system", "content": instructions}] if instructions else []
    for item in provider_items(items):
        if isinstance(item, FunctionCallItem):
            call = {"id": item.call_id, "type": "function",
                    "function": {"name": item.name, "arguments": item.arguments}}
            last = messages[-1] if messages else None
            if last is not None and last["role"] == "assistant":
                last.setdefault("tool_calls", []).append(call)
            else:
                messages.append({"role": "assistant", "content": None, "tool_calls": [call]})
        elif isinstance(item, FunctionOutputItem):
            messages.append({"role": "tool", "tool_call_id": item.call_id, "content": item.output})
        else:
            messages.append({"role": item.role, "content": chat_content(item)})
    return messages


def chat_content(message: Message) -> str | list[dict[str, Any]]:
    """A message's Chat Completions ``content``: its text, or, when it carries images or audio, a list of parts
    (the text first, then ``image_url`` and ``input_audio`` parts in order)."""
    if not message.media:
        return message.text
    parts: list[dict[str, Any]] = [{"type": "text", "text": message.text}] if message.text else []
    for part in message.media:
        if isinstance(part, AudioPart):
            parts.append({"type": "input_audio", "input_audio": {"data": part.wav_base64, "format": "wav"}})
        else:
            parts.append({"type": "image_url", "image_url": {"url": part.url, "detail": part.detail}})
    return parts


def chat_tool_choice(tool_choice: ToolChoice) -> ToolChoice:
    """``tool_choice`` in the Chat Completions form (a named function is nested under ``function``)."""
    name = forced_tool_name(tool_choice)
    return tool_choice if name is None else {"type": "function", "function": {"name": name}}


@dataclass
class _PendingCall:
    """A tool call being streamed: what is known of it so far."""

    index: int
    name: str = ""
    provider_call_id: str = ""
    arguments: list[str] = field(default_factory=list)
    call: NativeCall | None = None  # once its name is known


class _ChunkReader:
    """Turns Chat Completions chunks into events, keeping the state of the call being streamed."""

    def __init__(self, tools: list[Tool]) -> None:
        self.tools = ToolIndex(tools, native=True)
        self.current: _PendingCall | None = None
        self.finished_indexes: set[int] = set()
        self.usage = Usage(0, 0)
        self.finish_reason: str | None = None
        self.made_calls = False

    def read(self, chunk: ChatCompletionChunk) -> list[LLMEvent]:
        """The events one chunk yields, in order."""
        events: list[LLMEvent] = []
        if chunk.usage is not None:
            details = chunk.usage.prompt_tokens_details
            self.usage = Usage(chunk.usage.prompt_tokens, chunk.usage.completion_tokens,
                               (details.cached_tokens or 0) if details is not None else 0)
        if not chunk.choices:
            return events
        choice = chunk.choices[0]
        if choice.delta.content:
            events += self.finish_call()
            events.append(TextDelta(choice.delta.content))
        for fragment in choice.delta.tool_calls or ():
            if fragment.index in self.finished_indexes:
                continue  # a server repeating a finished call: its ToolCall is already out
            if self.current is not None and self.current.index != fragment.index:
                events += self.finish_call()
            if self.current is None:
                self.current = _PendingCall(fragment.index)
            pending = self.current
            function = fragment.function
            pending.provider_call_id = pending.provider_call_id or fragment.id or ""
            pending.name = pending.name or (function.name if function is not None and function.name else "")
            arguments = function.arguments if function is not None and function.arguments else ""
            pending.arguments.append(arguments)
            if pending.call is None and pending.name:
                pending.call = NativeCall(self.tools, pending.name, pending.provider_call_id)
                events += pending.call.start()
                arguments = "".join(pending.arguments)  # fragments that came before the name
            if pending.call is not None:
                events += pending.call.delta(arguments)
        if choice.finish_reason is not None:
            self.finish_reason = choice.finish_reason
        return events

    def finish_call(self) -> list[LLMEvent]:
        """The final event of the call being streamed, if any: its :class:`ToolCall` or a rejection."""
        pending, self.current = self.current, None
        if pending is None:
            return []
        self.finished_indexes.add(pending.index)
        call = pending.call or NativeCall(self.tools, "", pending.provider_call_id)
        result = call.finish("".join(pending.arguments))
        self.made_calls = self.made_calls or isinstance(result, ToolCall)
        return [result]

    def finish(self) -> list[LLMEvent]:
        """The events that close the stream. Raises :class:`LLMError` when the stream ended without a finish
        reason: the server broke off, and a half-written call must not run."""
        if self.finish_reason is None:
            raise LLMError("backend stream ended before the reply was complete", code="incomplete_stream")
        events = self.finish_call()
        return [*events, self.usage, Done(finish_reason(self.finish_reason, self.made_calls))]


class OpenAIChatBackend:
    """Chat Completions streaming over the official ``openai`` client. ``media`` is what the model takes besides
    text (images, audio): the operator says so, since the server cannot know a remote model's abilities."""

    name = "openai-chat"

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        max_retries: int = 1,
        disable_reasoning: bool = True,
        extra_body: dict[str, Any] | None = None,
        media: frozenset[Media] = frozenset(),
    ) -> None:
        base_url = resolve_base_url(base_url)
        self.model = model
        self.media = check_media(self.name, media, frozenset({"image", "audio"}))
        self._is_openai = is_openai_url(base_url)
        self._client = make_client(base_url, api_key, timeout, max_retries)
        body: dict[str, Any] = {}
        if disable_reasoning and not self._is_openai:
            body["chat_template_kwargs"] = {"enable_thinking": False}
        self._extra_body = body | (extra_body or {})

    def request_params(self, request: LLMRequest) -> dict[str, Any]:
        """The keyword arguments of ``chat.completions.create`` for ``request``: streaming, with usage."""
        params: dict[str, Any] = {
            "model": self.model,
            "messages": chat_messages(request.instructions, request.items),
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        if request.tools:
            params["tools"] = [tool.to_chat() for tool in request.tools]
            params["tool_choice"] = chat_tool_choice(request.tool_choice)
            if not request.parallel_tool_calls:  # sent only when off: some servers do not know the parameter
                params["parallel_tool_calls"] = False
        if request.max_output_tokens is not None:
            params["max_completion_tokens" if self._is_openai else "max_tokens"] = request.max_output_tokens
        if request.temperature is not None:
            params["temperature"] = request.temperature
        if self._extra_body:
            params["extra_body"] = self._extra_body
        return params

    async def stream(self, request: LLMRequest) -> AsyncGenerator[LLMEvent, None]:
        """Stream the reply to ``request``; closing the generator closes the HTTP response."""
        reader = _ChunkReader(request.tools)
        with translate_errors():
            chunks: openai.AsyncStream[ChatCompletionChunk] = await self._client.chat.completions.create(
                **self.request_params(request))
            async with aclosing(chunks):
                async for chunk in chunks:
                    for event in reader.read(chunk):
                        yield event
        for event in reader.finish():
            yield event

    async def aclose(self) -> None:
        """Close the client's connection pool."""
        await self._client.close()
