"""A voxcall server with the real speech models for xiaozhi devices, in the test's event loop, and what its scripted
model says."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest

from tests.servers import Server
from voxcall.audio.codec import resample
from voxcall.config import ServerSettings
from voxcall.llm import ScriptedBackend
from voxcall.speech.voice import Voice

STORY = ("Once upon a time, in a small village by the sea, there lived an old fisherman who went out every morning "
         "before the sun came up. ") * 4

SCRIPT: dict[str, Any] = {
    "rules": [
        {"match": "weather", "reply": "It is sunny in Paris today."},
        {"match": "story", "reply": STORY},
        {"match": "light", "reply": "Sure.", "calls": [{"name": "self_light_set_rgb",
                                                       "arguments": {"r": 255, "g": 0, "b": 0}}]},
        {"match": "slow", "calls": [{"name": "self_garden_water", "arguments": {"minutes": 2}}]},
        {"match": "dead", "calls": [{"name": "self_dead_tool", "arguments": {}}]},
    ],
    "after_tool": "The device says {output}.",
    "default": "Sorry, I did not get that.",
}

TOKEN = "device-token-0123456789"
"""A device token (``xiaozhi.tokens``)."""
HEADERS = {"Device-Id": "02:00:00:00:00:01", "Client-Id": "c0ffee", "Protocol-Version": "1"}
"""The headers a device connects with (its token aside)."""

LIGHT = {"name": "self.light.set_rgb", "description": "Set the RGB light; self.light.get_rgb reads it.",
         "inputSchema": {"type": "object", "properties": {"r": {"type": "integer"}, "g": {"type": "integer"},
                                                         "b": {"type": "integer"}}, "required": ["r", "g", "b"]},
         "is_async": False}
"""A device tool as xiaozhi-sdk serves it (its ``tool_func`` added by each test)."""


@pytest.fixture(scope="session")
def voice(speech_models: None) -> Voice:
    """The embedded speech models: Silero VAD, Whisper tiny.en, Piper joe."""
    from voxcall.speech.models import get_piper, get_silero, get_whisper
    from voxcall.speech.vad import SileroVAD

    return Voice(stt=get_whisper(), tts=get_piper(), vad=lambda: SileroVAD(get_silero()))


def spoken(voice: Voice, text: str) -> npt.NDArray[np.int16]:
    """``text`` said by the server's default voice, steady (the same samples every run), at 16 kHz: a device's
    microphone."""
    pcm = np.concatenate([np.asarray(chunk, np.int16) for chunk in voice.tts.synthesize(text, steady=True)])
    return resample(pcm, voice.tts.sample_rate, 16_000)


def heard(voice: Voice, pcm16k: npt.NDArray[np.int16]) -> str:
    """What Whisper hears in a device's received audio."""
    return voice.stt.transcribe(pcm16k).lower()


class DeviceServer(Server):
    """uvicorn serving ``create_app`` on a free loopback port; :attr:`url` is its xiaozhi endpoint."""

    @property
    def url(self) -> str:
        return f"ws://127.0.0.1:{self.port}/xiaozhi/v1/"

    @property
    def http(self) -> str:
        return f"http://127.0.0.1:{self.port}"


def device_settings(profiles: dict[str, Any] | None = None, **xiaozhi: Any) -> ServerSettings:
    """Settings for device tests: a short device tool deadline and keep-alive, ``xiaozhi`` over them; ``profiles``:
    the agent profiles."""
    return ServerSettings(xiaozhi={"tool_timeout": 6.0, "keepalive_seconds": 1.0, **xiaozhi},
                          profiles=profiles or {}, session={"idle_timeout": 120})


@pytest.fixture
async def device_server(voice: Voice) -> AsyncIterator[DeviceServer]:
    """A server answering devices with :data:`SCRIPT`."""
    async with DeviceServer(device_settings(), ScriptedBackend(SCRIPT), voice=voice) as server:
        yield server


def server(voice: Voice | None, **xiaozhi: Any) -> DeviceServer:
    """A server answering devices with :data:`SCRIPT`, with ``xiaozhi`` settings (enter it with ``async with``)."""
    return DeviceServer(device_settings(**xiaozhi), ScriptedBackend(SCRIPT), voice=voice)
