"""Writing systems (:mod:`voxcall.language.scripts`): the language a script gives away, and where running text puts a
space between two pieces."""

from __future__ import annotations

import pytest

from voxcall.language import LANGUAGES, acknowledgement, asking, giving_up, language_of, spaced, thinking


@pytest.mark.parametrize(("said", "text", "joined"), [
    ("Let me work that out.", "The answer is 96.", "Let me work that out. The answer is 96."),  # two sentences
    ("One moment,", "I'm checking.", "One moment, I'm checking."),
    ("请稍等。", "答案是九十六。", "请稍等。答案是九十六。"),  # Chinese writes no space between clauses
    ("The answer is", ", as said, 96", "The answer is, as said, 96"),  # punctuation takes none
    ("Hello ", "there", "Hello there"),  # a space already there
    ("", "First words", "First words"),
])
def test_pieces_join_as_the_language_writes_them(said: str, text: str, joined: str) -> None:
    assert said + spaced(said, text) == joined


def test_a_script_gives_its_language_away_and_latin_gives_none() -> None:
    assert language_of("北京天气怎么样？") == "zh" and language_of("東京の天気は？") == "ja"
    assert language_of("서울 날씨") == "ko" and language_of("weather in Paris") is None


def test_every_language_module_is_listed_under_its_code_and_has_acknowledgements() -> None:
    assert all(code == language.code and language.acknowledgements and language.giving_up and language.thinking
               for code, language in LANGUAGES.items())
    assert acknowledgement("zh-CN", "", 0) == LANGUAGES["zh"].acknowledgements[0]


def test_thinking_phrases_are_short_take_turns_and_follow_the_users_language() -> None:
    assert [thinking(None, "What is the capital of France?", turn) for turn in range(4)] == [
        "Let me see.", "One moment.", "Let me think.", "Let me see."]
    assert thinking(None, "北京天气怎么样？", 0) == "让我想想。"
    assert thinking("fr-FR", "weather", 1) == LANGUAGES["fr"].thinking[1]
    assert all(len(phrase) < len(min(language.acknowledgements, key=len))  # they come before the answer
               for language in LANGUAGES.values() for phrase in language.thinking)


def test_giving_up_is_said_in_the_language_an_acknowledgement_is() -> None:
    assert giving_up(None, "What is the weather in Paris?") == "Sorry, I couldn't work that out."
    assert giving_up(None, "北京天气怎么样？") == "抱歉，我没能想出答案。"  # the user's script
    assert giving_up("fr-FR", "weather") == LANGUAGES["fr"].giving_up  # the session's language first
    assert giving_up("xx", "서울 날씨") == LANGUAGES["ko"].giving_up  # a language without rules: the script's


def test_a_question_asks_for_the_value_left_out_in_the_users_language() -> None:
    assert asking(None, "What's the weather?", "city") == "Could you tell me the city?"
    assert asking(None, "天气怎么样？", "城市") == "请问城市是什么？"
    assert asking("de", "Wie ist das Wetter?", "city") == "Können Sie mir den Wert für city nennen?"
    assert all("{value}" in language.asking for language in LANGUAGES.values())
