"""Clause splitting of streamed LLM text: early first clauses, no cuts inside numbers, abbreviations or URLs."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from voxcall.speech import ClauseSplitter, clean_clause

TEXTS = [
    "Sure, I can help with that. The weather in Paris is 3.5 degrees, and a room costs $1,000 per night.",
    "Mr. Smith met Dr. Jones, e.g. at 10:30 in the U.S. office. Done!",
    "**Note:** the `calculator` said _yes_. Visit https://example.com/a.b?x=1, then go.",
    "# Heading\n- first item\n- second item\n1. Buy milk\n2. Call get_weather now",
    "Well... I think so… Maybe—though honestly, I cannot say for sure! Right?",
    'He said "stop." Then he left (quietly.) The end',
]


def split_at_once(text: str, min_chars: int = 12) -> list[str]:
    splitter = ClauseSplitter(min_chars)
    return splitter.feed(text) + splitter.flush()


def split_by_char(text: str, min_chars: int = 12) -> list[str]:
    splitter = ClauseSplitter(min_chars)
    clauses = [clause for ch in text for clause in splitter.feed(ch)]
    return clauses + splitter.flush()


@pytest.mark.parametrize(("text", "expected"), [
    (TEXTS[0], ["Sure, I can help with that.", "The weather in Paris is 3.5 degrees,",
                "and a room costs $1,000 per night."]),
    (TEXTS[1], ["Mr. Smith met Dr. Jones,", "e.g. at 10:30 in the U.S. office.", "Done!"]),
    (TEXTS[2], ["Note: the calculator said yes.", "Visit https://example.com/a.b?x=1,", "then go."]),
    (TEXTS[3], ["Heading", "first item", "second item", "1. Buy milk", "2. Call get_weather now"]),
    (TEXTS[4], ["Well...", "I think so…", "Maybe—though honestly,", "I cannot say for sure!", "Right?"]),
    (TEXTS[5], ['He said "stop."', "Then he left (quietly.)", "The end"]),
])
def test_clauses(text: str, expected: list[str]) -> None:
    assert split_at_once(text) == expected


@pytest.mark.parametrize("text", TEXTS)
def test_char_by_char_gives_the_same_clauses(text: str) -> None:
    assert split_by_char(text) == split_at_once(text)


@given(st.sampled_from(TEXTS), st.lists(st.integers(min_value=1, max_value=30), max_size=40))
def test_any_chunking_gives_the_same_clauses(text: str, sizes: list[int]) -> None:
    splitter, clauses, pos = ClauseSplitter(), [], 0
    for size in sizes:
        clauses += splitter.feed(text[pos:pos + size])
        pos += size
    clauses += splitter.feed(text[pos:]) + splitter.flush()
    assert clauses == split_at_once(text)


def test_the_first_clause_comes_before_the_sentence_ends() -> None:
    splitter = ClauseSplitter(min_chars=12)
    assert splitter.feed("The weather in Paris is sunny") == []
    assert splitter.feed(",") == []  # the next character decides
    assert splitter.feed(" with a high of 22") == ["The weather in Paris is sunny,"]
    assert splitter.feed(" degrees.") == []
    assert splitter.flush() == ["with a high of 22 degrees."]


def test_short_clauses_wait_for_more_text() -> None:
    assert split_at_once("Yes, sure: go on.") == ["Yes, sure: go on."]  # "Yes, sure:" is under 12 characters
    assert split_at_once("Yes, sure: go on.", min_chars=3) == ["Yes,", "sure:", "go on."]


def test_sentence_ends_split_even_short_sentences() -> None:
    assert split_at_once("Hi. Ok? Go!") == ["Hi.", "Ok?", "Go!"]


@pytest.mark.parametrize("text", ["It is 3.14159 exactly, right", "About 1,000,000 people live here",
                                  "Meet at 10:30 sharp tomorrow", "See www.example.com/page.html for details",
                                  "Ask Prof. Plum and Mrs. White about it", "Written by J. R. R. Tolkien himself",
                                  "Fruit, i.e. apples and pears"])
def test_no_cut_inside_numbers_abbreviations_or_urls(text: str) -> None:
    assert split_at_once(text, min_chars=1000) == [text]


@pytest.mark.parametrize("text", ["", "   ", "\n\n", "** ## ``", " . , "])
def test_nothing_unspeakable_is_returned(text: str) -> None:
    assert split_at_once(text) == []
    assert split_by_char(text) == []


def test_flush_resets_the_splitter() -> None:
    splitter = ClauseSplitter()
    splitter.feed("unfinished thought")
    assert splitter.flush() == ["unfinished thought"]
    assert splitter.flush() == []
    assert splitter.feed("Fresh start. ") == ["Fresh start."]


@pytest.mark.parametrize(("raw", "spoken"), [
    ("**bold** and *italic*", "bold and italic"),
    ("## A heading", "A heading"),
    ("run `ls -la`  now", "run ls -la now"),
    ("_emphasis_ but snake_case stays", "emphasis but snake_case stays"),
    ("- a bullet", "a bullet"),
    ("  lots\t of \n space  ", "lots of space"),
])
def test_clean_clause_strips_markdown(raw: str, spoken: str) -> None:
    assert clean_clause(raw) == spoken
