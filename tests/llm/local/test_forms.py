"""A local model's grammar holds a date or a time to the form its description prescribes (voxcall.tools.forms)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from voxcall.llm.local.grammar import calls_grammar, format_grammar
from voxcall.tools import Tool
from voxcall.tools.codecalls.formats import FORMATS

if TYPE_CHECKING:
    from tests.llm.local.gbnf import GrammarChecker

NEWS = Tool("news", "Search the news.", {"type": "object", "properties": {
    "keyword": {"type": "string"},
    "date_range": {"type": "string",
                   "description": "The date range for the news search, formatted as 'YYYY-MM-DD to YYYY-MM-DD'."}},
    "required": ["keyword"]})
SAID = "what is 'artificial intelligence', fetch news from 2023.10.1 to 2023.10.7"


def test_a_range_of_dates_is_written_in_its_form(checker: GrammarChecker) -> None:
    """"fetch news from 2023.10.1 to 2023.10.7": the 0.5B model wrote ``'2023-10-1 to 2023-10-7'`` (widened when the
    call is validated), and held to two digits a field ``'2023-10-10 to 2023-10-07'``."""
    grammar = calls_grammar([NEWS], said=SAID)
    for written in ("2023-10-01 to 2023-10-07", "2023-10-1 to 2023-10-7"):
        assert checker.accepts(grammar, f"news(keyword='artificial intelligence', date_range='{written}')</code>")
    for written in ("last week", "2023.10.1 to 2023.10.7", "2023-10-1"):
        assert not checker.accepts(grammar, f"news(keyword='artificial intelligence', date_range='{written}')</code>")


def test_a_model_that_copies_words_is_not_held_to_the_form(checker: GrammarChecker) -> None:
    grammar = calls_grammar([NEWS], said=SAID, write_forms=False)  # its strings are spans of the words
    assert not checker.accepts(grammar, "news(keyword='artificial intelligence', "
                                        "date_range='2023-10-01 to 2023-10-07')</code>")


def test_a_models_own_format_writes_the_form_in_its_quotes(checker: GrammarChecker) -> None:
    hermes = next(tool_format for tool_format in FORMATS if tool_format.name == "hermes")
    grammar = format_grammar([NEWS], hermes)
    assert checker.accepts(grammar, '{"name": "news", "arguments": {"keyword": "ai", '
                                    '"date_range": "2023-10-01 to 2023-10-07"}}</tool_call>')
    assert not checker.accepts(grammar, '{"name": "news", "arguments": {"keyword": "ai", '
                                        '"date_range": "next week"}}</tool_call>')


LOG = Tool("log_food", "Log food eaten.", {"type": "object", "properties": {
    "food_name": {"type": "string"},
    "log_date": {"type": "string", "description": "When it was eaten, in ISO 8601 format such as "
                                                  "'YYYY-MM-DDTHH:MM:SSZ'."}},
    "required": ["food_name"]})


def test_an_optional_date_no_words_say_is_the_tools(checker: GrammarChecker) -> None:
    """"I had 8 pieces of frozen mango": the 0.5B model wrote ``log_date='2023-04-15T12:00:00Z'``, a date nobody
    said; a number that says no date ("8 pieces") gives none."""
    undated = calls_grammar([LOG], said="I had 8 pieces of frozen mango and a chai tea.")
    assert checker.accepts(undated, "log_food(food_name='frozen mango')</code>")
    assert not checker.accepts(undated, "log_food(food_name='frozen mango', log_date='2023-04-15T12:00:00Z')</code>")
    for said in ("I had a frozen mango yesterday.", "I had a frozen mango at 9:30.", "I had a frozen mango on the 5th.",
                 "昨天我吃了 frozen mango。"):
        dated = calls_grammar([LOG], said=said)
        dated_call = "log_food(food_name='frozen mango', log_date='2024-03-05T09:30:00Z')</code>"
        assert checker.accepts(dated, dated_call), said
        assert checker.accepts(dated, "log_food(food_name='frozen mango')</code>"), said
