"""``Said``: the values the user's last words hold, which a local model's call copies rather than writes.

A tiny model asked for a call writes placeholders (``loc='text'``) and identifiers instead of what the user said,
so the calls grammar (:mod:`voxcall.llm.local.grammar`) admits only what the words hold: a plain string argument is
a **span** of them (:func:`spans`), a number one of the **numbers** said (:func:`~voxcall.llm.local.lexicon.
numbers`, and those words such as "double" imply: :func:`~voxcall.llm.local.meanings.implied`; for a count of a
unit of time, the lengths of time said in that unit: :meth:`Said.numbers_for`), a choice one the words name (a
span, or what the lexicon glosses a word as: "times" → ``mul``).

For one tool, :meth:`Said.strings` are the spans a plain string argument may be: each with a content word (not
only stop words: "the", 怎么样), none of the tool's choice words ("the weather in Moscow in Celsius": the city is
not "Celsius"), not only words of the tool's name ("打开厨房的灯": the room of ``set_lights`` is not 灯, light), and
not only words that say when ("tomorrow", 明天) unless the tool takes a time (a date, a day).
:meth:`Said.holds` says whether the words hold every value a call of the tool must copy (:meth:`Said.missing`, the
ones they lack): "What's the weather?" names the weather and holds no city, "Set a timer." no number of minutes;
such a request is answered with a question (:mod:`voxcall.llm.local.plan`), not with ``get_weather(city='the')`` or
a timer of minutes the user never said.
"""

from __future__ import annotations

import itertools
import math
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from voxcall.llm.local.duration import durations, outside, unit_of
from voxcall.llm.local.kinds import Kind, asks_country, kind_of, said_of_kind
from voxcall.llm.local.labels import NO_LABELS, Labels, Quoted, labelled
from voxcall.llm.local.lexicon import (
    ARTICLES,
    JOINING_WORDS,
    LIST_ENDING,
    SPAN_EDGE,
    STOP_WORDS,
    TIME_WORDS,
    UNSPACED_JOINING_WORDS,
    covered,
    inflected,
    inner_edges,
    joined,
    number_spans,
    said_numbers,
    singular,
    tokens,
)
from voxcall.llm.local.meanings import REVERSING, abbreviates, glosses, implied, word_gloss
from voxcall.llm.local.places import mentions_place, place_form, places_for, said_places
from voxcall.llm.local.relevance import same_stem, words
from voxcall.tools.forms import forms_of
from voxcall.tools.schema import Tool

MAX_NUMBER_WAYS = 64
"""The most ways of giving a call's number parameters the numbers said that a grammar spells out (:meth:`Said.
each_as_said`)."""
MAX_SPAN_WORDS = 8
"""The longest run of the user's words a string argument may be, but for one that runs to the end of its sentence
(a message, a note, an answer: "saying the train is stuck near the bridge so dinner will wait an hour")."""
TIMED = frozenset({"date", "time", "day", "when", "hour", "datetime", "timestamp"})
"""Words of a parameter's name or description (besides the lexicon's time words) that say it takes a time."""
_ESCAPED_BREAK = re.compile(r"\\n(?=\\n|[\s*#>-]|$)|(?:(?<=\\n)|(?<=[.!?;]))\\n")
"""A line break written as its escape (``\\n``, as text escaped twice arrives) before a space, another break or a
mark that opens a line, or after another break or a sentence's end: a space between words (a path's ``C:\\new``
keeps its letters); and every one where each backslash of the text opens one and there are two or more
(:func:`_breaks_parted`)."""
_QUOTED = re.compile(r"""(?<![\w'"`])(?:'([^'\n]+)'|"([^"\n]+)"|`([^`\n]+)`|‘([^’\n]+)’|“([^”\n]+)”)""")
"""A phrase in quotes, which may be glued to the word after it (Korean's '임진왜란'이라는: "called '임진왜란'")."""
_ADDRESS_NAME = re.compile(r"(?:^|[_\W])(?i:url|uri|endpoint)$|[a-z](?:Url|Uri|Endpoint)$")  # takes an address
_ADDRESS = re.compile(r"[a-z][a-z0-9+.-]*://\S+|\b\d{1,3}(?:\.\d{1,3}){3}\b|\b[\w-]+(?:\.[\w-]+)*\.[a-z]{2,}\b",
                      re.IGNORECASE)
"""An address: a URL, an IP address or a host name ("https://api.example.com/v1", "192.168.1.1", "paypal.com")."""
_CREDENTIAL = frozenset({"key", "token", "password", "secret"})  # words of a parameter never to invent a value for
_WHEN = re.compile(
    r"\b(?:19|20)\d\d\b|\d{1,4}[-/.]\d{1,2}|\d{1,2}:\d\d|\d(?:st|nd|rd|th)\b|\d\s*(?i:[ap]\.?m\b|h\b|o'clock)"
    r"|(?i:\b(?:now|today|tonight|tomorrow|yesterday|noon|midnight|morning|afternoon|evening|night|day|week"
    r"|weekend|month|year|hours?|minutes?|ago|next|last|since|until|am|pm|o'clock|mon|tues|wednes|thurs|fri|satur"
    r"|sun|jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec|january|february|march|april|june|july|august"
    r"|september|october|november|december|hoy|mañana|ayer|aujourd'hui|demain|hier|heute|morgen|gestern|hari"
    r"|besok|kemarin)(?:day)?\b)|[今明昨前后天点時时月日号號周週星期年分]|오늘|내일|어제")
"""What may say a date or a time (a year, "10/1", "9:30", "5th", "5pm", "tomorrow", "Friday", "March", 明天, 오늘),
not any number ("8 pieces of frozen mango"): where none is, an optional date or time in a prescribed form is the
tool's (:meth:`Said.gives`)."""
_SENTENCE_END = re.compile(r"[.!?;:。！？；：…][\"'”’)\]*]*$")
"""A word that ends a sentence or clause ("late.", "question.**")."""
_ASKED = re.compile(r"[!?！？][)\]*]*$")  # a word that ends a question or an exclamation (not a quote's: 'Hi!')
_SENTENCE = re.compile(r"(?<=[.!?;。！？；])\s*|\n+")  # where a sentence ends
_NEGATION = re.compile(r"(?i)\b(?:not|no|never|without|nor|neither|exclud\w*|except)\b|n[’']t\b")
"""Words that turn what a sentence says around ("not", "don't", "without", "exclude"; English, as flags are named)."""
_FLAG_WORDS = frozenset({"enabled", "enable", "flag"})  # words of a flag's name that say it is one
_FORMAT_WORD = re.compile(r"\bformat(?:ted)?\b", re.IGNORECASE)  # a description that prescribes a value's form
_LAST_LISTED = re.compile(r"^[^.;:!?]*?(?:" + LIST_ENDING.pattern + r")\s+[A-Z]")  # a list's last value: "and Rome"


def spans(said: str) -> list[str]:
    """Every run of up to :data:`MAX_SPAN_WORDS` consecutive words of ``said`` (a Chinese character is a word:
    :func:`~voxcall.llm.local.lexicon.tokens`), and every longer one that ends where its sentence or clause does
    (:func:`_sentence_ends`: a long message or answer is the rest of a sentence), without punctuation at its ends
    (inner punctuation stays: ``Berkeley, CA``), each once; none that begins or ends with a joining word (a
    preposition, conjunction, pronoun or auxiliary of :data:`~voxcall.llm.local.lexicon.JOINING_WORDS`: "Boston
    in", "and I", "Can", "北京的") — no value is, and a tiny model picks them; none that cuts a word the lexicon
    knows (:func:`~voxcall.llm.local.lexicon.inner_edges`: "天" of 天气); and none that a qualifier follows
    (:func:`_qualified`: "Naples" in "Naples, Florida"), which a tiny model leaves out; none that runs on past a
    question's end ("is "Adriel" working on? exclude any"). What the user put in quotes
    is a span, whatever its length or the word glued to it (:data:`_QUOTED`): it is a value as the user wants it
    written, and it ends where its quotes do (:func:`_crosses`: "nickname it 'X', use 'http://plga.ca' as the host"
    has no span "X', use 'http://plga.ca' as the host", which the 0.5B model wrote as the nickname)."""
    said = _breaks_parted(said)
    found_words = tokens(said)
    plain = [word for word, _ in found_words]
    cuts = inner_edges(found_words)
    ends = _sentence_ends(plain)
    quotes = _quotes(said, found_words)
    found = (joined(found_words[start:end]).strip(SPAN_EDGE) for start in range(len(found_words))
             for end in [*range(start + 1, min(len(found_words), start + MAX_SPAN_WORDS) + 1),
                         *((ends[start],) if ends[start] > start + MAX_SPAN_WORDS else ())]
             if start not in cuts and end not in cuts and not _qualified(plain[start:end], plain[end:])
             and not any(_ASKED.search(word) for word in plain[start:end - 1])
             and not any(_crosses(start, end - 1, first, last) for first, last in quotes))
    quoted = (phrase.strip(SPAN_EDGE) for match in _QUOTED.finditer(said) for phrase in match.groups() if phrase)
    return list(dict.fromkeys([*(span for span in found if span and not _joins(span)), *filter(None, quoted)]))


def _breaks_parted(said: str) -> str:
    """``said`` with its escaped line breaks (:data:`_ESCAPED_BREAK`) as spaces: "the answer:\\n\\nThe text does not
    define regression" holds the span "The text does not define regression"; and "classify these\\nlink my
    account\\nhello", two or more breaks, one a word at most and no other backslash, is a list (``C:\\new\\notes.txt``
    is a path)."""
    glued = [word.count("\\") for word in said.split() if "\\" in word]
    listed = said.count("\\") == said.count("\\n") >= 2 and max(glued) == 1
    return said.replace("\\n", " ") if listed else _ESCAPED_BREAK.sub(" ", said)


def _quotes(said: str, found_words: list[tuple[str, bool]]) -> list[tuple[int, int]]:
    """The phrases of ``said`` in quotes (:data:`_QUOTED`), each as the places of its first and last word among
    ``found_words`` (of :func:`~voxcall.llm.local.lexicon.tokens`; the words holding the opening and the closing
    mark)."""
    starts: list[int] = []
    at = 0
    for word, _ in found_words:
        at = said.find(word, at)
        starts.append(at)
        at += len(word)
    found: list[tuple[int, int]] = []
    for match in _QUOTED.finditer(said):
        first = next((i for i, start in enumerate(starts) if start <= match.start() < start + len(found_words[i][0])),
                     None)
        last = next((i for i, start in enumerate(starts) if start < match.end() <= start + len(found_words[i][0])),
                    None)
        if first is not None and last is not None:
            found.append((first, last))
    return found


def _crosses(start: int, last: int, first_quoted: int, last_quoted: int) -> bool:
    """Whether the words ``start`` … ``last`` cross the edge of the quoted words ``first_quoted`` … ``last_quoted``:
    neither apart from them, nor within them, nor holding them between words of its own on both sides ("the 'X'
    server" may be a value; "X', use" and "Birthday!' message", of 'Happy Birthday!' message, are none)."""
    apart = last < first_quoted or start > last_quoted
    within = first_quoted <= start and last <= last_quoted
    around = start < first_quoted and last > last_quoted
    return not (apart or within or around)


def _sentence_ends(words: list[str]) -> list[int]:
    """For each of ``words``, the place after the last word of its sentence or clause: the first word from it on
    that ends with a full stop, a question or exclamation mark, a colon or a semicolon (closing quotes, brackets
    and emphasis marks after them aside), or the end of the words."""
    ends: list[int] = []
    end = len(words)
    for index in range(len(words) - 1, -1, -1):
        if _SENTENCE_END.search(words[index]):
            end = index + 1
        ends.append(end)
    return ends[::-1]


def copied_string(schema: Mapping[str, Any], *, write_forms: bool = True) -> bool:
    """Whether a string of ``schema`` is copied from the user's words (a span of them): unless the schema prescribes
    a form of its own (``format``, ``pattern``) or, with ``write_forms``, its description does ("in the format of
    'City, State'", "'YYYY-MM-DD'"), which the user's words seldom have ("Boston", "March 1st")."""
    description = schema.get("description")
    prescribed = write_forms and isinstance(description, str) and _FORMAT_WORD.search(description) is not None
    return not ({"format", "pattern"} & schema.keys() or prescribed)


class Said:
    """The values ``text`` (the user's last words) holds: its :attr:`spans`, :attr:`numbers`, and what a choice
    is compared with (:attr:`names`: the spans and the lexicon's glosses, casefolded)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.spans = spans(text)
        # how often each number is said (each_as_said), and those words imply ("double 37": 2)
        self._times = Counter([*said_numbers(text), *(value for _, value in implied(text))])
        self._places: dict[int | float, list[int]] = {}  # where each number is said in digits or words
        for at, _, number in number_spans(text):
            self._places.setdefault(number, []).append(at)
        self.numbers = list(self._times)  # each once, in the order said
        self._durations = durations(text)
        self._outside = outside(text, self._durations) if self._durations else []  # numbers no length holds
        self.names = {span.casefold() for span in self.spans} | {meaning.casefold() for meaning in glosses(text)}
        self._words = {span: {w.strip(SPAN_EDGE).casefold() for w in span.split()} for span in self.spans}
        self._meanings = {span: set(words(span)) for span in self.spans}  # content words, glosses included
        self._kinds: dict[Kind, list[str]] = {}
        self.quoted = [Quoted(match.start(), match.end(), value) for match in _QUOTED.finditer(text)  # in order
                       for phrase in match.groups() if phrase and (value := phrase.strip())]

    def of_kind(self, name: str, schema: Mapping[str, Any]) -> list[str]:
        """What the words say of the kind of value parameter ``name`` (of ``schema``) takes, a colour, a size, an
        identifier or a country's code (:func:`~voxcall.llm.local.kinds.kind_of`); empty for one of no such kind."""
        kind = kind_of(name, schema)
        if kind is None or not self.spans:
            return []
        if kind not in self._kinds:
            self._kinds[kind] = said_of_kind(kind, self.text, self.spans)
        return self._kinds[kind]

    def labelled(self, properties: Mapping[str, Any]) -> Labels:
        """The plain string parameters of ``properties`` the words label a quoted value with, and their values:
        "The title should be 'X'" (:func:`~voxcall.llm.local.labels.labelled`)."""
        return labelled(self.text, self.quoted, properties) if self.quoted else NO_LABELS

    def passes(self, name: str, schema: Mapping[str, Any]) -> bool:
        """Whether optional parameter ``name`` (of ``schema``) must be passed: a flag the words set (:meth:`sets`), or
        a colour said (``color`` was left out of "any red shoes in size 8"); not a size, one may be said in passing."""
        if kind_of(name, schema) is Kind.COLOUR:
            return bool(self.of_kind(name, schema))
        return self.sets(name, schema)

    def sets(self, name: str, schema: Mapping[str, Any]) -> bool:
        """Whether the words turn on flag ``name`` (a boolean of ``schema``): one sentence says every content word of
        its name but for words that say it is a flag ("with monitoring": ``monitoringEnabled``), in any form, and no
        negation ("including the hidden ones": ``include_hidden``; "I don't care about garages" and "exclude the
        completed ones" set nothing); a verb's word in any of its forms ("a hotel that allows smoking":
        ``smoking_allowed``, :func:`~voxcall.llm.local.lexicon.inflected`). The 0.5B model left ``include_hidden`` out
        of "all the files with a .sav extension, including any hidden ones"."""
        named = set(words(name)) - _FLAG_WORDS
        if schema.get("type") != "boolean" or not named:
            return False
        for sentence in _SENTENCE.split(self.text):
            said = words(sentence)
            if all(any(same_stem(word, other) or inflected(word, other) for other in said) for word in named):
                return not _NEGATION.search(sentence)
        return False

    def strings(self, tool: Tool) -> list[str]:
        """The spans a plain string argument of ``tool`` may be (see the module's docstring), and a place's name
        without what qualifies it where the tool asks for its country apart ("London" of "London, UK")."""
        reserved, named = _choice_words(tool), {w for w in words(tool.name) if not w.isdigit()}
        timed = _takes_time(tool)

        def idle(written: str) -> bool:
            """Whether the word ``written`` says nothing a value of ``tool`` could be; a time word only where it is
            not capitalised ("the song Yesterday" is a name)."""
            word = singular(written.lower())
            return (word in STOP_WORDS or word in JOINING_WORDS or (len(word) == 1 and word.isascii()
                                                                   and not word.isdigit())
                    or word in named or not named.isdisjoint(word_gloss(word))
                    or (word in TIME_WORDS and not timed and not written[:1].isupper()))

        bare = [place.said for place in said_places(self.text) if place.qualified] if asks_country(tool) else []
        return [*(span for span in self.spans if not reserved & self._words[span]
                  and not self._only_named(span, named) and not covered(span, idle)), *bare]

    def places(self, schema: Mapping[str, Any]) -> list[str]:
        """The values a string argument of ``schema`` may be when its description asks for a place in a form of its
        own ("such as 'Berkeley, CA'") and the words name places: those, in that form
        (:func:`~voxcall.llm.local.places.places_for`); empty otherwise."""
        description = schema.get("description")
        return places_for(self.text, description) if isinstance(description, str) and self.spans else []

    def numbers_for(self, name: str, schema: Mapping[str, Any] | None) -> list[int | float]:
        """The numbers a number parameter ``name`` of ``schema`` may be: those said, but where it counts in a
        unit of time (:func:`~voxcall.llm.local.duration.unit_of`) and the words say lengths of time, those
        lengths in its unit and the numbers no part of them ("two hours": 120 ``minutes``, not 2)."""
        unit = unit_of(name, schema) if self._durations else None
        if unit is None:
            return self.numbers
        counted = [length.counted_in(unit) for length in self._durations]
        return list(dict.fromkeys([*counted, *self._outside]))

    def each_as_said(self, candidates: Sequence[Sequence[int | float]]) -> list[tuple[int | float, ...]]:
        """The ways to give several number parameters each one of its ``candidates``, no number more often than the
        words say it: "Double 37 for me" says 37 once (and 2), so ``a=37, b=2``, never the 0.5B model's ``a=37,
        b=37``; a number the words say only as a length in another unit (120 ``minutes`` for "two hours") is not
        counted. Empty when there is no such way ("both sides 10"), or more than :data:`MAX_NUMBER_WAYS` to try:
        then the numbers are not counted. Of those, the ways in the order said (:meth:`_in_order`), if any."""
        if math.prod(len(c) for c in candidates) > MAX_NUMBER_WAYS:
            return []
        ways = [way for way in itertools.product(*candidates)
                if all(number not in self._times or count <= self._times[number]
                       for number, count in Counter(way).items())]
        return [way for way in ways if self._in_order(way)] or ways

    def _in_order(self, way: Sequence[int | float]) -> bool:
        """Whether the numbers of ``way`` are said in the order of their parameters ("If each of my three friends gave
        me 10 euros": ``multiply(a=3, b=10)``; the 0.5B model wrote ``a=10, b=3``), or in any order where a reversing
        word stands between them ("Subtract 9 from 30": ``a=30, b=9``) or one is not said as a number ("double")."""
        if any(number not in self._places for number in way):
            return True
        last = -1
        for number in way:
            later = [at for at in self._places[number] if at > last]
            if not later:
                firsts = [self._places[number][0] for number in way]
                return bool(REVERSING.search(self.text[min(firsts):max(firsts)]))
            last = later[0]
        return True

    def choices(self, values: Sequence[str]) -> list[str]:
        """The ``values`` of a choice (``enum``) the words name: as the schema spells one, an underscore read as a
        space (``AIR_DRY``: "air dry"), or a one-word value in another form ("PostgreSQL": ``postgres``;
        :func:`~voxcall.llm.local.relevance.same_stem`), or a value of three or four letters that abbreviates a word
        said (:func:`~voxcall.llm.local.meanings.abbreviates`: "text files" names ``txt``, "the images" ``img``). A
        value that is a stop word ("all", "any") is named only where no other value is: "all the PostgreSQL servers"
        asks for ``postgres`` (the 0.5B model, made to pass the one value said, wrote ``type='all'``), "all the
        servers" for ``all``."""
        said = words(self.text, hints=False)
        named = [value for value in values if value and (
            value.casefold() in self.names or value.replace("_", " ").casefold() in self.names
            or (value.isalpha() and self._says([value.casefold()]))
            or any(abbreviates(value.casefold(), word) for word in said))]
        return [value for value in named if value.casefold() not in STOP_WORDS] or named

    def choices_of(self, properties: Mapping[str, Any]) -> dict[str, list[str]]:
        """The ``properties`` with a choice of strings (``enum``), each with the choices the user named
        (:meth:`choices`). One said alone among its choices ("in fahrenheit" → ``unit='fahrenheit'``) is the
        value the argument must take: a tiny model leaves optional choices out even when they were said."""
        found: dict[str, list[str]] = {}
        for prop, schema in properties.items():
            choices = schema.get("enum") if isinstance(schema, Mapping) else None
            if isinstance(choices, list) and choices and all(isinstance(c, str) for c in choices):
                found[prop] = self.choices(choices)
        return found

    def gives(self, name: str, schema: Mapping[str, Any]) -> bool:
        """Whether the words give optional parameter ``name`` (of ``schema``) a value to pass: for a number, a
        number said for it (:meth:`numbers_for`); for a flag or a credential (a ``key``, ``token``, ``password``
        or ``secret``), a word of its name, in any form ("with monitoring": ``monitoringEnabled``; "archived":
        ``archive``; "my API key is ...": :func:`~voxcall.llm.local.relevance.same_stem`); for an address
        (:meth:`missing`), one said; for a colour, a size or a country's code (:meth:`of_kind`), one said; for a date
        or a time in a prescribed form (:func:`~voxcall.tools.forms.forms_of`), words that may say one; anything else
        may be given. The 0.5B model set ``targetTemperature=22`` and ``powerSaveEnabled=True`` for "switch the air
        conditioner to air dry mode", ``api_key='Korea'``, ``url='Francisco'``, ``color='M. Saya ingin …'`` and
        ``sizes=['Shopee']``: values the user never gave, where left out the tool keeps its own (and
        ``log_date='2023-04-15T12:00:00Z'`` for "I had 8 pieces of frozen mango and a chai tea")."""
        kind = schema.get("type")
        if kind in ("number", "integer") and "enum" not in schema:
            return bool(self.numbers_for(name, schema))
        if kind_of(name, schema) in (Kind.COLOUR, Kind.SIZE, Kind.COUNTRY):
            return bool(self.of_kind(name, schema))
        named = set(words(name))
        if kind == "boolean" or (kind == "string" and not _CREDENTIAL.isdisjoint(named)):
            return self._says(named)
        if kind == "string" and _address(name, schema):
            return _ADDRESS.search(self.text) is not None
        if forms_of(schema):
            return _WHEN.search(self.text) is not None
        return True

    def _says(self, wanted: Iterable[str]) -> bool:
        """Whether the words say one of ``wanted`` (lowercase words) in any form
        (:func:`~voxcall.llm.local.relevance.same_stem`)."""
        said = words(self.text)
        return any(same_stem(word, other) for word in wanted for other in said)

    def holds(self, tool: Tool, *, write_forms: bool = True) -> bool:
        """Whether the words hold every required value of ``tool`` that a call copies (:meth:`missing`)."""
        return not self.missing(tool, write_forms=write_forms)

    def missing(self, tool: Tool, *, write_forms: bool = True) -> list[str]:
        """The required parameters of ``tool`` whose value a call copies and the words do not hold: a plain string
        (:func:`copied_string`) with none of :meth:`strings`, a number with no number said, a place in a form of its
        own ("such as 'Berkeley, CA'") where the words could name no city
        (:func:`~voxcall.llm.local.places.mentions_place`: a domain, an address of numbers), an address (a ``url``,
        ``uri`` or ``endpoint``) where they hold none (:data:`_ADDRESS`). Empty when nothing was said (the strings are
        not copied)."""
        if not self.spans:
            return []
        lacking: list[str] = []
        strings: list[str] | None = None
        for name in tool.required:
            schema = tool.properties.get(name)
            if not isinstance(schema, Mapping) or "enum" in schema or "const" in schema:
                continue
            kind, description = schema.get("type"), schema.get("description")
            if kind == "string" and isinstance(description, str) and place_form(description) is not None:
                if not mentions_place(self.text):
                    lacking.append(name)  # a place in a form ("Berkeley, CA") and no city said: "10.10.0.0"
            elif kind == "string" and _address(name, schema):
                if not _ADDRESS.search(self.text):
                    lacking.append(name)  # an address and none said: "the movies in NYC" is no url
            elif kind == "string" and copied_string(schema, write_forms=write_forms):
                strings = self.strings(tool) if strings is None else strings
                if not strings:
                    lacking.append(name)
            elif kind in ("number", "integer") and not self.numbers_for(name, schema):
                lacking.append(name)
        return lacking

    def _only_named(self, span: str, named: set[str]) -> bool:
        """Whether ``span`` has content words and all of them are words of the tool's name (``named``), or glossed
        as one ("temperature" for ``get_weather``)."""
        meanings = self._meanings[span]
        return bool(meanings) and all(word in named or not named.isdisjoint(word_gloss(word)) for word in meanings)


def _address(name: str, schema: Mapping[str, Any]) -> bool:
    """Whether parameter ``name`` of ``schema`` takes an address: named ``url``, ``uri``, ``endpoint`` (or
    ``…Url``), or of format ``uri``."""
    return bool(_ADDRESS_NAME.search(name)) or schema.get("format") in ("uri", "url")


def _qualified(words: list[str], rest: list[str]) -> bool:
    """Whether the name ``words`` ends with (a capitalised word, then a comma) is qualified by the capitalised word
    that follows (``rest``: "Naples," "Florida", "Boston," "MA"), rather than listed before it ("Oslo," "Rome and
    Madrid": an "and" or "or" before another capitalised word ends a list)."""
    last, following = words[-1], rest[0] if rest else ""
    if not (last.endswith(",") and last[:1].isupper() and following[:1].isupper()):
        return False
    if following.strip(SPAN_EDGE).casefold() in JOINING_WORDS:
        return False  # "Riga, Latvia, Can you ...": a new clause
    return not _LAST_LISTED.search(" ".join(rest[:MAX_SPAN_WORDS]))


def _joins(span: str) -> bool:
    """Whether ``span`` begins or ends with a joining word (an unspaced language's may be several letters:
    "或者"), or ends with an article ("goal in the")."""
    edges = span.split()
    if any(word.strip(SPAN_EDGE).casefold() in JOINING_WORDS for word in (edges[0], edges[-1])):
        return True
    if edges[-1].strip(SPAN_EDGE) in ARTICLES:
        return True
    return any(span.startswith(word) or span.endswith(word) for word in UNSPACED_JOINING_WORDS)


def _takes_time(tool: Tool) -> bool:
    """Whether a parameter of ``tool`` takes a time: its name or description says one (a date, a day,
    "tomorrow")."""
    return any(not (TIMED | TIME_WORDS).isdisjoint(words(f"{name} {schema.get('description', '')}"))
               for name, schema in tool.properties.items() if isinstance(schema, Mapping))


def _choice_words(tool: Tool) -> set[str]:
    """The strings ``tool``'s parameters choose among (``enum``), casefolded: said, they name a choice ("in
    Celsius"), not a place or a name, so a plain string argument of the same call is never one of them."""
    return {c.casefold() for schema in tool.properties.values() if isinstance(schema, Mapping)
            for c in schema.get("enum") or () if isinstance(c, str)}
