"""Server configuration: :class:`ServerSettings`, loaded from CLI flags over a YAML file over the environment over
defaults.

Environment variables carry the ``VOXCALL_`` prefix (``VOXCALL_PORT``, ``VOXCALL_API_KEYS`` …), except that the
upstream LLM key is ``VOXCALL_LLM_API_KEY`` (with ``OPENAI_API_KEY`` as a fallback for OpenAI itself). The YAML
file's keys are the field names, plus the ``tools:`` and ``mcp:`` sections; other top-level sections are
ignored. Every problem a user can cause surfaces as a :class:`ConfigError` whose message names what is wrong and where.
"""

from __future__ import annotations

import ipaddress
import os
from pathlib import Path
from typing import Annotated, Any, Literal, Self

import yaml
from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError, field_validator, model_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

LLM_KEY_ENV = "VOXCALL_LLM_API_KEY"
"""Environment variable of the upstream LLM key (not ``VOXCALL_API_KEY``, too close to ``VOXCALL_API_KEYS``)."""

DEFAULT_INSTRUCTIONS = (
    "You are a helpful voice assistant. Answer in one or two short, natural sentences that sound right "
    "when spoken: no markdown, lists, code or emoji. Use your tools when they help, and ask when unsure."
)

LogLevel = Literal["critical", "error", "warning", "info", "debug", "trace"]
"""Log levels uvicorn knows (``trace`` is below ``debug``)."""

ToolFormat = Literal["native", "code"]
"""How the model calls tools; the same values as :data:`voxcall.llm.ToolFormat`."""


class ConfigError(Exception):
    """A configuration problem the user can fix; its message is meant to be shown as is, without a traceback."""


class ToolsSettings(BaseModel):
    """The ``tools:`` section: server-side tools every session may use."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    builtin: list[str] = Field(default_factory=list)
    """Built-in tools to enable: ``calculator``, ``music``, ``voice_volume``."""
    music_dir: Path | None = None
    """Folder the music tools play from (required by ``music``); nothing outside it is ever read."""
    modules: list[str] = Field(default_factory=list)
    """Python tool modules: dotted module names or ``.py`` file paths."""
    max_tool_rounds: int = Field(default=5, ge=1, le=20)
    """Rounds of server tool calls within one response before a final answer is forced (tools disabled)."""
    allow_session_mcp: bool = False
    """Let sessions declare MCP servers (``{type: "mcp", server_url: …}``) in ``session.update``; loopback URLs only."""
    allow_remote_session_mcp: bool = False
    """Also let sessions reach MCP servers beyond loopback (only with ``allow_session_mcp``)."""


class McpSettings(BaseModel):
    """The ``mcp:`` section: MCP servers the operator runs for every session (see :mod:`voxcall.tools.mcp`)."""

    model_config = ConfigDict(extra="forbid")

    servers: dict[str, dict[str, Any]] = Field(default_factory=dict)
    """``NAME: {command, args, env, cwd}`` (stdio) or ``NAME: {url, headers}`` (streamable HTTP), each with
    optional ``allowed_tools`` and ``require_approval``."""


class ServerSettings(BaseSettings):
    """Everything ``voxcall serve`` needs to know; build it with :meth:`load`."""

    model_config = SettingsConfigDict(env_prefix="VOXCALL_", extra="forbid", use_attribute_docstrings=True)

    host: str = "127.0.0.1"
    """Interface to listen on; anything but loopback needs client API keys (see :meth:`check_exposure`)."""
    port: int = Field(default=8765, ge=0, le=65535)
    """TCP port to listen on (0 picks a free one)."""
    llm: str = "scripted"
    """LLM backend kind: ``scripted``, ``openai-chat`` or ``openai-responses``."""
    model: str | None = None
    """Model name the backend asks for; required by the OpenAI kinds."""
    base_url: str | None = None
    """OpenAI-compatible server URL (vLLM, llama.cpp, Ollama …); None means OpenAI itself."""
    api_key: SecretStr | None = Field(default=None, validation_alias=LLM_KEY_ENV)
    """Upstream LLM key (env ``VOXCALL_LLM_API_KEY``; ``OPENAI_API_KEY`` when talking to OpenAI itself)."""
    tool_format: ToolFormat = "native"
    """How the model calls tools: the API's native tool calls, or Python ``<code>`` blocks in its text."""
    script: Path | None = None
    """Script file (YAML or JSON) for the scripted backend; None uses its built-in greeting script."""
    prefetch: bool = True
    """Run a hidden follow-up response after tool output, claimed by the client's next ``response.create``."""
    max_speculative: int = Field(default=8, ge=1)
    """Process-wide limit on hidden follow-ups holding a provider slot at once."""
    instructions: str = DEFAULT_INSTRUCTIONS
    """System instructions for sessions that set none."""
    api_keys: Annotated[list[SecretStr], NoDecode] = Field(default_factory=list)
    """Client API keys (env ``VOXCALL_API_KEYS``, comma-separated); merged with :attr:`api_key_file`'s."""
    api_key_file: Path | None = None
    """File of client API keys: one per line; blank lines and lines starting with ``#`` are skipped."""
    insecure_no_auth: bool = False
    """Allow listening beyond loopback without client API keys (anyone who can reach the port may use it)."""
    max_frame_bytes: int = Field(default=1_048_576, gt=0)
    """Largest client WebSocket message accepted; a larger one is answered with an error event."""
    llm_timeout: float = Field(default=60.0, gt=0)
    """Seconds of silence from the backend mid-stream before the response fails."""
    log_level: LogLevel = "info"
    """Log level of voxcall and uvicorn."""
    tools: ToolsSettings = Field(default_factory=ToolsSettings)
    """Server-side tools (the ``tools:`` section of the YAML file)."""
    mcp: McpSettings = Field(default_factory=McpSettings)
    """MCP servers (the ``mcp:`` section of the YAML file)."""

    @classmethod
    def load(cls, config_path: Path | None = None, **cli_overrides: Any) -> Self:
        """Settings from ``cli_overrides`` (None values are "not given") over ``config_path``'s YAML over the
        environment over defaults. Raises :class:`ConfigError` for a missing or malformed file or invalid values."""
        values = _read_yaml(config_path) if config_path is not None else {}
        values.update({name: value for name, value in cli_overrides.items() if value is not None})
        try:
            return cls(**values)
        except ValidationError as exc:
            raise ConfigError(_describe(exc, config_path)) from None

    def client_keys(self) -> set[str]:
        """The client API keys: :attr:`api_keys` plus those in :attr:`api_key_file` (read on every call).

        Raises :class:`ConfigError` when the file cannot be read or holds no key (an empty key file is a mistake,
        not a request to turn authentication off)."""
        keys = {key.get_secret_value() for key in self.api_keys}
        if self.api_key_file is not None:
            keys |= _read_key_file(self.api_key_file)
        return keys

    def check_exposure(self) -> None:
        """Refuse to serve beyond loopback without authentication: raises :class:`ConfigError` when :attr:`host`
        is not a loopback address, there are no client keys and :attr:`insecure_no_auth` is off."""
        if not self.client_keys() and not self.insecure_no_auth and not is_loopback(self.host):
            raise ConfigError(
                f"refusing to listen on {self.host} without client API keys: pass --api-key-file PATH or set "
                "VOXCALL_API_KEYS, or pass --insecure-no-auth to let anyone who reaches the port use it"
            )

    @field_validator("api_keys", mode="before")
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
    def _openai_key_fallback(self) -> Self:
        """Use ``OPENAI_API_KEY`` for an OpenAI kind aimed at OpenAI itself (no :attr:`base_url`): that key is
        never sent to another server."""
        fallback = os.environ.get("OPENAI_API_KEY")
        if self.api_key is None and fallback and self.llm.startswith("openai-") and self.base_url is None:
            self.api_key = SecretStr(fallback)
        return self


def is_loopback(host: str) -> bool:
    """Whether ``host`` only accepts connections from this machine: ``localhost``, 127.0.0.0/8 or ``::1``."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False  # a host name: it may resolve to anything


def _read_yaml(path: Path) -> dict[str, Any]:
    """The settings in the YAML file ``path``: its known keys, with unknown sections (mappings, lists or empty
    values, which later features own) left out. Raises :class:`ConfigError` for anything else that is wrong."""
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"config file {path}: not found") from None
    except OSError as exc:
        raise ConfigError(f"config file {path}: cannot read it ({exc.strerror or exc})") from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"config file {path}: not valid YAML ({_yaml_problem(exc)})") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(f"config file {path}: expected a mapping of settings, got {type(data).__name__}")
    known = set(ServerSettings.model_fields)
    unknown = sorted(str(key) for key, value in data.items() if key not in known and _is_scalar(value))
    if unknown:
        raise ConfigError(f"config file {path}: unknown setting(s) {', '.join(unknown)}; "
                          f"known: {', '.join(sorted(known))}")
    return {key: value for key, value in data.items() if key in known}


def _is_scalar(value: Any) -> bool:
    """Whether a YAML value is a plain setting (a likely typo when unknown) rather than a section."""
    return value is not None and not isinstance(value, dict | list)


def _read_key_file(path: Path) -> set[str]:
    """The keys in ``path``: one per line, blank lines and ``#`` comment lines skipped."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise ConfigError(f"API key file {path}: cannot read it ({exc.strerror or exc})") from None
    keys = {line.strip() for line in lines if line.strip() and not line.lstrip().startswith("#")}
    if not keys:
        raise ConfigError(f"API key file {path}: holds no keys")
    return keys


def _describe(exc: ValidationError, config_path: Path | None) -> str:
    """One line per invalid value, naming the setting (never echoing the value: it may be a secret)."""
    where = f" (from flags, {config_path} or the environment)" if config_path else " (from flags or the environment)"
    problems = "; ".join(f"{_setting_name(error['loc'])}: {error['msg']}" for error in exc.errors())
    return f"invalid settings{where}: {problems}"


def _setting_name(loc: tuple[int | str, ...]) -> str:
    """The user-facing name of an error location (``api_key`` rather than its env alias)."""
    name = ".".join(str(part) for part in loc) or "settings"
    return "api_key" if name == LLM_KEY_ENV else name


def _yaml_problem(exc: yaml.YAMLError) -> str:
    """Where and what the YAML error is, on one line (``line 2, column 5: expected ',' or ']', but got ':'``)."""
    if isinstance(exc, yaml.MarkedYAMLError) and exc.problem_mark is not None and exc.problem:
        mark = exc.problem_mark
        return f"line {mark.line + 1}, column {mark.column + 1}: {exc.problem}"
    return " ".join(str(exc).split())
