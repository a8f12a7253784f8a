"""Cached tool results and tools that only act, in the response loop: the ``cached`` flag, the hit counter, and
no report round after a fire-and-forget tool."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest

from tests.harness import ControlledBackend, Harness, Turn
from tests.realtime.test_endpoint import sample
from voxcall.config import ConfigError, ServerSettings
from voxcall.core.tools.toolbox import Toolbox
from voxcall.tools import ToolContext, ToolError, ToolRegistry


def make_toolbox() -> tuple[Toolbox, dict[str, int]]:
    """weather (cacheable), lights_off and broken_bell (only act; the bell fails), add (plain)."""
    runs = {"weather": 0, "lights_off": 0}
    registry = ToolRegistry()

    @registry.tool(cache_ttl=60)
    def weather(city: str) -> str:
        """The weather in a city."""
        runs["weather"] += 1
        return f"sunny in {city}"

    @registry.tool(returns=False)
    def lights_off() -> None:
        """Switch the lights off."""
        runs["lights_off"] += 1

    @registry.tool(returns=False)
    def broken_bell() -> None:
        """Ring a bell that is broken."""
        raise ToolError("the bell is broken")

    @registry.tool
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    return Toolbox(registry), runs


async def ask(h: Harness, n: int) -> dict[str, Any]:
    await h.say("go")
    await h.send(type="response.create")
    return await h.wait("response.done", n)


async def test_a_repeated_call_is_answered_from_the_cache_and_reported_so() -> None:
    toolbox, runs = make_toolbox()
    backend = ControlledBackend(Turn("", [("weather", {"city": "Oslo"})]), Turn("Sunny."),
                                Turn("", [("weather", {"city": "Oslo"})]), Turn("Still sunny."))
    async with Harness(backend, toolbox=toolbox, prefetch=False) as h:
        await ask(h, 1)
        done = await ask(h, 2)
        assert done["response"]["output"][0]["output"] == "sunny in Oslo"
        completed = h.of("voxcall.tool_call.completed")
        assert [e["cached"] for e in completed] == [False, True] and runs["weather"] == 1
        page = h.host.shared.metrics.render().decode()
        assert sample(page, "voxcall_tool_cache_hits_total", tool="weather") == 1
        assert sample(page, "voxcall_tool_calls_total", outcome="ok") == 2


async def test_a_tool_that_only_acts_ends_the_response_without_a_report_round() -> None:
    toolbox, runs = make_toolbox()
    backend = ControlledBackend(Turn("Lights off.", [("lights_off", {})]), Turn("The lights are off now."))
    async with Harness(backend, toolbox=toolbox) as h:
        done = await ask(h, 1)
        assert done["response"]["status"] == "completed"
        assert [o["type"] for o in done["response"]["output"]] == ["message", "mcp_call"]
        assert runs["lights_off"] == 1 and len(backend.requests) == 1
        assert [i.type for i in h.session.conversation.items] == ["message", "message", "mcp_call"]


async def test_a_failed_action_or_a_round_with_a_result_is_reported() -> None:
    toolbox, _ = make_toolbox()
    backend = ControlledBackend(Turn("", [("broken_bell", {})]), Turn("The bell is broken."),
                                Turn("", [("lights_off", {}), ("add", {"a": 1, "b": 2})]), Turn("Off, and 3."))
    async with Harness(backend, toolbox=toolbox, prefetch=False) as h:
        failed = await ask(h, 1)
        assert [o["type"] for o in failed["response"]["output"]] == ["mcp_call", "message"]
        mixed = await ask(h, 2)
        assert [o["type"] for o in mixed["response"]["output"]] == ["mcp_call", "mcp_call", "message"]
        assert len(backend.requests) == 4


async def test_tools_cache_in_voxcall_yaml_overrides_and_warns(tmp_path: Path,
                                                               caplog: pytest.LogCaptureFixture) -> None:
    module = tmp_path / "house.py"
    module.write_text("from voxcall.tools import tool\n\nruns = []\n\n"
                      "@tool\ndef temperature(room: str) -> str:\n"
                      "    runs.append(room)\n    return f'{room}: {len(runs)}'\n\n"
                      "@tool(returns=False)\ndef heat_up(room: str) -> None:\n    pass\n")
    config = tmp_path / "voxcall.yaml"
    config.write_text(f"tools:\n  modules: [{module}]\n  cache: {{temperature: 30, heat_up: 30, typo: 5}}\n")
    caplog.set_level(logging.WARNING, logger="voxcall.core.tools.toolbox")
    box = await Toolbox.from_settings(ServerSettings.load(config))
    try:
        outputs = [(await box.run("temperature", {"room": "hall"}, ToolContext())).output for _ in range(2)]
        assert outputs == ["hall: 1", "hall: 1"]
        assert "'heat_up' is never cached" in caplog.text and "no tool is called 'typo'" in caplog.text
    finally:
        await box.aclose()
    config.write_text("tools:\n  cache: {temperature: -1}\n")
    with pytest.raises(ConfigError, match=r"tools\.cache"):
        ServerSettings.load(config)


async def test_tool_deadlines_threads_and_repeats_come_from_voxcall_yaml(tmp_path: Path,
                                                                        caplog: pytest.LogCaptureFixture) -> None:
    module = tmp_path / "house.py"
    module.write_text("import time\n\nfrom voxcall.tools import tool\n\n"
                      "@tool\ndef nap() -> str:\n    time.sleep(5)\n    return 'awake'\n\n"
                      "@tool\ndef knock() -> str:\n    return 'knock'\n")
    config = tmp_path / "voxcall.yaml"
    config.write_text(f"tools:\n  modules: [{module}]\n  timeout: 12\n  timeouts: {{nap: 0.05, typo: 1}}\n"
                      "  max_threads: 3\n  repeatable: [knock]\n")
    caplog.set_level(logging.WARNING, logger="voxcall.core.tools.toolbox")
    box = await Toolbox.from_settings(ServerSettings.load(config))
    try:
        result = await box.run("nap", {}, ToolContext())
        assert result.timed_out and result.output == "tool 'nap' timed out after 0.05 s"
        assert box.registry.default_timeout == 12 and box.registry.threads.limit == 3
        assert box.registry.threads.abandoned == 1
        effects = box.registry.effects("knock")
        assert effects is not None and effects.repeats
        assert "'typo', which is no server tool" in caplog.text
    finally:
        await box.aclose()
