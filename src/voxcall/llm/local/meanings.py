"""What the user's words mean beyond themselves, read from the lexicon's tables (:mod:`voxcall.llm.local.lexicon`).

A request in Chinese names "weather" with 天气, "12 times 8" names the calculator's ``mul``, "double 37" says an
operation and its second number, "Is it cold in Moscow?" asks about the weather without saying it: the local path
matches requests to tools (:mod:`voxcall.llm.local.relevance`), copies values (:mod:`voxcall.llm.local.said`) and
computes arithmetic (:mod:`voxcall.llm.local.arithmetic`) through these meanings. Each is a field of a table: a
gloss, a hint (``indirect``), an implied operation, a reversing word; one rule more reads what a short value
abbreviates ("txt": "text"). Nothing here is written for a tool.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping

from voxcall.llm.local.lexicon import (
    ENGLISH,
    LEXICONS,
    STOP_WORDS,
    UNSPACED_SCRIPT,
    Lexicon,
    alternatives,
    number_spans,
    singular,
)


def _glossed(table: Callable[[Lexicon], Mapping[str, str]]) -> list[tuple[re.Pattern[str], list[str]]]:
    """For each row of every lexicon's ``table`` (its glosses, its hints), the pattern of its words and what they
    mean."""
    return [(re.compile(alternatives(lexicon, (word,)), re.IGNORECASE), gloss.split())
            for lexicon in LEXICONS for word, gloss in table(lexicon).items()]


_GLOSSED = _glossed(lambda lexicon: lexicon.glosses)
_INDIRECT = _glossed(lambda lexicon: lexicon.indirect)


def glosses(text: str, *, hints: bool = True) -> list[str]:
    """The words the glossed words in ``text`` mean, in the order of the tables' rows: a spaced language's word
    as a whole word ("12 times 8": "mul"), an unspaced language's anywhere ("北京的天气" holds 天气: "weather
    forecast"), but for a word said only inside a longer glossed phrase ("how much does each get": a quotient, not
    the product "each" says alone); then, with ``hints``, what its :func:`hinted` phrases ask about; then the
    operations :func:`implied` reads ("double 37": "mul")."""
    said = [(row, match.start(), match.end()) for row, (pattern, _) in enumerate(_GLOSSED)
            for match in pattern.finditer(text)]
    rows = sorted({row for row, start, end in said
                   if not any(at <= start and end <= to and to - at > end - start for _, at, to in said)})
    found = [meaning for row in rows for meaning in _GLOSSED[row][1]]
    return [*found, *(hinted(text) if hints else ()), *(operation for operation, _ in implied(text))]


def hinted(text: str) -> list[str]:
    """What the phrases of a table's ``indirect`` in ``text`` ask about without saying it ("Is it cold in
    Moscow?": "weather")."""
    return [meaning for pattern, gloss in _INDIRECT if pattern.search(text) for meaning in gloss]


_NAME = re.compile(rf"(?<![.!?。！？]\s)(?<!^)\b[A-Z][\w'’-]*|[{UNSPACED_SCRIPT}]")


def names_one(text: str) -> bool:
    """Whether ``text`` says a name: a capitalised word that does not open a sentence ("Is it cold in Moscow?"),
    but "I"; or any letter of an unspaced script, which has no capitals to tell names by."""
    return any(match.group() not in ("I", "I'm", "I’m") for match in _NAME.finditer(text.strip()))


_IMPLIED = [(re.compile(alternatives(lexicon, (word,)), re.IGNORECASE), said)
            for lexicon in LEXICONS for word, said in lexicon.implied.items()]


def implied(text: str) -> list[tuple[str, int]]:
    """The operations ``text`` names with a word that also says their second number (a table's ``implied``), each
    with that number, where a number follows the word at once ("double 37": ``("mul", 2)``; "half of 90": ``("div",
    2)``), in the order said; none where a word follows ("a double room")."""
    matches = [(match, said) for pattern, said in _IMPLIED for match in pattern.finditer(text)]
    starts = {start for start, _, _ in number_spans(text)} if matches else set()
    found = sorted((match.start(), said) for match, said in matches
                   if match.end() + len(text[match.end():]) - len(text[match.end():].lstrip()) in starts)
    return [said for _, said in found]


REVERSING = re.compile("|".join(alternatives(lexicon, lexicon.reversing) for lexicon in LEXICONS
                                if lexicon.reversing), re.IGNORECASE)
"""A word between a subtraction's numbers that puts the second first (:attr:`Lexicon.reversing`)."""


ABBREVIATED_REACH = 3
"""How far past an abbreviation's length into a word its last letter may be ("pkg": the g of "package")."""


def abbreviates(value: str, word: str) -> bool:
    """Whether ``value`` (three or four lowercase letters) abbreviates ``word``, a longer word, as abbreviations drop
    vowels: the word's first letter, then only consonants of the rest of it, in order, all within its first few
    letters (:data:`ABBREVIATED_REACH`): "txt": "text", "img": "image", "pkg": "package", "asc": "ascending"; not
    "csv": "comprehensive", nor "cat": "contact" (a vowel: a word of its own), nor "py": "play" (two letters
    abbreviate too many words)."""
    if not (3 <= len(value) <= 4 and value.isalpha() and len(word) > len(value)) or value[0] != word[0]:
        return False
    if any(letter in "aeiou" for letter in value[1:]):
        return False
    at = 0
    for letter in value[1:]:
        at = word.find(letter, at + 1)
        if at < 0:
            return False
    return at < len(value) + ABBREVIATED_REACH


_WORD_GLOSSES = {**{part.casefold(): gloss.split() for lexicon in LEXICONS for phrase, gloss in lexicon.indirect.items()
                    for part in (phrase, *phrase.split()) if part.casefold() not in STOP_WORDS},
                 **{word.casefold(): gloss.split() for lexicon in LEXICONS for word, gloss in lexicon.glosses.items()}}


def word_gloss(word: str) -> list[str]:
    """What one word of a table is glossed as (``temperature``, 气温: ``["weather"]``), or a content word of an
    ``indirect`` phrase stands for ("cold", "outside": ``["weather"]``), by lookup; none for a word no table
    glosses."""
    return _WORD_GLOSSES.get(word.casefold(), [])


def word_for(english: str, language: str) -> str:
    """``english`` (a parameter's name in words: "city") in ``language``, where that language's table glosses a word
    as it (城市 in Chinese); else ``english`` itself."""
    wanted = singular(english.lower())
    return next((word for lexicon in LEXICONS if lexicon.language == language and lexicon is not ENGLISH
                 for word, gloss in lexicon.glosses.items() if singular(gloss.split()[0]) == wanted), english)
