"""The ``thinker:`` section: a stronger model that decides while the LLM above it speaks (by default the one the
in-process model's catalog entry pairs it with)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator

THINKER_AUTO = "auto"
"""``thinker.model``: the thinker the talker's catalog entry pairs it with (:attr:`voxcall.llm.catalog.CatalogModel.
thinker`), if any."""

THINKER_OFF = "off"
"""``thinker.model``: no thinker."""


class ThinkerSettings(BaseModel):
    """The ``thinker:`` section: a stronger model that decides which tool to call (or none) and answers what needs
    knowledge, while the LLM above it (the talker) is the voice: small talk, acknowledgements, results in words
    (:mod:`voxcall.llm.local.duet`). ``auto`` (the default) pairs the in-process default talker with the thinker
    its catalog entry names (``smollm2-135m`` with ``qwen2.5-coder-0.5b``); a larger thinker (1.5B: seconds to its
    first word on two cores) is the operator's choice."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    model: str | None = THINKER_AUTO
    """A stronger model that decides about tools and answers what needs knowledge while the talker (``model``)
    speaks: for ``llamacpp`` a catalog name (``qwen2.5-coder-1.5b``), ``hf:OWNER/REPO/FILE`` or a GGUF path, loaded
    in this process beside the talker; a model name for the other kinds. ``auto``: the thinker the talker's catalog
    entry names, when both run in this process (``llm`` and ``thinker.llm`` are ``llamacpp``) and it is installed;
    ``off`` (or null): no thinker."""
    llm: str = "llamacpp"
    """The thinker's backend kind, as ``llm`` names them (``llamacpp``, ``llama-server``, ``openai-chat`` …)."""
    base_url: str | None = None
    """Its server's URL (``llama-server`` and the OpenAI kinds)."""
    api_key: SecretStr | None = None
    """Its server's key (env ``VOXCALL_THINKER__API_KEY``)."""
    acknowledge_after_ms: int = Field(default=500, ge=0, le=60_000)
    """With no word from the thinker this long after the end of the user's speech (a request no speech ended: after
    the request), the voice says a short acknowledgement."""
    deadline_s: float = Field(default=20.0, gt=0, le=600)
    """A thinker still silent this long after the request is stopped and the voice says it could not answer."""

    @field_validator("model", mode="before")
    @classmethod
    def _off(cls, value: Any) -> Any:
        """YAML reads an unquoted ``off`` as false: it means ``off`` here too."""
        return THINKER_OFF if value is False else value
