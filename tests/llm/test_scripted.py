"""ScriptedBackend: rule matching, calls, tool output, failures and the timing knobs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.llm.helpers import arguments_text, collect
from voxcall.llm import (
    DEFAULT_SCRIPT,
    Done,
    FunctionCallItem,
    FunctionOutputItem,
    LLMError,
    LLMEvent,
    LLMRequest,
    Message,
    Script,
    ScriptedBackend,
    TextDelta,
    ToolCall,
    ToolCallArgumentsDelta,
    ToolCallStart,
    Usage,
)
from voxcall.tools import Tool

SCRIPT: dict[str, Any] = {
    "greeting": "Welcome!",
    "rules": [
        {"match": "weather", "reply": "Let me check.",
         "calls": [{"name": "get_weather", "arguments": {"city": "Paris"}}]},
        {"match": "/^add (?P<a>\\d+) and (?P<b>\\d+(?:\\.\\d+)?)$/", "reply": "Adding.",
         "calls": [{"name": "calculator", "arguments": {"op": "add", "a": "{a}", "b": "{b}"}}]},
        {"match": "crash", "reply": "Oh no", "error": "simulated failure"},
        {"match": "slow", "reply": "Finally here.", "delay": 0.5},
        {"match": "music", "requires_tool": "play_music", "reply": "Playing."},
        {"match": "weather or music", "reply": "never reached: the weather rule comes first"},
    ],
    "after_tool": "{name} said {output}.",
    "default": "I don't know.",
}


def request(*items: Message | FunctionCallItem | FunctionOutputItem, tools: list[Tool] | None = None,
            tool_choice: str = "auto") -> LLMRequest:
    return LLMRequest(items=list(items), tools=tools or [], tool_choice=tool_choice)


def said(events: list[LLMEvent]) -> str:
    return "".join(e.text for e in events if isinstance(e, TextDelta))


async def reply(text: str, **kwargs: Any) -> list[LLMEvent]:
    return await collect(ScriptedBackend(SCRIPT).stream(request(Message("user", text), **kwargs)))


async def test_substring_match_is_case_insensitive_and_makes_the_call() -> None:
    events = await reply("What's the WEATHER like?")
    assert said(events) == "Let me check."
    [start] = [e for e in events if isinstance(e, ToolCallStart)]
    [call] = [e for e in events if isinstance(e, ToolCall)]
    assert (call.name, call.arguments, call.call_id) == ("get_weather", {"city": "Paris"}, start.call_id)
    assert arguments_text(events, call.call_id) == call.arguments_json
    assert sum(isinstance(e, ToolCallArgumentsDelta) for e in events) > 1  # streamed in fragments
    assert events[-1] == Done("tool_calls")


async def test_regex_groups_fill_arguments_as_numbers() -> None:
    events = await reply("ADD 12 and 0.5")
    [call] = [e for e in events if isinstance(e, ToolCall)]
    assert call.arguments == {"op": "add", "a": 12, "b": 0.5}


async def test_first_matching_rule_wins() -> None:
    assert said(await reply("weather or music")) == "Let me check."


async def test_requires_tool_skips_the_rule_unless_offered() -> None:
    assert said(await reply("some music")) == "I don't know."
    assert said(await reply("some music", tools=[Tool("play_music")])) == "Playing."


async def test_default_reply_and_text_tokens() -> None:
    events = await reply("something else entirely")
    assert events[:-2] == [TextDelta("I"), TextDelta(" don't"), TextDelta(" know.")]
    assert isinstance(events[-2], Usage) and events[-2].output_tokens > 0
    assert events[-1] == Done("stop")


async def test_greeting_without_a_user_message() -> None:
    events = await collect(ScriptedBackend(SCRIPT).stream(request(Message("system", "Be nice."))))
    assert said(events) == "Welcome!"


async def test_after_tool_uses_name_and_output_of_each_trailing_output() -> None:
    items = (Message("user", "weather"), FunctionCallItem("c1", "get_weather", "{}"),
             FunctionCallItem("c2", "get_time", "{}"), FunctionOutputItem("c1", "sunny"),
             FunctionOutputItem("c2", "noon"))
    events = await collect(ScriptedBackend(SCRIPT).stream(request(*items)))
    assert said(events) == "get_weather said sunny. get_time said noon."
    assert not any(isinstance(e, ToolCall) for e in events)


async def test_error_is_raised_after_the_text() -> None:
    events = []
    with pytest.raises(LLMError) as caught:
        async for event in ScriptedBackend(SCRIPT).stream(request(Message("user", "crash now"))):
            events.append(event)
    assert said(events) == "Oh no"
    assert (caught.value.message, caught.value.code) == ("simulated failure", "scripted_error")


async def test_tool_choice_none_suppresses_calls() -> None:
    events = await reply("weather", tool_choice="none")
    assert said(events) == "Let me check."
    assert not any(isinstance(e, ToolCallStart | ToolCall) for e in events)
    assert events[-1] == Done("stop")


async def test_calls_to_tools_not_offered_are_still_made() -> None:
    events = await reply("weather", tools=[Tool("other")])
    assert any(isinstance(e, ToolCall) and e.name == "get_weather" for e in events)


async def test_sleeps_for_ttft_rule_delay_and_between_tokens() -> None:
    slept: list[float] = []

    async def sleep(seconds: float) -> None:
        slept.append(seconds)

    backend = ScriptedBackend(SCRIPT, ttft=0.25, token_delay=0.01, sleep=sleep)
    await collect(backend.stream(request(Message("user", "slow please"))))
    assert slept == [0.75, 0.01]  # ttft + the rule's delay, then once between the two tokens
    slept.clear()
    await collect(backend.stream(request(Message("user", "weather"))))
    assert slept == [0.25, 0.01, 0.01, 0.01]  # ttft, between the three tokens, before the call
    slept.clear()
    await collect(ScriptedBackend(SCRIPT, sleep=sleep).stream(request(Message("user", "slow"))))
    assert slept == [0.5]  # no ttft, no token delay: only the rule's delay


@pytest.mark.parametrize("suffix", [".json", ".yaml"])
def test_load_from_file(tmp_path: Path, suffix: str) -> None:
    path = tmp_path / f"script{suffix}"
    path.write_text(json.dumps(SCRIPT), encoding="utf-8")  # JSON is valid YAML too
    assert Script.load(path) == Script.from_dict(SCRIPT)


async def test_backend_accepts_a_path(tmp_path: Path) -> None:
    path = tmp_path / "script.yml"
    path.write_text("rules:\n  - match: ping\n    reply: pong\n", encoding="utf-8")
    events = await collect(ScriptedBackend(str(path)).stream(request(Message("user", "ping"))))
    assert said(events) == "pong"


@pytest.mark.parametrize(("data", "message"), [
    ([], "must be a mapping"),
    ({"rule": []}, "unknown keys"),
    ({"rules": [{"reply": "x"}]}, "rule 1 needs a non-empty string 'match'"),
    ({"rules": [{"match": "/(/"}]}, "invalid regex"),
    ({"rules": [{"match": "x", "calls": [{"name": "f", "arguments": {"a": "{nope}"}}]}]}, "names no group"),
    ({"rules": [{"match": "x", "delay": -1}]}, "'delay'"),
    ({"rules": [{"match": "x", "error": 3}]}, "'error' must be a string"),
    ({"after_tool": "{result}"}, "after_tool"),
    ({"default": 5}, "'default' must be a string"),
])
def test_invalid_scripts_are_explained(data: Any, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        Script.from_dict(data)


async def test_tokens_rebuild_the_text_exactly() -> None:
    text = "  Two  spaces,\nnew line. "
    events = await collect(ScriptedBackend({"default": text}).stream(request(Message("user", "?"))))
    assert said(events) == text


# -- the built-in script ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(("question", "op", "a", "b"), [
    ("What is 12 times 8?", "mul", 12, 8), ("what's 7 plus 5", "add", 7, 5), ("10 minus 3", "sub", 10, 3),
    ("what is 9 divided by 3", "div", 9, 3), ("2.5 * 4", "mul", 2.5, 4),
])
async def test_default_script_uses_the_calculator(calculator_tool: Tool, question: str, op: str, a: float,
                                                  b: float) -> None:
    events = await collect(ScriptedBackend().stream(request(Message("user", question), tools=[calculator_tool])))
    [call] = [e for e in events if isinstance(e, ToolCall)]
    assert (call.name, call.arguments) == ("calculator", {"op": op, "a": a, "b": b})


async def test_default_script_without_a_calculator_just_talks() -> None:
    events = await collect(ScriptedBackend().stream(request(Message("user", "what is 12 times 8"))))
    assert "calculator" in said(events) and not any(isinstance(e, ToolCall) for e in events)


async def test_default_script_greets_and_answers_the_result() -> None:
    backend = ScriptedBackend()
    assert said(await collect(backend.stream(request()))) == DEFAULT_SCRIPT.greeting
    items = (Message("user", "what is 12 times 8"), FunctionCallItem("c1", "calculator", "{}"),
             FunctionOutputItem("c1", "96"))
    assert said(await collect(backend.stream(request(*items)))) == "The answer is 96."
    assert said(await collect(backend.stream(request(Message("user", "hello"))))).startswith("Hello")


async def test_after_rules_chain_tool_calls() -> None:
    from voxcall.llm import FunctionCallItem, FunctionOutputItem, LLMRequest, Message, ScriptedBackend
    from voxcall.tools import ToolCall

    backend = ScriptedBackend({"rules": [
        {"match": "go", "calls": [{"name": "first", "arguments": {}}]},
        {"after": "first", "match": "/(?P<n>\\d+)/", "reply": "Next.", "calls": [{"name": "second",
                                                                                   "arguments": {"n": "{n}"}}]},
    ], "after_tool": "Finally {output}."})

    async def reply(items: list) -> tuple[str, list[ToolCall]]:
        events = [e async for e in backend.stream(LLMRequest(items=items))]
        text = "".join(getattr(e, "text", "") for e in events if type(e).__name__ == "TextDelta")
        return text, [e for e in events if isinstance(e, ToolCall)]

    user = Message("user", "go")
    assert [c.name for c in (await reply([user]))[1]] == ["first"]
    text, calls = await reply([user, FunctionCallItem("c1", "first", "{}"), FunctionOutputItem("c1", "got 7")])
    assert text == "Next." and [(c.name, c.arguments) for c in calls] == [("second", {"n": 7})]
    text, calls = await reply([user, FunctionCallItem("c1", "first", "{}"), FunctionOutputItem("c1", "got 7"),
                               FunctionCallItem("c2", "second", "{}"), FunctionOutputItem("c2", "ok")])
    assert text == "Finally ok." and calls == []


def test_spoken_numbers_match_rules_written_with_digits() -> None:
    from voxcall.llm.scripted import digits_for_words

    assert digits_for_words("What is twelve times eight?") == "What is 12 times 8?"
    assert digits_for_words("two hundred fifty plus forty-five") == "250 plus 45"
    assert digits_for_words("eight nine, Someone") == "eight nine, Someone"  # not one number; not inside a word


async def test_the_demo_does_sums_said_in_words() -> None:
    from tests.llm.helpers import collect
    from voxcall.llm import DEFAULT_SCRIPT, LLMRequest, Message, ScriptedBackend, ToolCall
    from voxcall.tools import Tool

    calculator = Tool.from_openai({"type": "function", "name": "calculator", "description": "d", "parameters": {
        "type": "object", "properties": {"op": {"type": "string"}, "a": {"type": "number"}, "b": {"type": "number"}}}})
    events = await collect(ScriptedBackend(DEFAULT_SCRIPT).stream(
        LLMRequest(items=[Message("user", "What is twelve times eight?")], tools=[calculator])))
    calls = [e for e in events if isinstance(e, ToolCall)]
    assert [(c.name, c.arguments) for c in calls] == [("calculator", {"op": "mul", "a": 12, "b": 8})]
