"""The tool ledger: every state of a call and each move's event, duplicates, the acknowledgement of a slow tool and
the conversation going on while it runs, interruptions, client tools that never answer, and depth bounds."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator
from typing import Any

from tests.harness import WEATHER, ControlledBackend, Harness, Turn
from voxcall.core.tools.tool_ledger import REPEAT_NOTE, CallState
from voxcall.core.tools.toolbox import Toolbox
from voxcall.language import ACKNOWLEDGEMENTS, acknowledgement, language_of
from voxcall.llm import Done, FunctionCallItem, FunctionOutputItem, LLMEvent, LLMRequest, ToolCallStart
from voxcall.tools import Tool, ToolCall, ToolRegistry
from voxcall.tools.codecalls import TextDelta


class Gates:
    """Tools whose runs the test releases: ``lookup`` (reads; may be stopped), ``order`` (changes something; a
    barge-in lets it finish), ``add`` and ``boom`` (fast), ``again`` (meant to repeat); runs counted."""

    def __init__(self, timeout: float = 30.0) -> None:
        self.release = {"lookup": asyncio.Event(), "order": asyncio.Event()}
        self.runs = {"lookup": 0, "order": 0, "add": 0, "again": 0}
        self.stopped: list[str] = []
        registry = ToolRegistry(default_timeout=timeout)

        @registry.tool
        async def lookup(city: str) -> str:
            """Look a city up (slowly)."""
            self.runs["lookup"] += 1
            try:
                await self.release["lookup"].wait()
            except asyncio.CancelledError:
                self.stopped.append("lookup")
                raise
            return f"{city}: sunny"

        @registry.tool(cancellable=False)
        async def order(item: str) -> str:
            """Order something."""
            self.runs["order"] += 1
            await self.release["order"].wait()
            return f"ordered {item}"

        @registry.tool
        def add(a: int, b: int) -> int:
            """Add two numbers."""
            self.runs["add"] += 1
            return a + b

        @registry.tool
        def boom() -> None:
            """Fail."""
            raise RuntimeError("secret detail")

        registry.add(Tool("store", "Store a tree.", {"type": "object", "properties": {"x": {"$ref": "#"}}}),
                     lambda x=None: "stored")

        @registry.tool(repeats=True)
        def again() -> str:
            """Meant to run every time (next track)."""
            self.runs["again"] += 1
            return f"run {self.runs['again']}"

        self.toolbox = Toolbox(registry)


def states(h: Harness, item_id: str) -> list[str]:
    """The states the ledger's events announced for the call of item ``item_id``, in order."""
    return [e["state"] for e in h.events if e["type"].startswith("voxcall.tool_call.") and e.get("item_id") == item_id]


async def ask(h: Harness, text: str) -> dict[str, Any]:
    """The user says ``text`` and asks for a response; its ``response.done``."""
    count = len(h.of("response.done")) + 1
    await h.say(text)
    await h.send(type="response.create")
    return await h.wait("response.done", count)


def texts(h: Harness) -> str:
    return "".join(e["delta"] for e in h.of("response.output_text.delta"))


# -- states and their events ---------------------------------------------------------------------------------------


async def test_a_server_call_moves_proposed_running_done_and_retrieve_shows_it() -> None:
    gates = Gates()
    backend = ControlledBackend(Turn("", [("add", {"a": 2, "b": 3})]), Turn("Five."))
    async with Harness(backend, toolbox=gates.toolbox) as h:
        done = await ask(h, "add")
        item = done["response"]["output"][0]
        assert states(h, item["id"]) == ["proposed", "running", "done"]
        completed = h.of("voxcall.tool_call.completed")[0]
        assert (completed["status"], completed["result"], completed["round"]) == ("ok", "5", 1)
        await h.send(type="conversation.item.retrieve", item_id=item["id"])
        ledger = h.of("conversation.item.retrieved")[0]["item"]["voxcall_tool_call"]
        assert ledger["state"] == "done" and [t["state"] for t in ledger["transitions"]] == [
            "proposed", "running", "done"]
        metrics = h.host.shared.metrics.render().decode()
        assert 'voxcall_tool_call_states_total{state="done"} 1.0' in metrics


async def test_a_tool_that_raises_ends_failed_with_a_safe_message() -> None:
    gates = Gates()
    backend = ControlledBackend(Turn("", [("boom", {})]), Turn("It failed."))
    async with Harness(backend, toolbox=gates.toolbox) as h:
        done = await ask(h, "boom")
        item = done["response"]["output"][0]
        assert states(h, item["id"]) == ["proposed", "running", "failed"]
        assert item["error"]["message"] == "tool 'boom' failed (RuntimeError)"


async def test_a_server_tool_past_its_deadline_ends_timed_out_and_the_model_is_told() -> None:
    gates = Gates(timeout=0.05)
    backend = ControlledBackend(Turn("", [("lookup", {"city": "Oslo"})]), Turn("It did not answer."))
    async with Harness(backend, toolbox=gates.toolbox, acknowledge_after_ms=0) as h:
        done = await ask(h, "weather")
        item = done["response"]["output"][0]
        assert states(h, item["id"]) == ["proposed", "running", "timed_out"]
        assert h.of("voxcall.tool_call.completed")[0]["status"] == "timed_out"
        assert backend.requests[-1].items[-1].output == "error: tool 'lookup' timed out after 0.05 s"


async def test_a_client_tool_that_never_answers_times_out_and_the_model_is_told() -> None:
    backend = ControlledBackend(Turn("", [("get_weather", {"city": "Oslo"})]), Turn("The weather service is down."))
    async with Harness(backend, client_tool_wait=0.05, prefetch=False) as h:
        await h.send(type="session.update", session={"type": "realtime", "tools": [WEATHER]})
        done = await ask(h, "weather")
        call = done["response"]["output"][0]
        timed_out = await h.wait("voxcall.tool_call.completed")
        assert timed_out["status"] == "timed_out" and states(h, call["id"]) == ["proposed", "running", "timed_out"]
        output = next(i for i in h.session.conversation.items if i.type == "function_call_output")
        assert output.call_id == call["call_id"] and "did not answer within 0.05 s" in output.output
        await h.wait("response.done", 2)  # the model tells the user
        assert "service is down" in texts(h)
        assert isinstance(backend.requests[-1].items[-1], FunctionOutputItem)


async def test_a_client_output_ends_its_call_done() -> None:
    backend = ControlledBackend(Turn("", [("get_weather", {"city": "Oslo"})]), Turn("Cold."))
    async with Harness(backend, prefetch=False) as h:
        await h.send(type="session.update", session={"type": "realtime", "tools": [WEATHER]})
        done = await ask(h, "weather")
        call_id = done["response"]["output"][0]["call_id"]
        await h.output(call_id, "cold")
        assert states(h, done["response"]["output"][0]["id"]) == ["proposed", "running", "done"]


# -- duplicates ------------------------------------------------------------------------------------------------------


async def test_identical_calls_in_one_reply_run_once() -> None:
    gates = Gates()
    backend = ControlledBackend(Turn("", [("add", {"a": 2, "b": 2}), ("add", {"b": 2, "a": 2})]), Turn("Four."))
    async with Harness(backend, toolbox=gates.toolbox) as h:
        done = await ask(h, "add twice")
        first, second = done["response"]["output"][:2]
        assert gates.runs["add"] == 1
        assert first["output"] == "4" and second["output"] == REPEAT_NOTE + "4"
        first_done, repeat = h.of("voxcall.tool_call.completed")
        assert repeat["item_id"] == second["id"] and repeat["repeat_of"] == first_done["call_id"]


async def test_the_same_call_in_a_new_user_turn_runs_again() -> None:
    gates = Gates()
    backend = ControlledBackend(Turn("", [("add", {"a": 1, "b": 1})]), Turn("Two."),
                                Turn("", [("add", {"a": 1, "b": 1})]), Turn("Two again."))
    async with Harness(backend, toolbox=gates.toolbox, prefetch=False) as h:
        await ask(h, "add")
        await ask(h, "add once more")
        assert gates.runs["add"] == 2


async def test_a_tool_meant_to_repeat_runs_every_time() -> None:
    gates = Gates()
    backend = ControlledBackend(Turn("", [("again", {}), ("again", {})]), Turn("Twice."))
    async with Harness(backend, toolbox=gates.toolbox) as h:
        done = await ask(h, "next, next")
        assert gates.runs["again"] == 2
        assert {o["output"] for o in done["response"]["output"][:2]} == {"run 1", "run 2"}


# -- a slow tool: the acknowledgement, the user talking on, the result spoken ------------------------------------------


async def test_a_slow_tool_is_acknowledged_and_its_result_answered_when_it_lands() -> None:
    gates = Gates()
    backend = ControlledBackend(Turn("", [("lookup", {"city": "Oslo"})]), Turn("Oslo is sunny."))
    async with Harness(backend, toolbox=gates.toolbox, acknowledge_after_ms=20) as h:
        done = await ask(h, "weather in Oslo?")
        output = done["response"]["output"]
        assert done["response"]["status"] == "completed"
        assert [o["type"] for o in output] == ["mcp_call", "message"]
        assert output[0]["status"] == "in_progress"
        assert output[1]["content"][0]["text"] == ACKNOWLEDGEMENTS["en"][0]
        call_id = h.of("voxcall.tool_call.proposed")[0]["call_id"]
        assert h.session.ledger.calls[call_id].state is CallState.RUNNING
        gates.release["lookup"].set()
        report = await h.wait("response.done", 2)
        assert report["response"]["status"] == "completed" and "Oslo is sunny." in texts(h)
        landed = [e for e in h.of("conversation.item.done") if e["item"]["id"] == output[0]["id"]]
        assert landed[-1]["item"]["output"] == "Oslo: sunny"
        assert states(h, output[0]["id"]) == ["proposed", "running", "done"]
        last = backend.requests[-1].items
        assert isinstance(last[-2], FunctionCallItem) and isinstance(last[-1], FunctionOutputItem)


async def test_a_question_asked_while_a_tool_runs_is_answered_and_the_history_stays_in_order() -> None:
    gates = Gates()
    backend = ControlledBackend(Turn("", [("lookup", {"city": "Oslo"})]), Turn("It is noon."),
                                Turn("And Oslo is sunny."))
    async with Harness(backend, toolbox=gates.toolbox, acknowledge_after_ms=20) as h:
        await ask(h, "weather in Oslo?")
        second = await ask(h, "what time is it?")
        assert not h.of("error")
        assert second["response"]["status"] == "completed" and "It is noon." in texts(h)
        assert gates.runs["lookup"] == 1 and not gates.stopped  # the new turn did not cancel the running tool
        gates.release["lookup"].set()
        await h.wait("response.done", 3)
        history = [(i.type, getattr(i, "role", None)) for i in h.session.conversation.items]
        assert history == [("message", "user"), ("mcp_call", None), ("message", "assistant"), ("message", "user"),
                           ("message", "assistant"), ("message", "assistant")]
        assert [i.text for i in h.session.conversation.items if i.type == "message"][-2:] == [
            "It is noon. ", "And Oslo is sunny. "]
        call = h.session.conversation.items[1]
        assert call.type == "mcp_call" and call.output == "Oslo: sunny" and call.status == "completed"
        report = backend.requests[-1].items  # the model reads the late result last
        assert isinstance(report[-1], FunctionOutputItem) and report[-1].output == "Oslo: sunny"


async def test_a_result_landing_while_another_response_runs_is_answered_after_it() -> None:
    gates = Gates()
    answer = Turn("It is", hold=True)
    backend = ControlledBackend(Turn("", [("lookup", {"city": "Oslo"})]), answer, Turn("Oslo is sunny."))
    async with Harness(backend, toolbox=gates.toolbox, acknowledge_after_ms=20) as h:
        await ask(h, "weather in Oslo?")
        await h.say("what time is it?")
        await h.send(type="response.create")
        await asyncio.wait_for(answer.started.wait(), 5)
        gates.release["lookup"].set()
        await h.wait("voxcall.tool_call.completed")
        await h.settle()
        assert len(h.of("response.created")) == 2 and not h.of("error")  # it waits for the answer in progress
        answer.release.set()
        await h.wait("response.done", 3)
        assert texts(h).endswith("Oslo is sunny. ")


async def test_the_acknowledgement_speaks_the_users_language() -> None:
    gates = Gates()
    backend = ControlledBackend(Turn("", [("lookup", {"city": "北京"})]), Turn("北京晴。"))
    async with Harness(backend, toolbox=gates.toolbox, acknowledge_after_ms=20) as h:
        done = await ask(h, "北京天气怎么样？")
        assert done["response"]["output"][1]["content"][0]["text"] == ACKNOWLEDGEMENTS["zh"][0]
        gates.release["lookup"].set()
        await h.wait("response.done", 2)


def test_acknowledgement_languages_and_turns() -> None:
    assert language_of("北京天气怎么样？") == "zh" and language_of("東京の天気は？") == "ja"
    assert language_of("서울 날씨") == "ko" and language_of("weather in Paris") is None
    assert acknowledgement("fr-FR", "quel temps", 0) == ACKNOWLEDGEMENTS["fr"][0]
    assert acknowledgement(None, "hi", 1) == ACKNOWLEDGEMENTS["en"][1] != acknowledgement(None, "hi", 0)


# -- interruptions -----------------------------------------------------------------------------------------------------


class CallThenHold:
    """Writes one call of ``add``, then holds its stream until the test cancels the response."""

    name = "call-then-hold"

    def __init__(self) -> None:
        self.requests: list[LLMRequest] = []

    async def stream(self, request: LLMRequest) -> AsyncGenerator[LLMEvent, None]:
        self.requests.append(request)
        call = ToolCall("add", {"a": 1, "b": 2})
        yield ToolCallStart(call.call_id, call.name)
        yield call
        await asyncio.Event().wait()
        yield Done("tool_calls")

    async def aclose(self) -> None:
        return None


async def test_a_call_of_a_response_cancelled_before_it_ran_is_dropped_with_a_reason() -> None:
    gates = Gates()
    async with Harness(CallThenHold(), toolbox=gates.toolbox) as h:
        await h.say("add")
        await h.send(type="response.create")
        proposed = await h.wait("voxcall.tool_call.proposed")
        await h.send(type="response.cancel")
        cancelled = await h.wait("voxcall.tool_call.cancelled")
        assert cancelled["item_id"] == proposed["item_id"]
        assert cancelled["reason"] == "not run: the response was cancelled"
        assert gates.runs["add"] == 0
        item = h.session.conversation.items[-1]
        assert item.type == "mcp_call" and item.status == "incomplete" and item.error == cancelled["reason"]


async def test_a_barge_in_stops_a_reading_tool_and_lets_a_changing_one_finish_into_the_history() -> None:
    gates = Gates()
    backend = ControlledBackend(Turn("", [("lookup", {"city": "Oslo"}), ("order", {"item": "pizza"})]))
    async with Harness(backend, toolbox=gates.toolbox, acknowledge_after_ms=0) as h:
        await h.say("weather, and order a pizza")
        await h.send(type="response.create")
        await h.wait("voxcall.tool_call.started", 2)
        while gates.runs["order"] == 0 or gates.runs["lookup"] == 0:
            await asyncio.sleep(0.001)
        await h.send(type="response.cancel")
        done = h.of("response.done")[0]["response"]
        assert done["status"] == "cancelled"
        lookup, order = done["output"]
        assert lookup["error"]["message"] == "not completed: the response was cancelled"
        assert gates.stopped == ["lookup"]
        assert order["status"] == "in_progress"  # it runs on
        gates.release["order"].set()
        landed = await h.wait("voxcall.tool_call.completed")
        assert landed["item_id"] == order["id"] and landed["result"] == "ordered pizza"
        item = next(i for i in h.session.conversation.items if i.id == order["id"])
        assert item.output == "ordered pizza" and item.status == "completed"  # never dropped from the history
        await h.settle()
        assert len(h.of("response.created")) == 1  # kept for the next answer, not spoken over the barge-in


# -- depth bounds and crashes ------------------------------------------------------------------------------------------


async def test_deeply_nested_arguments_are_refused_and_the_session_keeps_answering() -> None:
    gates = Gates()
    deep: dict[str, Any] = {}
    for _ in range(300):  # each level a few frames deep in jsonschema: a RecursionError without the bound
        deep = {"x": deep}
    backend = ControlledBackend(Turn("", [("store", deep)]), Turn("That did not work."),
                                Turn("Still here."))
    async with Harness(backend, toolbox=gates.toolbox) as h:
        done = await ask(h, "deep")
        assert done["response"]["status"] == "completed"
        assert "nested more than" in done["response"]["output"][0]["error"]["message"]
        again = await ask(h, "hello?")
        assert again["response"]["status"] == "completed" and "Still here." in texts(h)


class Crashing:
    """A backend with a bug: its first stream raises RecursionError mid-reply; then it answers."""

    name = "crashing"

    def __init__(self) -> None:
        self.calls = 0

    async def stream(self, request: LLMRequest) -> AsyncGenerator[LLMEvent, None]:
        self.calls += 1
        yield TextDelta("Hmm")
        if self.calls == 1:
            raise RecursionError("maximum recursion depth exceeded")
        yield Done("stop")

    async def aclose(self) -> None:
        return None


async def test_a_crash_inside_a_response_ends_it_failed_and_the_session_keeps_answering() -> None:
    async with Harness(Crashing()) as h:
        failed = await ask(h, "first")
        assert failed["response"]["status"] == "failed"
        assert failed["response"]["status_details"]["error"]["code"] == "server_error"
        assert "recursion" not in str(failed).lower()  # no detail leaks to the client
        fine = await ask(h, "second")
        assert fine["response"]["status"] == "completed"
