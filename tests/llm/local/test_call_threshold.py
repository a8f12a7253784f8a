"""The probability of opening a call that an ``"auto"`` reply needs (``Plan.call_threshold``): the setting's, none
for a request that plainly names a tool, a higher one for words that share nothing with any tool (whose reply,
once it begins with words, opens no call later: ``Plan.late_calls``), infinite right after tool results and for a
request whose words hold no tool's values."""

from __future__ import annotations

import math

import pytest

from tests.llm.local.test_llama_server import RELATED_SAID, WEATHER
from tests.requirements import require_smollm2
from voxcall.config import LocalModelSettings
from voxcall.llm import FunctionCallItem, FunctionOutputItem, LLMRequest, Message, local_options
from voxcall.llm.local.driver import Opening, Outcome, Run, Said, reply_steps
from voxcall.llm.local.plan import (
    EVIDENT_CALL_FLOOR,
    EVIDENT_CALL_THRESHOLD,
    UNRELATED_CALL_THRESHOLD,
    Plan,
    Planner,
    ReplyOptions,
)
from voxcall.llm.local.vocabulary import Vocabulary
from voxcall.tools import Tool


@pytest.fixture(scope="module")
def vocabulary() -> Vocabulary:
    return Vocabulary(require_smollm2())


def plan(vocabulary: Vocabulary, said: str, **options: object) -> Plan:
    """The plan for ``said`` offering :data:`WEATHER`, with ``options`` over those the server gives a model that
    weighs unrelated words."""
    chosen = {"unrelated_threshold": UNRELATED_CALL_THRESHOLD, **options}
    planner = Planner(vocabulary, 2048, ReplyOptions(**chosen))  # type: ignore[arg-type]
    return planner.plan(LLMRequest(items=[Message("user", said)] if said else [], tools=[WEATHER]), [WEATHER])


def threshold(vocabulary: Vocabulary, said: str, **options: object) -> float | None:
    return plan(vocabulary, said, **options).call_threshold


def test_related_words_take_the_settings_threshold(vocabulary: Vocabulary) -> None:
    assert threshold(vocabulary, RELATED_SAID) == ReplyOptions().call_threshold == 0.5
    assert ReplyOptions().unrelated_threshold is None  # a backend built without the server's choice
    assert threshold(vocabulary, RELATED_SAID, call_threshold=0.7) == 0.7


def test_a_request_naming_the_tool_with_its_values_is_a_call(vocabulary: Vocabulary) -> None:
    assert threshold(vocabulary, "What's the weather in Oslo?") == EVIDENT_CALL_THRESHOLD
    # unless a model whose probabilities weigh gives a call all but no chance ("What instrument did Mozart play?")
    assert threshold(vocabulary, "What's the weather in Mordor?", evident_threshold=EVIDENT_CALL_FLOOR) > 0
    # but a place named for the tool's place is asked about whatever the model's first token: a call
    for said in ("东京天气如何？", "What's the weather in Oslo?"):
        assert threshold(vocabulary, said, evident_threshold=EVIDENT_CALL_FLOOR) == EVIDENT_CALL_THRESHOLD, said
    # a question for a value left out is asked whatever the model thinks of a call
    assert plan(vocabulary, "What's the weather?", evident_threshold=EVIDENT_CALL_FLOOR).call_threshold == 0


def test_a_request_naming_the_tool_without_its_value_is_answered_with_a_question(vocabulary: Vocabulary) -> None:
    """"What's the weather?" holds no city: no call of ``get_weather(city='the')`` and no words of the model's (the
    0.5B model said "The weather is sunny."), but a question asking for it, where the reply would open a call."""
    asked = plan(vocabulary, "What's the weather?")
    assert asked.question == "Could you tell me the city?" and not asked.complete  # said where it opens a call
    assert asked.call_threshold == EVIDENT_CALL_THRESHOLD and not asked.late_calls
    assert asked.call_grammar is None and asked.tools == ()
    assert plan(vocabulary, "What's the weather?", copy_strings=False).call_threshold == EVIDENT_CALL_THRESHOLD
    planner = Planner(vocabulary, 2048, ReplyOptions())
    required = LLMRequest(items=[Message("user", "What's the weather?")], tools=[WEATHER], tool_choice="required")
    assert planner.plan(required, [WEATHER]).grammar is not None  # a call it must make is still made


def test_no_other_tool_takes_the_words_of_one_that_lacks_its_values(vocabulary: Vocabulary) -> None:
    timer = Tool("set_timer", "Start a countdown timer.",
                 {"type": "object", "properties": {"minutes": {"type": "number"}}, "required": ["minutes"]})
    music = [Tool("play_music", "Play music.", {"type": "object", "properties": {"query": {"type": "string"}},
                                                "required": ["query"]}), Tool("stop_music", "Stop the music.")]
    planner = Planner(vocabulary, 2048, ReplyOptions())

    def planned(said: str, tools: list[Tool]) -> Plan:
        return planner.plan(LLMRequest(items=[Message("user", said)], tools=tools), tools)

    assert planned("Set a timer.", [WEATHER, timer]).question == "Could you tell me the minutes?"  # no city='timer'
    assert [t.name for t in planned("Set a timer for 5 minutes.", [WEATHER, timer]).tools] == ["set_timer"]
    assert planned("Play some music.", music).question == "Could you tell me the query?"  # play, before stop
    assert planned("Turn the music off.", music).question == ""  # as likely: stop_music, which needs no value
    calculator = Tool("calculator", "", {"type": "object", "properties": {
        "a": {"type": "number", "description": "The first number."}, "b": {"type": "number"}}, "required": ["a", "b"]})
    assert planned("Use the calculator.", [calculator]).question == "Could you tell me the first number?"
    # in the user's language, with the lexicon's word for the value where it has one
    assert planned("天气怎么样？", [WEATHER, timer]).question == "请问城市是什么？"  # no city='天'
    assert planned("设一个计时器。", [WEATHER, timer]).question == "请问分钟是什么？"  # 一个 is "a", no minutes
    assert planned("播放音乐。", music).question == "请问query是什么？"  # a name it has no word for
    assert planned("What will the weather be tomorrow?", [WEATHER]).question == "Could you tell me the city?"


def test_words_unrelated_to_every_tool_need_the_higher_threshold_or_a_lift(vocabulary: Vocabulary) -> None:
    assert UNRELATED_CALL_THRESHOLD > 0.5
    assert threshold(vocabulary, "Tell me a joke.", lift=False) == UNRELATED_CALL_THRESHOLD
    assert threshold(vocabulary, "打开厨房的灯。", lift=False) == UNRELATED_CALL_THRESHOLD  # 灯: light
    assert threshold(vocabulary, "Tell me a joke.", call_threshold=0.95, lift=False) == 0.95  # never lowered
    lifted = plan(vocabulary, "Tell me a joke.")  # the floor is the lift's, the threshold the setting's
    assert lifted.call_threshold == 0.5 and lifted.lift is not None
    assert lifted.lift.floor == UNRELATED_CALL_THRESHOLD and not lifted.late_calls
    assert plan(vocabulary, RELATED_SAID).lift is None


def test_a_statement_needs_the_unrelated_threshold_and_lifts_nothing(vocabulary: Vocabulary) -> None:
    """"I turned the lights off before leaving." and "My kitchen is a mess." ask nothing (the 0.5B thinker called
    ``set_lights`` and ``get_weather(city='kitchen')``): evident or lifting a tool, a call needs the thinker sure."""
    stated = plan(vocabulary, "My friend lives in Oslo and it is snowing there.", evident_threshold=EVIDENT_CALL_FLOOR)
    assert stated.call_threshold == UNRELATED_CALL_THRESHOLD and stated.lift is None
    assert plan(vocabulary, "My kitchen is a mess.").call_threshold == UNRELATED_CALL_THRESHOLD  # no lift either
    assert plan(vocabulary, "My kitchen is a mess.").lift is None
    assert threshold(vocabulary, "I wonder what the weather is in Oslo.") == EVIDENT_CALL_THRESHOLD  # asks
    assert threshold(vocabulary, "My kitchen is a mess.", unrelated_threshold=None) == 0.5  # nothing to weigh


def test_a_reply_to_unrelated_words_that_begins_with_words_opens_no_call_later(vocabulary: Vocabulary) -> None:
    assert not plan(vocabulary, "Tell me a joke.").late_calls
    assert plan(vocabulary, RELATED_SAID).late_calls
    assert plan(vocabulary, "Tell me a joke.", call_evidence=False).late_calls


def test_without_evidence_words_or_a_threshold_the_setting_stands(vocabulary: Vocabulary) -> None:
    assert threshold(vocabulary, "Tell me a joke.", call_evidence=False) == 0.5
    assert threshold(vocabulary, "") == 0.5  # no words: nothing to weigh
    assert threshold(vocabulary, "거실 에어컨 실행") == 0.5  # none the lexicon reads: nothing to weigh either
    assert threshold(vocabulary, "给我讲个笑话。") == 0.5  # no gloss for any of these
    assert threshold(vocabulary, "Tell me a joke.", call_threshold=None) is None  # plain sampling


def test_right_after_tool_results_the_reply_begins_with_words(vocabulary: Vocabulary) -> None:
    planner = Planner(vocabulary, 2048, ReplyOptions(unrelated_threshold=UNRELATED_CALL_THRESHOLD))
    request = LLMRequest(items=[Message("user", "Weather in Oslo?"),
                                FunctionCallItem("call_1", "get_weather", '{"city": "Oslo"}'),
                                FunctionOutputItem("call_1", "Sunny")], tools=[WEATHER])
    assert planner.plan(request, [WEATHER]).call_threshold == math.inf


def test_the_catalog_says_per_model_whether_its_probabilities_weigh() -> None:
    """Unrelated words need a surer call, and an evident request is no call where the model gives a call no chance,
    for every model but SmolLM2, whose probabilities do not tell calls from words."""
    smol = local_options("smollm2-135m")
    assert (smol.unrelated_threshold, smol.evident_threshold) == (None, EVIDENT_CALL_THRESHOLD)
    assert local_options(None) == smol  # the default model is SmolLM2
    for name in ("qwen2.5-coder-0.5b", "qwen2.5-coder-1.5b", "/models/other.gguf"):
        chosen = local_options(name)
        assert (chosen.unrelated_threshold, chosen.evident_threshold) == (UNRELATED_CALL_THRESHOLD, EVIDENT_CALL_FLOOR)
    assert local_options("smollm2-135m", LocalModelSettings(call_threshold=0.6)).call_threshold == 0.6


def test_the_catalog_says_per_model_whether_it_writes_the_strings_a_tool_prescribes_a_form_for() -> None:
    assert not local_options("smollm2-135m").write_forms  # free, it writes the demonstrations' 'text'
    assert all(local_options(name).write_forms for name in ("qwen2.5-coder-0.5b", "/models/other.gguf"))


def test_without_an_unrelated_threshold_unrelated_words_weigh_as_any(vocabulary: Vocabulary) -> None:
    joke = plan(vocabulary, "Tell me a joke.", unrelated_threshold=None)
    assert (joke.call_threshold, joke.late_calls) == (0.5, True)


def test_the_question_is_said_where_the_reply_would_open_a_call_and_words_are_free_elsewhere(
        vocabulary: Vocabulary) -> None:
    """The model still decides whether a request naming a tool is meant for it ("Can you recommend a good book?"
    names ``book_table``): opening a call, the reply is the question; not opening one, it is the model's words, no
    call opened later."""
    timer = Tool("set_timer", "Start a countdown timer.",
                 {"type": "object", "properties": {"minutes": {"type": "number"}}, "required": ["minutes"]})
    planner = Planner(vocabulary, 2048, ReplyOptions())
    asked = planner.plan(LLMRequest(items=[Message("user", "Set a timer.")], tools=[timer]), [timer])
    assert asked.call_threshold == 0.5  # not evident (no minutes said): the model's probability decides
    steps = reply_steps(asked, vocabulary)
    assert isinstance(next(steps), Opening)
    assert steps.send(0.8) == Said("Could you tell me the minutes?")
    with pytest.raises(StopIteration) as stopped:
        steps.send(None)
    assert stopped.value.value == Outcome("stop", 0)
    words = reply_steps(asked, vocabulary)
    next(words)
    run = words.send(0.2)
    assert isinstance(run, Run) and run.grammar is None and run.first_banned is not None
    assert run.banned is not None and run.banned[asked.openers].all()  # no call opened later either


def test_the_answer_to_the_question_completes_the_call_it_asked_about(vocabulary: Vocabulary) -> None:
    """"Paris." names no tool; after "What's the weather?" and the question for its city it is the call's value."""
    planner = Planner(vocabulary, 2048, ReplyOptions(unrelated_threshold=UNRELATED_CALL_THRESHOLD,
                                                     evident_threshold=EVIDENT_CALL_FLOOR))

    def planned(*turns: str) -> Plan:
        items = [Message("user" if i % 2 == 0 else "assistant", text) for i, text in enumerate(turns)]
        return planner.plan(LLMRequest(items=items, tools=[WEATHER]), [WEATHER])

    answered = planned("What's the weather?", "One moment. Could you tell me the city?", "Paris.")
    assert answered.call_threshold == EVIDENT_CALL_THRESHOLD and answered.said == "What's the weather? Paris."
    # the value was asked for: a call whatever the model's doubt, where the same words asked at once need the floor
    assert planned("What's the weather?", "Could you tell me the city?", "Mordor.").call_threshold == 0
    assert planned("What's the weather in Mordor?").call_threshold == EVIDENT_CALL_FLOOR
    assert [tool.name for tool in answered.tools] == ["get_weather"] and answered.question == ""
    unasked = planned("What's the weather?", "It is sunny everywhere.", "Paris.")  # no question was asked
    assert unasked.said == "Paris." and unasked.lift is not None and unasked.lift.floor == UNRELATED_CALL_THRESHOLD


def test_the_first_call_is_to_the_likeliest_evident_tool_and_the_others_may_follow(vocabulary: Vocabulary) -> None:
    """Offered a PostgreSQL server's tool beside the "Rich Data Services server" the words describe, both holding
    their values, the 0.5B model added a PostgreSQL server: the first call is to the tool the words match best;
    the others are still there for a further call the words ask for."""
    def tool(name: str, description: str, **required: str) -> Tool:
        return Tool(name, description, {"type": "object", "required": list(required),
                                        "properties": {key: {"type": kind} for key, kind in required.items()}})

    postgres = tool("add_postgres_server", "Add a PostgreSQL server.", host="string", port="integer")
    rds = tool("add_mtnards_server", "Add an MTNA Rich Data Services (RDS) server.", api_key="string")
    tools = [postgres, rds]
    said = "Add a new Rich Data Services server at http://plga.ca, API key 1234"
    planned = Planner(vocabulary, 2048, ReplyOptions()).plan(
        LLMRequest(items=[Message("user", said)], tools=tools), tools)
    assert planned.tools == (rds,) and planned.listed == (postgres, rds)
    assert planned.call_threshold == EVIDENT_CALL_THRESHOLD
