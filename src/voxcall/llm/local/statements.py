"""Words that ask nothing: a statement ("I turned the lights off before leaving.", "My kitchen is a mess.").

The thinker calls tools for statements that share a word with a tool or lift one: Qwen2.5-Coder-0.5B opened a call
with 0.57-0.82 for "I just got back from a concert, it was amazing." (``play_music(query='concert')``), "My kitchen
is a mess." (``get_weather(city='kitchen')``), "The lights in my city are beautiful at night." and "I turned the
lights off before leaving." (``set_lights``), "I'm going to play football later." (``play_music``). A request such
words make is a question ("?"), a clause that opens with a verb ("It's too loud, bring it down to 20."), or a
sentence that says what its speaker wants ("I need", "I'd like", "please", "can you"); what is left tells something
and asks for nothing, and its call needs the thinker sure of it (:mod:`voxcall.llm.local.plan`). Which words open
a statement and which ask are each language's (the lexicon's ``subjects`` and ``asking``); a language without
them states nothing here. English's subjects leave out "the" ("The Beatles." may be all a request says), so "The
lights in my city are beautiful at night." is left to the thinker as before.
"""

from __future__ import annotations

import re

from voxcall.llm.local.lexicon import LATIN_WORD, LEXICONS

_CLAUSE = re.compile(r"[,.;:!]+\s*|\s+(?:and|but|so)\s+")  # where a clause ends ("and" joins two)
_SUBJECTS = frozenset(word for lexicon in LEXICONS for word in lexicon.subjects)
_ASKING = frozenset(word for lexicon in LEXICONS for word in lexicon.asking)


def states(text: str) -> bool:
    """Whether ``text`` asks nothing: no question mark, every clause opening with a subject (a pronoun or a
    determiner: "I", "my", "the", "it's"), and no word that asks ("want", "need", "please", "can")."""
    if "?" in text or "？" in text:
        return False
    clauses = [found for clause in _CLAUSE.split(text) if (found := LATIN_WORD.findall(clause.casefold()))]
    return bool(clauses) and all(clause[0] in _SUBJECTS and _ASKING.isdisjoint(clause) for clause in clauses)
