"""Server configuration: one settings tree, :class:`ServerSettings`, one module per section: :class:`SessionOptions`
(``session:``), :class:`SpeechSettings` (``speech:``), :class:`ToolsSettings` (``tools:``), :class:`McpSettings`
(``mcp:``), :class:`LiveSettings` (``live:``), :class:`LocalModelSettings` (``local:``), :class:`ThinkerSettings`
(``thinker:``), :class:`AgentProfile` (``profiles:``), :class:`TwilioSettings` (``twilio:``),
:class:`WebRTCSettings` (``webrtc:``), :class:`XiaozhiSettings` (``xiaozhi:``) and :class:`TelemetrySettings`
(``telemetry:``). Every default is defined here, once, and read by name wherever it applies (:func:`default_of`
reads one by its dotted path).

Values come from CLI flags, over a YAML file, over the environment, over defaults (:mod:`~voxcall.config.loading`).
The YAML keys are the field names, nested by section (``session: {llm_timeout: 30}``); environment variables carry
the ``VOXCALL_`` prefix and ``__`` between a section and its field (``VOXCALL_PORT``,
``VOXCALL_SESSION__LLM_TIMEOUT``, ``VOXCALL_SPEECH__VAD``), except that the upstream LLM key is
``VOXCALL_LLM_API_KEY`` (with ``OPENAI_API_KEY`` as a fallback for OpenAI itself). Every problem a user can cause
surfaces as a :class:`ConfigError` whose message names the setting and where it came from, never its value. Secrets
are masked for display and the server refuses to listen beyond loopback without keys
(:mod:`~voxcall.config.security`).

This package is the lowest layer of voxcall: it imports none of the others, so any of them may import it.
"""

from __future__ import annotations

from voxcall.config.kinds import AudioInput, ConfigError, LogLevel, ModelInput, ShutdownCloseCode, ToolFormat, VadKind
from voxcall.config.live import DELEGATE_KEYS, LiveSettings
from voxcall.config.loading import LLM_KEY_ENV
from voxcall.config.local import LocalModelSettings
from voxcall.config.security import MASK, is_loopback
from voxcall.config.server import ServerSettings, default_of, description_of
from voxcall.config.session import DEFAULT_INSTRUCTIONS, SessionOptions
from voxcall.config.speech import SpeechSettings
from voxcall.config.telemetry import TelemetrySettings, TracingMode
from voxcall.config.telephony import AgentProfile, TwilioSettings
from voxcall.config.thinker import ThinkerSettings
from voxcall.config.tools import McpSettings, ToolsSettings
from voxcall.config.webrtc import WebRTCSettings
from voxcall.config.xiaozhi import DeviceToken, XiaozhiSettings

__all__ = [
    "DEFAULT_INSTRUCTIONS",
    "DELEGATE_KEYS",
    "LLM_KEY_ENV",
    "MASK",
    "AgentProfile",
    "AudioInput",
    "ConfigError",
    "DeviceToken",
    "LiveSettings",
    "LocalModelSettings",
    "LogLevel",
    "McpSettings",
    "ModelInput",
    "ServerSettings",
    "SessionOptions",
    "ShutdownCloseCode",
    "SpeechSettings",
    "TelemetrySettings",
    "ThinkerSettings",
    "ToolFormat",
    "ToolsSettings",
    "TracingMode",
    "TwilioSettings",
    "VadKind",
    "WebRTCSettings",
    "XiaozhiSettings",
    "default_of",
    "description_of",
    "is_loopback",
]
