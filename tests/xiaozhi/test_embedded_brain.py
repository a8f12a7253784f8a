"""The issue's "done when": an unmodified xiaozhi-sdk device asks the embedded brain (the server's own local model,
built by the server's backend factory as ``voxcall serve`` builds it) to set its volume; the model calls the device's
own MCP tool, and the result is spoken.

Needs the real local model (the ``[local]`` extra: llama.cpp and SmolLM2-135M); without it the test skips (fails
under CI)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from voxcall.config import ServerSettings
from voxcall.llm import LOCAL_KIND
from voxcall.server import build_backend
from voxcall.speech.voice import Voice

from .conftest import DeviceServer
from .sdk_device import RATE, SdkDevice

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

VOLUME = {"name": "self.audio_speaker.set_volume",
          "description": "Set the volume of the device's speaker, from 0 to 100.",
          "inputSchema": {"type": "object", "properties": {"volume": {"type": "integer", "minimum": 0,
                                                                     "maximum": 100}}, "required": ["volume"]}}


async def test_the_embedded_brain_calls_the_devices_own_tool_and_speaks_the_result(smollm2: Path,
                                                                                   voice: Voice) -> None:
    settings = ServerSettings(llm=LOCAL_KIND, xiaozhi={"tool_timeout": 10.0})
    backend = build_backend(settings)
    volumes: list[dict[str, Any]] = []
    tool = {**VOLUME, "tool_func": lambda arguments: (volumes.append(arguments) or {"volume": arguments["volume"]},
                                                      False), "is_async": False}
    try:
        async with DeviceServer(settings, backend, voice=voice) as server:
            device = await SdkDevice.connect(server.url, tools=[tool])
            try:
                await device.client.send_text("Set the volume to 30.")
                said: list[str] = []
                for _ in range(3):  # the call may be acknowledged first, then its result spoken
                    sentences, audio = await device.reply(device.replied, timeout=120)
                    said += sentences
                    if volumes and sentences:
                        break
                assert volumes and all(0 <= call["volume"] <= 100 for call in volumes), volumes
                assert said and len(audio) > RATE // 4, "the result is spoken"
            finally:
                await device.close()
    finally:
        await backend.aclose()
