"""GrammarCursor: the text a grammar forces after some text, and the grammar of what may follow, checked against
an independent recogniser (``tests/llm/local/gbnf.py``) and, for parsing, llama.cpp itself."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from tests.llm.local.gbnf import Recogniser
from tests.llm.local.test_grammar import ALL, CALCULATOR, STOP, WEATHER, tool
from voxcall.llm.local.grammar import calls_grammar
from voxcall.llm.local.grammar_cursor import GrammarCursor, GrammarSyntaxError

if TYPE_CHECKING:
    from tests.llm.local.gbnf import GrammarChecker

ORDER = tool("lookup_order_7cfa3b", {"order_number": {"type": "string"}}, ["order_number"])
SAID = "What is the status of order 4,512?"


def forced(grammar: str, text: str) -> str:
    cursor = GrammarCursor.start(grammar).after(text)
    assert cursor is not None, f"{text!r} is refused"
    return cursor.forced()[0]


def test_the_rest_of_a_name_its_told_apart_by_is_forced_with_the_argument_up_to_its_value() -> None:
    grammar = calls_grammar([ORDER, WEATHER, STOP], SAID)
    assert forced(grammar, "") == ""  # three tools: the model chooses
    assert forced(grammar, "lookup") == "_order_7cfa3b(order_number='"  # every span said opens with a quote
    assert forced(grammar, "lookup_order_7cfa3b(order_number='4,512") == "')</code>"
    assert forced(grammar, "s") == "top_music()</code>"


def test_nothing_is_forced_where_the_grammar_may_end_or_the_model_chooses() -> None:
    grammar = calls_grammar([WEATHER])  # nothing said: the optional unit is the model's to take or leave
    assert forced(grammar, "get_weather(city='4,512')</code>") == ""  # the end, or another block
    assert forced(grammar, "get_weather(city='4,512'") == ""  # ")" or ", unit="
    assert forced(calls_grammar([WEATHER], SAID), "get_weather(city='4,512'") == ")</code>"  # no unit named: none
    assert forced('root ::= "ab" | "ac"', "") == "a"
    assert forced('root ::= "a" "b"*', "a") == ""
    assert forced('root ::= . "b"', "\u4e0a") == "b"


def test_text_the_grammar_refuses_has_no_place() -> None:
    assert GrammarCursor.start(calls_grammar([WEATHER])).after("get_weather(town=") is None


@pytest.mark.parametrize(("grammar", "prefix", "rests"), [
    (calls_grammar([ORDER, WEATHER], SAID), "lookup_order_7cfa3b(order_number='",
     ["4,512')</code>", "status of order')</code>", "4,512')</code> <code>get_weather(city='status')</code>",
      "4,512</code>", "4,512')", "Paris')</code>"]),
    (calls_grammar(ALL), "calculator(op='add', a=1",
     [", b=2)</code>", "2, b=3)</code>", ".5, b=-2)</code>", ", b=2", ")</code>", ", b=x)</code>"]),
    (calls_grammar(ALL), "matrix(rows=[[1, 2], [3",
     ["]])</code>", "]], tags=['a', 1])</code>", "]], meta={'k': [None]})</code>", "]]</code>", "])</code>"]),
    ('root ::= "x" [a-c]{2,3} ("-" [^a])? [^\\n]* "\\"" # comment\n', "xa",
     ["b\"", "bc-z!\"", "bcd\"", "\"", "b\n\""]),
])
def test_the_grammar_of_the_rest_admits_what_the_whole_grammar_admits_after_the_text(
        grammar: str, prefix: str, rests: list[str]) -> None:
    cursor = GrammarCursor.start(grammar).after(prefix)
    assert cursor is not None
    whole, rest = Recogniser(grammar), Recogniser(cursor.grammar())
    assert [rest.admits(text) for text in rests] == [whole.admits(prefix + text) for text in rests]
    assert any(whole.admits(prefix + text) for text in rests) and not all(whole.admits(prefix + t) for t in rests)


def test_the_alternatives_of_a_value_are_one_group_before_the_rest_of_the_call() -> None:
    cursor = GrammarCursor.start(calls_grammar([ORDER, WEATHER], SAID)).after("lookup_order_7cfa3b(order_number='")
    assert cursor is not None and len(cursor.stacks) > 5
    root = cursor.grammar().splitlines()[0]
    assert root.startswith('root ::= ("') and root.count('")</code>"') == 1


def test_a_rest_that_may_end_is_optional() -> None:
    cursor = GrammarCursor.start(calls_grammar([STOP])).after("stop_music()</code>")
    assert cursor is not None
    rest = Recogniser(cursor.grammar())
    assert rest.admits("") and rest.admits("\n<code>stop_music()</code>") and not rest.admits("<code>")


@pytest.mark.parametrize("grammar", [
    'root ::= <[12]> "a"',  # token references: not read
    'root ::= thing',  # an undefined rule
    'root ::= root "a" | "b"',  # left recursion
    'root ::= "a"\nroot ::= "b"',  # defined twice
    'start ::= "a"',  # no root
    'root ::= "a\\q"',  # an unknown escape
])
def test_grammars_the_cursor_does_not_read_are_refused(grammar: str) -> None:
    with pytest.raises(GrammarSyntaxError):
        GrammarCursor.start(grammar).after("a")


@pytest.mark.parametrize(("grammar", "prefix"), [
    (calls_grammar([ORDER, WEATHER], SAID), "lookup_order_7cfa3b(order_number='"),
    (calls_grammar([ORDER, WEATHER], SAID), "get_weather(city='4,512')</code>"),
    (calls_grammar(ALL), "calculator(op='add', a=1"),
    (calls_grammar(ALL), "configure(mode=3, "),
    (calls_grammar(ALL), "tree(node=[[["),
    (calls_grammar([CALCULATOR]), ""),
])
def test_llama_cpp_parses_the_grammar_of_the_rest(checker: GrammarChecker, grammar: str, prefix: str) -> None:
    cursor = GrammarCursor.start(grammar).after(prefix)
    assert cursor is not None and checker.parses(cursor.grammar())
