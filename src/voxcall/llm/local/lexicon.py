"""The words the local path reads requests with, per language: one :class:`Lexicon` table each.

The local path copies values from the user's words (:mod:`voxcall.llm.local.grammar`), finds listed values
(:mod:`voxcall.llm.local.parallel`) and matches requests to tools (:mod:`voxcall.llm.local.relevance`); the
scripted demo reads spoken numbers (:mod:`voxcall.llm.scripted`). Every word list and word rule those use is a
field of a table here, so that a new rule is a row and a new language is a new table in :data:`LEXICONS`. The
rules read every table at once: the languages' scripts do not overlap (an English word is never a Chinese one), so
a request in either is read without first guessing its language.

Numbers said in words are read by one rule for every table (:func:`number_runs`): a run of number words is
composed from its table's values, multipliers and groups ("two hundred fifty" = 250, "二十五" = 25, "一万二千" =
12000). What words mean beyond themselves (glosses, hints, implied operations): :mod:`voxcall.llm.local.meanings`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class Lexicon:
    """One language's words, as the local path's rules read them."""

    language: str  # BCP 47
    spaced: bool  # words are separated by spaces (else a word rule matches anywhere, without word boundaries)
    numbers: Mapping[str, int]  # number words that add their value ("five", "twenty"; "五")
    multipliers: Mapping[str, int]  # number words that multiply the digit before them ("hundred"; "十", "百", "千")
    groups: Mapping[str, int]  # number words that multiply all that came before ("thousand"; "万")
    number_marks: tuple[str, ...]  # patterns of words made of number words that say no number: around one
    # (百分之, "per cent") or none at all (一个 "a", 一下 "a moment")
    joining: frozenset[str]  # words no value begins or ends with (prepositions, conjunctions, pronouns, ...)
    list_joiners: tuple[str, ...]  # what stands between two listed values ("and", ",")
    weak_joiners: tuple[str, ...]  # joiners that also join a name to its qualifier ("Boston, MA"): these list
    # values only when a list ending follows ("Oslo, Rome and Madrid")
    list_endings: tuple[str, ...]  # what stands before a list's last value ("Oslo, Rome and Madrid")
    stop_words: frozenset[str]  # words too common to say which tool a request is for
    plural_suffix: str  # stripped from a longer word (not doubled: "class") to match its singular; "": none
    naming_words: frozenset[str] = frozenset()  # stop words that still name a tool whose name has them ("List all
    # the servers": ``list_servers``, not ``add_server``), though no value and no evidence of any other tool
    script: str = ""  # an unspaced language's letters, as a regex class body: each is a word of its own
    not_plurals: frozenset[str] = frozenset()  # words that end with the plural suffix but are no plural ("times")
    time_words: frozenset[str] = frozenset()  # words that say when ("tomorrow", 明天): no place or name, so no
    # value of a parameter that takes no time
    glosses: Mapping[str, str] = field(default_factory=dict)  # words with the English content words they mean, so
    # that a request in this language is matched to tools named and described in English ("天气" → "weather")
    indirect: Mapping[str, str] = field(default_factory=dict)  # phrases that ask about what a word means without
    # saying it, with that word ("is it cold" → "weather"): read as glosses, but weaker evidence (only with a name
    # said: :func:`~voxcall.llm.local.meanings.names_one`), for they ask it of other things too ("How cold is space?")
    inquiries: tuple[str, ...] = ()  # phrases that ask what, who or how something is ("who is", "how to", 是谁):
    # a question of knowledge, which a tool that looks things up answers (:mod:`voxcall.llm.local.lookup`)
    addressee: frozenset[str] = frozenset()  # words for the one asked ("you", 你): a question with one right beside
    # its question words is about the assistant ("What's your favourite colour?"), no lookup
    subjects: frozenset[str] = frozenset()  # what a statement's clauses open with ("I", "my"): statements.py
    asking: frozenset[str] = frozenset()  # words that make any words a request ("want", "please", "can")
    small_talk: tuple[str, ...] = ()  # phrases that make an utterance small talk ("how are you", "thanks")
    fillers: frozenset[str] = frozenset()  # words small talk may hold beside its phrases ("very much", "today")
    operations: Mapping[str, str] = field(default_factory=dict)  # arithmetic said back ("mul": "times")
    units: Mapping[str, float] = field(default_factory=dict)  # words for a length of time, with its seconds
    unit_counts: Mapping[str, float] = field(default_factory=dict)  # words before a unit that say how many of it,
    # besides numbers ("an hour", "half an hour", 半小时)
    unit_abbreviations: frozenset[str] = frozenset()  # units read after a number only, never a parameter's
    # ("price_min" is no count of minutes)
    unit_links: tuple[str, ...] = ()  # what may stand between a number and its unit ("90-second", 一个小时)
    unit_half: str = ""  # a half more, after the number or the unit ("two and a half hours", 一个半小时)
    unit_joiners: tuple[str, ...] = ()  # what may join the parts of one length ("an hour and 15 minutes")
    result: str = "{a} {op} {b} is {result}."  # how a computed result is said
    implied: Mapping[str, tuple[str, int]] = field(default_factory=dict)  # words that say an operation and its
    # second number, read right before a number only ("double 37": mul 2; "a double room for 3" says none)
    reversing: tuple[str, ...] = ()  # between a subtraction's numbers, put the second first ("9 from 30": 30 - 9)
    articles: frozenset[str] = frozenset()  # words a value may begin with ("The Beatles") but never ends with, as
    # written (lower case: "Vitamin A" ends with a letter)
    label_links: frozenset[str] = frozenset()  # words that may stand between a field's name and the value it is
    # given ("the title should be 'X'", "the database name is 'main'"): :mod:`voxcall.llm.local.labels`
    label_after: frozenset[str] = frozenset()  # words after a value that name the field it is given ("'X' as the host")
    verb_endings: tuple[str, ...] = ()  # endings a word takes as a verb ("titled", "allows"): :func:`inflected`
    switches: tuple[tuple[str, ...], tuple[str, ...]] = ((), ())  # words for on, and for off: :mod:`.switches`


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


ENGLISH = Lexicon(
    language="en",
    spaced=True,
    numbers={word: n for n, word in enumerate((
        "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve",
        "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen"))} | {
        word: 10 * n for n, word in enumerate(
            ("twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"), start=2)},
    multipliers={"hundred": 100, "dozen": 12},
    groups={"thousand": 1000},
    # "one" as a pronoun ("the port is the default one", "that one") says no number
    number_marks=(r"(?i:\b(?:the|this|that|which|another)\s+(?:[a-z]+\s+)?one\b(?![\s-]+(?:hundred|thousand)))",),
    # articles are not joining words ("The Beatles"), nor are words that are also names ("May", "US", "Will")
    joining=_words("and or but nor of to in on at by for with from into about as than i me my we our you your he "
                   "she it its they them is are was were be do does did can could would should please"),
    list_joiners=(",", ";", "&", "+", "and", "or", "plus"),
    weak_joiners=(",", ";"), list_endings=("and", "or"),
    # verbs such as "get", "set" and "make" included: tool names are full of them; no value is "something"
    stop_words=_words(
        "a an the and or but if of to in on at by for with from into about as is are was were be been being do "
        "does did have has had i me my we our you your he she it its they them their this that these those there "
        "here what which who whom whose when where why how can could would should will shall may might must "
        "please some any all each few more most other such no not only own same so than too very just also get "
        "give tell let make want need like know up down out over off again then once now hi hello hey thanks "
        "thank okay ok yes sure set turn current find retrieve fetch check show list use call something anything "
        "everything nothing someone anyone somebody anybody"),
    naming_words=_words("list"),
    plural_suffix="s",
    # (not the days' names, which are names too: "Play Sunday Morning")
    time_words=_words("today tomorrow tonight yesterday morning afternoon evening night noon midnight weekend week "
                      "month year later soon"),
    # "12 times 8" is no request for the time; "news" is no "new"
    not_plurals=_words("times news series always perhaps thus plus minus bus gas yes this his its"),
    # arithmetic said in words, glossed with the operations' usual short names (a calculator's choices; not
    # "difference": "the difference between 1990 and 2000" is no 1990 minus 2000); what two sums "come to", what is
    # left after what is spent, given away, lost or paid back, what is missing ("how much more"); "total" is no sum;
    # so much "each", what one thing "costs", is a product, what "each gets", shared "equally", a quotient; the
    # weather's own words glossed "weather" (as 下雨 is), never words of other senses ("cold", "hot": ``indirect``);
    # what one "puts on", "listens to", would "love to hear" is played ("Put on Adele", not "put the lights on"); an
    # order said in full, glossed with schemas' short choice ("descending": DESC); numbers "arranged", sorted
    glosses={**dict.fromkeys(("times", "multiplied", "multiply", "product", "lots of", "each", "costs"), "mul"),
             **dict.fromkeys(("plus", "add", "added", "sum", "come to", "comes to"), "add"),
             **dict.fromkeys(("minus", "subtract", "take away", "spend", "spent", "gave away", "give away", "lost",
                              "paid back", "are left", "is left", "left over", "how much more", "how many more"),
                             "sub"), "arrange": "sort", "arranged": "sort",
             **dict.fromkeys(("divided", "divide", "split", "equally", "how much each", "how many each", "does each",
                              "each get", "each gets"), "div"), "descending": "desc", "ascending": "asc",
             **dict.fromkeys(("put on", "listen to", "let's hear", "love to hear", "like to hear", "want to hear",
                              "wanna hear"), "play"),
             **dict.fromkeys(("rain", "raining", "rainy", "snow", "snowing", "snowy", "sunny", "cloudy", "windy", "fog",
                              "foggy", "forecast", "temperature", "humidity", "humid", "thunderstorm", "storm",
                              "stormy", "hail", "drizzle"), "weather")},
    # how it feels outside, asked ("is it cold", "how hot": of a place, the weather; of the sun or a bath, not),
    # and what one takes for it ("an umbrella in Seattle"; "an umbrella term" is none; "bring a jacket", not "buy")
    indirect=dict.fromkeys((*(f"{asked} {feel}" for asked in ("is it", "will it be", "going to be", "how")
                              for feel in ("cold", "hot", "warm", "chilly", "freezing")),
                            *(f"{take} a {wear}" for take in ("bring", "take", "need", "wear", "pack")
                              for wear in ("jacket", "coat", "sweater", "scarf")), "sunglasses",
                            "like outside", "looking outside", "umbrella", "raincoat", "sunscreen"), "weather"),
    inquiries=(*(f"{asked} {verb}" for asked in ("who", "what", "where", "when", "why") for verb in (
        "is", "was", "are", "were", "does", "did")), "what's", "what’s", "who's", "who’s", "whats", "whos", "how to",
        *(f"how {verb} {who}" for verb in ("do", "can", "could", "should") for who in ("i", "you", "we")), "how does",
        "how did", "tell me about", "explain", "meaning of", "definition of",
        *(f"{verb} {asked}" for verb in ("tell me", "know", "wondering") for asked in ("who", "what", "how", "why"))),
    addressee=_words("you your yours yourself you're you’re"),
    subjects=_words("i my our it we he she they his her their"),  # ("the ...": a name may be all a request says)
    asking=_words("want wanna need like love let please can could would mood hope wish must wonder wondering curious"),
    small_talk=("hi", "hello", "hey", "good morning", "good afternoon", "good evening", "good night", "thanks",
                "thank you", "thank you so much", "bye", "goodbye", "see you", "see you later", "how are you",
                "how are you doing", "how is it going", "how's it going", "what's up", "who are you",
                "what's your name", "what is your name", "nice to meet you", "what can you do", "ok", "okay", "yes",
                "no", "sure", "great", "cool", "awesome", "never mind", "well done", "good job", "tell me a joke",
                "say something nice", "you're welcome", "sorry", "excuse me", "i'm fine", "i'm good"),
    fillers=_words("very much so a lot again there today my friend please oh ah well and too again voxcall "
                   "assistant buddy"),
    operations={"add": "plus", "sub": "minus", "mul": "times", "div": "divided by"},
    units={word: seconds for words, seconds in (("millisecond milliseconds", 0.001), ("second seconds sec secs", 1),
                                                 ("minute minutes min mins", 60), ("hour hours hr hrs", 3600),
                                                 ("day days", 86400), ("week weeks", 604800))
           for word in words.split()},
    unit_counts={"a": 1, "an": 1, "half a": 0.5, "half an": 0.5, "a half": 0.5, "a quarter of an": 0.25,
                 "a quarter of a": 0.25, "quarter of an": 0.25, "a quarter": 0.25, "quarter": 0.25},
    unit_abbreviations=_words("sec secs min mins hr hrs"),
    unit_links=("-",), unit_half="and a half", unit_joiners=("and", ","), switches=(("on",), ("off",)),
    implied={"double": ("mul", 2), "twice": ("mul", 2), "triple": ("mul", 3), "half of": ("div", 2),
             "half": ("div", 2)},
    reversing=("from",), articles=_words("the a an"), label_after=_words("as"),
    label_links=_words("the a an my our its new be is are was will should would to as of it i think set use just "
                       "go default called named saying say says read reads equal equals name address ip number"),
    verb_endings=("d", "ed", "ing", "s", "es"),
)

CHINESE = Lexicon(
    language="zh",
    spaced=False,
    numbers={"零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8,
             "九": 9},
    multipliers={"十": 10, "百": 100, "千": 1000},
    groups={"万": 10000},
    # "per cent" (百分之三十 is 30, not 100 and 30); "a" and "a moment", "some", "a bit" (设一个计时器 says no
    # minutes), but for 一个 before a unit of time (一个小时 is one hour)
    number_marks=("百分之", "一(?:下|些|会儿?|点儿)", "一个(?!小时|钟头|半|月|星期|礼拜)"),
    joining=_words("和 与 跟 或 或者 还有 以及 及 的 在 把 给 请 我 你 他 她 它 吗 呢 吧 了"),
    list_joiners=("、", "，", ",", "；", "和", "与", "跟", "或", "或者", "还有", "以及"),
    weak_joiners=("，", ",", "；"), list_endings=("和", "或", "或者", "还有", "以及"),
    # question and request words ("how is", "help me", "check"): no value, and a value's letters are never only
    # these (the relevance of a request to a tool reads Latin words and glosses only)
    stop_words=_words("怎么样 怎么 什么 哪里 哪儿 哪个 多少 如何 为什么 是不是 能不能 可不可以 可以 能 会 要 想 "
                      "想要 需要 帮 帮我 帮忙 麻烦 一下 查 查查 查询 看 看看 告诉 知道 设 设置 设定 调 调到 打开 "
                      "关 关掉 关闭 这 那 这个 那个 一个 一些 现在 吗 呢 吧 了 的 请 我 你"),
    plural_suffix="",
    script="\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff",  # Han ideographs
    time_words=_words("今天 明天 后天 昨天 今晚 明晚 早上 上午 中午 下午 晚上 周末 这周 本周 下周 星期一 星期二 星期三 "
                      "星期四 星期五 星期六 星期天 星期日"),
    glosses={"天气": "weather forecast", "气温": "temperature weather", "下雨": "rain weather", "温度": "temperature",
             "下雪": "snow weather", "晴天": "sunny weather", "刮风": "windy weather", "音乐": "music",
             "歌": "song music", "播放": "play", "音量": "volume", "声音": "volume sound",
             "计时器": "timer", "定时": "timer", "倒计时": "timer countdown", "闹钟": "alarm", "灯": "light",
             "时间": "time", "几点": "time clock", "时区": "timezone", "停止": "stop", "暂停": "pause",
             # the verbs tools are named with, so that a request in Chinese names them as one in English does
             "买": "buy purchase order", "订购": "order purchase", "点餐": "order food", "创建": "create",
             "新建": "create new", "删除": "delete remove", "发送": "send", "搜索": "search", "取消": "cancel",
             "预订": "book reserve", "新闻": "news", "菜谱": "recipe", "食谱": "recipe", "工作空间": "workspace",
             "乘以": "times mul", "乘": "times mul", "倍": "times mul", "除以": "divided div", "加上": "plus add",
             "加": "plus add", "减去": "minus sub", "减": "minus sub", "摄氏": "celsius", "华氏": "fahrenheit",
             "公制": "metric", "英制": "imperial", "城市": "city", "地点": "location place", "位置": "location",
             "房间": "room", "分钟": "minutes", "名字": "name", "日期": "date", "数字": "number"},
    indirect=dict.fromkeys(("冷不冷", "热不热", "冷吗", "热吗", "雨伞", "带伞"), "weather"),
    inquiries=("是谁", "谁是", "什么是", "是什么", "怎么做", "如何做", "怎样做", "为什么", "介绍一下"),
    addressee=_words("你 您"),
    small_talk=("你好", "您好", "嗨", "早上好", "下午好", "晚上好", "晚安", "谢谢", "谢谢你", "多谢", "再见", "拜拜",
                "你好吗", "你今天怎么样", "最近怎么样", "你是谁", "你叫什么名字", "你叫什么", "你能做什么", "好的",
                "是的", "不是", "没关系", "不客气", "对不起", "讲个笑话", "给我讲个笑话", "说个笑话"),
    fillers=_words("啊 呀 哦 嗯 吧 呢 吗 了 非常 很 你 我"),
    operations={"add": "加", "sub": "减", "mul": "乘以", "div": "除以"},
    units={"秒": 1, "秒钟": 1, "分钟": 60, "刻钟": 900, "小时": 3600, "钟头": 3600, "天": 86400},
    unit_counts={"半个": 0.5, "半": 0.5},
    unit_links=("个",), unit_half="半",
    switches=(("开",), ("关",)),
    unit_joiners=("零",),
    result="{a}{op}{b}等于{result}。",
)

LEXICONS = (ENGLISH, CHINESE)
"""Every language's table, each read by every rule."""

JOINING_WORDS = frozenset().union(*(lexicon.joining for lexicon in LEXICONS))
UNSPACED_JOINING_WORDS = frozenset().union(*(lexicon.joining for lexicon in LEXICONS if not lexicon.spaced))
ARTICLES = frozenset().union(*(lexicon.articles for lexicon in LEXICONS))
"""The joining words of unspaced languages, which a span may begin or end with without a space after or before."""
STOP_WORDS = frozenset().union(*(lexicon.stop_words for lexicon in LEXICONS))
NAMING_WORDS = frozenset().union(*(lexicon.naming_words for lexicon in LEXICONS))
TIME_WORDS = frozenset().union(*(lexicon.time_words for lexicon in LEXICONS))
WEAK_JOINERS = frozenset().union(*(lexicon.weak_joiners for lexicon in LEXICONS))
LABEL_LINKS = frozenset().union(*(lexicon.label_links for lexicon in LEXICONS))
LABEL_AFTER = frozenset().union(*(lexicon.label_after for lexicon in LEXICONS))
VERB_ENDINGS = tuple(dict.fromkeys(ending for lexicon in LEXICONS for ending in lexicon.verb_endings))
BASE_LETTERS = 4  # the least letters a word keeps without its verb ending (:func:`inflected`)
SPAN_EDGE = " \t\n.,;:!?\"'`()[]*，。、；：！？“”‘’（）《》"  # stripped from a value's ends (emphasis marks too)

UNSPACED_SCRIPT = "".join(lexicon.script for lexicon in LEXICONS if not lexicon.spaced)
"""The letters of the unspaced languages, as a regex class body: each is a word of its own."""
_TOKEN = re.compile(rf"[{UNSPACED_SCRIPT}]|[^\s{UNSPACED_SCRIPT}]+")
_UNSPACED_RUN = re.compile(rf"[{UNSPACED_SCRIPT}]+")
_UNSPACED_WORDS = frozenset(word for lexicon in LEXICONS if not lexicon.spaced
                            for word in (*lexicon.glosses, *lexicon.stop_words, *lexicon.joining, *lexicon.time_words))
"""The words an unspaced language's tables know: a value never cuts one (:func:`inner_edges`)."""
_LONGEST = max(map(len, _UNSPACED_WORDS), default=1)
_LETTER = re.compile(r"[^\W_]")
LATIN_WORD = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+(?:\.\d+)?")
"""A word as the rules compare words: split at case changes (``getWeather``), underscores and punctuation."""


def tokens(text: str) -> list[tuple[str, bool]]:
    """The words of ``text`` in order, each with whether it follows the one before with no space between: words
    are split at spaces, and each letter of an unspaced language (Chinese) is a word of its own ("北京的天气" is
    五 words, each glued to the one before). Joining them back (a space before each word not glued) gives the text
    with its spaces made single."""
    found: list[tuple[str, bool]] = []
    end = 0
    for match in _TOKEN.finditer(text):
        found.append((match.group(), bool(found) and match.start() == end))
        end = match.end()
    return found


def joined(words: list[tuple[str, bool]]) -> str:
    """``words`` (of :func:`tokens`) as text: a space before each word that is not glued, none before the first."""
    return "".join(("" if glued or not index else " ") + word for index, (word, glued) in enumerate(words))


def inner_edges(words: list[tuple[str, bool]]) -> set[int]:
    """The places between ``words`` (of :func:`tokens`; place ``i`` is before word ``i``) that cut a word an unspaced
    language's table knows (a gloss, a stop, joining or time word: 天气, 怎么样, 一下): no value begins or ends
    there ("天" in 天气怎么样 is no city). Where two known words overlap, the reading is unclear: neither cuts."""
    found: list[tuple[int, int]] = []
    for start in range(len(words)):
        text = ""
        for end in range(start, min(len(words), start + _LONGEST)):
            if end > start and not words[end][1]:
                break
            text += words[end][0]
            if end > start and text in _UNSPACED_WORDS:
                found.append((start, end + 1))
    clear = [(a, b) for a, b in found if not any(c < a < d < b or a < c < b < d for c, d in found)]
    return {edge for a, b in clear for edge in range(a + 1, b)}


def covered(text: str, known: Callable[[str], bool]) -> bool:
    """Whether every word of ``text`` is ``known``: its Latin words (:data:`LATIN_WORD`, as written) each, and
    each run of an unspaced language's letters as a row of known words ("怎么样" for a table's stop words); a letter
    of neither (거실, the ó of Divinópolis) is a word no table knows. True for no words at all."""
    latin = _UNSPACED_RUN.sub(" ", text)
    if _LETTER.search(LATIN_WORD.sub(" ", latin)) or not all(map(known, LATIN_WORD.findall(latin))):
        return False
    return all(_segmented(run, known) for run in _UNSPACED_RUN.findall(text))


def _segmented(run: str, known: Callable[[str], bool]) -> bool:
    """Whether ``run`` is a row of ``known`` words (each at most as long as the longest word the tables know)."""
    reached = [True] + [False] * len(run)
    for end in range(1, len(run) + 1):
        reached[end] = any(reached[start] and known(run[start:end]) for start in range(max(0, end - _LONGEST), end))
    return reached[-1]


def alternatives(lexicon: Lexicon, words: Iterable[str]) -> str:
    """A regex matching any of ``words`` (longest first), as whole words where ``lexicon`` spaces its words."""
    ordered = sorted(words, key=len, reverse=True)
    body = "|".join(re.escape(word) for word in ordered)
    return rf"\b(?:{body})\b" if lexicon.spaced else f"(?:{body})"


def _any_of(kind: str) -> re.Pattern[str]:
    """A regex for a word of the tables' field ``kind`` (``list_joiners``, ``list_endings``), in any language;
    spaced languages' marks (``,``) match without word boundaries."""
    parts = []
    for lexicon in LEXICONS:
        words: tuple[str, ...] = getattr(lexicon, kind)
        parts.append(alternatives(lexicon, tuple(w for w in words if w[:1].isalnum())))
        parts.extend(re.escape(mark) for mark in words if not mark[:1].isalnum())
    return re.compile("|".join(parts), re.IGNORECASE)


LIST_JOINER = re.compile(r"\s*(?:" + _any_of("list_joiners").pattern + r")\s*", re.IGNORECASE)
"""What stands between two listed values, with the spaces around it."""
LIST_ENDING = _any_of("list_endings")
"""What stands before the last value of a list."""


def _number_patterns(lexicon: Lexicon) -> tuple[re.Pattern[str], re.Pattern[str]]:
    """A number word of ``lexicon``, and a run of them (joined by spaces or hyphens where it spaces words)."""
    word = alternatives(lexicon, {**lexicon.numbers, **lexicon.multipliers, **lexicon.groups})
    run = rf"{word}(?:[\s-]+{word})*" if lexicon.spaced else f"{word}+"
    return re.compile(word, re.IGNORECASE), re.compile(run, re.IGNORECASE)


_NUMBER_WORDS = [(lexicon, *_number_patterns(lexicon)) for lexicon in LEXICONS]
_MASKS = {lexicon.language: re.compile("|".join(lexicon.number_marks)) for lexicon in LEXICONS if lexicon.number_marks}
_DIGITS = re.compile(r"-?\d{1,3}(?:,\d{3})+(?!\d)(?:\.\d+)?|-?\d+(?:\.\d+)?")  # "1,000,000"; "2,3,4" is three


def number_runs(text: str) -> Iterator[tuple[int, int, list[int]]]:
    """The runs of number words in ``text``, in order: where each starts and ends, and the numbers it says (one
    when its words compose one number, "two hundred fifty"; else each word's: "eight nine"). A table's number
    marks (百分之) are no part of a run."""
    found: list[tuple[int, int, list[int]]] = []
    for lexicon, word, run in _NUMBER_WORDS:
        mask = _MASKS.get(lexicon.language)
        masked = mask.sub(lambda found: " " * len(found.group()), text) if mask else text
        for match in run.finditer(masked):
            words = [w.lower() for w in word.findall(match.group())]
            value = _composed(lexicon, words)
            values = [value] if value is not None else [_single(lexicon, w) for w in words]
            found.append((match.start(), match.end(), values))
    yield from sorted(found)


def number_spans(said: str) -> list[tuple[int, int, int | float]]:
    """The numbers in ``said``, in digits or in words (:func:`number_runs`), in order, each as often as said, with
    where its digits or words start and end (the numbers a run says each with the run's)."""
    found: list[tuple[int, int, int | float]] = []
    for match in _DIGITS.finditer(said):
        value = float(match.group().replace(",", ""))
        found.append((match.start(), match.end(), int(value) if value.is_integer() else value))
    found.extend((start, end, value) for start, end, values in number_runs(said) for value in values)
    return sorted(found, key=lambda found: found[0])


def said_numbers(said: str) -> list[int | float]:
    """The numbers in ``said``, in digits or in words (:func:`number_runs`), in order, each as often as said."""
    return [value for _, _, value in number_spans(said)]


def numbers(said: str) -> list[int | float]:
    """The numbers in ``said`` (:func:`said_numbers`), each once, in order."""
    return list(dict.fromkeys(said_numbers(said)))


_SMALL_TALK = re.compile("|".join(sorted((alternatives(lexicon, (phrase,)) for lexicon in LEXICONS
                                          for phrase in lexicon.small_talk), key=len, reverse=True)), re.IGNORECASE)
_FILLERS = frozenset().union(*(lexicon.fillers for lexicon in LEXICONS))
_PUNCTUATION = re.compile(r"[^\w\s']+")


def is_small_talk(said: str) -> bool:
    """Whether ``said`` is small talk: it holds a phrase of a table's ``small_talk``, and nothing beside its
    phrases but fillers ("Thank you very much!", "你好吗？"), so no request hides in it ("Hello, what's the weather
    in Paris?" is none)."""
    text = _PUNCTUATION.sub(" ", said.replace("’", "'"))
    rest, found = _SMALL_TALK.subn(" ", text)
    return found > 0 and all(word.casefold() in _FILLERS for word, _ in tokens(rest))


def singular(word: str) -> str:
    """``word`` (lowercase) without a plural suffix of any table (``lights`` → ``light``; ``class`` stays)."""
    for lexicon in LEXICONS:
        suffix = lexicon.plural_suffix
        if (suffix and len(word) > 3 and word.endswith(suffix) and not word.endswith(2 * suffix)
                and word not in lexicon.not_plurals):
            return word[:-len(suffix)]
    return word


def inflected(one: str, other: str) -> bool:
    """Whether two lowercase words are one verb in two forms: the same once a table's verb ending is taken from
    either, at least :data:`BASE_LETTERS` left ("titled" and "title", "allowed" and "allows", "hosting" and
    "host")."""
    return not _bases(one).isdisjoint(_bases(other))


def _bases(word: str) -> set[str]:
    """``word`` and what is left of it without each verb ending it has (:func:`inflected`)."""
    return {word, *(word[:-len(ending)] for ending in VERB_ENDINGS
                    if word.endswith(ending) and len(word) - len(ending) >= BASE_LETTERS)}


def _single(lexicon: Lexicon, word: str) -> int:
    return {**lexicon.numbers, **lexicon.multipliers, **lexicon.groups}[word]


def _composed(lexicon: Lexicon, words: list[str]) -> int | None:
    """The one number ``words`` say, or None when they say several ("eight nine", "五三").

    A value word is a digit of the current section; a multiplier multiplies that digit (1 when none: "十二",
    "hundred") into the section; a group multiplies everything so far ("two thousand", "一万"). Two value words in
    a row compose only as tens and units ("twenty five") or after a zero within a number ("一百零五").
    """
    total = section = 0
    digit: int | None = None
    for word in words:
        if word in lexicon.groups:
            total += (section + (digit or 0) or 1) * lexicon.groups[word]
            section, digit = 0, None
        elif word in lexicon.multipliers:
            section += (1 if digit is None else digit) * lexicon.multipliers[word]
            digit = None
        else:
            value = lexicon.numbers[word]
            if digit is None or (digit == 0 and section):
                digit = value
            elif digit >= 20 and digit % 10 == 0 and value < 10:
                digit += value
            else:
                return None
    return total + section + (digit or 0)
