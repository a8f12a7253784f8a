"""Server configuration: one settings tree, :class:`ServerSettings`, with its sections :class:`SessionOptions`
(``session:``), :class:`SpeechSettings` (``speech:``), :class:`ToolsSettings` (``tools:``), :class:`McpSettings`
(``mcp:``), :class:`LiveSettings` (``live:``), :class:`LocalModelSettings` (``local:``), :class:`AgentProfile`
(``profiles:``), :class:`TwilioSettings` (``twilio:``), :class:`WebRTCSettings` (``webrtc:``) and
:class:`XiaozhiSettings` (``xiaozhi:``). Every default
is defined here, once.

Values come from CLI flags, over a YAML file, over the environment, over defaults. The YAML keys are the field
names, nested by section (``session: {llm_timeout: 30}``); environment variables carry the ``VOXCALL_`` prefix and
``__`` between a section and its field (``VOXCALL_PORT``, ``VOXCALL_SESSION__LLM_TIMEOUT``,
``VOXCALL_SPEECH__VAD``), except that the upstream LLM key is ``VOXCALL_LLM_API_KEY`` (with ``OPENAI_API_KEY`` as a
fallback for OpenAI itself). Every problem a user can cause surfaces as a :class:`ConfigError` whose message names
the setting and where it came from, never its value.

This module is the lowest layer of voxcall: it imports none of the others, so any of them may import it.
"""

from __future__ import annotations

import ipaddress
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, Literal, Self

import yaml
from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError, field_validator, model_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

LLM_KEY_ENV = "VOXCALL_LLM_API_KEY"
"""Environment variable of the upstream LLM key (not ``VOXCALL_API_KEY``, too close to ``VOXCALL_API_KEYS``)."""

DEFAULT_INSTRUCTIONS = (
    "You are a helpful voice assistant. Answer in one or two short, natural sentences that sound right "
    "when spoken: no markdown, lists, code or emoji. When a tool fits the request, use it rather than guessing; "
    "before a slow one, say a short sentence such as \"Let me check.\" If a tool fails, say so plainly and do not "
    "repeat the call. Ask when unsure."
)

LogLevel = Literal["critical", "error", "warning", "info", "debug", "trace"]
"""Log levels uvicorn knows (``trace`` is below ``debug``)."""

ToolFormat = Literal["native", "code"]
"""How a model calls tools: the API's native tool calls, or Python ``<code>`` blocks in its text (the local
path). :mod:`voxcall.llm` uses this very type."""

AudioInput = Literal["transcribe", "direct"]
"""What the model is given of the user's speech: its transcript, or the audio itself (a model that hears)."""

ModelInput = Literal["image", "audio"]
"""Inputs besides text a model may take. :mod:`voxcall.llm` calls the same values ``Media``."""

VadKind = Literal["silero", "webrtc"]
"""Voice activity detectors: Silero (ONNX, accurate) or WebRTC (light)."""

ShutdownCloseCode = Literal[1001, 1012]
"""WebSocket close codes a stopping server may end its sessions with: 1001 (going away) or 1012 (service restart:
reconnect, as a client of replicas behind a load balancer should)."""

MASK = "********"
"""What :meth:`ServerSettings.masked` shows instead of a secret."""

_SECRET_NAME = re.compile(r"key|token|secret|pass|auth|cookie|credential", re.IGNORECASE)
"""Names of MCP ``env`` variables and ``headers`` whose values :meth:`ServerSettings.masked` hides."""


class ConfigError(Exception):
    """A configuration problem the user can fix; its message is meant to be shown as is, without a traceback."""


class SessionOptions(BaseModel):
    """The ``session:`` section: what every realtime session of the server gets, and its limits."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    instructions: str = DEFAULT_INSTRUCTIONS
    """System instructions for sessions that set none."""
    prefetch: bool = True
    """Run a hidden follow-up response after tool output, claimed by the client's next ``response.create``."""
    max_speculative: int = Field(default=8, ge=1)
    """Process-wide limit on hidden follow-ups holding a provider slot at once."""
    llm_timeout: float = Field(default=60.0, gt=0)
    """Seconds of silence from the backend (before or between its events) after which the response fails."""
    max_frame_bytes: int = Field(default=1_048_576, gt=0)
    """Largest client WebSocket message accepted; a larger one is answered with an error event."""
    max_history_items: int = Field(default=200, ge=1)
    """Conversation items a session keeps; before a response, older ones are deleted from the conversation."""
    max_hidden_events: int = Field(default=2048, ge=1)
    """Events a hidden (speculative) response buffers before its stream pauses until it is claimed."""
    max_tools: int = Field(default=128, ge=1, le=10_000)
    """Function tools a session (or one response) may declare; more is an error that names this limit."""
    eager_turn_ms: int = Field(default=100, ge=0, le=10_000)
    """A pause (ms) inside a spoken turn after which the answer is prepared hidden: claimed when the turn detector
    confirms the end of the turn, dropped when the user speaks on. 0 turns it off."""
    live_transcript_ms: int = Field(default=500, ge=0, le=10_000)
    """Speech (ms) between two partial transcripts of a turn still being spoken under server VAD
    (``conversation.item.input_audio_transcription.delta`` while the user speaks); 0 turns them off (the whole
    transcript then comes as one delta just before ``.completed``)."""
    max_turn_seconds: float = Field(default=120.0, gt=0, le=300)
    """Longest spoken turn under server VAD: at this length the turn ends (is committed) as if the speaker had
    paused. Push-to-talk buffers are capped at 5 minutes without a commit."""
    events_per_second: int = Field(default=200, ge=1)
    """Client events a session may send per second, sustained (bursts up to one second's worth); more are dropped,
    the first of each burst with a ``rate_limit_exceeded`` error naming this limit."""
    responses_per_minute: int = Field(default=60, ge=1)
    """``response.create`` events a session may send per minute; more are refused with a ``rate_limit_exceeded``
    error (the session's ``rate_limits.updated`` events report what is left)."""
    max_conversation_bytes: int = Field(default=2_097_152, ge=1024)
    """Size (JSON bytes) of the conversation a response may send to the LLM; before a response, the oldest items
    are deleted until it fits (a call is never separated from its output); a single item larger than this is refused."""
    idle_timeout: float = Field(default=900.0, gt=0)
    """Seconds without a client event and with no response running after which the session is closed (code 1000,
    reason naming this limit)."""
    repair_tool_calls: bool = True
    """When a model's native tool call names no declared tool or its arguments break the schema, tell the model why
    and let it try once more within the same response (off: the call is only rejected)."""
    audio_input: AudioInput = "transcribe"
    """What the model is given of a spoken turn: ``transcribe``, the speech-to-text transcript; ``direct``, the audio
    itself (WAV), for a Chat Completions model that hears (``openai-chat`` only; implies ``model_inputs: [audio]``).
    The client still gets transcripts. A session may choose with ``audio.input.voxcall_audio_input``."""
    max_direct_audio_bytes: int = Field(default=4_194_304, ge=65_536)
    """Audio (WAV bytes) of the user's turns a session keeps for a model that hears it; past it, older turns keep
    only their transcripts. The newest turn is always kept."""
    max_image_bytes: int = Field(default=1_000_000, ge=1024)
    """Largest image a user message may carry: the length of its ``data:`` URL; a larger one is refused."""


class SpeechSettings(BaseModel):
    """The ``speech:`` section: the models that hear and speak, shared by every session."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    enabled: bool | None = None
    """Hear and speak. None: when the speech models are installed (else text only, with a note); True: required
    (a missing model stops the server); False: text only."""
    vad: VadKind = "silero"
    """Voice activity detector: Silero (accurate) or WebRTC (light)."""
    stt_model: str | None = None
    """Whisper model: an installed one by name (``tiny.en``, ``base`` with the ``[multilingual]`` extra) or a
    CTranslate2 Whisper folder; None: the packaged tiny.en. Sessions may choose another installed one."""
    tts_voice: Path | None = None
    """The default Piper voice (``.onnx``, its ``.onnx.json`` beside it; named by its ``voices`` entry, else its file
    stem); None: the packaged en_US joe medium (``joe``), or espeak-ng when that is not installed and espeak-ng is
    on ``PATH``."""
    voices: dict[str, Path] = Field(default_factory=dict)
    """More Piper voices sessions may choose by name (``audio.output.voice``): ``{name: path to .onnx}``, each
    loaded on first use. ``joe`` (the packaged voice) and espeak-ng's voices (``espeak:es`` …) are always there;
    ``voxcall voices`` lists them all."""


class ToolsSettings(BaseModel):
    """The ``tools:`` section: server-side tools every session may use."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    builtin: list[str] = Field(default_factory=list)
    """Built-in tools to enable: ``calculator``, ``clock``, ``music``, ``voice_volume`` (none by default; ``make serve``
    runs ``examples/demo.yaml``, which enables ``calculator`` and ``clock``)."""
    music_dir: Path | None = None
    """Folder the music tools play from (required by ``music``); nothing outside it is ever read."""
    modules: list[str] = Field(default_factory=list)
    """Python tool modules: dotted module names or ``.py`` file paths."""
    max_tool_rounds: int = Field(default=5, ge=1, le=20)
    """Rounds of server tool calls within one response before a final answer is forced (tools disabled)."""
    cache: dict[str, Annotated[float, Field(ge=0)]] = Field(default_factory=dict)
    """Seconds a server tool's result is reused for the same arguments, by tool name (0: never), over what the
    tool declares (``@tool(cache_ttl=…)``; MCP ``readOnlyHint: true``). Never for a tool that changes something."""
    allow_session_mcp: bool = False
    """Let sessions declare MCP servers (``{type: "mcp", server_url: …}``) in ``session.update``; loopback URLs only."""
    allow_remote_session_mcp: bool = False
    """Also let sessions reach MCP servers beyond loopback (only with ``allow_session_mcp``)."""
    timeout: float = Field(default=30.0, gt=0)
    """Seconds a server tool may run before its call ends ``timed_out`` and the model is told so (MCP servers: their
    own ``call_timeout``)."""
    timeouts: dict[str, Annotated[float, Field(gt=0)]] = Field(default_factory=dict)
    """Seconds, by tool name, over ``timeout`` (and over what a tool declares)."""
    max_concurrency: int = Field(default=8, ge=1)
    """Server tool calls that run at once in the process; more wait for a free slot."""
    max_threads: int = Field(default=32, ge=1)
    """Threads for sync tool handlers (their own, never the speech pipeline's); a timed-out call's thread is
    abandoned and holds its place until it ends; when all are taken a call fails at once."""
    acknowledge_after_ms: int = Field(default=700, ge=0, le=60_000)
    """A server tool still running this long after it started: the agent says a short acknowledgement ("One
    moment, I'm checking."), the response ends, the user may talk on, and the result is spoken when it lands
    (0: never; the response waits for its tools)."""
    client_tool_wait: float = Field(default=60.0, gt=0)
    """Seconds a client tool's call waits for its ``function_call_output``; then the model is told the tool did not
    answer."""
    repeatable: list[str] = Field(default_factory=list)
    """Tools meant to run again with the same arguments in one user turn (otherwise a repeat gets the first
    result)."""


class LocalModelSettings(BaseModel):
    """The ``local:`` section: how the local model runs and decides (the ``llamacpp`` and ``llama-server``
    backends; ``llama-server`` sets its own context size, threads and cache, so only the last two apply to it)."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    n_ctx: int = Field(default=2048, ge=256)
    """Context size in tokens, shared by every session (``llamacpp``)."""
    threads: int = Field(default=2, ge=1)
    """Threads that evaluate prompts (``llamacpp``); one thread generates, the fastest for a small model."""
    state_cache_bytes: int = Field(default=256 * 2**20, ge=0)
    """Memory for saved context states (``llamacpp``), so that sessions with different prompts do not evaluate their
    prefix again each turn (0: none)."""
    max_prompt_tools: int | None = Field(default=8, ge=1)
    """Tools shown to the model: with more offered, the most relevant to the user's words (None: all)."""
    call_threshold: float | None = Field(default=0.5, ge=0, le=1)
    """Probability of opening a call that makes a reply a call when the model may choose (None: plain sampling
    decides, which calls tools on small talk far more often)."""


class McpSettings(BaseModel):
    """The ``mcp:`` section: MCP servers the operator runs for every session (see :mod:`voxcall.tools.mcp`)."""

    model_config = ConfigDict(extra="forbid")

    servers: dict[str, dict[str, Any]] = Field(default_factory=dict)
    """``NAME: {command, args, env, cwd}`` (stdio) or ``NAME: {url, headers}`` (streamable HTTP), each with
    optional ``allowed_tools`` and ``require_approval``."""


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


def _ws_origin(value: str | None) -> str | None:
    """A ``ws://`` or ``wss://`` origin without a path, query or trailing slash (a ``public_url``)."""
    if value is None:
        return None
    value = value.rstrip("/")
    if not re.fullmatch(r"wss?://[^/?#\s]+", value):
        raise ValueError("must be a ws:// or wss:// origin such as wss://voice.example.com, with no path")
    return value


class AgentProfile(BaseModel):
    """One agent of the ``profiles:`` section: what a phone call (:mod:`voxcall.twilio`) or a device's session
    (:mod:`voxcall.xiaozhi`) answered by it is. Each field left out is the server's own (``session.instructions``,
    the default voice, the server's Whisper, server VAD, every server tool)."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    instructions: str | None = None
    """System instructions of the agent's calls."""
    voice: str | None = None
    """The voice it speaks with, by name (``voxcall voices``)."""
    tools: list[str] | None = None
    """The server tools (``tools:``, ``mcp:``) its calls may use, by name; ``[]``: none."""
    turn_detection: dict[str, Any] | None = None
    """How the end of a caller's turn is found: a Realtime ``turn_detection`` object
    (``{type: server_vad, silence_duration_ms: 500}``)."""
    language: str | None = None
    """The language its users speak (ISO 639-1: ``zh``), for the edges that honour it (xiaozhi devices): they are
    heard in it (by a multilingual Whisper when the server's does not know it), and answered by the voice for it
    unless :attr:`voice` names one (``baker`` for ``zh``, when installed)."""


class TwilioSettings(BaseModel):
    """The ``twilio:`` section: phone calls through Twilio Media Streams, at ``WS /v1/twilio/{profile}``."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    auth_token: SecretStr | None = None
    """The Twilio account's auth token (env ``VOXCALL_TWILIO__AUTH_TOKEN``): every stream must carry a valid
    ``X-Twilio-Signature`` made with it. Without it every stream is refused, unless :attr:`insecure_no_signature`."""
    public_url: str | None = None
    """The ``wss://`` origin Twilio connects to (``wss://voice.example.com``), when a proxy in front of voxcall
    changes the host or scheme: the signature is made over the URL Twilio used. None: the URL as the server sees
    it (its scheme from uvicorn's TLS or, behind a proxy, from ``X-Forwarded-Proto``)."""
    insecure_no_signature: bool = False
    """Accept streams without a valid signature (tests, a local tunnel); refused beyond a loopback ``host``."""
    dtmf_pause_ms: int = Field(default=1500, ge=0, le=30_000)
    """Keys the caller presses are gathered until ``#`` or this long without another key; then the model reads
    them as one user message (0: each key at once)."""

    @field_validator("public_url")
    @classmethod
    def _origin(cls, value: str | None) -> str | None:
        return _ws_origin(value)


class WebRTCSettings(BaseModel):
    """The ``webrtc:`` section: browser calls at ``POST /v1/realtime/calls`` (see :mod:`voxcall.webrtc`)."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    client_secret_seconds: int = Field(default=600, ge=10, le=7200)
    """How long a client secret lasts when its request names no ``expires_after.seconds``."""
    ice_servers: list[str] = Field(default_factory=list)
    """STUN servers the calls' ICE agent asks for the server's public address (``stun:stun.example.org:3478``).
    None by default: the server offers its own addresses only, which a client on the same host or network reaches;
    a server behind NAT serving the internet needs one (or a public address)."""
    loopback_candidate: bool = True
    """Offer the loopback address too, so that a client on the same host always reaches the server."""


class DeviceToken(BaseModel):
    """A token that opens xiaozhi device sessions (``Authorization: Bearer TOKEN``), and the agent its devices get."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    token: SecretStr
    """The token (at least 16 characters)."""
    profile: str | None = None
    """The agent profile of the sessions it opens (None: as the device id says, else ``xiaozhi.profile``)."""

    @field_validator("token")
    @classmethod
    def _long_enough(cls, value: SecretStr) -> SecretStr:
        if len(value.get_secret_value()) < 16:
            raise ValueError("a device token must be at least 16 characters long")
        return value


class XiaozhiSettings(BaseModel):
    """The ``xiaozhi:`` section: xiaozhi voice devices (ESP32 firmware, py-xiaozhi) at ``WS /xiaozhi/v1/``, told
    where to connect by ``/xiaozhi/ota/`` (see :mod:`voxcall.xiaozhi`)."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    tokens: list[DeviceToken] = Field(default_factory=list)
    """Tokens that open device sessions besides the client API keys. With keys or tokens configured every device
    presents one; without any (a loopback server), none is needed."""
    ota_token: SecretStr | None = None
    """The token ``/xiaozhi/ota/`` gives the devices it lets in, which opens their sessions as a token of
    :attr:`tokens` without a profile does. Anyone who reaches that endpoint with an allowed device id receives it, so
    pair it with :attr:`allowed_devices`. None: an empty token (enough on a server without keys or tokens)."""
    allowed_devices: list[str] | None = None
    """The device ids (``Device-Id``: the MAC address) that may connect and get the OTA answer; None: any."""
    profile: str | None = None
    """The agent profile of a device that neither its token nor :attr:`device_profiles` gives one (None: the
    server's own settings)."""
    device_profiles: dict[str, str] = Field(default_factory=dict)
    """Agent profile by device id."""
    public_url: str | None = None
    """The ``ws://`` or ``wss://`` origin devices connect to, when a proxy changes it; None: the host and port the
    OTA request was sent to."""
    sample_rate: Literal[16000, 24000] = 24000
    """The rate of the Opus audio sent to devices (announced in the server's ``hello``)."""
    wake_words: list[str] = Field(default_factory=lambda: ["你好小智", "hi esp"])
    """Words a device reports in ``listen``/``detect`` when its wake word fired (compared without case, spaces or
    punctuation): they open the conversation and are not a question to answer. Other ``detect`` text is."""
    greet_on_wake: bool = False
    """Answer a wake word (the model greets the user), as a typed message would be."""
    tool_timeout: float | None = Field(default=None, gt=0)
    """Seconds a device's own tool may take before the model hears that it did not answer (None: ``tools.timeout``;
    ``tools.timeouts`` may name a device tool too)."""
    keepalive_seconds: float = Field(default=30.0, ge=1, le=100)
    """While a tool runs, a device that has been sent nothing for this long is sent its face's ``thinking``
    emotion: firmware drops a channel after 120 s without data."""
    hidden_tools: list[str] = Field(default_factory=list)
    """Device tools (by their name on the device: ``self.camera.take_photo``) the model is never offered."""

    @field_validator("public_url")
    @classmethod
    def _origin(cls, value: str | None) -> str | None:
        return _ws_origin(value)

    def profile_names(self) -> set[str]:
        """Every agent profile the section names."""
        names = {token.profile for token in self.tokens} | set(self.device_profiles.values()) | {self.profile}
        return {name for name in names if name is not None}


class ServerSettings(BaseSettings):
    """Everything ``voxcall serve`` needs to know; build it with :meth:`load`."""

    model_config = SettingsConfigDict(env_prefix="VOXCALL_", env_nested_delimiter="__", extra="forbid",
                                      use_attribute_docstrings=True)

    host: str = "127.0.0.1"
    """Interface to listen on; anything but loopback needs client API keys (see :meth:`check_exposure`)."""
    port: int = Field(default=8765, ge=0, le=65535)
    """TCP port to listen on (0 picks a free one)."""
    llm: str | None = None
    """LLM backend kind: ``llamacpp``, ``llama-server``, ``scripted``, ``openai-chat`` or ``openai-responses``.
    None: ``llamacpp`` when llama.cpp and a model are installed, else ``scripted`` (see
    :func:`voxcall.llm.resolve_kind`)."""
    model: str | None = None
    """Model: a GGUF path for ``llamacpp`` and ``llama-server`` (the file the server loaded; None: the packaged
    SmolLM2-135M), a name for the OpenAI kinds."""
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
    profiles: dict[str, AgentProfile] = Field(default_factory=dict)
    """Named agents (the ``profiles:`` section): a phone number's stream names one in its path."""
    twilio: TwilioSettings = Field(default_factory=TwilioSettings)
    """Twilio Media Streams (the ``twilio:`` section)."""
    webrtc: WebRTCSettings = Field(default_factory=WebRTCSettings)
    """Browser calls over WebRTC (the ``webrtc:`` section)."""
    xiaozhi: XiaozhiSettings = Field(default_factory=XiaozhiSettings)
    """xiaozhi voice devices (the ``xiaozhi:`` section)."""

    @classmethod
    def load(cls, config_path: Path | None = None, **overrides: Any) -> Self:
        """Settings from ``overrides`` (the flags: a section is a mapping, ``session={"llm_timeout": 5}``; None
        values are "not given") over ``config_path``'s YAML over the environment over defaults. Raises
        :class:`ConfigError` for a missing or malformed file, an unknown key, a section's field set in the
        environment without its section, or an invalid value."""
        values = _read_yaml(config_path) if config_path is not None else {}
        _check_env_names(os.environ)
        try:
            return cls(**_merged(values, _given(overrides)))
        except ValidationError as exc:
            raise ConfigError(_describe(exc, config_path)) from None

    def masked(self) -> dict[str, Any]:
        """The settings as plain YAML-ready data, every secret replaced by :data:`MASK`: the upstream and client
        API keys, and MCP ``env`` and ``headers`` values whose names suggest a secret (``…KEY``, ``…TOKEN``,
        ``Authorization`` …)."""
        data = self.model_dump(mode="json")
        data["api_key"] = MASK if self.api_key is not None else None
        data["api_keys"] = [MASK for _ in self.api_keys]
        data["twilio"]["auth_token"] = MASK if self.twilio.auth_token is not None else None
        for server in data["mcp"]["servers"].values():
            for part in ("env", "headers"):
                if isinstance(server.get(part), dict):
                    server[part] = {name: MASK if _SECRET_NAME.search(str(name)) else value
                                    for name, value in server[part].items()}
        return data

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


def is_loopback(host: str) -> bool:
    """Whether ``host`` only accepts connections from this machine: ``localhost``, 127.0.0.0/8 or ``::1``."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False  # a host name: it may resolve to anything


def default_of(path: str) -> Any:
    """The default of the setting at the dotted ``path`` (``"port"``, ``"session.llm_timeout"``): what ``--help``
    shows for a flag, read from the model so that it is never written twice."""
    model: type[BaseModel] = ServerSettings
    *sections, name = path.split(".")
    for section in sections:
        model = _sections(model)[section]
    return model.model_fields[name].get_default(call_default_factory=True)


def _sections(model: type[BaseModel]) -> dict[str, type[BaseModel]]:
    """The fields of ``model`` that are sections, with their models."""
    return {name: field.annotation for name, field in model.model_fields.items()
            if isinstance(field.annotation, type) and issubclass(field.annotation, BaseModel)}


def _given(overrides: Mapping[str, Any]) -> dict[str, Any]:
    """``overrides`` without the values that were not given (None), in sections too; emptied sections go."""
    given: dict[str, Any] = {}
    for name, value in overrides.items():
        if isinstance(value, Mapping):
            value = _given(value) or None
        if value is not None:
            given[name] = value
    return given


def _merged(base: Mapping[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    """``base`` with ``over`` on top, section by section (a flag changes one field of a YAML section, not all)."""
    merged = dict(base)
    for name, value in over.items():
        below = merged.get(name)
        merged[name] = _merged(below, value) if isinstance(below, Mapping) and isinstance(value, Mapping) else value
    return merged


def _read_yaml(path: Path) -> dict[str, Any]:
    """The settings in the YAML file ``path``. Raises :class:`ConfigError` when it is missing, malformed or holds
    an unknown top-level key (a key within a section is checked by that section's model)."""
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
    unknown = sorted(str(key) for key in data if key not in known)
    if unknown:
        hints = "".join(f"; {name} belongs in the {section}: section" for name in unknown
                        if (section := _section_holding(name)) is not None)
        raise ConfigError(f"config file {path}: unknown setting(s) {', '.join(unknown)}{hints}; "
                          f"known: {', '.join(sorted(known))}")
    return data


def _check_env_names(environ: Mapping[str, str]) -> None:
    """Refuse a ``VOXCALL_*`` variable named after a section's field without its section
    (``VOXCALL_LLM_TIMEOUT`` for ``VOXCALL_SESSION__LLM_TIMEOUT``), which the environment source would ignore."""
    prefix = "VOXCALL_"
    misplaced = sorted(f"{name} (use {prefix}{section.upper()}__{name[len(prefix):].upper()})"
                       for name in environ if name.upper().startswith(prefix)
                       if (section := _section_holding(name[len(prefix):].lower())) is not None)
    if misplaced:
        raise ConfigError(f"environment variable(s) outside their section: {', '.join(misplaced)}")


def _section_holding(name: str) -> str | None:
    """The section that has a field ``name`` (for a flat key written at the top level), if any."""
    return next((section for section, model in _sections(ServerSettings).items() if name in model.model_fields),
                None)


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
