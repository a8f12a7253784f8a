"""The ``thinker:`` section: a stronger model that decides while the LLM above it speaks (off by default)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, SecretStr


class ThinkerSettings(BaseModel):
    """The ``thinker:`` section: a stronger model that decides which tool to call (or none) and answers what needs
    knowledge, while the LLM above it (the talker) is the voice: small talk, acknowledgements, results in words
    (:mod:`voxcall.llm.local.duet`). Off while ``model`` is unset: a 1.5B thinker takes seconds to its first word
    on two cores, so it is the operator's choice."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    model: str | None = None
    """A stronger model that decides about tools and answers what needs knowledge while the talker (``model``)
    speaks: for ``llamacpp`` a catalog name (``qwen2.5-coder-1.5b``), ``hf:OWNER/REPO/FILE`` or a GGUF path, loaded
    in this process beside the talker; a model name for the other kinds. None: no thinker."""
    llm: str = "llamacpp"
    """The thinker's backend kind, as ``llm`` names them (``llamacpp``, ``llama-server``, ``openai-chat`` …)."""
    base_url: str | None = None
    """Its server's URL (``llama-server`` and the OpenAI kinds)."""
    api_key: SecretStr | None = None
    """Its server's key (env ``VOXCALL_THINKER__API_KEY``)."""
    acknowledge_after_ms: int = Field(default=500, ge=0, le=60_000)
    """With no word from the thinker this long after the request, the voice says a short acknowledgement."""
    deadline_s: float = Field(default=20.0, gt=0, le=600)
    """A thinker still silent this long after the request is stopped and the voice says it could not answer."""
