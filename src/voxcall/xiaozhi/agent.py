"""Which agent answers a device, and what its sessions start with: settings, and a toolbox of their own.

A device's agent is one of the agent profiles of ``profiles:`` (those Twilio calls use), the first of: the profile of
the token the device presented (``xiaozhi.tokens``), the profile of its device id (``xiaozhi.device_profiles``),
``xiaozhi.profile``; with none, the server's own settings. A device session speaks as the profile says: its
instructions, its voice, its server tools (``tools``), its turn detection in the listening modes that leave the end
of a turn to the server, and its ``language``: the user is heard in it (a multilingual Whisper when the server's own
does not know it) and, unless the profile names a voice, answered by the voice for it (:meth:`Voice.speaking`:
``baker`` for Chinese, when installed).

Whatever the profile, a device's session hears the device's microphone (PCM of any rate, decoded from Opus) and
speaks PCM at 24 kHz (sent as Opus packets); its toolbox is its own (the profile's server tools, joined by the
device's tools once listed: :mod:`voxcall.xiaozhi.device_tools`).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from voxcall.audio.formats import PCM24K
from voxcall.config import AgentProfile, ServerSettings
from voxcall.core.errors import SessionError
from voxcall.core.hearing.transcription import choose_hearing
from voxcall.core.hearing.turn_detection import TurnDetection, parse_turn_detection
from voxcall.core.settings import SessionSettings
from voxcall.core.tools.toolbox import Toolbox
from voxcall.speech.voice import Voice
from voxcall.tools import ToolRegistry
from voxcall.xiaozhi.messages import ListenMode


@dataclass(frozen=True)
class DeviceAgent:
    """The agent profile (``name``; None: the server's own settings) that answers one device."""

    name: str | None
    profile: AgentProfile

    def settings(self, base: SessionSettings) -> SessionSettings:
        """The settings a session of this agent starts with: ``base`` (the server's), spoken at 24 kHz, with the
        profile's instructions, voice, turn detection and language where it sets them."""
        profile = self.profile
        changes: dict[str, object] = {"output_modalities": ("audio",), "output_format": PCM24K}
        if profile.instructions is not None:
            changes["instructions"] = profile.instructions
        if profile.voice is not None:
            changes["voice"] = profile.voice
        if profile.turn_detection is not None:
            changes["turn_detection"] = self.turn_detection(base)
        if profile.language is not None:
            changes["transcription"] = {**(base.transcription or {}), "language": profile.language}
        return dataclasses.replace(base, **changes)  # type: ignore[arg-type]

    def turn_detection(self, base: SessionSettings, mode: ListenMode = "auto") -> TurnDetection | None:
        """How the end of a user's turn is found when the device listens in ``mode``: by the user (``manual``: the
        device says ``listen``/``stop``), else by the server, as the profile says (or ``base``)."""
        if mode == "manual":
            return None
        if self.profile.turn_detection is None:
            return base.turn_detection
        return parse_turn_detection(self.profile.turn_detection, where=f"profiles.{self.name}.turn_detection")

    def check(self, voice: Voice, base: SessionSettings) -> None:
        """Raise :class:`~voxcall.core.errors.SessionError` when this server cannot serve the profile (a language no
        installed Whisper hears, a turn detection that is no such thing, a voice it does not have)."""
        settings = self.settings(base)
        choose_hearing(settings.transcription, voice.models, voice.stt.name,
                       param=f"profiles.{self.name}.language")
        self.turn_detection(base)
        if self.profile.voice is not None and not voice.voices.knows(self.profile.voice):
            raise SessionError(voice.voices.unknown_message(self.profile.voice), param=f"profiles.{self.name}.voice")

    def toolbox(self, server: Toolbox | None, settings: ServerSettings) -> Toolbox:
        """A toolbox for one session: the profile's server tools (all of ``server``'s when it names none), and room
        for the device's own. ``ValueError`` names a tool the profile names that the server does not have."""
        names = self.profile.tools
        if server is None:
            if names:
                raise ValueError(f"no server tool named {', '.join(map(repr, names))}; the server has none")
            return Toolbox(ToolRegistry(default_timeout=settings.tools.timeout),
                           max_rounds=settings.tools.max_tool_rounds)
        return (server if names is None else server.only(names)).joined(ToolRegistry())


def choose_agent(settings: ServerSettings, token: str | None, device_id: str) -> DeviceAgent:
    """The agent of a device that presented ``token`` (None: none) and says it is ``device_id``."""
    xiaozhi = settings.xiaozhi
    by_token = next((entry.profile for entry in xiaozhi.tokens
                     if token is not None and entry.token.get_secret_value() == token), None)
    name = by_token or xiaozhi.device_profiles.get(device_id) or xiaozhi.profile
    return DeviceAgent(name, settings.profiles[name] if name is not None else AgentProfile())
