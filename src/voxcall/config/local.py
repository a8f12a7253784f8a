"""The ``local:`` section: how the local model runs and decides."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class LocalModelSettings(BaseModel):
    """The ``local:`` section: how the local model runs and decides (the ``llamacpp`` and ``llama-server``
    backends; ``llama-server`` sets its own context size, slots, threads and cache, so only the decisions from
    ``max_prompt_tools`` on apply to it)."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    n_ctx: int = Field(default=2048, ge=256)
    """Context size in tokens of each reply (``llamacpp``)."""
    slots: int = Field(default=1, ge=1, le=64)
    """Replies generated at once (``llamacpp``: llama.cpp's continuous batching), each with ``n_ctx`` of context;
    more wait for a free slot. One suits two cores: a reply then waits at most a warm's chunk for the slot that
    holds its conversation, where with two it may land on the other, cold one."""
    threads: int = Field(default=2, ge=1)
    """Threads that evaluate prompts (``llamacpp``); one thread generates, the fastest for a small model."""
    state_cache_bytes: int = Field(default=256 * 2**20, ge=0)
    """Memory for prompts a slot dropped (``llamacpp``), so that sessions with different prompts do not evaluate
    their prefix again each turn (0: none)."""
    max_prompt_tools: int | None = Field(default=8, ge=1)
    """Tools shown to the model: with more offered, the most relevant to the user's words (None: all)."""
    call_threshold: float | None = Field(default=0.5, ge=0, le=1)
    """Probability of opening a call that makes a reply a call when the model may choose (None: plain sampling
    decides, which calls tools on small talk far more often). Words that share none with any tool need at least
    :data:`~voxcall.llm.local.plan.UNRELATED_CALL_THRESHOLD`, for every model whose catalog entry does not say
    otherwise (:func:`voxcall.llm.local_options`)."""
    copy_strings: bool = True
    """Whether a call's plain string and number arguments must be the user's words: a tiny model then cannot invent
    values, and every catalog model keeps the Chinese words it was given (False: a larger model may complete or
    translate them, "Boston" → "Boston, MA", 厨房 → "kitchen"; see the README for the figures). A string whose
    description prescribes a form ("in the format of 'City, State'") is written by every model whose catalog entry
    says it can (``CatalogModel.writes_forms``)."""
    jump_forward: bool = True
    """Whether the text a call's grammar forces (the rest of a tool's name, an argument's name, ``')</code>``) is
    given to the model as prompt instead of sampled token by token, each call then written a token per request, so
    that a call is decided sooner (see the README for the figures; False: every token sampled from one stream, for
    a server where a request costs more than a token)."""
    acknowledge_after_ms: int | None = Field(default=300, ge=0, le=60_000)
    """A spoken reply whose prompt the model still has more than this to read (a session's first turn with tools of
    its own, when the user stopped before their warm was done) opens with a short phrase in the user's language
    ("Let me see."), and small talk is answered without the tools, so the user does not wait in silence (None:
    never)."""
