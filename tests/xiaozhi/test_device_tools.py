"""A device's tools as its session's tools: function names the model APIs accept, mapped back to the device's names
on each call; descriptions that name another device tool; tools left out; deadlines."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

from voxcall.core.tools.toolbox import ServerTool, Toolbox
from voxcall.tools import ToolContext, ToolRegistry
from voxcall.tools.names import TOOL_NAME_PATTERN
from voxcall.xiaozhi.device_mcp import DeviceTool
from voxcall.xiaozhi.device_tools import DEVICE_LABEL, function_name, offer

OBJECT = {"type": "object", "properties": {"volume": {"type": "integer", "minimum": 0, "maximum": 100}},
          "required": ["volume"]}


def test_function_names_are_valid_distinct_and_short_enough() -> None:
    assert function_name("self.audio_speaker.set_volume", set()) == "self_audio_speaker_set_volume"
    assert function_name("self.light.set", {"self_light_set"}) == "self_light_set_2"
    assert function_name("self.light.set", {"self_light_set", "self_light_set_2"}) == "self_light_set_3"
    assert function_name("灯.开", set()) == "___"
    long = "self." + "very_long_part." * 10 + "x"
    name = function_name(long, set())
    assert TOOL_NAME_PATTERN.match(name) and len(name) <= 60
    assert name != function_name(long + "y", set()), "a cut name keeps a hash of the whole"
    assert TOOL_NAME_PATTERN.match(function_name(long, {name}))


async def test_offered_tools_run_on_the_device_under_their_own_names() -> None:
    called: list[tuple[str, Mapping[str, Any]]] = []

    async def call(name: str, arguments: Mapping[str, Any]) -> str:
        called.append((name, arguments))
        return "true"

    box = Toolbox(ToolRegistry())
    box.registry.register(lambda: "ok", name="self_audio_speaker_set_volume")  # a server tool took the name
    tools = [DeviceTool("self.audio_speaker.set_volume", "Set the volume; self.audio_speaker.get_volume reads it.",
                        OBJECT),
             DeviceTool("self.audio_speaker.get_volume", "Read the volume.", {"type": "object", "properties": {}}),
             DeviceTool("self.camera.take_photo", "Take a photo.", {"type": "object", "properties": {}}),
             DeviceTool("self.broken", "Broken schema.", {"type": "object", "properties": {"x": {"type": 5}}}),
             DeviceTool("self.list", "Not an object.", {"type": "array"})]
    names = offer(box, tools, call, timeout=5, timeouts={}, hidden={"self.camera.take_photo"})
    assert names == {"self_audio_speaker_set_volume_2": "self.audio_speaker.set_volume",
                     "self_audio_speaker_get_volume": "self.audio_speaker.get_volume"}
    described = box.registry.get("self_audio_speaker_set_volume_2")
    assert described is not None
    assert described.description == "Set the volume; self_audio_speaker_get_volume reads it."
    assert box.get("self_audio_speaker_set_volume_2") == ServerTool(DEVICE_LABEL, "self.audio_speaker.set_volume")
    result = await box.run("self_audio_speaker_set_volume_2", {"volume": 30}, ToolContext())
    assert (result.output, result.is_error) == ("true", False)
    assert called == [("self.audio_speaker.set_volume", {"volume": 30})]
    refused = await box.run("self_audio_speaker_set_volume_2", {"volume": 300}, ToolContext())
    assert refused.is_error and "invalid arguments" in refused.output, "the device's schema is checked first"
    assert len(called) == 1
    effects = box.registry.effects("self_audio_speaker_get_volume")
    assert effects is not None and not effects.stoppable, "a device tool is never cut off half done"


async def test_a_device_tool_has_its_deadline() -> None:
    async def never(name: str, arguments: Mapping[str, Any]) -> str:
        await asyncio.Event().wait()
        return ""

    box = Toolbox(ToolRegistry())
    tools = [DeviceTool("self.slow", "", {"type": "object"}), DeviceTool("self.slower", "", {"type": "object"})]
    offer(box, tools, never, timeout=0.05, timeouts={"self.slower": 0.1}, hidden=())
    result = await box.run("self_slow", {}, ToolContext())
    assert result.timed_out and "0.05 s" in result.output
    slower = await box.run("self_slower", {}, ToolContext())
    assert slower.timed_out and "0.1 s" in slower.output, "tools.timeouts names a device tool"
