"""The talker and thinker (:mod:`voxcall.llm.local.duet`) with scripted backends: who answers, the acknowledgement
while the thinker works, the deadline's spoken fallback, and that a closed reply stops the thinker before it
calls anything."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncGenerator
from typing import Any

import pytest

from tests.llm.helpers import collect
from voxcall.llm import (
    Done,
    FunctionCallItem,
    FunctionOutputItem,
    LLMError,
    LLMEvent,
    LLMRequest,
    Message,
    RejectedCall,
    ScriptedBackend,
    TextDelta,
    ToolCall,
    Usage,
    computes_here,
    warm_shared,
)
from voxcall.llm.local.duet import Duet, DuetOptions, Route, route
from voxcall.tools import Tool

WEATHER = Tool("get_weather", "Get the weather forecast for a city.",
               {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]})
THINKER_SCRIPT = {"rules": [{"match": "weather", "reply": "", "delay": 0.3,
                             "calls": [{"name": "get_weather", "arguments": {"city": "Oslo"}}]},
                            {"match": "capital", "reply": "Rome.", "delay": 0.0},
                            {"match": "slow", "reply": "Late.", "delay": 5.0},
                            {"match": "broken", "reply": "", "error": "the thinker broke", "delay": 0.3}],
                  "default": "Thought."}
TALKER_SCRIPT = {"rules": [], "default": "Hello from the talker.", "after_tool": "It is {output}."}


def ask(words: str, **options: Any) -> LLMRequest:
    return LLMRequest(items=[Message("user", words)], tools=[WEATHER], **options)


@pytest.mark.parametrize(("request_", "who"), [
    (ask("Hello!"), Route.TALKER),
    (ask("Thank you very much!"), Route.TALKER),
    (ask("你好，你今天怎么样？"), Route.TALKER),
    (ask("What's the weather in Oslo?"), Route.THINKER),
    (ask("Hello, what's the weather in Oslo?"), Route.THINKER),  # small talk hides no request
    (ask("What is the capital of Italy?"), Route.THINKER),
    (ask("Hello!", tool_choice="required"), Route.THINKER),
    (LLMRequest(items=[Message("user", "Weather?"), FunctionCallItem("c1", "get_weather", "{}"),
                       FunctionOutputItem("c1", "sunny")], tools=[WEATHER]), Route.TALKER),
    (LLMRequest(items=[], tools=[WEATHER]), Route.TALKER),
])
def test_who_answers(request_: LLMRequest, who: Route) -> None:
    assert route(request_) is who


@pytest.mark.parametrize(("words", "who"), [
    ("Thank you very much!", Route.TALKER),  # English: a language the talker speaks
    ("你好，你今天怎么样？", Route.THINKER),  # Chinese small talk: the thinker, which speaks it
    ("谢谢你！", Route.THINKER),
    ("What's the weather in Oslo?", Route.THINKER),
])
def test_small_talk_in_a_language_the_talker_does_not_speak_goes_to_the_thinker(words: str, who: Route) -> None:
    assert route(ask(words), frozenset({"en"})) is who


class Recorder:
    """A backend that records the requests it is asked and answers with the ``inner`` one; counts closed streams."""

    def __init__(self, inner: ScriptedBackend) -> None:
        self.inner, self.name = inner, inner.name
        self.asked: list[LLMRequest] = []
        self.closed = 0

    async def stream(self, request: LLMRequest) -> AsyncGenerator[LLMEvent, None]:
        self.asked.append(request)
        try:
            async for event in self.inner.stream(request):
                yield event
        finally:
            self.closed += 1

    async def aclose(self) -> None:
        await self.inner.aclose()


def duet(**options: Any) -> tuple[Duet, Recorder, Recorder]:
    talker, thinker = Recorder(ScriptedBackend(TALKER_SCRIPT)), Recorder(ScriptedBackend(THINKER_SCRIPT))
    made = Duet(talker, thinker, acknowledge=lambda said: "One moment.", fallback=lambda said: "Sorry, no answer.",
                options=DuetOptions(**options))
    return made, talker, thinker


async def test_the_duet_routes_by_its_talkers_languages() -> None:
    made, talker, thinker = duet(talker_languages=frozenset({"en"}))
    assert text(await collect(made.stream(ask("谢谢你！")))) == "Thought."
    assert text(await collect(made.stream(ask("Thank you!")))) == "Hello from the talker."
    assert [r.last_user_text for r in thinker.asked] == ["谢谢你！"]
    assert [r.last_user_text for r in talker.asked] == ["Thank you!"]


def text(events: list[LLMEvent]) -> str:
    return "".join(e.text for e in events if isinstance(e, TextDelta))


async def test_small_talk_is_the_talkers_and_it_never_sees_the_tools() -> None:
    both, talker, thinker = duet()
    events = await collect(both.stream(ask("Good morning!")))
    assert text(events) == "Hello from the talker." and not thinker.asked
    assert talker.asked[0].tools == [] and talker.asked[0].tool_choice == "none"
    assert isinstance(events[-1], Done)


async def test_a_slow_decision_is_acknowledged_then_the_call_follows_in_the_same_reply() -> None:
    both, talker, thinker = duet(acknowledge_after_s=0.1)
    events = await collect(both.stream(ask("What's the weather in Oslo?")))
    calls = [e for e in events if isinstance(e, ToolCall)]
    assert text(events).startswith("One moment.")
    assert [(c.name, c.arguments) for c in calls] == [("get_weather", {"city": "Oslo"})]
    first = next(e for e in events if isinstance(e, TextDelta))
    assert first.filler and events.index(first) < events.index(calls[0])  # the voice's words, not the thinker's
    assert thinker.asked[0].tools == [WEATHER] and not talker.asked
    assert isinstance(events[-2], Usage) and isinstance(events[-1], Done)


async def test_a_quick_thinker_needs_no_acknowledgement() -> None:
    both, _, _ = duet(acknowledge_after_s=0.5)
    assert text(await collect(both.stream(ask("What is the capital of Italy?")))) == "Rome."


async def test_the_wait_before_an_acknowledgement_is_counted_from_the_end_of_the_users_speech() -> None:
    both, _, _ = duet(acknowledge_after_s=0.5)  # the thinker above answers well within it after the request
    spoken = ask("What is the capital of Italy?", heard_at=time.monotonic() - 0.6)  # but the user has waited
    assert text(await collect(both.stream(spoken))) == "One moment. Rome."


async def test_the_deadline_stops_the_thinker_with_a_spoken_fallback() -> None:
    both, _, thinker = duet(acknowledge_after_s=0.1, deadline_s=0.4)
    events = await collect(both.stream(ask("Something slow, please.")))
    assert text(events) == "One moment. Sorry, no answer."
    assert isinstance(events[-1], Done) and thinker.closed == 1  # the thinker's stream was closed


async def test_a_thinker_failing_after_the_acknowledgement_is_a_spoken_fallback_not_an_error() -> None:
    both, _, _ = duet(acknowledge_after_s=0.1)
    assert text(await collect(both.stream(ask("The broken one.")))) == "One moment. Sorry, no answer."
    quick, _, _ = duet(acknowledge_after_s=1.0)  # nothing said yet: the error is the response's
    with pytest.raises(LLMError, match="the thinker broke"):
        await collect(quick.stream(ask("The broken one.")))


class Botching:
    """A thinker whose reply is one call it botched (``repairable``: one the response has it write again), or
    nothing at all."""

    name = "botching"

    def __init__(self, *, call: bool, repairable: bool = False) -> None:
        self.call, self.repairable = call, repairable

    async def stream(self, request: LLMRequest) -> AsyncGenerator[LLMEvent, None]:
        if self.call:
            yield RejectedCall("inventory", "inventory(sizes=['S', 'S', 'S'", "not a valid call",
                               repairable=self.repairable)
        yield Usage(10, 40)
        yield Done("length" if self.call else "stop")

    async def aclose(self) -> None:
        pass


@pytest.mark.parametrize("call", [True, False])
async def test_a_thinker_that_says_nothing_and_calls_nothing_is_a_spoken_fallback(call: bool) -> None:
    """A reply of a rejected call only (the 0.5B thinker's call cut by its token limit), or of nothing, would be
    silence for a voice user: the fallback is said before the reply ends, after the thinker's own events."""
    both = Duet(Recorder(ScriptedBackend(TALKER_SCRIPT)), Botching(call=call), acknowledge=lambda said: "One moment.",
                fallback=lambda said: "Sorry, no answer.", options=DuetOptions(acknowledge_after_s=5.0))
    events = await collect(both.stream(ask("Do you have it in small?")))
    assert text(events) == "Sorry, no answer."
    assert isinstance(events[-2], TextDelta) and isinstance(events[-1], Done)
    assert any(isinstance(event, RejectedCall) for event in events) is call  # the client still hears why


async def test_a_call_the_response_will_have_written_again_is_no_silence_to_fill() -> None:
    both = Duet(Recorder(ScriptedBackend(TALKER_SCRIPT)), Botching(call=True, repairable=True),
                acknowledge=lambda said: "One moment.", fallback=lambda said: "Sorry, no answer.")
    assert text(await collect(both.stream(ask("Do you have it in small?")))) == ""


async def test_a_reply_closed_before_the_decision_never_calls() -> None:
    both, _, thinker = duet(acknowledge_after_s=0.05)
    stream = both.stream(ask("What's the weather in Oslo?"))
    first = await anext(stream)
    assert isinstance(first, TextDelta)  # the acknowledgement; the thinker has not decided yet
    await stream.aclose()
    await asyncio.sleep(0.4)  # past when the thinker would have called
    assert thinker.closed == 1


async def test_results_are_spoken_by_the_talker() -> None:
    both, _, thinker = duet()
    request = LLMRequest(items=[Message("user", "Weather in Oslo?"), FunctionCallItem("c1", "get_weather", "{}"),
                                FunctionOutputItem("c1", "sunny")], tools=[WEATHER])
    assert text(await collect(both.stream(request))) == "It is sunny." and not thinker.asked


class Warming(Recorder):
    """A thinker whose warm takes a second, counting warms started, finished and stopped."""

    def __init__(self, inner: ScriptedBackend) -> None:
        super().__init__(inner)
        self.started = self.finished = self.stopped = 0

    async def warm(self, request: LLMRequest) -> None:
        self.started += 1
        try:
            await asyncio.sleep(1.0)
        except asyncio.CancelledError:
            self.stopped += 1
            raise
        self.finished += 1


async def test_a_talkers_reply_pauses_the_thinkers_warm_which_goes_on_afterwards() -> None:
    thinker = Warming(ScriptedBackend(THINKER_SCRIPT))
    both = Duet(Recorder(ScriptedBackend(TALKER_SCRIPT)), thinker, acknowledge=lambda said: "",
                fallback=lambda said: "")
    preparing = asyncio.ensure_future(both.warm(ask("")))
    await asyncio.sleep(0.1)
    assert thinker.started == 1
    await collect(both.stream(ask("Hello!")))
    await asyncio.sleep(0)  # the stopped warm hears of it
    assert thinker.stopped == 1 and thinker.started == 2  # paused for the reply, then on again
    await preparing  # the paused warm returns early
    await asyncio.sleep(1.1)
    assert thinker.finished == 1
    newer = asyncio.ensure_future(both.warm(ask("")))
    await asyncio.sleep(0.1)
    newer.cancel()  # a newer preparation of the session replaces it: the thinker's warm stops too
    await asyncio.sleep(0.05)
    assert thinker.stopped == 2
    await both.aclose()


class Preparing(Recorder):
    """A backend recording what it is asked to prepare: a conversation's prompt, or what every tools prompt shares;
    it runs on this machine's CPU."""

    computes_here = True

    def __init__(self, inner: ScriptedBackend) -> None:
        super().__init__(inner)
        self.warmed: list[LLMRequest] = []
        self.shared: list[LLMRequest] = []

    async def warm(self, request: LLMRequest) -> None:
        self.warmed.append(request)

    async def warm_shared(self, request: LLMRequest) -> None:
        self.shared.append(request)


async def test_at_start_the_talker_prepares_its_prompt_and_the_thinker_what_its_tools_prompts_share() -> None:
    talker, thinker = Preparing(ScriptedBackend(TALKER_SCRIPT)), Preparing(ScriptedBackend(THINKER_SCRIPT))
    both = Duet(talker, thinker, acknowledge=lambda said: "", fallback=lambda said: "")
    defaults = LLMRequest(items=[], instructions="Be brief.", voice=True)
    await warm_shared(both, defaults)
    assert [(r.instructions, r.tools, r.tool_choice) for r in talker.warmed] == [("Be brief.", [], "none")]
    assert thinker.shared == [defaults] and talker.shared == [] and thinker.warmed == []
    assert computes_here(both)
    assert not computes_here(Duet(Recorder(ScriptedBackend(TALKER_SCRIPT)), Recorder(ScriptedBackend(THINKER_SCRIPT)),
                                  acknowledge=lambda said: "", fallback=lambda said: ""))
