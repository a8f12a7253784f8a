"""Server-side tools in the response loop: rounds, mixed turns, limits, repeats, timeouts, approvals, interrupts."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from tests.harness import WEATHER, ControlledBackend, Harness, Turn
from voxcall.core.tools.toolbox import ServerTool, Toolbox
from voxcall.llm import FunctionCallItem, FunctionOutputItem
from voxcall.tools import ToolContext, ToolRegistry
from voxcall.tools.builtin import register_builtins


def make_toolbox(max_rounds: int = 5, timeout: float = 30.0) -> tuple[Toolbox, dict[str, int]]:
    """add, slow (sleeps) and louder (acts on the caller's voice), counting their runs."""
    runs = {"add": 0, "slow": 0, "louder": 0}
    registry = ToolRegistry(default_timeout=timeout)

    @registry.tool
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        runs["add"] += 1
        return a + b

    @registry.tool
    async def slow(seconds: float) -> str:
        """Wait, then answer."""
        runs["slow"] += 1
        await asyncio.sleep(seconds)
        return "done waiting"

    @registry.tool
    def louder(ctx: ToolContext) -> str:
        """Make the assistant's voice louder."""
        runs["louder"] += 1
        assert ctx.voice is not None
        ctx.voice.voice_gain = min(1.0, ctx.voice.voice_gain + 0.5)
        return f"voice at {ctx.voice.voice_gain:.0%}"

    return Toolbox(registry, max_rounds=max_rounds), runs


async def ask(h: Harness, text: str = "go", tools: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    if tools is not None:
        await h.send(type="session.update", session={"type": "realtime", "tools": tools})
    await h.say(text)
    await h.send(type="response.create")
    return await h.wait("response.done")


async def test_rounds_run_inside_one_response() -> None:
    toolbox, runs = make_toolbox()
    backend = ControlledBackend(Turn("Adding.", [("add", {"a": 2, "b": 3})]), Turn("", [("add", {"a": 5, "b": 10})]),
                                Turn("The total is 15."))
    async with Harness(backend, toolbox=toolbox) as h:
        done = await ask(h)
        response = done["response"]
        assert response["status"] == "completed"
        assert [o["type"] for o in response["output"]] == ["message", "mcp_call", "mcp_call", "message"]
        first, second = response["output"][1:3]
        assert (first["name"], first["server_label"], first["output"]) == ("add", "voxcall", "5")
        assert json.loads(second["arguments"]) == {"a": 5, "b": 10} and second["output"] == "15"
        assert runs["add"] == 2 and len(backend.requests) == 3 and len(h.of("response.created")) == 1
        last = backend.requests[-1].items
        assert isinstance(last[-2], FunctionCallItem) and isinstance(last[-1], FunctionOutputItem)
        assert last[-1].output == "15"
        kinds = [e["type"] for e in h.events]
        for kind in ("response.mcp_call_arguments.delta", "response.mcp_call_arguments.done",
                     "response.mcp_call.in_progress", "response.mcp_call.completed"):
            assert kind in kinds
        started = h.of("voxcall.tool_call.started")
        completed = h.of("voxcall.tool_call.completed")
        assert [(e["tool"], e["round"]) for e in started] == [("add", 1), ("add", 2)]
        assert [(e["result"], e["status"]) for e in completed] == [("5", "ok"), ("15", "ok")]
        history = [i.type for i in h.session.conversation.items]
        assert history == ["message", "message", "mcp_call", "mcp_call", "message"]


async def test_mixed_turn_runs_server_calls_and_ends_for_the_clients() -> None:
    toolbox, runs = make_toolbox()
    backend = ControlledBackend(Turn("", [("add", {"a": 1, "b": 1}), ("get_weather", {"city": "Oslo"})]),
                                Turn("2, and it is cold in Oslo."))
    async with Harness(backend, toolbox=toolbox, prefetch=False) as h:
        done = await ask(h, tools=[WEATHER])
        assert [o["type"] for o in done["response"]["output"]] == ["mcp_call", "function_call"]
        assert runs["add"] == 1 and len(backend.requests) == 1
        call = h.of("response.function_call_arguments.done")[0]
        await h.output(call["call_id"], "cold")
        await h.send(type="response.create")
        await h.wait("response.done", 2)
        items = backend.requests[-1].items
        assert [type(i).__name__ for i in items[-4:]] == [
            "FunctionCallItem", "FunctionOutputItem", "FunctionCallItem", "FunctionOutputItem"]
        assert [getattr(i, "output", None) for i in items[-4:]] == [None, "2", None, "cold"]


async def test_round_limit_forces_a_final_answer_without_tools() -> None:
    toolbox, runs = make_toolbox(max_rounds=2)
    loop = [Turn("", [("add", {"a": n, "b": 1})]) for n in range(5)]
    backend = ControlledBackend(*loop)
    async with Harness(backend, toolbox=toolbox) as h:
        done = await ask(h)
        assert done["response"]["status"] == "completed"
        assert runs["add"] == 2 and len(backend.requests) == 3
        assert backend.requests[-1].tool_choice == "none"
        unrun = done["response"]["output"][-1]  # this backend ignores tool_choice: its third call is not run
        assert unrun["error"]["message"] == "not run: the tool round limit was reached"


async def test_identical_call_is_answered_from_the_first_result() -> None:
    toolbox, runs = make_toolbox()
    backend = ControlledBackend(Turn("", [("add", {"a": 2, "b": 2})]), Turn("", [("add", {"b": 2, "a": 2})]),
                                Turn("Four."))
    async with Harness(backend, toolbox=toolbox) as h:
        done = await ask(h)
        assert runs["add"] == 1
        second = done["response"]["output"][1]
        assert second["output"].startswith("(the same call was already made") and second["output"].endswith("4")


async def test_hanging_tool_times_out_and_the_turn_completes() -> None:
    toolbox, runs = make_toolbox(timeout=0.05)
    backend = ControlledBackend(Turn("", [("slow", {"seconds": 30})]), Turn("The tool did not answer."))
    async with Harness(backend, toolbox=toolbox) as h:
        done = await ask(h)
        assert done["response"]["status"] == "completed"
        call = done["response"]["output"][0]
        assert call["error"]["message"] == "tool 'slow' timed out after 0.05 s" and call["output"] is None
        assert runs["slow"] == 1
        assert "response.mcp_call.failed" in [e["type"] for e in h.events]
        assert backend.requests[-1].items[-1].output == "error: tool 'slow' timed out after 0.05 s"


async def approval_case(approve: bool) -> tuple[Harness, dict[str, int], ControlledBackend]:
    toolbox, runs = make_toolbox()
    toolbox.details["add"] = ServerTool("house", "add", needs_approval=True)
    backend = ControlledBackend(Turn("", [("add", {"a": 1, "b": 2})]), Turn("Finished."))
    h = Harness(backend, toolbox=toolbox)
    await h.__aenter__()
    await h.say("add please")
    await h.send(type="response.create")
    request = await h.wait("response.output_item.done")
    if request["item"]["type"] != "mcp_approval_request":
        request = await h.wait("response.output_item.done", 2)
    assert request["item"]["type"] == "mcp_approval_request" and request["item"]["server_label"] == "house"
    assert runs["add"] == 0
    await h.send(type="conversation.item.create", item={
        "type": "mcp_approval_response", "approval_request_id": request["item"]["id"], "approve": approve,
        "reason": None if approve else "not now"})
    await h.wait("response.done")
    return h, runs, backend


async def test_approval_round_trip() -> None:
    h, runs, _ = await approval_case(True)
    try:
        assert runs["add"] == 1
        call = h.of("response.done")[0]["response"]["output"][0]
        assert call["output"] == "3" and call["approval_request_id"]
    finally:
        await h.__aexit__()


async def test_denied_approval_is_reported_to_the_model() -> None:
    h, runs, backend = await approval_case(False)
    try:
        assert runs["add"] == 0
        assert backend.requests[-1].items[-1].output == "error: the user did not approve this call (not now)"
        await h.send(type="conversation.item.create", item={
            "type": "mcp_approval_response", "approval_request_id": "nope", "approve": True})
        assert h.of("error")[-1]["error"]["code"] == "invalid_approval_request_id"
    finally:
        await h.__aexit__()


async def test_cancel_while_a_tool_runs_records_it_and_stops_it() -> None:
    toolbox, runs = make_toolbox()
    backend = ControlledBackend(Turn("", [("slow", {"seconds": 30})]))
    async with Harness(backend, toolbox=toolbox) as h:
        await h.say("wait")
        await h.send(type="response.create")
        await h.wait("voxcall.tool_call.started")
        await h.send(type="response.cancel")
        done = h.of("response.done")[0]
        assert done["response"]["status"] == "cancelled"
        item = h.session.conversation.items[-1]
        assert item.type == "mcp_call" and item.status == "incomplete" and "cancelled" in (item.error or "")
        assert runs["slow"] == 1


async def test_server_tool_acts_on_the_calling_session() -> None:
    toolbox, runs = make_toolbox()
    backend = ControlledBackend(Turn("", [("louder", {})]), Turn("Louder now."))
    async with Harness(backend, toolbox=toolbox) as h:
        h.session.voice_gain = 0.4
        done = await ask(h)
        assert h.session.voice_gain == 0.9 and done["response"]["output"][0]["output"] == "voice at 90%"
        assert runs["louder"] == 1


async def test_client_tool_may_not_shadow_a_server_tool() -> None:
    toolbox, _ = make_toolbox()
    async with Harness(ControlledBackend(), toolbox=toolbox) as h:
        await h.send(type="session.update", session={"type": "realtime", "tools": [
            {"type": "function", "name": "add", "parameters": {"type": "object", "properties": {}}}]})
        error = h.of("error")[-1]["error"]
        assert error["param"] == "session.tools[0].name" and "server-side" in error["message"]


async def test_hidden_follow_up_runs_no_server_tool_before_its_claim() -> None:
    toolbox, runs = make_toolbox()
    backend = ControlledBackend(Turn("", [("get_weather", {"city": "Oslo"})]), Turn("", [("add", {"a": 1, "b": 1})]),
                                Turn("Two, and cold."))
    async with Harness(backend, toolbox=toolbox) as h:
        await ask(h, tools=[WEATHER])
        call = h.of("response.function_call_arguments.done")[0]
        await h.output(call["call_id"], "cold")
        spec = h.session.responses.hidden
        assert spec is not None
        await h.settle()
        assert runs["add"] == 0 and not spec.task.done()  # waiting for the claim
        await h.send(type="response.create")
        done = await h.wait("response.done", 2)
        assert runs["add"] == 1 and done["response"]["status"] == "completed"


async def test_the_timing_lists_each_server_call_that_ran() -> None:
    toolbox, _ = make_toolbox()
    backend = ControlledBackend(Turn("", [("add", {"a": 2, "b": 3}), ("slow", {"seconds": 0.05})]),
                                Turn("", [("add", {"a": 2, "b": 3})]), Turn("Five."))
    async with Harness(backend, toolbox=toolbox) as h:
        done = await ask(h)
        timing = await h.wait("voxcall.response.timing")
        assert timing["response_id"] == done["response"]["id"]
        ran = timing["tools"]
        assert [t["name"] for t in ran] == ["add", "slow"]  # the repeated add was answered, not run
        calls = {o["id"]: o for o in done["response"]["output"]}
        assert all(isinstance(t["call_id"], str) and t["duration_ms"] >= 0 for t in ran)
        assert next(t for t in ran if t["name"] == "slow")["duration_ms"] >= 50
        assert "to_audio_ms" not in ran[0]  # a text response has no audio after the result
        assert len(calls) == 4


async def test_a_chinese_volume_request_reaches_the_builtin_volume_tool() -> None:
    """The level a model passes on in the user's own words (百分之三十) is read by the built-in voice volume tool.
    The model is a stand-in for one that speaks Chinese: the embedded SmolLM2-135M called voice_volume_up (no
    value) for 把音量调到百分之三十, and Whisper base hears espeak-ng's Mandarin too unreliably for a spoken test
    (把音量調到培訓之三分 at best, at random: its greedy decode is unsure and falls back to sampling)."""
    registry = ToolRegistry()
    register_builtins(registry, ["voice_volume"])
    model = ControlledBackend(Turn("", [("voice_set_volume", {"value": "百分之三十"})]), Turn("好的。"),
                              Turn("", [("voice_set_volume", {"value": "调高百分之十"})]), Turn("好的。"))
    async with Harness(model, toolbox=Toolbox(registry, max_rounds=2)) as h:
        done = await ask(h, "把音量调到百分之三十")
        assert done["response"]["output"][0]["output"] == "Voice volume set to 30%." and h.session.voice_gain == 0.3
        await h.say("再调高百分之十")
        await h.send(type="response.create")
        done = await h.wait("response.done", 2)
        assert done["response"]["output"][0]["output"] == "Voice volume set to 40%."
        assert h.session.voice_gain == pytest.approx(0.4)
