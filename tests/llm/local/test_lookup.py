"""Questions of knowledge go to a tool that looks things up (:mod:`voxcall.llm.local.lookup`): a web search for a
question about anything, a search whose words the question shares before it, none for small talk, arithmetic, a
question about nothing named, or a request that names another tool; the plan makes such a question a call whatever
the model's first token weighs."""

from __future__ import annotations

import pytest

from tests.requirements import require_smollm2
from voxcall.llm import LLMRequest, Message
from voxcall.llm.local.lookup import asks, looked_up, stem
from voxcall.llm.local.plan import (
    EVIDENT_CALL_FLOOR,
    EVIDENT_CALL_THRESHOLD,
    UNRELATED_CALL_THRESHOLD,
    Planner,
    ReplyOptions,
)
from voxcall.llm.local.vocabulary import Vocabulary
from voxcall.tools import Tool


def _tool(name: str, description: str, parameter: str = "keyword", **schema: object) -> Tool:
    return Tool(name, description, {"type": "object", "properties": {parameter: {"type": "string", **schema}},
                                    "required": [parameter]})


WEB = _tool("HNA_WQA.search", "Retrieve up-to-date information by searching the web using keywords.")
RECIPES = _tool("cookbook.search_recipe", "Searches for cooking recipes based on a provided keyword.")
PRODUCTS = _tool("search_products", "Search the shop's products by name.", "query")
WEATHER = _tool("get_weather", "Get the current weather for a city.", "city")


@pytest.mark.parametrize("said", ["who is park ji sung", "Who was Ada Lovelace?", "how to cook sikhae",
                                  "What's a quasar?", "tell me about the Great Wall", "长城是什么？", "介绍一下长城",
                                  "How do you make pancakes?", "Can you tell me who Ada Lovelace was?",
                                  "Can you tell me how to cook rice?", "Do you know who Park Ji-sung is?",
                                  "你知道长城是什么吗"])
def test_a_question_of_knowledge_about_something_named_asks(said: str) -> None:
    assert asks(said)


@pytest.mark.parametrize("said", ["who are you", "what is up", "What is it?", "What is 12 times 8?", "这是什么",
                                  "What's your favourite colour?", "Why are you so slow?", "你为什么不说话",
                                  "Play some jazz", "Turn on the lights in the kitchen"])
def test_small_talk_arithmetic_a_question_of_nothing_and_a_command_ask_nothing(said: str) -> None:
    assert not asks(said)


def test_a_question_about_anything_is_the_web_searchs() -> None:
    assert looked_up("who is park ji sung", [WEATHER, WEB, RECIPES, PRODUCTS]) == [WEB]
    assert looked_up("who is park ji sung", [WEATHER, PRODUCTS]) == []  # a product search is no encyclopedia
    shop = _tool("search_shop", "Search our online store with the search engine.", "query")
    assert looked_up("who is park ji sung", [shop]) == []


def test_a_search_whose_words_the_question_shares_comes_first_in_any_inflection() -> None:
    assert stem("cooking") == stem("cook") == "cook" and stem("sing") == "sing"
    assert looked_up("how to cook sikhae", [WEB, RECIPES]) == [RECIPES]  # "cook", "cooking recipes"
    assert looked_up("What is the capital of Peru?", [WEB, RECIPES]) == [WEB]


def test_no_lookup_for_a_request_naming_another_tool_nor_without_a_lookup_tool() -> None:
    assert looked_up("What is the weather in Oslo?", [WEATHER, WEB]) == []  # the weather tool's own evidence
    assert looked_up("What's a good recipe for pancakes?", [WEB, RECIPES]) == []  # names the recipe search
    assert looked_up("who is park ji sung", [WEATHER]) == []
    choice = _tool("search_mode", "Search the web.", "mode", enum=["fast", "deep"])
    assert looked_up("who is park ji sung", [choice]) == []  # a choice is no words to look up


@pytest.fixture(scope="module")
def vocabulary() -> Vocabulary:
    return Vocabulary(require_smollm2())


def test_the_plan_makes_a_question_a_call_to_the_lookup_whatever_the_first_token_weighs(
        vocabulary: Vocabulary) -> None:
    """Qwen2.5-Coder-0.5B gave the search no chance at all for "who is park ji sung" and answered "a Korean
    singer and actress": the floor that keeps a tool's word said in another sense from being a call
    (:data:`EVIDENT_CALL_FLOOR`) does not apply, for no tool's word was said."""
    planner = Planner(vocabulary, 2048, ReplyOptions(evident_threshold=EVIDENT_CALL_FLOOR,
                                                     unrelated_threshold=UNRELATED_CALL_THRESHOLD))
    tools = [WEATHER, WEB, RECIPES]

    def planned(said: str) -> tuple[float | None, tuple[str, ...]]:
        plan = planner.plan(LLMRequest(items=[Message("user", said)], tools=tools), tools)
        return plan.call_threshold, tuple(tool.name for tool in plan.tools)

    assert planned("who is park ji sung") == (EVIDENT_CALL_THRESHOLD, (WEB.name,))
    assert planned("how to cook sikhae") == (EVIDENT_CALL_THRESHOLD, (RECIPES.name,))
    assert planned("What's the weather in Mordor?") == (EVIDENT_CALL_FLOOR, (WEATHER.name,))  # no place known
    threshold, _ = planned("who are you")
    assert threshold is not None and threshold > EVIDENT_CALL_FLOOR  # small talk: the model decides
