"""A voxcall server with the real speech models and an agent profile for phone calls, in the test's event loop."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest
import uvicorn

from voxcall.config import ServerSettings
from voxcall.core.voice import Voice
from voxcall.llm import LLMBackend, ScriptedBackend
from voxcall.serving.app import create_app

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


class PhoneServer:
    """uvicorn serving ``create_app`` on a free loopback port, in this event loop."""

    def __init__(self, settings: ServerSettings, backend: LLMBackend, voice: Voice | None) -> None:
        self.app = create_app(settings, backend, voice=voice)
        self.server = uvicorn.Server(uvicorn.Config(self.app, host="127.0.0.1", port=0, log_level="warning",
                                                    ws="websockets-sansio", lifespan="on"))
        self.task: asyncio.Task[None] | None = None

    async def __aenter__(self) -> PhoneServer:
        self.task = asyncio.create_task(self.server.serve())
        while not self.server.started:
            await asyncio.sleep(0.01)
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.server.should_exit = True
        assert self.task is not None
        await self.task

    def url(self, profile: str = "front-desk") -> str:
        port = self.server.servers[0].sockets[0].getsockname()[1]
        return f"ws://127.0.0.1:{port}/v1/twilio/{profile}"


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
