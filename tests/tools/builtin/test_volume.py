"""Volume parsing (numbers, percentages, words in English and Chinese, clamping) and the voice volume tools."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from voxcall.tools import ToolContext, ToolError, ToolRegistry
from voxcall.tools.builtin.volume import MIN_LEVEL, parse_volume, register, step_volume_text


@dataclass
class Voice:
    voice_gain: float = 1.0


@pytest.mark.parametrize(
    ("value", "level"),
    [
        (0.8, 0.8), (0, 0.0), (1, 1.0), (0.05, 0.05), (50, 0.5), (80.0, 0.8), (1.5, 0.015), (100, 1.0),
        ("80%", 0.8), ("0.8", 0.8), ("50", 0.5), (" 35 % ", 0.35), (".5", 0.5), ("100%", 1.0), ("８０％", 0.8),
        ("max", 1.0), ("Maximum", 1.0), ("full volume", 1.0), ("最大", 1.0), ("最大音量", 1.0),
        ("min", MIN_LEVEL), ("minimum", MIN_LEVEL), ("最小", MIN_LEVEL),
        ("half", 0.5), ("一半", 0.5), ("mute", 0.0), ("MUTE", 0.0), ("静音", 0.0),
        ("百分之三十", 0.3), ("八成", 0.8), ("七成五", 0.75), ("三十", 0.3), ("零点五", 0.5), ("百分之百", 1.0),
        ("把音量调到百分之三十", 0.3), ("音量调成五十", 0.5), ("请把声音设置为百分之二十。", 0.2),
        ("把音量调到最大", 1.0),
        ("把音量調到百分之三十", 0.3), ("請把聲音設置為百分之兩十", 0.2),
    ],
)
def test_levels(value: float | str, level: float) -> None:
    assert parse_volume(value) == (level, "")


def test_min_is_quiet_but_audible() -> None:
    assert 0.0 < MIN_LEVEL < parse_volume("half")[0]


@pytest.mark.parametrize(
    ("value", "level", "note"),
    [(150, 1.0, "clamped 150% to 100%"), ("150%", 1.0, "clamped 150% to 100%"), (-0.2, 0.0, "clamped -20% to 0%"),
     (-20, 0.0, "clamped -20% to 0%"), (1e6, 1.0, "clamped 1000000% to 100%")],
)
def test_out_of_range_values_are_clamped_and_say_so(value: float | str, level: float, note: str) -> None:
    assert parse_volume(value) == (level, note)


@pytest.mark.parametrize(("value", "current", "level"),
                         [("+10%", 0.5, 0.6), ("-10%", 0.5, 0.4), ("+0.25", 0.5, 0.75), ("-5", 0.5, 0.45),
                          ("调高百分之十", 0.5, 0.6), ("把音量调低百分之二十", 0.5, 0.3), ("降低十", 0.5, 0.4),
                          ("調低百分之十", 0.5, 0.4)])
def test_signed_strings_change_the_current_level(value: str, current: float, level: float) -> None:
    assert parse_volume(value, current) == (pytest.approx(level), "")


def test_changes_past_the_ends_are_clamped() -> None:
    assert parse_volume("+30%", 0.9) == (1.0, "clamped 120% to 100%")
    assert parse_volume("-20%", 0.1) == (0.0, "clamped -10% to 0%")


def test_a_change_needs_the_current_level() -> None:
    with pytest.raises(ToolError, match="is a change, but the current volume is unknown"):
        parse_volume("+10%")


@pytest.mark.parametrize("value", ["loud", "", "80 percent", "1,5", "nan", "inf", float("nan"), float("inf"), True,
                                   "x" * 10_000])
def test_nonsense_says_what_is_accepted(value: float | str) -> None:
    with pytest.raises(ToolError, match=r"not a volume: .*use a number.*percentage.*max, min, half, mute") as caught:
        parse_volume(value)
    assert len(str(caught.value)) < 300  # a long value is not echoed back whole


@pytest.mark.parametrize(("current", "step", "up", "level", "text"), [
    (0.5, 0.1, True, 0.6, "Volume up to 60%."),
    (0.5, 10, False, 0.4, "Volume down to 40%."),
    (0.95, 0.1, True, 1.0, "Volume up to 100%."),
    (1.0, 0.1, True, 1.0, "Volume is already at 100%."),
    (0.0, 0.1, False, 0.0, "Volume is already at 0%."),
])
def test_steps(current: float, step: float, up: bool, level: float, text: str) -> None:
    assert step_volume_text("Volume", current, step, up=up) == (pytest.approx(level), text)


@pytest.mark.parametrize("step", [0, -0.1, float("nan")])
def test_steps_must_be_positive(step: float) -> None:
    with pytest.raises(ToolError, match="positive"):
        step_volume_text("Volume", 0.5, step, up=True)


# -- the voice tools -----------------------------------------------------------------------------------------


@pytest.fixture
def registry() -> ToolRegistry:
    registry = ToolRegistry()
    register(registry)
    return registry


async def test_voice_set_volume_drives_the_session_voice_gain(registry: ToolRegistry) -> None:
    voice = Voice()
    context = ToolContext(session_id="sess_1", voice=voice)
    result = await registry.call("voice_set_volume", {"value": "80%"}, context=context)
    assert (result.is_error, result.output, voice.voice_gain) == (False, "Voice volume set to 80%.", 0.8)
    result = await registry.call("voice_set_volume", {"value": 150}, context=context)
    assert result.output == "Voice volume set to 100% (clamped 150% to 100%)."
    result = await registry.call("voice_set_volume", {"value": "静音"}, context=context)
    assert (result.output, voice.voice_gain) == ("Voice volume set to 0%.", 0.0)


async def test_voice_volume_up_and_down(registry: ToolRegistry) -> None:
    voice = Voice(0.5)
    context = ToolContext(voice=voice)
    assert (await registry.call("voice_volume_up", {}, context=context)).output == "Voice volume up to 60%."
    assert (await registry.call("voice_volume_down", {"step": 20}, context=context)).output == \
        "Voice volume down to 40%."
    assert voice.voice_gain == pytest.approx(0.4)


async def test_voice_tools_need_a_session(registry: ToolRegistry) -> None:
    for name, args in [("voice_set_volume", {"value": 0.5}), ("voice_volume_up", {}), ("voice_volume_down", {})]:
        result = await registry.call(name, args)
        assert result.is_error
        assert "voice session" in result.output


async def test_bad_values_reach_the_model_as_errors(registry: ToolRegistry) -> None:
    voice = Voice()
    result = await registry.call("voice_set_volume", {"value": "loud"}, context=ToolContext(voice=voice))
    assert result.is_error and "not a volume" in result.output
    assert voice.voice_gain == 1.0


def test_schemas_hide_the_context_and_describe_the_values(registry: ToolRegistry) -> None:
    tool = registry.get("voice_set_volume")
    assert tool is not None
    assert tool.required == ["value"] and set(tool.properties) == {"value"}
    assert tool.properties["value"]["type"] == ["number", "string"]
    assert "最大" in tool.properties["value"]["description"]
    up = registry.get("voice_volume_up")
    assert up is not None and up.properties["step"]["default"] == 0.1 and up.required == []
