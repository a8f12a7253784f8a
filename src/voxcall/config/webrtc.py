"""The ``webrtc:`` section: browser calls over WebRTC."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


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
