"""ToolRegistry: registration, lookup, argument handling, limits, failures and result text."""

import asyncio
import enum
import logging
import threading
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

import pytest
from pydantic import BaseModel

from voxcall.tools import Tool, ToolCall, ToolError, ToolRegistry


class Color(enum.Enum):
    RED = "red"
    GREEN = "green"


class Point(BaseModel):
    x: int
    y: int


@dataclass
class Size:
    width: int
    height: int


class Opaque:
    """An object pydantic cannot serialise."""

    def __str__(self) -> str:
        return "<opaque>"


@pytest.fixture
def registry() -> ToolRegistry:
    return ToolRegistry(default_timeout=5.0)


# -- registration and lookup ---------------------------------------------------------------------------------


async def test_sync_tool_runs_in_a_worker_thread(registry: ToolRegistry) -> None:
    threads: list[int] = []

    @registry.tool
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        threads.append(threading.get_ident())
        return a + b

    result = await registry.call("add", {"a": 2, "b": 3})
    assert (result.output, result.is_error, result.data) == ("5", False, 5)
    assert threads and threads[0] != threading.get_ident()


async def test_async_tool_runs_on_the_event_loop(registry: ToolRegistry) -> None:
    threads: list[int] = []

    @registry.tool
    async def echo(text: str) -> str:
        """Echo the text."""
        threads.append(threading.get_ident())
        return text

    result = await registry.call("echo", {"text": "hé"})
    assert result.output == "hé"
    assert threads == [threading.get_ident()]


async def test_sync_wrapper_returning_a_coroutine_is_awaited(registry: ToolRegistry) -> None:
    async def inner() -> str:
        return "inner"

    def wrapper() -> Any:  # what a careless decorator around an async function looks like
        return inner()

    registry.add(Tool("wrapped"), wrapper)
    assert (await registry.call("wrapped")).output == "inner"


def test_decorator_returns_the_original_function(registry: ToolRegistry) -> None:
    def greet(name: str) -> str:
        """Greet someone."""
        return f"hi {name}"

    assert registry.tool(greet) is greet
    assert registry.tool(name="greet2")(greet) is greet
    assert greet("Ann") == "hi Ann"


async def test_decorator_overrides(registry: ToolRegistry) -> None:
    parameters = {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}

    @registry.tool(name="search_web", description="Search the web.", parameters=parameters)
    def search(q: str) -> str:
        """Ignored docstring."""
        return f"results for {q}"

    tool = registry.get("search_web")
    assert tool is not None
    assert (tool.name, tool.description, tool.parameters) == ("search_web", "Search the web.", parameters)
    assert "search" not in registry
    assert (await registry.call("search_web", {"q": "cats"})).output == "results for cats"


def test_register_returns_the_tool_from_the_function(registry: ToolRegistry) -> None:
    def volume(level: int) -> None:
        """Set the volume.

        Args:
            level: The volume from 0 to 100.
        """

    tool = registry.register(volume)
    assert tool is registry.get("volume")
    assert tool.required == ["level"]
    assert registry.tools == [tool]
    assert "volume" in registry and "other" not in registry
    assert len(registry) == 1
    assert registry.get("other") is None


async def test_add_tool_with_external_schema_and_async_handler(registry: ToolRegistry) -> None:
    received: dict[str, Any] = {}

    async def handler(**kwargs: Any) -> str:
        received.update(kwargs)
        return "done"

    tool = Tool("remote", "A remote tool.", {"type": "object", "properties": {"from": {"type": "string"}}})
    assert registry.add(tool, handler) is tool
    result = await registry.call("remote", {"from": "here"})
    assert result.output == "done"
    assert received == {"from": "here"}


async def test_schema_names_map_to_python_parameter_aliases(registry: ToolRegistry) -> None:
    def route(from_: str, to: str) -> str:
        return f"{from_}->{to}"

    schema = {"type": "object", "properties": {"from": {"type": "string"}, "to": {"type": "string"}}}
    registry.add(Tool("route", parameters=schema), route)
    assert (await registry.call("route", {"from": "A", "to": "B"})).output == "A->B"


def test_duplicate_names_raise(registry: ToolRegistry) -> None:
    def ping() -> str:
        """Ping."""
        return "pong"

    registry.register(ping)
    with pytest.raises(ValueError, match="'ping' is already registered"):
        registry.register(ping)
    with pytest.raises(ValueError, match="already registered"):
        registry.add(Tool("ping"), ping)


@pytest.mark.parametrize("options", [{"timeout": 0}, {"timeout": -1.0}, {"rate_limit": (0, 1.0)},
                                     {"rate_limit": (1, 0.0)}])
def test_invalid_options_raise(registry: ToolRegistry, options: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        registry.add(Tool("t"), lambda: None, **options)
    assert "t" not in registry


@pytest.mark.parametrize("options", [{"default_timeout": 0}, {"max_concurrency": 0}])
def test_invalid_registry_options_raise(options: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        ToolRegistry(**options)


# -- arguments -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("arguments", "message"),
    [({"a": 1}, "missing required argument: b"), ({"a": 1, "b": "two"}, "'b'"),
     ([1, 2], "must be an object")],
)
async def test_invalid_arguments_do_not_call_the_tool(
    registry: ToolRegistry, arguments: Any, message: str
) -> None:
    calls: list[tuple[int, int]] = []

    @registry.tool
    def add(a: int, b: int) -> int:
        """Add."""
        calls.append((a, b))
        return a + b

    result = await registry.call("add", arguments)
    assert result.is_error
    assert result.output.startswith("invalid arguments for tool 'add': ")
    assert message in result.output
    assert calls == []


async def test_repair_warnings_are_logged(registry: ToolRegistry, caplog: pytest.LogCaptureFixture) -> None:
    @registry.tool
    def echo(text: str) -> str:
        """Echo."""
        return text

    with caplog.at_level(logging.WARNING, logger="voxcall.tools.registry"):
        result = await registry.call("echo", {"text": "hi", "extra": 1})
    assert result.output == "hi"
    assert "dropped unknown argument 'extra'" in caplog.text


async def test_arguments_the_handler_does_not_take_are_dropped(
    registry: ToolRegistry, caplog: pytest.LogCaptureFixture
) -> None:
    @registry.tool
    def ping() -> str:
        """Ping (its schema has no properties, so validation lets extras through)."""
        return "pong"

    with caplog.at_level(logging.WARNING, logger="voxcall.tools.registry"):
        result = await registry.call("ping", {"extra": 1})
    assert result.output == "pong"
    assert "dropped argument 'extra'" in caplog.text


async def test_missing_arguments_mean_an_empty_object(registry: ToolRegistry) -> None:
    @registry.tool
    def ping() -> str:
        """Ping."""
        return "pong"

    assert (await registry.call("ping")).output == "pong"


async def test_unknown_tool_names_the_closest(registry: ToolRegistry) -> None:
    for name in ("play_music", "set_volume"):
        registry.add(Tool(name), lambda: None)
    result = await registry.call("play_musik", {})
    assert result.is_error
    assert result.output == "unknown tool 'play_musik'; did you mean 'play_music'?"
    far = await registry.call("weather", {})
    assert far.output == "unknown tool 'weather'; known tools: play_music, set_volume"


async def test_unknown_tool_in_an_empty_registry(registry: ToolRegistry) -> None:
    assert (await registry.call("x", {})).output == "unknown tool 'x'; known tools: none"


async def test_models_enums_and_nested_values_are_converted(registry: ToolRegistry) -> None:
    received: dict[str, Any] = {}

    @registry.tool
    def draw(color: Color, at: Point, path: list[Point], sizes: dict[str, Size], pair: tuple[int, int],
             scale: float = 1.0, tint: Color | None = None) -> str:
        """Draw something.

        Args:
            color: The colour.
            at: Where.
            path: The path.
            sizes: Named sizes.
            pair: Two numbers.
            scale: The scale.
            tint: An optional tint.
        """
        received.update(color=color, at=at, path=path, sizes=sizes, pair=pair, scale=scale, tint=tint)
        return "drawn"

    result = await registry.call("draw", {
        "color": "red", "at": {"x": 1, "y": 2}, "path": [{"x": 3, "y": 4}],
        "sizes": {"s": {"width": 1, "height": 2}}, "pair": [5, 6], "scale": 2, "tint": "green",
    })
    assert result.output == "drawn", result.output
    assert received["color"] is Color.RED
    assert received["at"] == Point(x=1, y=2)
    assert received["path"] == [Point(x=3, y=4)]
    assert received["sizes"] == {"s": Size(1, 2)}
    assert received["pair"] == (5, 6)
    assert received["scale"] == 2 and type(received["scale"]) is int  # JSON-native values pass unchanged
    assert received["tint"] is Color.GREEN


async def test_conversion_failure_is_an_argument_error(registry: ToolRegistry) -> None:
    calls: list[Point] = []

    def place(at: Point) -> None:
        calls.append(at)

    loose = {"type": "object", "properties": {"at": {"type": "object"}}, "required": ["at"]}
    registry.register(place, parameters=loose)
    result = await registry.call("place", {"at": {"x": "left", "y": 1}})
    assert result.is_error
    assert result.output.startswith("invalid arguments for tool 'place': argument 'at.x'")
    assert calls == []


async def test_run_accepts_a_tool_call(registry: ToolRegistry) -> None:
    registry.add(Tool("ping"), lambda: "pong")
    result = await registry.run(ToolCall("ping", {}))
    assert result.output == "pong"


# -- limits --------------------------------------------------------------------------------------------------


async def test_async_timeout_is_an_error_result(registry: ToolRegistry) -> None:
    @registry.tool(timeout=0.05)
    async def slow() -> str:
        """Take forever."""
        await asyncio.sleep(60)
        return "never"

    result = await registry.call("slow", {})
    assert result.is_error
    assert result.output == "tool 'slow' timed out after 0.05 s"


async def test_sync_timeout_is_an_error_result() -> None:
    registry = ToolRegistry(default_timeout=0.05)
    release = threading.Event()

    @registry.tool
    def blocking() -> str:
        """Block until released."""
        release.wait(10)
        return "late"

    try:
        result = await registry.call("blocking", {})
    finally:
        release.set()
    assert result.output == "tool 'blocking' timed out after 0.05 s"


async def test_timeout_error_raised_by_the_tool_is_a_failure(registry: ToolRegistry) -> None:
    async def flaky() -> None:
        raise TimeoutError("upstream")

    registry.add(Tool("flaky"), flaky)
    assert (await registry.call("flaky", {})).output == "tool 'flaky' failed (TimeoutError)"


async def test_concurrency_limit_bounds_tools_in_flight() -> None:
    registry = ToolRegistry(max_concurrency=2)
    gate = asyncio.Event()
    in_flight = peak = 0

    async def work() -> str:
        nonlocal in_flight, peak
        in_flight += 1
        peak = max(peak, in_flight)
        await gate.wait()
        in_flight -= 1
        return "done"

    registry.add(Tool("work"), work)
    tasks = [asyncio.create_task(registry.call("work", {})) for _ in range(6)]
    for _ in range(20):  # let every task run as far as it can
        await asyncio.sleep(0)
    assert in_flight == 2
    gate.set()
    results = await asyncio.gather(*tasks)
    assert [r.output for r in results] == ["done"] * 6
    assert peak == 2


async def test_rate_limit_uses_a_sliding_window(
    registry: ToolRegistry, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = [100.0]
    monkeypatch.setattr("voxcall.tools.ratelimit.time", SimpleNamespace(monotonic=lambda: clock[0]))
    calls: list[int] = []
    registry.add(Tool("ping"), lambda: calls.append(1), rate_limit=(2, 10.0))

    assert not (await registry.call("ping", {})).is_error
    clock[0] = 104.0
    assert not (await registry.call("ping", {})).is_error
    clock[0] = 106.0
    limited = await registry.call("ping", {})
    assert limited.is_error
    assert limited.output == "tool 'ping' is rate limited to 2 calls per 10 s; retry in 4.0 s"
    assert len(calls) == 2
    clock[0] = 110.0  # the first call has left the window
    assert not (await registry.call("ping", {})).is_error
    assert len(calls) == 3


async def test_invalid_calls_do_not_count_against_the_rate_limit(registry: ToolRegistry) -> None:
    registry.add(Tool("echo", parameters={"type": "object", "properties": {"t": {"type": "string"}},
                                          "required": ["t"]}), lambda t: t, rate_limit=(1, 60.0))
    assert (await registry.call("echo", {})).is_error
    assert (await registry.call("echo", {"t": "x"})).output == "x"


# -- failures ------------------------------------------------------------------------------------------------


async def test_raising_tool_gives_a_safe_message_and_logs_the_detail(
    registry: ToolRegistry, caplog: pytest.LogCaptureFixture
) -> None:
    @registry.tool
    def leaky() -> str:
        """Fail with a secret in the message."""
        raise ValueError("password=hunter2")

    with caplog.at_level(logging.ERROR, logger="voxcall.tools.registry"):
        result = await registry.call("leaky", {})
    assert result.is_error
    assert result.output == "tool 'leaky' failed (ValueError)"
    assert "hunter2" not in result.output
    record = next(r for r in caplog.records if r.levelno == logging.ERROR)
    assert record.exc_info is not None and "hunter2" in caplog.text


async def test_tool_error_message_reaches_the_model(registry: ToolRegistry) -> None:
    @registry.tool
    async def play(song: str) -> str:
        """Play a song."""
        raise ToolError(f"no song called {song!r}")

    result = await registry.call("play", {"song": "Yesterday"})
    assert (result.output, result.is_error) == ("no song called 'Yesterday'", True)


async def test_cancellation_propagates_into_the_tool(registry: ToolRegistry) -> None:
    started, cancelled = asyncio.Event(), asyncio.Event()

    @registry.tool
    async def wait_forever() -> None:
        """Wait."""
        started.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cancelled.set()
            raise

    task = asyncio.create_task(registry.call("wait_forever", {}))
    await started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert cancelled.is_set()


# -- result text ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "output"),
    [
        ("plain text", "plain text"),
        ("", ""),
        (None, "ok"),
        ({"city": "Zürich", "temp": 21.5}, '{"city":"Zürich","temp":21.5}'),
        ([1, "two", None], '[1,"two",null]'),
        ((1, 2), "[1,2]"),
        (42, "42"),
        (2.5, "2.5"),
        (True, "true"),
        (Point(x=1, y=2), '{"x":1,"y":2}'),
        ([Point(x=1, y=2)], '[{"x":1,"y":2}]'),
        (Size(3, 4), '{"width":3,"height":4}'),
        (Color.RED, "red"),
        (Opaque(), "<opaque>"),
    ],
)
async def test_results_are_normalised_to_text(registry: ToolRegistry, value: Any, output: str) -> None:
    registry.add(Tool("value"), lambda: value)
    result = await registry.call("value", {})
    assert (result.output, result.is_error) == (output, False)
    assert result.data is value


async def test_tool_context_is_injected_and_hidden_from_the_schema() -> None:
    from voxcall.tools import ToolContext

    class Caller:
        voice_gain = 1.0

    registry = ToolRegistry()

    @registry.tool
    def louder(step: float, ctx: ToolContext) -> float:
        """Raise the caller's voice volume."""
        assert ctx.voice is not None
        ctx.voice.voice_gain += step
        return ctx.voice.voice_gain

    assert list(registry.get("louder").parameters["properties"]) == ["step"]  # type: ignore[union-attr]
    caller = Caller()
    result = await registry.call("louder", {"step": 0.5}, context=ToolContext(session_id="s", voice=caller))
    assert (result.is_error, result.data, caller.voice_gain) == (False, 1.5, 1.5)
    bare = await registry.call("louder", {"step": 0.5})  # no session: an empty context, the tool decides
    assert bare.is_error and "AssertionError" in bare.output
