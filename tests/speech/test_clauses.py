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


ANSWERS = [
    "Sure, I can check the weather for you.",
    "The weather in Paris is sunny with a high of 22 degrees and a light breeze.",
    "Twelve times eight is ninety-six.",
    "I have set a timer for ten minutes; I will let you know when it is done.",
    "The capital of Australia is Canberra, not Sydney as many people think.",
    "That makes 12 * 8 = 96, or -5°C and 90 km/h in other units.",
]
"""Typical answers of a voice assistant, for the first-phrase rule."""


def split_at_once(text: str, min_chars: int = 12, *, first_phrase: bool = False) -> list[str]:
    splitter = ClauseSplitter(min_chars, first_phrase=first_phrase)
    return splitter.feed(text) + splitter.flush()


def split_by_char(text: str, min_chars: int = 12, *, first_phrase: bool = False) -> list[str]:
    splitter = ClauseSplitter(min_chars, first_phrase=first_phrase)
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


@pytest.mark.parametrize("first_phrase", [False, True])
@pytest.mark.parametrize("text", TEXTS + ANSWERS)
def test_char_by_char_gives_the_same_clauses(text: str, first_phrase: bool) -> None:
    assert split_by_char(text, first_phrase=first_phrase) == split_at_once(text, first_phrase=first_phrase)


def split_in_chunks(text: str, sizes: list[int], first_phrase: bool) -> list[str]:
    splitter, clauses, pos = ClauseSplitter(first_phrase=first_phrase), [], 0
    for size in sizes:
        clauses += splitter.feed(text[pos:pos + size])
        pos += size
    return clauses + splitter.feed(text[pos:]) + splitter.flush()


@given(st.sampled_from(TEXTS + ANSWERS), st.lists(st.integers(min_value=1, max_value=30), max_size=40), st.booleans())
def test_any_chunking_gives_the_same_clauses(text: str, sizes: list[int], first_phrase: bool) -> None:
    assert split_in_chunks(text, sizes, first_phrase) == split_at_once(text, first_phrase=first_phrase)


_ANY_TEXT = st.text(st.sampled_from("ab1 .,;:!?—\n'\"()*-Mr"), max_size=60)


@given(_ANY_TEXT, st.lists(st.integers(min_value=1, max_value=8), max_size=30), st.booleans())
def test_any_chunking_of_any_text_gives_the_same_clauses(text: str, sizes: list[int], first_phrase: bool) -> None:
    assert split_in_chunks(text, sizes, first_phrase) == split_at_once(text, first_phrase=first_phrase)


@pytest.mark.parametrize(("text", "first"), [
    (ANSWERS[0], "Sure,"),
    (ANSWERS[1], "The weather in Paris"),
    (ANSWERS[2], "Twelve times eight is"),
    (ANSWERS[3], "I have set a timer for"),
    (ANSWERS[4], "The capital of Australia"),
])
def test_the_first_phrase_ends_at_the_first_comma_or_after_a_few_words(text: str, first: str) -> None:
    pieces = split_at_once(text, first_phrase=True)
    assert pieces[0] == first
    assert pieces[1:] == split_at_once(text[text.index(first) + len(first):])  # then the clause rules


def test_the_first_phrase_is_on_by_default_and_comes_once_the_next_word_begins() -> None:
    splitter = ClauseSplitter()
    assert splitter.feed("The weather in Paris ") == []  # is "Paris" the end of a word? the next one decides
    assert splitter.feed("i") == ["The weather in Paris"]
    assert splitter.feed("s sunny today and mild") == []  # later pieces wait for a clause mark
    assert splitter.flush() == ["is sunny today and mild"]
    assert splitter.feed("Yes,") == []  # flush starts a new message: a new first phrase
    assert splitter.feed(" ") == ["Yes,"]


@pytest.mark.parametrize(("text", "first"), [
    ("We will ask our Prof. Plum today about it.", "We will ask our Prof. Plum"),
    ("The book was written by J. R. R. Tolkien long ago.", "The book was written"),
    ("It was penned by one J. R. R. Tolkien long ago.", "It was penned by one"),
    ("Your total comes to 12 000 euros in the end.", "Your total comes to 12 000 euros"),
    ("Please see www.example.com/page.html for details.", "Please see www.example.com/page.html for"),
    ("The value of pi is 3.14159 and so on.", "The value of pi is 3.14159 and"),
    ("About 1,000,000 people live here today.", "About 1,000,000 people live"),
    ("The speed limit is 90 km/h on this road.", "The speed limit is 90 km/h"),
    ("The answer here is 12 * 8 = 96 as usual.", "The answer here is 12 * 8 = 96 as"),
    ("The answer here is 12 x 8 = 96 as usual.", "The answer here is 12 x 8 = 96 as"),
])
def test_the_first_phrase_never_cuts_inside_numbers_abbreviations_or_urls(text: str, first: str) -> None:
    """Nor between a number and what follows it: its unit, or the rest of a sum, is read with it."""
    assert split_at_once(text, first_phrase=True)[0] == first


def test_the_first_clause_comes_before_the_sentence_ends() -> None:
    splitter = ClauseSplitter(min_chars=12, first_phrase=False)
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
    ("12 * 8 = 96, **12** times *8*", "12 * 8 = 96, 12 times 8"),  # a * between numbers is a product
    ("2*-3 and 2 *(3) but 2 ** 3", "2*-3 and 2 *(3) but 2 3"),
    ("  lots\t of \n space  ", "lots of space"),
])
def test_clean_clause_strips_markdown(raw: str, spoken: str) -> None:
    assert clean_clause(raw) == spoken
