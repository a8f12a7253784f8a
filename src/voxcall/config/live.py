"""The ``live:`` section: GPT-Live sessions, and the named backends their delegated tasks may use."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

DELEGATE_KEYS = frozenset({"llm", "model", "base_url", "api_key", "tool_format", "script"})
"""The backend settings a named delegation backend (``live.backends``) may set."""


class LiveSettings(BaseModel):
    """The ``live:`` section: GPT-Live sessions (``/v1/live/sessions``)."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    max_session_seconds: int = Field(default=3600, ge=60)
    """How long a Live session may last (its ``expires_at``); then it closes with ``session.closed``, reason
    ``expired``."""
    output_lead_ms: int = Field(default=200, ge=20, le=5000)
    """How far the voice's audio may run ahead of real time: what the client's player still holds when the user
    talks over the voice (the rest is never sent)."""
    usage_interval_seconds: float = Field(default=60.0, gt=0)
    """How often a session reports its duration (``session.usage.updated``)."""
    delegation_timeout: float = Field(default=600.0, gt=0)
    """Seconds a delegated task may take (the application's commentary, or the Responses backend's answer); then
    the voice is told the task failed."""
    strict_models: bool = False
    """Refuse a Responses delegation whose ``model`` names no backend of this server (``model_not_found``). By
    default any name is taken, as the Realtime endpoint takes any ``model``: an unknown one is served by the server's
    own backend, and the backend's responses name the model that answered."""
    backends: dict[str, dict[str, Any]] = Field(default_factory=dict)
    """More LLM backends, by name, for the tasks a Live voice delegates (``delegation.responses.model`` names one;
    the server's own backend is always there under its ``llm``/``model`` names): each holds the backend settings
    that differ from the server's own, of :data:`DELEGATE_KEYS` (``{office: {llm: openai-chat, model: gpt-5.5,
    base_url: ...}}``)."""

    @field_validator("backends")
    @classmethod
    def _backend_keys(cls, value: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
        for name, overrides in value.items():
            unknown = sorted(set(overrides) - DELEGATE_KEYS)
            if unknown:
                raise ValueError(f"backend {name!r}: unknown key(s) {unknown}; expected some of "
                                 f"{sorted(DELEGATE_KEYS)}")
        return value
