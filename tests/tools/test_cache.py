"""The tool cache: hits, misses and expiry on an injected clock, canonical arguments, size bounds, what may never
be cached, and the registry answering from it."""

from __future__ import annotations

from pathlib import Path

import pytest

from voxcall.tools import ToolContext, ToolRegistry, ToolResult
from voxcall.tools.cache import ToolCache, canonical_arguments
from voxcall.tools.effects import MCP_READ_ONLY_TTL, ToolEffects, mcp_effects
from voxcall.tools.modules import load_tool_module


class Clock:
    """Seconds that move only when a test says so."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


SCOPE = object()
READS = ToolEffects(changes=False, cache_ttl=10)


def test_a_hit_until_the_ttl_runs_out() -> None:
    clock = Clock()
    cache = ToolCache(clock=clock)
    assert cache.get(SCOPE, "weather", {"city": "Oslo"}) is None
    cache.put(SCOPE, "weather", {"city": "Oslo"}, ToolResult("cold", data={"t": -3}), ttl=10)
    clock.now += 9.9
    hit = cache.get(SCOPE, "weather", {"city": "Oslo"})
    assert hit is not None and (hit.output, hit.data, hit.cached) == ("cold", {"t": -3}, True)
    assert cache.get(SCOPE, "weather", {"city": "Bergen"}) is None
    assert cache.get(SCOPE, "forecast", {"city": "Oslo"}) is None
    assert cache.get(object(), "weather", {"city": "Oslo"}) is None  # another registry's tool of that name
    clock.now += 0.1
    assert cache.get(SCOPE, "weather", {"city": "Oslo"}) is None
    assert len(cache) == 0 and cache.bytes == 0


def test_arguments_are_compared_in_canonical_form() -> None:
    assert canonical_arguments({"b": [1, {"y": 2, "x": 1}], "a": "é"}) == '{"a":"é","b":[1,{"x":1,"y":2}]}'
    cache = ToolCache(clock=Clock())
    cache.put(SCOPE, "t", {"a": 1, "b": {"c": 2, "d": 3}}, ToolResult("r"), ttl=5)
    assert cache.get(SCOPE, "t", {"b": {"d": 3, "c": 2}, "a": 1}) is not None
    assert cache.get(SCOPE, "t", {"a": 1, "b": {"c": 2, "d": 4}}) is None


def test_errors_are_never_stored() -> None:
    cache = ToolCache(clock=Clock())
    cache.put(SCOPE, "t", {}, ToolResult("boom", is_error=True), ttl=60)
    cache.put(SCOPE, "u", {}, ToolResult("fine"), ttl=0)
    assert len(cache) == 0


def test_the_least_recently_used_entry_makes_room() -> None:
    cache = ToolCache(max_entries=2, clock=Clock())
    cache.put(SCOPE, "t", {"n": 1}, ToolResult("one"), ttl=60)
    cache.put(SCOPE, "t", {"n": 2}, ToolResult("two"), ttl=60)
    assert cache.get(SCOPE, "t", {"n": 1}) is not None  # now the most recently used
    cache.put(SCOPE, "t", {"n": 3}, ToolResult("three"), ttl=60)
    assert len(cache) == 2
    assert cache.get(SCOPE, "t", {"n": 2}) is None
    assert cache.get(SCOPE, "t", {"n": 1}) is not None and cache.get(SCOPE, "t", {"n": 3}) is not None


def test_the_byte_bound_holds_and_a_result_too_large_is_not_stored() -> None:
    cache = ToolCache(max_bytes=100, clock=Clock())
    cache.put(SCOPE, "t", {"n": 1}, ToolResult("x" * 40), ttl=60)
    cache.put(SCOPE, "t", {"n": 2}, ToolResult("y" * 40), ttl=60)
    assert len(cache) == 2 and cache.bytes <= 100
    cache.put(SCOPE, "t", {"n": 3}, ToolResult("z" * 40), ttl=60)  # the first goes
    assert len(cache) == 2 and cache.bytes <= 100 and cache.get(SCOPE, "t", {"n": 1}) is None
    cache.put(SCOPE, "t", {"n": 4}, ToolResult("w" * 200), ttl=60)
    assert cache.get(SCOPE, "t", {"n": 4}) is None and len(cache) == 2
    cache.put(SCOPE, "t", {"n": 3}, ToolResult("z" * 10), ttl=60)  # replaced, counted once
    assert len(cache) == 2 and cache.bytes == (1 + 7 + 40) + (1 + 7 + 10)  # name + arguments + output


def test_ttl_rules_override_declared_and_never_for_tools_that_change_something() -> None:
    cache = ToolCache({"weather": 5, "clock": 0, "lights": 60, "plain": 20})
    assert cache.ttl("weather", READS) == 5
    assert cache.ttl("clock", READS) == 0
    assert cache.ttl("other", READS) == 10
    assert cache.ttl("plain", ToolEffects()) == 20  # declared nothing: the operator may switch it on
    assert cache.ttl("other", ToolEffects()) == 0
    assert cache.ttl("lights", ToolEffects(changes=True)) == 0  # whatever the override
    assert cache.ttl("lights", ToolEffects(changes=True, returns=False)) == 0
    assert cache.ttl("lights", ToolEffects(per_caller=True)) == 0
    effects = {"weather": READS, "lights": ToolEffects(changes=True)}
    problems = cache.ignored_overrides(effects.get)
    assert any("'lights' is never cached" in p for p in problems)
    assert any("no tool is called 'clock'" in p for p in problems) and len(problems) == 3
    with pytest.raises(ValueError, match="0 or more seconds"):
        ToolCache({"weather": -1})


def test_effects_refuse_a_ttl_on_a_tool_that_changes_something() -> None:
    with pytest.raises(ValueError, match="changes something"):
        ToolEffects(changes=True, cache_ttl=5)
    with pytest.raises(ValueError, match="ToolContext"):
        ToolEffects(cache_ttl=5, per_caller=True)


def test_mcp_annotations_map_to_effects() -> None:
    from mcp.types import ToolAnnotations

    assert mcp_effects(ToolAnnotations(read_only_hint=True), None) == ToolEffects(changes=False,
                                                                                   cache_ttl=MCP_READ_ONLY_TTL)
    assert mcp_effects(ToolAnnotations(read_only_hint=False, idempotent_hint=True), None).changes is True
    assert mcp_effects(ToolAnnotations(destructive_hint=True), None).changes is True
    assert mcp_effects(ToolAnnotations(idempotent_hint=True), None) == ToolEffects()
    assert mcp_effects(None, None) == ToolEffects()
    acts = mcp_effects(ToolAnnotations(read_only_hint=True), {"voxcall/returns": False})
    assert (acts.returns, acts.reusable) == (False, False)


# -- the registry ---------------------------------------------------------------------------------------------


def counting_registry(clock: Clock, **ttls: float) -> tuple[ToolRegistry, dict[str, int]]:
    runs = {"weather": 0, "flaky": 0, "plain": 0, "lights_off": 0}
    registry = ToolRegistry(cache=ToolCache(ttls, clock=clock))

    @registry.tool(cache_ttl=10, rate_limit=(1, 60))
    def weather(city: str, units: str = "C") -> str:
        """The weather in a city."""
        runs["weather"] += 1
        return f"{city} run {runs['weather']} {units}"

    @registry.tool(cache_ttl=10)
    def flaky() -> str:
        """Fails the first time."""
        runs["flaky"] += 1
        if runs["flaky"] == 1:
            raise RuntimeError("no")
        return "fine"

    @registry.tool
    def plain(n: int) -> int:
        """Declares nothing."""
        runs["plain"] += 1
        return n + runs["plain"]

    @registry.tool(returns=False)
    def lights_off() -> None:
        """Only acts."""
        runs["lights_off"] += 1

    return registry, runs


async def test_the_registry_answers_a_repeat_from_the_cache_without_running_or_rate_limiting() -> None:
    clock = Clock()
    registry, runs = counting_registry(clock)
    first = await registry.call("weather", {"city": "Oslo"})
    again = await registry.call("weather", {"city": "Oslo", "units": None})  # repaired to the same arguments
    assert (first.output, first.cached) == ("Oslo run 1 C", False)
    assert (again.output, again.cached) == ("Oslo run 1 C", True) and runs["weather"] == 1
    clock.now += 10
    late = await registry.call("weather", {"city": "Oslo"})
    assert late.is_error and "rate limited" in late.output  # it ran again: the limit of 1 per minute holds


async def test_errors_are_not_reused_and_undeclared_tools_run_every_time() -> None:
    registry, runs = counting_registry(Clock())
    assert (await registry.call("flaky")).is_error
    assert (await registry.call("flaky")).output == "fine"
    assert (await registry.call("flaky")).cached and runs["flaky"] == 2
    assert [(await registry.call("plain", {"n": 1})).output for _ in range(2)] == ["2", "3"]


async def test_overrides_switch_caching_on_and_off_but_never_for_an_action() -> None:
    registry, runs = counting_registry(Clock(), plain=30, weather=0, lights_off=30)
    assert [(await registry.call("plain", {"n": 1})).output for _ in range(2)] == ["2", "2"]
    await registry.call("weather", {"city": "Oslo"})
    assert (await registry.call("weather", {"city": "Oslo"})).is_error  # ran again: rate limited
    await registry.call("lights_off")
    assert (await registry.call("lights_off")).output == "ok" and runs["lights_off"] == 2
    assert registry.effects("lights_off") == ToolEffects(changes=True, returns=False)
    assert registry.effects("nope") is None


def test_a_cache_ttl_is_refused_where_it_cannot_be_right() -> None:
    registry = ToolRegistry()

    def volume(ctx: ToolContext) -> str:
        return "50 %"

    with pytest.raises(ValueError, match=r"'volume'.*ToolContext"):
        registry.register(volume, cache_ttl=5)
    with pytest.raises(ValueError, match="changes something"):
        registry.register(volume, name="other", cache_ttl=5, returns=False)
    registry.register(volume)
    assert registry.effects("volume") == ToolEffects(per_caller=True)


async def test_registries_that_include_a_tool_share_its_results_and_not_another_registry_s() -> None:
    clock = Clock()
    process, _ = counting_registry(clock)
    session = ToolRegistry(cache=process.cache)
    session.include(process)
    await process.call("weather", {"city": "Oslo"})
    assert (await session.call("weather", {"city": "Oslo"})).cached
    other = ToolRegistry(cache=process.cache)

    @other.tool(name="weather", cache_ttl=10)
    def other_weather(city: str) -> str:
        return "another server's weather"

    assert (await other.call("weather", {"city": "Oslo"})).output == "another server's weather"


def test_tool_modules_declare_cache_ttl_and_returns(tmp_path: Path) -> None:
    module = tmp_path / "declared.py"
    module.write_text("from voxcall.tools import tool\n\n"
                      "@tool(cache_ttl=60)\ndef reads() -> str:\n    return 'r'\n\n"
                      "@tool(returns=False)\ndef acts() -> None:\n    pass\n")
    registry = ToolRegistry()
    load_tool_module(str(module), registry)
    assert registry.effects("reads") == ToolEffects(cache_ttl=60)
    assert registry.effects("acts") == ToolEffects(changes=True, returns=False)


def test_a_tool_may_be_stopped_at_barge_in_unless_it_changes_something() -> None:
    """What a barge-in does to a running call (the tool ledger): MCP annotations decide where present."""
    from mcp.types import ToolAnnotations

    assert mcp_effects(ToolAnnotations(read_only_hint=True), None).stoppable
    assert not mcp_effects(ToolAnnotations(destructive_hint=True), None).stoppable
    assert not mcp_effects(ToolAnnotations(read_only_hint=False), None).stoppable
    assert mcp_effects(None, None).stoppable  # declares nothing: reading is the safe guess to stop
    assert ToolEffects(changes=True, cancellable=True).stoppable and not ToolEffects(cancellable=False).stoppable
