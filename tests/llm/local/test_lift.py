"""``Lift``: the tool that words unrelated to every tool make the model likelier to name, against words that ask
for nothing; the driver opens a call for it alone, or none (scripted probabilities: the decision, not a model)."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import replace

import pytest

from tests.llm.local.test_llama_server import WEATHER
from tests.requirements import require_smollm2
from voxcall.llm import LLMRequest, Message
from voxcall.llm.local.driver import Opening, Run, Said, reply_steps
from voxcall.llm.local.lift import CONTENT_FREE, MIN_LIFT, SMOOTHING, Lift, Likely, UnaskedPrompts, content_free
from voxcall.llm.local.plan import UNRELATED_CALL_THRESHOLD, Planner, ReplyOptions
from voxcall.llm.local.vocabulary import Vocabulary
from voxcall.tools import Tool

PLAY, LIGHTS, TIMER = (1, 2), (3, 4), (3, 5)  # play_music, set_lights, set_timer: two share their first token
SAID, FREE = [100], ([200], [201], [202])
WORDS = {(100,): {1: 0.3, 3: 0.6}, (100, 3): {4: 0.9, 5: 0.1}}  # the user's words: set_lights likeliest
UNASKED = {(3,): {4: 0.5, 5: 0.5}}  # after any content-free words: "set" nearly always, either tool
MUSIC = Tool("play_music", "Play music.",
             {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]})


def probabilities(prompt: list[int]) -> dict[int, float]:
    """The scripted model: :data:`WORDS` after the user's words, "set" at 0.9 after content-free ones."""
    if prompt[0] == SAID[0]:
        return WORDS[tuple(prompt)]
    return UNASKED.get(tuple(prompt[1:]), {1: 0.01, 3: 0.9})


def decided(lift: Lift, opening: float,
            model: Callable[[list[int]], Mapping[int, float]] = probabilities) -> tuple[int | None, list[Likely]]:
    """What ``lift.chosen(opening)`` returns when ``model`` answers, and what it asked."""
    steps = lift.chosen(opening)
    asked: list[Likely] = []
    try:
        step = next(steps)
        while True:
            asked.append(step)
            given = model(step.prompt)
            step = steps.send({token: given[token] for token in step.tokens if token in given})
    except StopIteration as stop:
        return stop.value, asked


def test_the_tool_the_words_lift_is_chosen_not_the_likeliest() -> None:
    lift = Lift(SAID, FREE, (PLAY, LIGHTS, TIMER), UNRELATED_CALL_THRESHOLD)
    chosen, asked = decided(lift, 0.6)
    assert chosen == 0  # play_music: 0.3 against 0.01; set_lights 0.54 against 0.45
    assert math.log((0.3 + SMOOTHING) / (0.01 + SMOOTHING)) >= MIN_LIFT > math.log((0.54 + SMOOTHING) / 0.46)
    # one question for each prefix names share: the first token, then "set"'s; play_music parts at its first;
    # the user's words last, whose prompt the reply continues
    assert [(step.prompt, step.tokens) for step in asked[-2:]] == [([100], (1, 3)), ([100, 3], (4, 5))]
    assert len(asked) == 2 * (1 + len(CONTENT_FREE))


def test_without_a_lift_the_floor_decides() -> None:
    unlifted = {(100,): {1: 0.01, 3: 0.95}, (100, 3): {4: 0.6, 5: 0.4}}  # as after words asking nothing
    lift = Lift(SAID, FREE, (PLAY, LIGHTS, TIMER), UNRELATED_CALL_THRESHOLD)

    def model(prompt: list[int]) -> dict[int, float]:
        return unlifted[tuple(prompt)] if prompt[0] == SAID[0] else probabilities(prompt)

    assert decided(lift, 0.8, model)[0] is None  # words: no tool more likely than unasked
    assert decided(lift, UNRELATED_CALL_THRESHOLD, model)[0] == 1  # the floor reached: the tool lifted most


def test_one_tool_is_never_lifted_and_a_name_out_of_sight_counts_nothing() -> None:
    lift = Lift(SAID, FREE, (LIGHTS,), UNRELATED_CALL_THRESHOLD)
    chosen, asked = decided(lift, 0.8, lambda prompt: {3: 0.99} if prompt[0] == SAID[0] else {3: 0.97})
    assert chosen is None and len(asked) == 1 + len(CONTENT_FREE)  # one question a prompt: nothing to part
    assert decided(lift, 0.8, lambda prompt: {})[0] is None  # never written either way: a lift of 0, not a fault


def test_content_free_words_take_the_place_of_the_conversation() -> None:
    earlier = [Message("user", "Play something."), Message("assistant", "Which song?")]
    request = LLMRequest(items=[*earlier, Message("user", "Hotel California.")], tools=[WEATHER], instructions="Hi")
    unasked = content_free(request)
    assert [item.items for item in unasked] == [[Message("user", words)] for words in CONTENT_FREE]
    assert all(item.tools == [WEATHER] and item.instructions == "Hi" for item in unasked)


@pytest.fixture(scope="module")
def planner() -> Planner:
    return Planner(Vocabulary(require_smollm2()), 2048, ReplyOptions(unrelated_threshold=UNRELATED_CALL_THRESHOLD))


def test_the_plan_of_unrelated_words_says_where_names_are_written(planner: Planner) -> None:
    request = LLMRequest(items=[Message("user", "Queue up Hotel California.")], tools=[WEATHER, MUSIC])
    plan = planner.plan(request, [WEATHER, MUSIC])
    assert plan.lift is not None and plan.call_threshold == 0.5 and not plan.late_calls
    opener = planner.vocabulary.tokenize(planner.opener)
    assert plan.lift.prompt == plan.prompt + opener
    names = [b"".join(planner.vocabulary.piece(token) for token in name) for name in plan.lift.names]
    assert names == [b"get_weather", b"play_music"]
    assert len(plan.lift.free) == len(CONTENT_FREE)
    assert all(prompt[-len(opener):] == opener and prompt != plan.lift.prompt for prompt in plan.lift.free)


def test_the_driver_calls_the_lifted_tool_alone_or_says_words(planner: Planner) -> None:
    request = LLMRequest(items=[Message("user", "Queue up Hotel California.")], tools=[WEATHER, MUSIC])
    plan = planner.plan(request, [WEATHER, MUSIC])
    assert plan.lift is not None
    play, said_prompt = plan.lift.names[1][0], plan.lift.prompt

    def run(opening: float, lifted: bool) -> list[object]:
        steps = reply_steps(plan, planner.vocabulary)
        seen: list[object] = [next(steps)]
        step = steps.send(opening)
        while isinstance(step, Likely):
            seen.append(step)
            step = steps.send({play: 0.5} if step.prompt == said_prompt and lifted else {play: 0.01})
        seen.append(step)
        while isinstance(step, Said):
            step = steps.send(None)
            seen.append(step)
        return seen

    assert not any(isinstance(step, Likely) for step in run(0.3, lifted=True))  # no call opened: nothing weighed
    called = run(0.7, lifted=True)
    assert isinstance(called[0], Opening) and Said(planner.opener) in called
    # the one tool's name is forced: it is said, not sampled, and the run goes on from it under the rest
    said = "".join(step.text for step in called if isinstance(step, Said))
    assert said.startswith(planner.opener + "play_music(")
    grammar = called[-1].grammar if isinstance(called[-1], Run) else None
    assert grammar is not None and "get_weather" not in grammar
    words = run(0.7, lifted=False)[-1]
    assert isinstance(words, Run) and words.grammar is None and words.first_banned is not None


def test_the_unasked_prompts_are_built_once_for_each_set_of_tools() -> None:
    built: list[tuple[str, str]] = []

    def build(request: LLMRequest, offered: list[Tool]) -> list[int]:
        built.append((request.instructions, "+".join(tool.name for tool in offered)))
        return [len(built)]

    unasked = UnaskedPrompts(build)
    first = LLMRequest(items=[Message("user", "Queue up Hotel California.")], tools=[WEATHER, MUSIC])
    later = LLMRequest(items=[Message("user", "Hi."), Message("assistant", "Hello!"), Message("user", "Blues.")],
                       tools=[WEATHER, MUSIC])
    assert unasked.prompts(first, [WEATHER, MUSIC]) == ([1], [2], [3])
    assert unasked.prompts(later, [WEATHER, MUSIC]) == ([1], [2], [3]) and len(built) == len(CONTENT_FREE)
    assert unasked.prompts(first, [MUSIC])[0] == [4]  # other tools
    assert unasked.prompts(replace(first, instructions="Be brief."), [WEATHER, MUSIC])[0] == [7]  # other instructions
    assert built[-1] == ("Be brief.", "get_weather+play_music")
