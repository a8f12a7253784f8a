"""The kinds of value a setting takes, and the error a setting the user can fix raises."""

from __future__ import annotations

from typing import Literal

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

class ConfigError(Exception):
    """A configuration problem the user can fix; its message is meant to be shown as is, without a traceback."""
