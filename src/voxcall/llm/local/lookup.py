"""Questions of knowledge, and the tools that look things up: "who is Park Ji-sung?" beside a web search is a search.

A small model answers a question of fact from what it remembers, and remembers wrongly: Qwen2.5-Coder-0.5B, offered
a tool that "retrieves up-to-date information by searching the web", answered "who is park ji sung" with "Park Ji
Sung is a Korean singer and actress", giving the search a probability under 0.001; offered a recipe search, it
answered "how to cook sikhae" with a recipe of its own. A user who declares a search tool declares where answers
come from. So a question that asks what, who or how something is (a table's ``inquiries``: "who is", "how to",
是谁) and names no tool is, when a tool that looks things up is offered, a call to it (:func:`looked_up`):

- a **lookup tool** is named for looking things up (``search``, ``lookup``, ``query``: ``HNA_WQA.search``,
  ``cookbook.search_recipe``, ``wikipedia_lookup``) and takes one required text, the words to look up;
- one whose name or description shares a word of the question, in any of its inflections (:func:`stem`: "cook" and
  "cooking recipes"), looks up what the question is about: it is asked first;
- else a **general** one, which searches the web, the internet or an encyclopedia: a question about anything is
  its (a product search is no place to ask who someone is).

Small talk ("who are you"), arithmetic (computed: :mod:`voxcall.llm.local.arithmetic`) and a question with nothing
to look up ("what is it?") are no lookups. Nothing here is written for a tool: the user's words are read through the
lexicon's tables, in any language they hold; a tool's name and description in English, as
:mod:`voxcall.llm.local.relevance` reads them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from voxcall.llm.local.arithmetic import computed
from voxcall.llm.local.lexicon import LATIN_WORD, LEXICONS, UNSPACED_SCRIPT, alternatives, is_small_talk
from voxcall.llm.local.relevance import relevance, words
from voxcall.tools.schema import Tool

LOOKUP_WORDS = frozenset({"search", "lookup", "query", "wiki", "wikipedia", "encyclopedia"})
"""Words of a tool's name that say it looks things up."""
GENERAL_WORDS = frozenset({"web", "internet", "wiki", "wikipedia", "encyclopedia", "google", "bing", "duckduckgo",
                           "duck"})
"""Words of a lookup tool's name or description that say it looks up anything (the web, an encyclopedia); not
"online" nor "engine", which a shop's search says too ("Search our online store")."""
SUFFIXES = ("ing", "ed", "es", "s")
"""The inflections :func:`stem` takes off a word ("cooking", "cooked", "cooks": "cook")."""
STEM_LEAST = 3  # the least letters a stem keeps ("sing" stays "sing")
_UNSPACED_STOP = re.compile("|".join(alternatives(lexicon, lexicon.stop_words | lexicon.fillers)
                                    for lexicon in LEXICONS if not lexicon.spaced))
_UNSPACED_LETTER = re.compile(f"[{UNSPACED_SCRIPT}]")
_INQUIRY = re.compile("|".join(alternatives(lexicon, lexicon.inquiries) for lexicon in LEXICONS if lexicon.inquiries),
                      re.IGNORECASE)
_ADDRESSED = re.compile("|".join(
    rf"(?:{inquiry})\W*(?:{addressee})" + ("" if lexicon.spaced else rf"|(?:{addressee})\W*(?:{inquiry})")
    for lexicon in LEXICONS if lexicon.addressee
    for inquiry, addressee in [(alternatives(lexicon, lexicon.inquiries), alternatives(lexicon, lexicon.addressee))]),
    re.IGNORECASE)
"""A question whose question words ask about the one asked: "what's your", "why are you", 你为什么 (the one asked
before them only where words are not spaced: "Can you tell me how to cook rice?" asks about rice)."""


def looked_up(said: str, offered: list[Tool]) -> list[Tool]:
    """The tools of ``offered`` that the question ``said`` is for, as the module's docstring says: the lookup tools
    that share a word with it (the most words), else the general ones; none when ``said`` asks no question of
    knowledge (:func:`asks`), names a tool (a word of its name: the tool's own evidence decides), or no tool looks
    things up."""
    if not asks(said) or any(relevance(said, tool).name_hits for tool in offered):
        return []
    lookups = [tool for tool in offered if _looks_up(tool)]
    if not lookups:
        return []
    subject = {stem(word) for word in words(_INQUIRY.sub(" ", said), hints=False)}
    shared = [len(subject & _domain(tool)) for tool in lookups]
    most = max(shared)
    if most:
        return [tool for tool, count in zip(lookups, shared, strict=True) if count == most]
    return [tool for tool in lookups if _general(tool)]


def asks(said: str) -> bool:
    """Whether ``said`` asks what, who or how something is (a table's ``inquiries``), of something named: content
    words beside the question's own ("who is park ji sung"; not "what is it?"); not of the one asked (a table's
    ``addressee`` right beside the question's words: "What's your favourite colour?", 你为什么不说话; "Can you tell
    me who Ada Lovelace was?" and "how do you make pancakes" are lookups), and is neither small talk ("who are
    you") nor arithmetic ("what is 12 times 8", which is computed)."""
    if not _INQUIRY.search(said) or is_small_talk(said) or computed(said) is not None or _ADDRESSED.search(said):
        return False
    return _names_subject(_INQUIRY.sub(" ", said))


def _names_subject(rest: str) -> bool:
    """Whether ``rest``, a question without its question words, names what it asks about: a content word, or a
    letter of an unspaced script that is no stop word of its table (这是什么 asks about nothing named)."""
    return bool(words(rest, hints=False)) or bool(_UNSPACED_LETTER.search(_UNSPACED_STOP.sub("", rest)))


def stem(word: str) -> str:
    """``word`` (lowercase) without an inflection of :data:`SUFFIXES`, keeping at least :data:`STEM_LEAST` letters
    ("cooking", "cooked" → "cook"); a rough stem ("recipes" → "recip"), but both sides of a comparison are stemmed
    alike."""
    for suffix in SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= STEM_LEAST:
            return word[:-len(suffix)]
    return word


def _looks_up(tool: Tool) -> bool:
    """Whether ``tool`` is a lookup tool: a word of its name is one of :data:`LOOKUP_WORDS`, and it requires one
    parameter, a text that is no choice (the words to look up)."""
    named = {word.lower() for word in LATIN_WORD.findall(tool.name)}
    if not named & LOOKUP_WORDS or len(tool.required) != 1:
        return False
    schema = tool.properties.get(tool.required[0])
    return (isinstance(schema, Mapping) and schema.get("type", "string") == "string"
            and "enum" not in schema and "const" not in schema)


def _general(tool: Tool) -> bool:
    """Whether lookup tool ``tool`` looks up anything: its name or description names the web, the internet, a
    search engine's name or an encyclopedia (:data:`GENERAL_WORDS`)."""
    return bool({word.lower() for word in LATIN_WORD.findall(f"{tool.name} {tool.description}")} & GENERAL_WORDS)


def _domain(tool: Tool) -> set[str]:
    """The stems of lookup tool ``tool``'s content words (its name's and description's) but the lookup's own: what
    it looks up ("cooking recipes")."""
    found = {stem(word) for word in words(f"{tool.name} {tool.description}", hints=False)}
    return found - {stem(word) for word in LOOKUP_WORDS | GENERAL_WORDS}
