"""Which agent answers a device (a token's, a device's, the default profile, or the server's own settings) and what
its sessions start with."""

from __future__ import annotations

import pytest

from voxcall.audio.formats import PCM24K
from voxcall.config import AgentProfile, ServerSettings
from voxcall.core.errors import SessionError
from voxcall.core.hearing.turn_detection import TurnDetection
from voxcall.core.settings import SessionSettings
from voxcall.core.tools.toolbox import Toolbox
from voxcall.tools import ToolRegistry
from voxcall.xiaozhi.agent import DeviceAgent, choose_agent

TOKEN = "kitchen-token-0123456789"

SETTINGS = ServerSettings(
    profiles={"kitchen": {"instructions": "You run the kitchen."}, "zh": {"language": "zh", "tools": ["clock"]},
              "home": {"turn_detection": {"type": "semantic_vad", "eagerness": "low"}}},
    xiaozhi={"tokens": [{"token": TOKEN, "profile": "kitchen"}], "device_profiles": {"aa:bb": "zh"},
             "profile": "home"})


def test_a_token_then_a_device_then_the_default_profile_picks_the_agent() -> None:
    assert choose_agent(SETTINGS, TOKEN, "aa:bb").name == "kitchen"
    assert choose_agent(SETTINGS, "another", "aa:bb").name == "zh"
    assert choose_agent(SETTINGS, None, "cc:dd").name == "home"
    assert choose_agent(ServerSettings(), None, "cc:dd") == DeviceAgent(None, AgentProfile())


def test_an_agents_settings() -> None:
    base = SessionSettings(instructions="server")
    kitchen = choose_agent(SETTINGS, TOKEN, "x").settings(base)
    assert (kitchen.instructions, kitchen.output_modalities, kitchen.output_format) == (
        "You run the kitchen.", ("audio",), PCM24K)
    assert kitchen.transcription is None and kitchen.turn_detection == base.turn_detection
    chinese = choose_agent(SETTINGS, None, "aa:bb").settings(base)
    assert chinese.transcription == {"language": "zh"} and chinese.instructions == "server"
    home = choose_agent(SETTINGS, None, "x")
    assert home.settings(base).turn_detection == TurnDetection(silence_duration_ms=1200, eagerness="low")
    assert home.turn_detection(base, "manual") is None, "push to talk: the user ends the turn"
    assert home.turn_detection(base, "realtime") == home.settings(base).turn_detection


def test_an_agents_toolbox_is_its_own() -> None:
    server = Toolbox(ToolRegistry())
    server.registry.register(lambda: "12:00", name="clock")
    server.registry.register(lambda: 4, name="calculator")
    chinese = choose_agent(SETTINGS, None, "aa:bb").toolbox(server, SETTINGS)
    assert [tool.name for tool in chinese.tools] == ["clock"]
    chinese.registry.register(lambda: "ok", name="self_light")
    assert [tool.name for tool in server.tools] == ["clock", "calculator"], "the server's toolbox is unchanged"
    assert [tool.name for tool in choose_agent(SETTINGS, TOKEN, "x").toolbox(server, SETTINGS).tools] == \
        ["clock", "calculator"]
    assert choose_agent(SETTINGS, TOKEN, "x").toolbox(None, SETTINGS).tools == []
    with pytest.raises(ValueError, match="clock"):
        choose_agent(SETTINGS, None, "aa:bb").toolbox(None, SETTINGS)


def test_a_profile_names_only_profiles_that_exist() -> None:
    with pytest.raises(ValueError, match="nowhere"):
        ServerSettings(xiaozhi={"device_profiles": {"aa:bb": "nowhere"}})


def test_a_language_no_installed_whisper_hears_cannot_be_served() -> None:
    class Catalog:
        def knows(self, name: str) -> bool:
            return False

    class Voice:
        def __init__(self) -> None:
            self.models = {"tiny.en": frozenset({"en"})}
            self.stt = type("STT", (), {"name": "tiny.en"})()
            self.voices = Catalog()

    with pytest.raises(SessionError, match="does not transcribe 'zh'"):
        choose_agent(SETTINGS, None, "aa:bb").check(Voice(), SessionSettings())  # type: ignore[arg-type]
    choose_agent(SETTINGS, TOKEN, "x").check(Voice(), SessionSettings())  # type: ignore[arg-type]
