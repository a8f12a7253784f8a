"""How well a request matches a tool, from words alone: evidence for a local model's call decision and for
choosing the few tools a small model is shown.

A tiny model's first-token probability of opening a call is weak evidence: SmolLM2-135M gives it to small talk
as readily as to "Get the weather in Oslo", and withholds it from explicit requests written unlike its
demonstrations. The words say more: a request that names what a tool does ("weather", "volume", "timer") and
holds values for its required parameters (a number for a numeric one, one of an enum's values) is very likely
meant for it. :func:`relevance` measures that; :func:`most_relevant` keeps the best few of many tools, in their
declared order (so that a turn naming the same tools shares the prompt prefix of the last one).

Words are lowercased, split at case changes and underscores (``getWeather``, ``get_weather``), stripped of a
plural ``s``, and common words are ignored (but for the few that still name a tool whose name says them: "list");
a request in another language adds the English words its table glosses
(the stop words, the plural rule and the glosses are the lexicon's: :mod:`voxcall.llm.local.lexicon`). Nothing here
is specific to a tool.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from voxcall.llm.local.arithmetic import OPERATIONS
from voxcall.llm.local.duration import durations, unit_of
from voxcall.llm.local.kinds import Kind, identifies, kind_of
from voxcall.llm.local.lexicon import LATIN_WORD, NAMING_WORDS, STOP_WORDS, numbers, singular
from voxcall.llm.local.meanings import glosses, names_one, word_gloss
from voxcall.tools.schema import Tool

WORDS_MEMORY = 4096
"""Texts whose content words are remembered (requests, and tools' names and descriptions)."""
STEM_LETTERS = 6
"""The least stem two forms of a word share for a request to name a tool by another form of its name's word."""
READ_SHARE = 0.15
"""The least share of a request's Latin words that are English stop words for the lexicon to read it as English."""
READ_WORDS = 4
"""Requests with fewer Latin words are read as English whatever they hold: too few to tell."""
_LATIN = re.compile(r"[A-Za-zÀ-ɏḀ-ỿ'’]+")


def words(text: str, *, hints: bool = True) -> list[str]:
    """The content words of ``text``: lowercased, split at case changes, underscores and punctuation, a plural
    ``s`` removed, stop words dropped; then the English words its glossed words mean (another language's request:
    :func:`~voxcall.llm.local.meanings.glosses`), with ``hints`` those its phrases ask about without saying them
    ("is it cold": "weather")."""
    return list(_content_words(text, hints))


@functools.lru_cache(maxsize=WORDS_MEMORY)
def _content_words(text: str, hints: bool) -> tuple[str, ...]:
    """:func:`words`, remembered: a request's words are read once per tool weighed, a tool's at every request."""
    found = []
    for word in [*LATIN_WORD.findall(text), *glosses(text, hints=hints)]:
        word = singular(word.lower())
        if word not in STOP_WORDS and (len(word) > 1 or word.isdigit()):
            found.append(word)
    return tuple(found)


@dataclass(frozen=True, slots=True)
class Relevance:
    """The lexical evidence that a request is meant for a tool.

    ``named``: content words of the tool's name the request says, in any form (:func:`same_stem`); ``hits``:
    the request's content words found anywhere in the tool (name, description, parameter names and descriptions,
    enum values); ``values``: the share of the tool's required parameters the request seems to hold a value for
    (1.0 when none is required); ``choices``: the required choices (``enum`` parameters) whose value the request
    names ("add", or "plus" that the lexicon glosses "add"); ``identified``: whether the tool requires an
    identifier and the request says a code as one (:func:`~voxcall.llm.local.kinds.identifies`).
    """

    named: frozenset[str]
    hits: int
    values: float
    choices: int = 0
    identified: bool = False

    @property
    def name_hits(self) -> int:
        """How many words of the tool's name the request says."""
        return len(self.named)

    @property
    def evident(self) -> bool:
        """Whether the request plainly asks for the tool: it holds every required value, and names the tool (a
        word of its name), one of its required choices ("Add 15 and 27": the calculator's ``op`` "add") or the
        thing the tool requires the identifier of: "When will size 40 be ready with id 12345-67890?" beside
        ``inventory_management(product_id)`` (the 0.5B model answered "on Monday"; it gave the call 0.009)."""
        return self.values == 1.0 and bool(self.name_hits or self.choices or self.identified)

    @property
    def score(self) -> float:
        """One number to rank tools by: name words weigh double, and missing values halve it."""
        return (2 * self.name_hits + self.hits) * (0.5 + 0.5 * self.values)


def relevance(request: str, tool: Tool) -> Relevance:
    """How well the words of ``request`` match ``tool``. What a phrase asks about without saying it ("is it cold":
    "weather", :func:`~voxcall.llm.local.meanings.hinted`) names the tool only when the request says a name too
    ("Is it cold in Moscow?"; "How cold is space?" asks no weather tool), but relates the request to it always.
    A tool whose name says an operation of arithmetic (``CalcProduct``: "product", a multiplication) is named by
    the words that say it ("394 times 213"): the request was answered "394 times 213 is 83922", the call wanted."""
    said = set(words(request))
    name = set(words(tool.name)) | _naming_words(tool.name) | _operations(tool.name)
    naming = (said if names_one(request) else set(words(request, hints=False))) | _naming_words(request)
    described = name | set(words(tool.description)) | _parameter_words(tool.properties)
    share, choices = _values_held(request, tool)
    named = {word for word in name if any(same_stem(word, other) for other in naming)}
    identified = any(kind_of(key, tool.properties[key]) is Kind.CODE for key in tool.required) and identifies(request)
    return Relevance(named=frozenset(named), hits=len(said & described), values=share, choices=choices,
                     identified=identified)


@functools.lru_cache(maxsize=WORDS_MEMORY)
def _operations(name: str) -> frozenset[str]:
    """The operations of arithmetic the words of a tool's ``name`` say, by their glosses ("product": ``mul``)."""
    return frozenset(gloss for word in words(name) for gloss in word_gloss(word) if gloss in OPERATIONS)


@functools.lru_cache(maxsize=WORDS_MEMORY)
def _naming_words(text: str) -> frozenset[str]:
    """The stop words of ``text`` that still name a tool (:data:`~voxcall.llm.local.lexicon.NAMING_WORDS`: "list"),
    remembered as :func:`words` are: a request is read once per tool weighed."""
    return frozenset(found for word in LATIN_WORD.findall(text) if (found := singular(word.lower())) in NAMING_WORDS)


def unrivalled(request: str, tools: Sequence[Tool]) -> list[Tool]:
    """The tools of ``tools`` that no other one outranks (:attr:`Relevance.score`) on the same words of its name:
    two tools that ``request`` names by the same words ("a new Rich Data Services server": ``add_postgres_server``
    and ``add_mtnards_server``) vie for one request, and the one it describes better wins, as a tool that no word of
    its name is said of (evident by a choice or an identifier) yields to any better described; tools named by other
    words ("add 1 and 2 and tell me the current time") may each be asked for."""
    found = {tool.name: relevance(request, tool) for tool in tools}
    return [tool for tool in tools if not any(
        found[other.name].score > found[tool.name].score and found[tool.name].named <= found[other.name].named
        for other in tools)]


def same_stem(one: str, other: str) -> bool:
    """Whether two words are one word, in one form or two: equal, or sharing a stem of at least
    :data:`STEM_LETTERS` that lacks no more than one letter of the shorter word ("multiplication" and ``multiply``,
    "calculation" and ``calculate``, "searching" and ``search``; not "light" and "lightning", "play" and
    "playlist")."""
    shorter = min(len(one), len(other))
    stem = next((i for i, (a, b) in enumerate(zip(one, other, strict=False)) if a != b), shorter)
    return one == other or (stem >= STEM_LETTERS and stem >= shorter - 1)


def readable(text: str) -> bool:
    """Whether the lexicon reads ``text``'s Latin words as English (or it has fewer than :data:`READ_WORDS`):
    at least :data:`READ_SHARE` of them are its stop words. "¿Podrías decirme las condiciones actuales del clima
    en Cancún?" holds none: Spanish, whose words it would read as English words that no tool shares."""
    found = [word.lower() for word in _LATIN.findall(text)]
    return len(found) < READ_WORDS or sum(word in STOP_WORDS for word in found) >= READ_SHARE * len(found)


def most_relevant(request: str, tools: Sequence[Tool], limit: int, keep: Collection[str] = ()) -> list[Tool]:
    """The ``limit`` tools of ``tools`` that best match ``request``, in their declared order (ties keep the
    earlier tool); all of them when there are no more than ``limit``.

    ``keep`` names an earlier choice of ``limit`` of them (the last turn's): it is chosen again when it holds the
    best match and every tool whose name the request says, so that the prompt the tools are shown in stays the
    same from turn to turn and its evaluation is reused (a new choice makes a small model evaluate the whole tools
    prompt again: seconds on a CPU)."""
    if len(tools) <= limit:
        return list(tools)
    found = [relevance(request, tool) for tool in tools]
    scores = [f.score for f in found]
    kept = [tool for tool in tools if tool.name in keep]
    if len(kept) == limit:
        best = max(scores)
        needed = [tools[i] for i, f in enumerate(found) if f.name_hits or (best > 0 and scores[i] == best)]
        if all(tool.name in keep for tool in needed):
            return kept
    ranked = sorted(range(len(tools)), key=lambda i: -scores[i])[:limit]
    return [tools[i] for i in sorted(ranked)]


def _parameter_words(properties: Mapping[str, Any]) -> set[str]:
    """The words of parameters' names, descriptions and enum values, those of the fields of an object parameter
    (or of a list's objects) too: ``ThinQ_Connect(body)`` says "air conditioner" only in ``body``'s fields."""
    found: set[str] = set()
    for name, schema in properties.items():
        found.update(words(name))
        if isinstance(schema, Mapping):
            found.update(words(str(schema.get("description", ""))))
            if isinstance(schema.get("enum"), list):
                found.update(w for value in schema["enum"] for w in words(str(value)))
            for inner in (schema, schema.get("items")):
                if isinstance(inner, Mapping) and isinstance(inner.get("properties"), Mapping):
                    found.update(_parameter_words(inner["properties"]))
    return found


def _values_held(request: str, tool: Tool) -> tuple[float, int]:
    """The share of required parameters whose value the request seems to hold (a number said for a numeric
    one, or a length of time for one counting in a unit of time: "an hour"; an enum value said for an enum; any
    other kind counts as held: a string can be anything), and how many of them are enums it names a value of."""
    required = tool.required
    if not required:
        return 1.0, 0
    said = set(words(request))
    has_number = bool(numbers(request))
    held = choices = 0
    for name in required:
        schema = tool.properties.get(name)
        schema = schema if isinstance(schema, Mapping) else {}
        if isinstance(schema.get("enum"), list) and schema["enum"]:
            named = any(set(words(str(v))) & said or str(v).lower() in request.lower() for v in schema["enum"])
            held += named
            choices += named
        elif schema.get("type") in ("integer", "number"):
            held += has_number or (unit_of(name, schema) is not None and bool(durations(request)))
        else:
            held += 1
    return held / len(required), choices
