"""``register_builtins``: every built-in on one registry, called the way a session calls them."""

from __future__ import annotations

import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from voxcall.audio.output import AudioOutput, NullSink, RecordingSink
from voxcall.tools import ToolContext, ToolRegistry
from voxcall.tools.builtin import BUILTINS, register_builtins


def test_builtins_are_named() -> None:
    assert list(BUILTINS) == ["calculator", "clock", "music", "voice_volume"]


async def test_all_builtins_on_one_registry(music_dir: Path, output: AudioOutput, sink: RecordingSink) -> None:
    registry = ToolRegistry()
    register_builtins(registry, ["calculator", "clock", "music", "voice_volume"], music_dir=music_dir, output=output)
    assert {"calculator", "current_time", "music_play", "music_list", "voice_set_volume"} <= {
        tool.name for tool in registry.tools}

    assert (await registry.call("calculator", {"op": "mul", "a": 6, "b": 7})).output == "42"
    result = await registry.call("music_play", {"name": "blue"})
    assert (result.is_error, result.output) == (False, "Playing Blue in Green.")
    await sink.wait_for_chunks(1)
    assert (await registry.call("music_set_volume", {"value": "80%"})).output == "Music volume set to 80%."
    assert output.music_volume == 0.8
    voice = SimpleNamespace(voice_gain=1.0)
    result = await registry.call("voice_volume_down", {}, context=ToolContext(session_id="s", voice=voice))
    assert (result.output, voice.voice_gain) == ("Voice volume down to 90%.", 0.9)
    assert output.music_volume == 0.8  # the voice and the music have separate volumes
    assert (await registry.call("music_stop")).output == "Music stopped."


def test_music_needs_a_music_dir() -> None:
    with pytest.raises(ValueError, match="music folder"):
        register_builtins(ToolRegistry(), ["music"])


def test_music_dir_must_be_a_folder(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="not a folder"):
        register_builtins(ToolRegistry(), ["music"], music_dir=tmp_path / "missing")


async def test_music_gets_a_default_output(music_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "sounddevice", None)  # no device here: a silent sink
    registry = ToolRegistry()
    register_builtins(registry, ["music"], music_dir=str(music_dir))
    assert (await registry.call("music_set_volume", {"value": "max"})).output == "Music volume set to 100%."


def test_unknown_names_list_the_known_ones() -> None:
    registry = ToolRegistry()
    known = r"\(known: calculator, clock, music, voice_volume\)"
    with pytest.raises(ValueError, match=rf"unknown built-in tools: radio, tv {known}"):
        register_builtins(registry, ["voice_volume", "radio", "tv"], music_dir=None, output=AudioOutput(NullSink()))
    assert len(registry) == 0
