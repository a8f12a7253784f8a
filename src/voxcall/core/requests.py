"""What the LLM backend is asked for one response: the context's items, with the settings and every tool."""

from __future__ import annotations

from collections.abc import Sequence

from voxcall.core.conversation.conversation import to_chat_items
from voxcall.core.conversation.items import Item
from voxcall.core.settings import SessionSettings
from voxcall.llm import LLMRequest, Media
from voxcall.tools import Tool


def llm_request(settings: SessionSettings, context: Sequence[Item], server_tools: Sequence[Tool],
                media: frozenset[Media], heard_at: float | None = None) -> LLMRequest:
    """The request for a response generated with ``settings`` from ``context``, for a backend that takes ``media``
    besides text: the client's tools, then the server's; ``heard_at``, the end of the speech it answers, if any."""
    return LLMRequest(items=to_chat_items(context, media), instructions=settings.instructions,
                      tools=[*settings.tools, *server_tools], tool_choice=settings.tool_choice,
                      max_output_tokens=settings.max_output_tokens, temperature=settings.temperature,
                      voice=settings.audio_out, parallel_tool_calls=settings.parallel_tool_calls, heard_at=heard_at)
