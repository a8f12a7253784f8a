"""A voxcall server with the real speech models and an agent profile for phone calls, in the test's event loop."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from tests.servers import Server
from voxcall.config import ServerSettings
from voxcall.llm import LLMBackend, ScriptedBackend
from voxcall.speech.voice import Voice

TOKEN = "twilio-test-auth-token"

SCRIPT = {
    "rules": [
        {"match": "weather", "reply": "It is sunny in Paris today."},
        {"match": "pressed 1", "reply": "You pressed one. I will connect you to sales."},
        {"match": "story", "reply": "Once upon a time, in a small village by the sea, there lived an old "
                                    "fisherman who went out every morning before the sun came up. " * 4},
    ],
    "default": "Sorry, I did not get that.",
}


@pytest.fixture(scope="session")
def voice(speech_models: None) -> Voice:
    """The embedded speech models: Silero VAD, Whisper tiny.en, Piper joe."""
    from voxcall.speech.models import get_piper, get_silero, get_whisper
    from voxcall.speech.vad import SileroVAD

    return Voice(stt=get_whisper(), tts=get_piper(), vad=lambda: SileroVAD(get_silero()))


class PhoneServer(Server):
    """uvicorn serving ``create_app`` on a free loopback port, in this event loop; :meth:`url` a profile's stream."""

    def __init__(self, settings: ServerSettings, backend: LLMBackend, voice: Voice | None) -> None:
        super().__init__(settings, backend, voice=voice)

    def url(self, profile: str = "front-desk") -> str:
        return f"ws://127.0.0.1:{self.port}/v1/twilio/{profile}"


def phone_settings(**twilio: Any) -> ServerSettings:
    """Settings with one agent profile, ``front-desk``, and the ``twilio:`` section ``twilio``."""
    return ServerSettings(profiles={"front-desk": {
        "instructions": "You answer the phone for a travel agency.",
        "turn_detection": {"type": "server_vad", "silence_duration_ms": 400}}},
        twilio={"auth_token": TOKEN, **twilio})


@pytest.fixture
async def phone_server(voice: Voice) -> AsyncIterator[PhoneServer]:
    """A server that answers calls with :data:`SCRIPT`, keys read at once (``dtmf_pause_ms: 0``)."""
    async with PhoneServer(phone_settings(dtmf_pause_ms=0), ScriptedBackend(SCRIPT), voice) as server:
        yield server
