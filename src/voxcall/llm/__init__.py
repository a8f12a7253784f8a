"""LLM backends: each turns an :class:`LLMRequest` into an async stream of the shared :data:`LLMEvent` types.

Build one from configuration with :func:`create_backend`, after :func:`resolve_kind` has turned "auto" (no kind
chosen) into one; :mod:`voxcall.llm.base` describes the stream, and how :func:`warm` lets a backend that can
prepare a request ahead of time.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from voxcall.config import LocalModelSettings, ThinkerSettings, ToolFormat
from voxcall.config.thinker import THINKER_AUTO, THINKER_OFF
from voxcall.llm.base import (
    AudioPart,
    ChatItem,
    Done,
    FunctionCallItem,
    FunctionOutputItem,
    ImagePart,
    LLMBackend,
    LLMError,
    LLMEvent,
    LLMRequest,
    Media,
    Message,
    ToolCallArgumentsDelta,
    ToolCallStart,
    Usage,
    Warmable,
    check_media,
    computes_here,
    media_of,
    model_of,
    warm,
    warm_shared,
)
from voxcall.llm.catalog import CATALOG, CatalogModel, ModelError, entry_for, installed
from voxcall.llm.catalog import resolve as resolve_model
from voxcall.llm.code_format import CodeFormatBackend
from voxcall.llm.local import LlamaCppBackend, LlamaServerBackend, ReplyOptions
from voxcall.llm.local.plan import EVIDENT_CALL_FLOOR, EVIDENT_CALL_THRESHOLD, UNRELATED_CALL_THRESHOLD
from voxcall.llm.openai_chat import OpenAIChatBackend
from voxcall.llm.openai_client import DEFAULT_TIMEOUT
from voxcall.llm.openai_responses import OpenAIResponsesBackend
from voxcall.llm.scripted import DEFAULT_SCRIPT, Script, ScriptedBackend
from voxcall.tools.calls import ToolCall
from voxcall.tools.codecalls.events import RejectedCall, TextDelta
from voxcall.tools.codecalls.prompt import ToolChoice

BACKEND_KINDS = ("openai-chat", "openai-responses", "scripted", "llamacpp", "llama-server")
"""The ``kind`` values :func:`create_backend` knows."""

REMOTE_KINDS = ("openai-chat", "openai-responses", "llama-server")
"""The kinds that talk to a server over HTTP, and so take a ``timeout``."""

LOCAL_KIND = "llamacpp"
"""The kind "auto" picks when it can be built: the in-process model."""

FALLBACK_KIND = "scripted"
"""The kind "auto" picks otherwise: the scripted demo."""


def resolve_kind(kind: str | None, model: str | Path | None = None) -> str:
    """The backend kind to build: ``kind`` when one was chosen, else ("auto") :data:`LOCAL_KIND` when it can be
    built (llama.cpp is installed, and ``model`` is given or the packaged default model is installed), else
    :data:`FALLBACK_KIND`. Every entry point (``voxcall serve``, ``chat``, :mod:`voxcall.server`) asks here."""
    if kind is not None:
        return kind
    return LOCAL_KIND if local_model_available(model) else FALLBACK_KIND


def local_model_available(model: str | Path | None = None) -> bool:
    """Whether the :data:`LOCAL_KIND` backend can be built: llama.cpp is installed (checked without importing it),
    and ``model`` is given or the default catalog model is installed."""
    if importlib.util.find_spec("xllamacpp") is None:
        return False
    if model is not None:
        return True
    try:
        resolve_model(None)
    except ModelError:
        return False
    return True


def paired_thinker(kind: str, model: str | None, thinker: ThinkerSettings) -> CatalogModel | None:
    """The catalog model ``thinker.model: auto`` pairs the talker with: the thinker the talker's catalog entry names
    (``model``; None: the default model's), when the talker (``kind``) and the thinker both run in this process;
    None otherwise, whether or not it is installed (:func:`resolve_thinker` checks that)."""
    if thinker.model != THINKER_AUTO or kind != LOCAL_KIND or thinker.llm != LOCAL_KIND:
        return None
    entry = entry_for(model)
    return CATALOG[entry.thinker] if entry is not None and entry.thinker is not None else None


def resolve_thinker(kind: str, model: str | None, thinker: ThinkerSettings) -> str | None:
    """The thinker's model to build behind the talker (``kind``, ``model``), None for none: the one named, or for
    ``auto`` the :func:`paired_thinker` when it is installed (a server without it decides with the talker alone,
    and says so at start)."""
    if thinker.model in (None, THINKER_OFF):
        return None
    if thinker.model != THINKER_AUTO:
        return thinker.model
    paired = paired_thinker(kind, model, thinker)
    return paired.name if paired is not None and installed(paired) is not None else None


def talker_languages(kind: str, model: str | None) -> frozenset[str] | None:
    """The languages whose small talk the local talker (``kind``, ``model``) answers, as its catalog entry names
    them (:attr:`~voxcall.llm.catalog.CatalogModel.talks_in`); None (any) for a model outside the catalog or
    another kind."""
    entry = entry_for(model) if kind in (LOCAL_KIND, "llama-server") else None
    return entry.talks_in if entry is not None else None


def local_options(model: str | None, local: LocalModelSettings | None = None) -> ReplyOptions:
    """How the local path plans replies for ``model`` with the ``local:`` settings (None: their defaults): a
    catalog model in the tool syntax its entry names, with the thresholds for unrelated words and evident requests
    its entry asks for and writing the strings a tool prescribes a form for if its entry says it can (all chosen by
    measurement), any other model in the format its chat template declares, with those thresholds, writing those
    strings."""
    entry = entry_for(model)
    settings = local or LocalModelSettings()
    weighs = entry is None or entry.weighs_calls
    return ReplyOptions(call_threshold=settings.call_threshold, max_prompt_tools=settings.max_prompt_tools,
                        acknowledge_after_ms=settings.acknowledge_after_ms, copy_strings=settings.copy_strings,
                        jump_forward=settings.jump_forward,
                        own_format=entry is None or entry.tool_syntax == "template",
                        write_forms=entry is None or entry.writes_forms,
                        unrelated_threshold=UNRELATED_CALL_THRESHOLD if weighs else None,
                        evident_threshold=EVIDENT_CALL_FLOOR if weighs else EVIDENT_CALL_THRESHOLD)


def create_backend(
    kind: str,
    *,
    model: str | None = None,
    base_url: str | None = None,
    api_key: str | None = None,
    tool_format: ToolFormat | None = None,
    script: Script | Mapping[str, Any] | str | Path | None = None,
    timeout: float | None = None,
    disable_reasoning: bool = True,
    extra_body: dict[str, Any] | None = None,
    media: frozenset[Media] = frozenset(),
    local: LocalModelSettings | None = None,
) -> LLMBackend:
    """Build the backend ``kind`` (one of :data:`BACKEND_KINDS`; see :func:`resolve_kind` for "auto").

    ``model`` is required by the OpenAI kinds; for ``"llamacpp"`` and ``"llama-server"`` it is a local model as
    :func:`voxcall.llm.catalog.resolve` takes it (a catalog name, ``hf:OWNER/REPO/FILE`` or a GGUF path; None: the
    catalog's default; ``"llama-server"``, whose ``base_url`` is llama.cpp's server, reads only
    its vocabulary: the server must have loaded the same file). ``tool_format`` None is the backend's own: the
    llama.cpp kinds always write code-format calls under a grammar (``"code"`` is accepted, ``"native"``
    refused), the others call natively, and
    ``"code"`` wraps them in a :class:`CodeFormatBackend`. ``timeout`` is how long the OpenAI kinds wait on their
    server (None: :data:`~voxcall.llm.openai_client.DEFAULT_TIMEOUT`); the in-process kinds have nothing to wait
    on and refuse one (a session's ``llm_timeout`` bounds every backend's silence). ``script`` is used by
    ``"scripted"`` only (None: the built-in script); ``disable_reasoning`` by ``"openai-chat"`` only (see
    :mod:`voxcall.llm.openai_chat`). Raises ``ValueError`` for an unknown kind or tool format, an option the kind
    cannot honour, or a missing model; ``LLMError`` when a local model cannot be loaded. ``media`` is what the
    model takes besides text (images for the OpenAI kinds, audio for ``"openai-chat"``); the in-process kinds take
    text only and refuse any. ``local`` is how the llama.cpp kinds run and decide (the ``local:`` settings; None:
    their defaults; ``"llama-server"`` takes the decisions: the tools shown, the call threshold, the phrase when late
    and the copying; the server has its own context, threads and cache).
    """
    if tool_format not in (None, "native", "code"):
        raise ValueError(f"unknown tool format {tool_format!r}; expected 'native' or 'code'")
    if kind not in BACKEND_KINDS:
        raise ValueError(f"unknown LLM backend {kind!r}; known kinds: {', '.join(BACKEND_KINDS)}")
    if timeout is not None and kind not in REMOTE_KINDS:
        raise ValueError(f"the {kind} backend runs in process and has no request timeout to set; a response's "
                         "silence is bounded by the session's llm_timeout")
    if kind in ("llamacpp", "llama-server", "scripted"):
        check_media(kind, media, frozenset())
    if kind in ("llamacpp", "llama-server") and tool_format == "native":
        raise ValueError(f"the {kind} backend always uses code-format calls with a grammar; leave tool_format "
                         "unset (or set it to 'code')")
    if kind == "llamacpp":
        settings = local or LocalModelSettings()
        return LlamaCppBackend(resolve_model(model), n_ctx=settings.n_ctx, n_threads=settings.threads,
                               slots=settings.slots, state_cache_bytes=settings.state_cache_bytes,
                               options=local_options(model, settings))
    if kind == "llama-server":
        if not base_url:
            raise ValueError("the llama-server backend needs the server's base_url (http://127.0.0.1:8080)")
        return LlamaServerBackend(base_url, resolve_model(model),
                                  timeout=timeout if timeout is not None else DEFAULT_TIMEOUT,
                                  api_key=api_key, options=local_options(model, local))
    backend: LLMBackend
    if kind == "scripted":
        backend = ScriptedBackend(script)
    else:
        if not model:
            raise ValueError(f"backend {kind!r} needs a model name")
        wait = timeout if timeout is not None else DEFAULT_TIMEOUT
        if kind == "openai-chat":
            backend = OpenAIChatBackend(model, base_url=base_url, api_key=api_key, timeout=wait,
                                        disable_reasoning=disable_reasoning, extra_body=extra_body, media=media)
        else:
            backend = OpenAIResponsesBackend(model, base_url=base_url, api_key=api_key, timeout=wait,
                                             extra_body=extra_body, media=media)
    return CodeFormatBackend(backend) if tool_format == "code" else backend


__all__ = [
    "BACKEND_KINDS",
    "DEFAULT_SCRIPT",
    "FALLBACK_KIND",
    "LOCAL_KIND",
    "REMOTE_KINDS",
    "AudioPart",
    "ChatItem",
    "CodeFormatBackend",
    "Done",
    "FunctionCallItem",
    "FunctionOutputItem",
    "ImagePart",
    "LLMBackend",
    "LLMError",
    "LLMEvent",
    "LLMRequest",
    "LlamaCppBackend",
    "LlamaServerBackend",
    "Media",
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
    "Warmable",
    "check_media",
    "computes_here",
    "create_backend",
    "local_model_available",
    "media_of",
    "model_of",
    "paired_thinker",
    "resolve_kind",
    "resolve_thinker",
    "talker_languages",
    "warm",
    "warm_shared",
]
