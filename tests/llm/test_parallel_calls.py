"""``parallel_tool_calls``: sent to cloud APIs when off; the paths that read calls from text keep one per reply."""

from __future__ import annotations

from tests.llm.helpers import collect
from voxcall.llm import (
    CodeFormatBackend,
    LLMRequest,
    Message,
    OpenAIChatBackend,
    OpenAIResponsesBackend,
    RejectedCall,
    ScriptedBackend,
    ToolCall,
    ToolCallStart,
)
from voxcall.llm.calls import CallLimit
from voxcall.tools import Tool

TWO_CALLS = "Both.<code>calculator(op='add', a=1, b=2)\ncalculator(op='mul', a=2, b=3)</code>"


def ask(tools: list[Tool], *, parallel: bool) -> LLMRequest:
    return LLMRequest(items=[Message("user", "sums")], tools=tools, parallel_tool_calls=parallel)


def test_call_limit_rejects_every_call_after_the_first() -> None:
    limit = CallLimit(parallel=False)
    first, second, third = (ToolCall("f", {"n": n}) for n in range(3))
    assert limit.check(first) is first
    rejected = limit.apply([second, third])
    assert all(isinstance(r, RejectedCall) and r.name == "f" and "parallel" in r.reason for r in rejected)
    assert CallLimit(parallel=True).apply([first, second]) == [first, second]


def test_call_limit_rejects_a_call_made_twice_in_a_reply() -> None:
    limit = CallLimit(parallel=True)
    ride, again = ToolCall("ride", {"to": "home", "n": 1}), ToolCall("ride", {"n": 1, "to": "home"})
    other = ToolCall("ride", {"to": "work", "n": 1})
    made = limit.apply([ride, again, other])
    assert made[0] is ride and made[2] is other  # the same tool with other arguments runs
    assert isinstance(made[1], RejectedCall) and "same call" in made[1].reason and not made[1].repairable


def test_call_limit_rejects_a_call_made_again_with_arguments_added_or_left_out() -> None:
    limit = CallLimit(parallel=True)
    weather = ToolCall("weather", {"city": "Seoul", "units": "metric"})
    added = ToolCall("weather", {"city": "Seoul", "units": "metric", "api_key": "South Korea"})
    fewer = ToolCall("weather", {"city": "Seoul"})
    other = ToolCall("weather", {"city": "Busan", "units": "metric"})
    made = limit.apply([weather, added, fewer, other])
    assert made[0] is weather and made[3] is other  # another city is a call of its own
    assert all(isinstance(r, RejectedCall) and "added or left out" in r.reason for r in made[1:3])
    bare = CallLimit(parallel=True)
    assert not isinstance(bare.apply([ToolCall("now", {}), ToolCall("now", {"zone": "UTC"})])[1], RejectedCall)
    assert not isinstance(bare.apply([ToolCall("now", {"zone": "CET"})])[0], RejectedCall)


async def test_code_path_runs_a_repeated_call_once(calculator_tool: Tool) -> None:
    twice = "<code>calculator(op='add', a=1, b=2)</code><code>calculator(op='add', a=1, b=2)</code>"
    events = await collect(CodeFormatBackend(ScriptedBackend({"default": twice})).stream(
        ask([calculator_tool], parallel=True)))
    assert len([e for e in events if isinstance(e, ToolCall)]) == 1
    assert [e.name for e in events if isinstance(e, RejectedCall)] == ["calculator"]


async def test_code_path_keeps_one_call_when_parallel_is_off(calculator_tool: Tool) -> None:
    backend = CodeFormatBackend(ScriptedBackend({"default": TWO_CALLS}))
    both = await collect(backend.stream(ask([calculator_tool], parallel=True)))
    assert [e.arguments["op"] for e in both if isinstance(e, ToolCall)] == ["add", "mul"]
    one = await collect(backend.stream(ask([calculator_tool], parallel=False)))
    assert [e.arguments["op"] for e in one if isinstance(e, ToolCall)] == ["add"]
    assert sum(isinstance(e, ToolCallStart) for e in one) == 1  # the rejected call is never announced
    assert [e.name for e in one if isinstance(e, RejectedCall)] == ["calculator"]


async def test_scripted_backend_keeps_one_call_when_parallel_is_off(calculator_tool: Tool) -> None:
    script = {"default": "Two.", "rules": [{"match": "sums", "reply": "Two.", "calls": [
        {"name": "calculator", "arguments": {"op": "add", "a": 1, "b": 2}},
        {"name": "calculator", "arguments": {"op": "mul", "a": 2, "b": 3}}]}]}
    events = await collect(ScriptedBackend(script).stream(ask([calculator_tool], parallel=False)))
    assert [e.arguments["op"] for e in events if isinstance(e, ToolCall)] == ["add"]
    assert any(isinstance(e, RejectedCall) for e in events)


def test_cloud_backends_are_sent_the_flag_only_when_off(calculator_tool: Tool) -> None:
    chat = OpenAIChatBackend("m", base_url="http://localhost:8000/v1")
    responses = OpenAIResponsesBackend("m", base_url="http://localhost:8000/v1")
    for backend in (chat, responses):
        assert backend.request_params(ask([calculator_tool], parallel=False))["parallel_tool_calls"] is False
        assert "parallel_tool_calls" not in backend.request_params(ask([calculator_tool], parallel=True))
        assert "parallel_tool_calls" not in backend.request_params(ask([], parallel=False))  # no tools, no flag
