"""The settings tree: :class:`ServerSettings`, everything ``voxcall serve`` needs to know, its sections, and the
default of any setting by its dotted path."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated, Any, Self

from pydantic import BaseModel, Field, SecretStr, ValidationError, field_validator, model_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from voxcall.config.kinds import ConfigError, LogLevel, ModelInput, ShutdownCloseCode, ToolFormat
from voxcall.config.live import LiveSettings
from voxcall.config.loading import LLM_KEY_ENV, check_env_names, describe, given, merged, read_yaml, sections
from voxcall.config.local import LocalModelSettings
from voxcall.config.security import MASK, is_loopback, mask_mcp_secrets, read_key_file
from voxcall.config.session import SessionOptions
from voxcall.config.speech import SpeechSettings
from voxcall.config.telemetry import TelemetrySettings
from voxcall.config.telephony import AgentProfile, TwilioSettings
from voxcall.config.thinker import ThinkerSettings
from voxcall.config.tools import McpSettings, ToolsSettings
from voxcall.config.webrtc import WebRTCSettings
from voxcall.config.xiaozhi import XiaozhiSettings


class ServerSettings(BaseSettings):
    """Everything ``voxcall serve`` needs to know; build it with :meth:`load`."""

    model_config = SettingsConfigDict(env_prefix="VOXCALL_", env_nested_delimiter="__", extra="forbid",
                                      use_attribute_docstrings=True)

    host: str = "127.0.0.1"
    """Interface to listen on; anything but loopback needs client API keys (see :meth:`check_exposure`)."""
    port: int = Field(default=8765, ge=0, le=65535)
    """TCP port to listen on (0 picks a free one)."""
    llm: str | None = None
    """LLM backend: ``llamacpp`` (in process), ``llama-server`` (llama.cpp's, at ``base_url``), ``scripted``,
    ``openai-chat`` or ``openai-responses``. None: ``llamacpp`` when llama.cpp and a model are installed, else
    ``scripted`` (see :func:`voxcall.llm.resolve_kind`)."""
    model: str | None = None
    """Model: for ``llamacpp`` and ``llama-server`` a catalog name (``voxcall models``), ``hf:OWNER/REPO/FILE`` or a
    GGUF path (None: ``smollm2-135m``); for the OpenAI kinds the provider's model name."""
    model_inputs: list[ModelInput] = Field(default_factory=list)
    """What the model takes besides text: ``image`` (``input_image`` parts reach it; otherwise they are replaced by
    a note), ``audio`` (sessions may send it their speech: ``session.audio_input``). Only the OpenAI kinds
    (``openai-responses``: images only); the server cannot know a remote model's abilities, so you say them."""
    base_url: str | None = None
    """OpenAI-compatible server URL (vLLM, llama.cpp, Ollama …; for ``llama-server``, llama.cpp's server); None
    means OpenAI itself."""
    api_key: SecretStr | None = Field(default=None, validation_alias=LLM_KEY_ENV)
    """Upstream LLM key (env ``VOXCALL_LLM_API_KEY``; ``OPENAI_API_KEY`` when talking to OpenAI itself)."""
    tool_format: ToolFormat | None = None
    """How the model calls tools: ``native`` API calls or ``code`` blocks in its text. None: the backend's own
    (``llamacpp`` always writes grammar-constrained code calls; the others call natively)."""
    script: Path | None = None
    """Script file (YAML or JSON) for the scripted backend; None uses its built-in demo script."""
    api_keys: Annotated[list[SecretStr], NoDecode] = Field(default_factory=list)
    """Client API keys (env ``VOXCALL_API_KEYS``, comma-separated); merged with :attr:`api_key_file`'s."""
    api_key_file: Path | None = None
    """File of client API keys: one per line; blank lines and lines starting with ``#`` are skipped."""
    insecure_no_auth: bool = False
    """Allow listening beyond loopback without client API keys (anyone who can reach the port may use it)."""
    allowed_origins: Annotated[list[str], NoDecode] = Field(default_factory=list)
    """Web pages (``https://app.example``) whose scripts may open ``/v1/realtime`` besides the server's own; ``*``
    allows any. Clients that send no ``Origin`` (SDKs, servers) are not affected (env ``VOXCALL_ALLOWED_ORIGINS``,
    comma-separated)."""
    log_level: LogLevel = "info"
    """Log level of voxcall and uvicorn."""
    max_sessions: int = Field(default=100, ge=1)
    """Realtime sessions the process serves at once; one more is refused with HTTP 503 before the upgrade."""
    max_sessions_per_key: int = Field(default=20, ge=1)
    """Sessions one client API key may hold at once (when keys are configured); one more is refused with
    HTTP 429 before the upgrade."""
    shutdown_grace: float = Field(default=10.0, ge=0)
    """Seconds a stop signal (SIGTERM, Ctrl-C) gives running responses to finish; then every session is closed
    with :attr:`shutdown_close_code`. While draining, new connections are refused and ``/healthz`` answers 503."""
    shutdown_close_code: ShutdownCloseCode = 1001
    """WebSocket close code of the sessions a stopping server ends: 1001 (going away: one server that stops) or
    1012 (service restart: a replica behind a load balancer, whose clients should reconnect to another one)."""
    session: SessionOptions = Field(default_factory=SessionOptions)
    """What every session gets, and its limits (the ``session:`` section)."""
    speech: SpeechSettings = Field(default_factory=SpeechSettings)
    """The speech models (the ``speech:`` section)."""
    tools: ToolsSettings = Field(default_factory=ToolsSettings)
    """Server-side tools (the ``tools:`` section)."""
    mcp: McpSettings = Field(default_factory=McpSettings)
    """MCP servers (the ``mcp:`` section)."""
    live: LiveSettings = Field(default_factory=LiveSettings)
    """GPT-Live sessions (the ``live:`` section)."""
    local: LocalModelSettings = Field(default_factory=LocalModelSettings)
    """The local model's knobs (the ``local:`` section)."""
    thinker: ThinkerSettings = Field(default_factory=ThinkerSettings)
    """A stronger model that decides while the LLM above speaks (the ``thinker:`` section; by default the one the
    in-process model's catalog entry names)."""
    profiles: dict[str, AgentProfile] = Field(default_factory=dict)
    """Named agents (the ``profiles:`` section): a phone number's stream names one in its path."""
    twilio: TwilioSettings = Field(default_factory=TwilioSettings)
    """Twilio Media Streams (the ``twilio:`` section)."""
    webrtc: WebRTCSettings = Field(default_factory=WebRTCSettings)
    """Browser calls over WebRTC (the ``webrtc:`` section)."""
    xiaozhi: XiaozhiSettings = Field(default_factory=XiaozhiSettings)
    """xiaozhi voice devices (the ``xiaozhi:`` section)."""
    telemetry: TelemetrySettings = Field(default_factory=TelemetrySettings)
    """OpenTelemetry traces (the ``telemetry:`` section)."""

    @classmethod
    def load(cls, config_path: Path | None = None, **overrides: Any) -> Self:
        """Settings from ``overrides`` (the flags: a section is a mapping, ``session={"llm_timeout": 5}``; None
        values are "not given") over ``config_path``'s YAML over the environment over defaults. Raises
        :class:`ConfigError` for a missing or malformed file, an unknown key, a section's field set in the
        environment without its section, or an invalid value."""
        values = read_yaml(config_path, cls) if config_path is not None else {}
        check_env_names(os.environ, cls)
        try:
            return cls(**merged(values, given(overrides)))
        except ValidationError as exc:
            raise ConfigError(describe(exc, config_path)) from None

    def masked(self) -> dict[str, Any]:
        """The settings as plain YAML-ready data, every secret replaced by :data:`MASK`: the upstream, thinker's
        and client API keys, and MCP ``env`` and ``headers`` values whose names suggest a secret (``…KEY``,
        ``…TOKEN``, ``Authorization`` …)."""
        data = self.model_dump(mode="json")
        data["api_key"] = MASK if self.api_key is not None else None
        data["thinker"]["api_key"] = MASK if self.thinker.api_key is not None else None
        data["api_keys"] = [MASK for _ in self.api_keys]
        data["twilio"]["auth_token"] = MASK if self.twilio.auth_token is not None else None
        mask_mcp_secrets(data["mcp"]["servers"])
        return data

    def client_keys(self) -> set[str]:
        """The client API keys: :attr:`api_keys` plus those in :attr:`api_key_file` (read on every call).

        Raises :class:`ConfigError` when the file cannot be read or holds no key (an empty key file is a mistake,
        not a request to turn authentication off)."""
        keys = {key.get_secret_value() for key in self.api_keys}
        if self.api_key_file is not None:
            keys |= read_key_file(self.api_key_file)
        return keys

    def check_exposure(self) -> None:
        """Refuse to serve beyond loopback without authentication: raises :class:`ConfigError` when :attr:`host`
        is not a loopback address and there are no client keys while :attr:`insecure_no_auth` is off, or Twilio
        streams are accepted unsigned (``twilio.insecure_no_signature``)."""
        if not self.client_keys() and not self.insecure_no_auth and not is_loopback(self.host):
            raise ConfigError(
                f"refusing to listen on {self.host} without client API keys: pass --api-key-file PATH or set "
                "VOXCALL_API_KEYS, or pass --insecure-no-auth to let anyone who reaches the port use it"
            )
        if self.twilio.insecure_no_signature and not is_loopback(self.host):
            raise ConfigError(f"refusing to listen on {self.host} with twilio.insecure_no_signature: anyone who "
                              "reaches the port could place calls; set twilio.auth_token instead")

    @field_validator("api_keys", "allowed_origins", mode="before")
    @classmethod
    def _split_keys(cls, value: Any) -> Any:
        """Accept a comma-separated string (the env form) as well as a list; blank entries are dropped."""
        items = value.split(",") if isinstance(value, str) else value
        if not isinstance(items, list):
            return items
        stripped = (item.strip() if isinstance(item, str) else item for item in items)
        return [item for item in stripped if item != ""]

    @field_validator("log_level", mode="before")
    @classmethod
    def _lower_level(cls, value: Any) -> Any:
        """Accept ``INFO`` as well as ``info``."""
        return value.lower() if isinstance(value, str) else value

    @model_validator(mode="before")
    @classmethod
    def _accept_api_key_by_name(cls, data: Any) -> Any:
        """Let callers and the YAML file say ``api_key``; the env source knows the field only by its alias, so
        ``VOXCALL_API_KEY`` is never mistaken for it. A value given by name beats the environment's."""
        if isinstance(data, dict) and "api_key" in data:
            data = {**data, LLM_KEY_ENV: data["api_key"]}
            del data["api_key"]
        return data

    @model_validator(mode="after")
    def _known_profiles(self) -> Self:
        """Every agent profile the ``xiaozhi:`` section names is one of ``profiles:``."""
        unknown = sorted(self.xiaozhi.profile_names() - set(self.profiles))
        if unknown:
            raise ValueError(f"xiaozhi names agent profile(s) {', '.join(unknown)}, which profiles: does not have")
        return self

    @model_validator(mode="after")
    def _openai_key_fallback(self) -> Self:
        """Use ``OPENAI_API_KEY`` for an OpenAI kind aimed at OpenAI itself (no :attr:`base_url`): that key is
        never sent to another server."""
        fallback = os.environ.get("OPENAI_API_KEY")
        openai_kind = self.llm is not None and self.llm.startswith("openai-")
        if self.api_key is None and fallback and openai_kind and self.base_url is None:
            self.api_key = SecretStr(fallback)
        return self


def default_of(path: str) -> Any:
    """The default of the setting at the dotted ``path`` (``"port"``, ``"session.llm_timeout"``): what ``--help``
    shows for a flag, read from the model so that it is never written twice."""
    model: type[BaseModel] = ServerSettings
    *parts, name = path.split(".")
    for section in parts:
        model = sections(model)[section]
    return model.model_fields[name].get_default(call_default_factory=True)


def description_of(path: str) -> str:
    """What the setting at the dotted ``path`` is, as its docstring says (what ``--help`` shows for a flag)."""
    model: type[BaseModel] = ServerSettings
    *parts, name = path.split(".")
    for section in parts:
        model = sections(model)[section]
    return model.model_fields[name].description or ""
