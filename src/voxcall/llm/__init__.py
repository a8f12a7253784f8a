"""LLM backends: each turns an :class:`LLMRequest` into an async stream of the shared :data:`LLMEvent` types.

Build one from configuration with :func:`create_backend`; :mod:`voxcall.llm.base` describes the stream.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from voxcall.llm.base import (
    ChatItem,
    Done,
    FunctionCallItem,
    FunctionOutputItem,
    LLMBackend,
    LLMError,
    LLMEvent,
    LLMRequest,
    Message,
    ToolCallArgumentsDelta,
    ToolCallStart,
    Usage,
)
from voxcall.llm.code_format import CodeFormatBackend
from voxcall.llm.llamacpp import LlamaCppBackend
from voxcall.llm.openai_chat import OpenAIChatBackend
from voxcall.llm.openai_client import DEFAULT_TIMEOUT
from voxcall.llm.openai_responses import OpenAIResponsesBackend
from voxcall.llm.scripted import DEFAULT_SCRIPT, Script, ScriptedBackend
from voxcall.tools.calls import ToolCall
from voxcall.tools.codecalls.events import RejectedCall, TextDelta
from voxcall.tools.codecalls.prompt import ToolChoice

BACKEND_KINDS = ("openai-chat", "openai-responses", "scripted", "llamacpp")
"""The ``kind`` values :func:`create_backend` knows."""

ToolFormat = Literal["native", "code"]


def create_backend(
    kind: str,
    *,
    model: str | None = None,
    base_url: str | None = None,
    api_key: str | None = None,
    tool_format: ToolFormat = "native",
    script: Script | Mapping[str, Any] | str | Path | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    disable_reasoning: bool = True,
    extra_body: dict[str, Any] | None = None,
) -> LLMBackend:
    """Build the backend ``kind``; with ``tool_format="code"`` it is wrapped in a :class:`CodeFormatBackend`.

    ``model`` is required by the OpenAI kinds; for ``"llamacpp"`` it is the path of a GGUF file (None: the
    default SmolLM2 model), and ``tool_format`` does not apply: that backend always takes the code path itself,
    with grammar-constrained calls. ``script`` is used by ``"scripted"`` only (None: the built-in script);
    ``disable_reasoning`` by ``"openai-chat"`` only (see :mod:`voxcall.llm.openai_chat`). Raises ``ValueError``
    for an unknown kind or tool format, or a missing model; ``LLMError`` when a local model cannot be loaded.
    """
    if tool_format not in ("native", "code"):
        raise ValueError(f"unknown tool format {tool_format!r}; expected 'native' or 'code'")
    backend: LLMBackend
    if kind == "llamacpp":
        return LlamaCppBackend(model)
    if kind == "scripted":
        backend = ScriptedBackend(script)
    elif kind in ("openai-chat", "openai-responses"):
        if not model:
            raise ValueError(f"backend {kind!r} needs a model name")
        if kind == "openai-chat":
            backend = OpenAIChatBackend(model, base_url=base_url, api_key=api_key, timeout=timeout,
                                        disable_reasoning=disable_reasoning, extra_body=extra_body)
        else:
            backend = OpenAIResponsesBackend(model, base_url=base_url, api_key=api_key, timeout=timeout,
                                             extra_body=extra_body)
    else:
        raise ValueError(f"unknown LLM backend {kind!r}; known kinds: {', '.join(BACKEND_KINDS)}")
    return CodeFormatBackend(backend) if tool_format == "code" else backend


__all__ = [
    "BACKEND_KINDS",
    "DEFAULT_SCRIPT",
    "ChatItem",
    "CodeFormatBackend",
    "Done",
    "FunctionCallItem",
    "FunctionOutputItem",
    "LLMBackend",
    "LLMError",
    "LLMEvent",
    "LLMRequest",
    "LlamaCppBackend",
    "Message",
    "OpenAIChatBackend",
    "OpenAIResponsesBackend",
    "RejectedCall",
    "Script",
    "ScriptedBackend",
    "TextDelta",
    "ToolCall",
    "ToolCallArgumentsDelta",
    "ToolCallStart",
    "ToolChoice",
    "ToolFormat",
    "Usage",
    "create_backend",
]
