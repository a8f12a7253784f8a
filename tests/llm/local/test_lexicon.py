"""The lexicon, one row per rule and language: what each rule makes of a request's words.

A new rule of :mod:`voxcall.llm.local.lexicon` is a row here; a new language's table gets its rows too (checked).
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from voxcall.llm.local.arithmetic import computed
from voxcall.llm.local.lexicon import (
    JOINING_WORDS,
    LEXICONS,
    LIST_ENDING,
    LIST_JOINER,
    STOP_WORDS,
    TIME_WORDS,
    WEAK_JOINERS,
    covered,
    inflected,
    inner_edges,
    is_small_talk,
    numbers,
    said_numbers,
    singular,
    tokens,
)
from voxcall.llm.local.meanings import glosses, hinted, implied, names_one
from voxcall.llm.scripted import digits_for_words


def _joiner(text: str) -> str:
    found = LIST_JOINER.match(text)
    return found.group().strip() if found else ""


RULES: dict[str, Callable[[str], object]] = {
    "numbers": numbers,
    "digits for words": digits_for_words,
    "joining word": lambda word: word.casefold() in JOINING_WORDS,
    "list joiner": _joiner,
    "weak joiner": lambda mark: mark in WEAK_JOINERS,
    "list ending": lambda text: [found.group() for found in LIST_ENDING.finditer(text)],
    "stop word": lambda word: word in STOP_WORDS,
    "time word": lambda word: word in TIME_WORDS,
    "inner edges": lambda text: sorted(inner_edges(tokens(text))),
    "only stop words": lambda text: covered(text, lambda word: word.lower() in STOP_WORDS),
    "singular": singular,
    "words": lambda text: [word for word, _ in tokens(text)],
    "glosses": glosses,
    "hinted": hinted,
    "names one": names_one,
    "said numbers": said_numbers,
    "small talk": is_small_talk,
    "computed": computed,
    "implied": implied,
}

ROWS: list[tuple[str, str, str, object]] = [
    # rule, language, words, what the rule makes of them
    ("numbers", "en", "Add 1,200 and 345, then 3.5 times two; volume zero; -4, and 10 again 10",
     [1200, 345, 3.5, 2, 0, -4, 10]),
    ("numbers", "en", "set a timer for twenty five minutes", [25]),
    ("numbers", "en", "two hundred fifty, two thousand three hundred", [250, 2300]),
    ("numbers", "en", "eight nine", [8, 9]),  # not one number: each word's
    ("numbers", "en", "Someone often called", []),  # never inside a word
    ("numbers", "en", "no numbers here", []),
    ("numbers", "zh", "12乘以8等于多少", [12, 8]),
    ("numbers", "zh", "十二乘以八", [12, 8]),
    ("numbers", "zh", "三十五分钟", [35]),
    ("numbers", "zh", "一百零五，一万二千，两", [105, 12000, 2]),
    ("numbers", "zh", "把音量调到百分之三十", [30]),  # 百分之 is "per cent", not 100
    ("numbers", "zh", "设一个计时器，查一下", []),  # 一个 is "a", 一下 "a moment": no number
    ("numbers", "zh", "一个小时", [1]),  # but before a unit of time it is one
    ("digits for words", "en", "What is twelve times eight?", "What is 12 times 8?"),
    ("digits for words", "en", "two hundred fifty plus forty-five", "250 plus 45"),
    ("digits for words", "en", "eight nine, Someone", "eight nine, Someone"),
    ("digits for words", "zh", "十二乘以八等于多少", "12乘以8等于多少"),
    ("joining word", "en", "and", True),
    ("joining word", "en", "Can", True),
    ("joining word", "en", "The", False),  # "The Beatles"
    ("joining word", "en", "May", False),  # a name too
    ("joining word", "zh", "和", True),
    ("joining word", "zh", "北京", False),
    ("list joiner", "en", " and Rome", "and"),
    ("list joiner", "en", ", Rome", ","),
    ("list joiner", "en", " plus 3", "plus"),
    ("list joiner", "en", " andrew", ""),
    ("list joiner", "zh", "和上海", "和"),
    ("list joiner", "zh", "、上海", "、"),
    ("weak joiner", "en", ",", True),
    ("weak joiner", "en", "and", False),
    ("weak joiner", "zh", "，", True),
    ("weak joiner", "zh", "、", False),
    ("list ending", "en", "Oslo, Rome and Madrid or Bern; Orlando", ["and", "or"]),
    ("list ending", "zh", "北京、上海和广州", ["和"]),
    ("stop word", "en", "get", True),
    ("stop word", "en", "weather", False),
    ("stop word", "zh", "怎么样", True),
    ("stop word", "zh", "北京", False),
    ("time word", "en", "tomorrow", True),
    ("time word", "en", "Tokyo", False),
    ("time word", "zh", "明天", True),
    ("inner edges", "en", "the weather tomorrow", []),  # spaced words are never cut
    ("inner edges", "zh", "天气怎么样", [1, 3, 4]),  # 天气 and 怎么样 are words: no value begins or ends inside
    ("inner edges", "zh", "北京天气", [3]),  # a name no table knows is not cut
    ("only stop words", "en", "What is the", True),
    ("only stop words", "en", "What's the weather", False),
    ("only stop words", "zh", "怎么样？", True),
    ("only stop words", "zh", "上海怎么样", False),
    ("only stop words", "ko", "거실", False),  # letters no table reads are no stop words
    ("singular", "en", "lights", "light"),
    ("singular", "en", "class", "class"),
    ("singular", "en", "gas", "gas"),  # too short to be a plural
    ("singular", "zh", "灯", "灯"),
    ("singular", "en", "times", "times"),  # "twelve times eight" asks no clock
    ("words", "en", "Play  the Beatles, please", ["Play", "the", "Beatles,", "please"]),
    ("words", "zh", "打开厨房的灯。", ["打", "开", "厨", "房", "的", "灯", "。"]),
    ("words", "zh", "播放Take Five吧", ["播", "放", "Take", "Five", "吧"]),
    ("glosses", "en", "What's the weather in Paris?", []),
    ("glosses", "en", "What is 12 times 8?", ["mul"]),
    ("glosses", "en", "Sometimes it rains", []),  # a whole word only
    ("glosses", "en", "Will it rain in Berlin?", ["weather"]),  # as 下雨 is
    ("glosses", "en", "A cold drink, please.", []),  # "cold" has other senses: a cold drink, a cold
    ("glosses", "en", "Is it cold in Moscow?", ["weather"]),  # but asked of "it", the weather ...
    ("hinted", "en", "Is it cold in Moscow?", ["weather"]),  # ... as a hint only: see "names one"
    ("hinted", "en", "Do I need an umbrella in Seattle?", ["weather"]),
    ("hinted", "en", "Should I bring a jacket in San Francisco?", ["weather"]),  # what one takes for it
    ("hinted", "en", "Where can I buy a jacket?", []),  # not what one buys
    ("hinted", "en", "Will I need sunglasses in Athens?", ["weather"]),
    ("glosses", "en", "I bought 3 tickets at 25 dollars each. What's the total?", ["mul"]),  # so much each
    ("glosses", "en", "Put on Adele.", ["play"]),  # what one puts on is played
    ("glosses", "en", "Put the lights on.", []),  # "put on" said together only
    ("glosses", "en", "Can we listen to Thriller?", ["play"]),  # so is what one listens to
    ("glosses", "en", "I'd love to hear some opera.", ["play"]),  # or would love to hear
    ("glosses", "en", "Good to hear from you!", []),  # but not all one hears
    ("glosses", "en", "Is it foggy in San Francisco?", ["weather"]),
    ("glosses", "en", "My score was 78 and I lost 13 points.", ["sub"]),
    ("glosses", "en", "I had 80 euros and gave away 25.", ["sub"]),  # what is given away is taken away
    ("glosses", "en", "I owe 300 and paid back 120.", ["sub"]),
    ("glosses", "en", "If a ticket costs 12 dollars, how much do 7 tickets cost?", ["mul"]),  # what one costs
    ("glosses", "en", "What's the cost of 2 cpu and 4 gb ram on all clouds?", []),  # no price of one thing
    ("glosses", "en", "It costs 50 and I have 20, how much more do I need?", ["mul", "sub"]),  # what is missing
    ("glosses", "en", "Three friends share 90 euros equally. How much does each get?", ["div", "div", "div"]),  # not
    # the product "each" says alone: it is said inside a longer phrase
    ("glosses", "en", "I wanna hear Coldplay.", ["play"]),
    ("glosses", "zh", "十二乘以十二是多少？", ["times", "mul"]),  # 乘 said inside 乘以, once
    ("hinted", "en", "Will it rain in Berlin?", []),  # a gloss, no hint
    ("hinted", "zh", "北京冷不冷？", ["weather"]),
    ("names one", "en", "Is it cold in Moscow?", True),
    ("names one", "en", "How cold is space? I wonder.", False),  # a sentence's first word is no name
    ("names one", "en", "How cold is it, I wonder", False),  # nor "I"
    ("names one", "zh", "今天冷不冷？", True),  # no capitals to tell names by
    ("glosses", "zh", "北京的天气怎么样？", ["weather", "forecast"]),
    ("glosses", "zh", "把音量调到百分之三十", ["volume"]),
    ("glosses", "en", "Sort them in descending order", ["desc"]),  # the choice a schema spells "DESC"
    ("glosses", "en", "the numbers [1, 54, 3] arranged from the smallest to the largest", ["sort"]),
    ("glosses", "zh", "温度用华氏显示", ["temperature", "fahrenheit"]),
    ("said numbers", "en", "what is 8 times 8", [8, 8]),  # each as often as said
    ("said numbers", "zh", "八乘以八", [8, 8]),
    ("said numbers", "en", "A dozen eggs times 5", [12, 5]),  # a dozen is twelve
    ("said numbers", "en", "two dozen roses", [24]),
    ("said numbers", "en", "a loan of 1,000,000.50", [1000000.5]),  # commas between groups of three
    ("said numbers", "en", "Move 'pointA' to 2,3,4", [2, 3, 4]),  # a list, not 234
    ("glosses", "en", "Is there a storm coming to Miami?", ["weather"]),
    ("glosses", "en", "I had 40 cookies and ate 7. How many are left?", ["sub"]),  # what is left
    ("small talk", "en", "Thank you very much!", True),
    ("small talk", "en", "How are you today?", True),
    ("small talk", "en", "Hello, what's the weather in Paris?", False),  # no request hides in it
    ("small talk", "en", "What is the capital of Italy?", False),
    ("small talk", "zh", "谢谢你！", True),
    ("small talk", "zh", "中国的首都是哪里？", False),
    ("computed", "en", "What is twelve times eight?", "12 times 8 is 96."),
    ("computed", "en", "what is 7 minus 10", "7 minus 10 is -3."),
    ("computed", "en", "What is 10 divided by 4?", "10 divided by 4 is 2.5."),
    ("computed", "en", "what is 2 plus 2 times 3", None),  # two operations: left to the model
    ("computed", "en", "100 divided by 0", None),
    ("computed", "en", "Play 5 songs", None),
    ("computed", "zh", "十二乘以八等于多少？", "12乘以8等于96。"),
    ("computed", "en", "Subtract 9 from 30.", "30 minus 9 is 21."),  # the second minus the first
    ("computed", "en", "From 30 subtract 9.", "30 minus 9 is 21."),
    ("computed", "en", "Add 15 and 27.", "15 plus 27 is 42."),
    ("computed", "en", "What is the sum of four and five?", "4 plus 5 is 9."),
    ("computed", "en", "What's the product of 6 and 7?", "6 times 7 is 42."),
    ("computed", "en", "What's 9 lots of 7?", "9 times 7 is 63."),
    ("computed", "en", "What do 18 and 46 come to?", "18 plus 46 is 64."),
    ("computed", "en", "Three friends gave me 10 each, how much in total?", "3 times 10 is 30."),  # so much each
    ("computed", "en", "How much in total is 10 and 3?", None),  # "total" says no operation
    ("computed", "en", "If I have 50 and spend 18, what's left?", "50 minus 18 is 32."),
    ("computed", "en", "Split 120 four ways.", "120 divided by 4 is 30."),
    ("computed", "en", "Double 37 for me.", "37 times 2 is 74."),
    ("computed", "en", "What is half of 90?", "90 divided by 2 is 45."),
    ("computed", "en", "Double 3 plus 4", None),  # two operations
    ("computed", "en", "I'd like a double room for 3 nights.", None),  # "double" says no number before a word
    ("computed", "en", "What's the difference between 1990 and 2000?", None),  # not 1990 minus 2000
    ("computed", "zh", "37的两倍是多少？", "37乘以2等于74。"),
    ("implied", "en", "Double 37 and triple 5", [("mul", 2), ("mul", 3)]),
    ("implied", "en", "half of ninety", [("div", 2)]),
    ("implied", "en", "a double room for 3 nights, half an hour", []),
]


@pytest.mark.parametrize(("rule", "language", "words", "expected"), ROWS,
                         ids=[f"{rule}-{language}-{words}" for rule, language, words, _ in ROWS])
def test_each_rule_reads_each_language(rule: str, language: str, words: str, expected: object) -> None:
    assert RULES[rule](words) == expected


def test_every_table_and_rule_has_rows() -> None:
    assert {lexicon.language for lexicon in LEXICONS} <= {language for _, language, _, _ in ROWS}
    assert set(RULES) == {rule for rule, _, _, _ in ROWS}


@pytest.mark.parametrize(("one", "other", "same"), [
    ("titled", "title", True), ("allowed", "allows", True), ("hosting", "host", True), ("named", "name", True),
    ("used", "user", False), ("host", "hostel", False), ("red", "re", False),  # too little left of "red"
])
def test_a_verb_in_two_forms_is_one_word(one: str, other: str, same: bool) -> None:
    assert inflected(one, other) is same
    assert inflected(other, one) is same
