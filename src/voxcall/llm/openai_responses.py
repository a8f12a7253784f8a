"""``OpenAIResponsesBackend``: the Responses API, streaming, with tools passed natively in their flat form.

Nothing is stored on the provider (``store=False``): the conversation is sent whole each time, as with Chat
Completions, so both backends see the same history and a discarded speculative response leaves no trace.
Each call is checked against the request's tools and given voxcall's own id (:class:`~voxcall.llm.calls.NativeCall`).
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from contextlib import aclosing
from typing import Any

import openai
from openai.types.responses import (
    Response,
    ResponseStreamEvent,
)

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
from voxcall.llm.calls import NativeCall
from voxcall.llm.history import provider_items
from voxcall.llm.openai_client import (
    DEFAULT_TIMEOUT,
    make_client,
    provider_code,
    resolve_base_url,
    translate_errors,
)
from voxcall.tools.codecalls.events import TextDelta
from voxcall.tools.codecalls.segments import ToolIndex
from voxcall.tools.schema import Tool

_INCOMPLETE_REASONS = {"max_output_tokens": "length", "content_filter": "content_filter"}


def response_input(items: list[ChatItem]) -> list[dict[str, Any]]:
    """The Responses ``input`` items for a conversation (messages, function calls, function call outputs)."""
    result: list[dict[str, Any]] = []
    for item in provider_items(items):
        if isinstance(item, FunctionCallItem):
            result.append({"type": "function_call", "call_id": item.call_id, "name": item.name,
                           "arguments": item.arguments})
        elif isinstance(item, FunctionOutputItem):
            result.append({"type": "function_call_output", "call_id": item.call_id, "output": item.output})
        else:
            result.append({"type": "message", "role": item.role, "content": response_content(item)})
    return result


def response_content(message: Message) -> str | list[dict[str, Any]]:
    """A message's Responses ``content``: its text, or, when it carries images, ``input_text`` then ``input_image``
    parts (the backend is never built to take audio, which the Responses API does not accept as input)."""
    if not message.media:
        return message.text
    parts: list[dict[str, Any]] = [{"type": "input_text", "text": message.text}] if message.text else []
    for part in message.media:
        assert not isinstance(part, AudioPart), "audio reached the Responses backend"
        parts.append({"type": "input_image", "image_url": part.url, "detail": part.detail})
    return parts


class _EventReader:
    """Turns Responses stream events into events, remembering the calls in flight by output index."""

    def __init__(self, tools: list[Tool]) -> None:
        self.tools = ToolIndex(tools, native=True)
        self.calls: dict[int, NativeCall] = {}
        self.finished: set[int] = set()
        self.ended = False

    def read(self, event: ResponseStreamEvent) -> list[LLMEvent]:
        """The events one provider event yields; raises :class:`LLMError` on an error or failed response.

        Dispatch is on ``event.type``: the SDK coerces an event type it does not know into some other class.
        """
        if event.type in ("response.output_text.delta", "response.refusal.delta"):
            return [TextDelta(event.delta)] if event.delta else []
        if event.type == "response.output_item.added" and event.item.type == "function_call":
            call = self.calls[event.output_index] = NativeCall(self.tools, event.item.name, event.item.call_id)
            return call.start()
        if event.type == "response.function_call_arguments.delta" and event.output_index in self.calls:
            return self.calls[event.output_index].delta(event.delta)
        if event.type == "response.function_call_arguments.done":
            return self._finish_call(event.output_index, event.arguments)
        if event.type == "response.output_item.done" and event.item.type == "function_call":
            if event.output_index not in self.calls:
                self.calls[event.output_index] = NativeCall(self.tools, event.item.name, event.item.call_id)
            return self._finish_call(event.output_index, event.item.arguments)
        if event.type == "response.completed":
            return self._end(event.response, "tool_calls" if self.finished else "stop")
        if event.type == "response.incomplete":
            details = event.response.incomplete_details
            reason = details.reason if details is not None and details.reason else "incomplete"
            return self._end(event.response, _INCOMPLETE_REASONS.get(reason, reason))
        if event.type == "response.failed":
            error = event.response.error
            raise LLMError(f"backend response failed{provider_code(error.code if error else None)}")
        if event.type == "error":
            raise LLMError(f"backend reported an error{provider_code(event.code)}")
        return []

    def _finish_call(self, output_index: int, arguments: str) -> list[LLMEvent]:
        """The call's :class:`ToolCall` (or rejection) the first time it is finished; nothing after that."""
        call = self.calls.get(output_index)
        if call is None or output_index in self.finished:
            return []
        self.finished.add(output_index)
        return [call.finish(arguments)]

    def _end(self, response: Response, finish_reason: str) -> list[LLMEvent]:
        self.ended = True
        usage = response.usage
        if usage is None:
            return [Usage(0, 0), Done(finish_reason)]
        cached = usage.input_tokens_details.cached_tokens if usage.input_tokens_details is not None else 0
        return [Usage(usage.input_tokens, usage.output_tokens, cached or 0), Done(finish_reason)]


class OpenAIResponsesBackend:
    """Responses API streaming over the official ``openai`` client; ``media`` as on
    :class:`~voxcall.llm.openai_chat.OpenAIChatBackend`, images only."""

    name = "openai-responses"

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        max_retries: int = 1,
        extra_body: dict[str, Any] | None = None,
        media: frozenset[Media] = frozenset(),
    ) -> None:
        self.model = model
        self.media = check_media(self.name, media, frozenset({"image"}))
        self._client = make_client(resolve_base_url(base_url), api_key, timeout, max_retries)
        self._extra_body = extra_body

    def request_params(self, request: LLMRequest) -> dict[str, Any]:
        """The keyword arguments of ``responses.create`` for ``request``."""
        params: dict[str, Any] = {"model": self.model, "input": response_input(request.items),
                                  "stream": True, "store": False}
        if request.instructions:
            params["instructions"] = request.instructions
        if request.tools:
            params["tools"] = [tool.to_openai() for tool in request.tools]
            params["tool_choice"] = request.tool_choice
            if not request.parallel_tool_calls:
                params["parallel_tool_calls"] = False
        if request.max_output_tokens is not None:
            params["max_output_tokens"] = request.max_output_tokens
        if request.temperature is not None:
            params["temperature"] = request.temperature
        if self._extra_body:
            params["extra_body"] = self._extra_body
        return params

    async def stream(self, request: LLMRequest) -> AsyncGenerator[LLMEvent, None]:
        """Stream the reply to ``request``; closing the generator closes the HTTP response."""
        reader = _EventReader(request.tools)
        with translate_errors():
            provider_events: openai.AsyncStream[ResponseStreamEvent] = await self._client.responses.create(
                **self.request_params(request))
            async with aclosing(provider_events):
                async for provider_event in provider_events:
                    for event in reader.read(provider_event):
                        yield event
                    if reader.ended:
                        return
        raise LLMError("backend stream ended before the reply was complete", code="incomplete_stream")

    async def aclose(self) -> None:
        """Close the client's connection pool."""
        await self._client.close()
