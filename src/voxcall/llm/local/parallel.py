"""Whether a local model's reply holds another call: the user listed a further value for the call just made, or
asked another tool for something after it.

A tiny model stops after one ``<code>`` block even when the request asks for several: SmolLM2-135M made one call
for every one of the 30 requests of BFCL's parallel categories ("the weather in Boston and in San Francisco").
The words say more: when a value the call took is followed, in the user's words, by a joiner (``and``, a comma,
``&``, ``or``, ``plus``), a few common words ("and also for") and then a value of the same shape, the user listed
values for calls of the same tool. :func:`next_call` finds that, and the words the next call's values are to be
taken from (those after the joiner), so that the caller can open another block for that tool alone, its string
and number arguments spans of those words (:func:`~voxcall.llm.local.grammar.calls_grammar`). Without such evidence
the model decides, as before.

"The same shape": a number after a number, a capitalised word after a capitalised value, a lowercase word after a
lowercase one (so "Paris and tell me a joke" is no list); and never a word of a tool's name ("order pizza and set
a timer" asks for another tool) nor of the call's parameters ("host example.org, port 5432" is one call). Another
tool is called where the words after the call's last value, from a joiner on, plainly ask for it
(:func:`asked_after`): "Add 1 and 2 together and also tell me the time in Berlin" is ``sum`` then the time, "Set a
timer for 10 minutes and play some jazz" a timer and the music; the model, after a first call, stopped. Nothing
here is written for a particular tool.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Any

from voxcall.llm.local.lexicon import LIST_ENDING, LIST_JOINER, STOP_WORDS, WEAK_JOINERS, numbers
from voxcall.llm.local.relevance import Relevance, relevance, words
from voxcall.llm.local.said import Said
from voxcall.tools.codecalls.stream import CLOSE_TAG, OPEN_TAG, parse_code_calls
from voxcall.tools.schema import Tool

_WORD = re.compile(r"[^\s,.;:!?()\"']+")
MAX_SKIPPED = 3
"""Common words allowed between a joiner and the value it lists ("and also for Rome"); more, and the words say
something else ("and make sure it is in Celsius")."""
SUBJECTS = frozenset({"i", "we", "he", "she", "they"})
"""Words that begin a sentence of its own after a joiner, not a further value: "The server is located at
example.org, and I will be using the nickname 'primary_db'" (the 0.5B model's call was followed by another, its
host '12345')."""


@dataclass(frozen=True, slots=True)
class NextCall:
    """Another call the user asked for: to ``tool``, its values taken from ``said`` (the words after the joiner)."""

    tool: Tool
    said: str


def last_block(reply: str) -> str:
    """The last ``<code>`` block of ``reply``, tags included ("" when there is none)."""
    start = reply.rfind(OPEN_TAG)
    end = reply.find(CLOSE_TAG, start)
    return reply[start:end + len(CLOSE_TAG)] if start >= 0 and end >= 0 else ""


def next_call(block: str, tools: Sequence[Tool], said: str, called: Collection[str] = (), *,
              write_forms: bool = True) -> NextCall | None:
    """The further call that ``said`` asks for after the one call in ``block`` (a closed ``<code>`` block of
    calls to ``tools``): of the same tool where it lists a further value after one of the call's
    (:func:`listed_after`), else of another tool that the words after the call's values ask for
    (:func:`asked_after`; none of ``called``, the tools the reply called already); None: no single valid call, or
    neither."""
    calls = parse_code_calls(block, tools).calls
    if len(calls) != 1:
        return None
    tool = next(t for t in tools if t.name == calls[0].name)
    names = {word for t in tools for word in words(t.name)} | {word for key in tool.properties for word in words(key)}
    used = [str(v) if isinstance(v, str) else f"{v:g}" for v in calls[0].arguments.values()
            if isinstance(v, str | int | float) and not isinstance(v, bool)]
    for value in calls[0].arguments.values():
        rest = listed_after(said, value, names, used)
        if rest:
            return NextCall(tool, rest)
    others = [t for t in tools if t.name not in {tool.name, *called}]
    return asked_after(said, used, others, write_forms=write_forms) if others else None


def asked_after(said: str, values: Sequence[str], tools: Sequence[Tool], *, write_forms: bool = True
                ) -> NextCall | None:
    """The call to one of ``tools`` (tools not called yet) that ``said`` asks for after the last of ``values``
    (those of the call made, as said): the words from a joiner after it on that plainly ask for one tool alone (its
    name said and its values held: :attr:`~voxcall.llm.local.relevance.Relevance.evident`,
    :meth:`~voxcall.llm.local.said.Said.holds`), the last such joiner ("Set a timer for 10 minutes, please, and
    play some jazz": "play some jazz"). None when no value of the call was said as written, or no words after it
    ask for one tool. A tool called already is not asked again: a word of its name after its value is seldom a
    request of its own ("the answer is not in the text, therefore I cannot answer" for ``answer.string``)."""
    found = [_as_said(said, value) for value in values if value]
    ends = [at + len(text) for at, text in filter(None, found)]
    if not ends:
        return None
    rest = said[max(ends):]
    for joiner in reversed(list(LIST_JOINER.finditer(rest))):
        clause = rest[joiner.end():]
        heard = Said(clause)
        asked = [tool for tool in tools
                 if _names(relevance(clause, tool)) and heard.holds(tool, write_forms=write_forms)]
        if len(asked) == 1:
            return NextCall(asked[0], clause)
    return None


def _names(found: Relevance) -> bool:
    """Whether words ask for a tool by name or by a choice of its (:attr:`Relevance.evident`), not by an identifier
    alone: a code said after a call is most often the call's own ("… Check if they have enough in stock? Here's the
    link: …/product/123123/, id was 123123" is no order's status as well)."""
    return found.evident and bool(found.name_hits or found.choices)


def listed_after(said: str, value: Any, names: Collection[str] = (), used: Collection[str] = ()) -> str:
    """The words of ``said`` from the value listed after ``value`` onwards ("" when none): ``value`` (a string or
    number) said, then a joiner, words of :data:`~voxcall.llm.local.lexicon.STOP_WORDS`, and a word of the same shape
    that is none of ``names`` (the words of the tools' names and of the call's parameters: in "host example.org,
    port 5432" or "username 'admin' and password '12345'" the word after the joiner names the call's next field,
    not another value) and begins none of the ``used`` values (those the call took already: "add 1 and 2" is one
    call)."""
    if isinstance(value, bool) or not isinstance(value, str | int | float) or value == "":
        return ""
    found = _as_said(said, value if isinstance(value, str) else f"{value:g}")
    if found is None:
        return ""
    at, text = found  # as said: "music or theater" lists two, although the choice is "Music"
    after = said[at + len(text):]
    joiner = LIST_JOINER.match(after)
    if not joiner:
        return ""
    rest = after[joiner.end():]
    if joiner.group().strip() in WEAK_JOINERS and not any(
            _value_after(rest[end.end():], text, names) for end in LIST_ENDING.finditer(rest)):
        return ""  # "Boston, MA" is one value; "Oslo, Rome and Madrid" a list (an "and" or "or" ends it, before
        # another value: "Mariposa, CA, and give me Celsius" is not one)
    listed = _value_after(rest, text, names)
    return "" if any(listed.lower().startswith(u.lower()) for u in used) else listed


def _as_said(said: str, value: str) -> tuple[int, str] | None:
    """Where ``value`` is in ``said``, and as it is written there: the whole value, or the name before a comma of a
    place written in a form ("Paris, France" for "Paris and Bordeaux"); None when neither is said."""
    for text in (value, value.split(",")[0].strip()):
        at = said.lower().find(text.lower()) if text else -1
        if at >= 0:
            return at, said[at:at + len(text)]
    return None


def _value_after(text: str, value: str, names: Collection[str]) -> str:
    """``text`` from its first word that is not one of the :data:`~voxcall.llm.local.lexicon.STOP_WORDS`, when that
    word comes after at most :data:`MAX_SKIPPED` of them (none of :data:`SUBJECTS`), has ``value``'s shape and is
    none of ``names``; else ""."""
    for skipped, word in enumerate(_WORD.finditer(text)):
        found = word.group()
        if found.lower() in SUBJECTS:
            return ""
        if found.lower() in STOP_WORDS and skipped < MAX_SKIPPED:
            continue
        return text[word.start():] if _same_shape(found, value) and not set(words(found)) & set(names) else ""
    return ""


def _same_shape(word: str, value: str) -> bool:
    """Whether ``word`` could be another value like ``value``: both numbers, or both capitalised or lowercase."""
    if numbers(value) and value.strip().lstrip("-").replace(".", "", 1).isdigit():
        return bool(numbers(word))
    return word[:1].isupper() == value[:1].isupper() and word[:1].isalpha()
