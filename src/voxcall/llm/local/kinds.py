"""Kinds of value a word says on its own: a **colour** ("red", "maroon", 红色), a **clothing size** ("M",
"medium", "size 8"), an **identifier** ("Q3CC-CRT3-SZ2G", "#123", 'med123') and a **country's code** ("GB" for
"London in the UK").

A product tool's optional ``color`` and ``sizes`` are where the 0.5B model goes wrong in both directions: it leaves
out the colour the user said ("any red shoes in size 8": ``color`` missing), and it fills them with what the user
did not say (``sizes=['M and L? Please check for prod id']``, ``color='M. Saya ingin menukarkan ukuran'``,
``sizes=['L lagi']``). A parameter of one of these kinds (:func:`kind_of`: by its name) takes what the words say of
that kind (:func:`said_of_kind`); a colour said is passed, and one not said is left to the tool; a size said is
the model's to pass or not (one may be said in passing: "compared to the size 34 pants I purchased previously"
asks for no size). A colour named in another way ('Cerulean', a hex code) is still a span like any value where
the parameter is required; a size said in no form known here changes nothing.

An identifier (a parameter named ``…_id``, ``serial``, ``sku``, ``identifier``, ``uuid``) is one the 0.5B model
copies badly: ``sensorSerial='the list of today's alerts for the sensor with serial number Q3CC-CRT3-SZ2G, showing
a maximum of 10 alerts per page'``. A code said (a word of letters, digits and dashes with a digit in it, or a
word in quotes written or said as one) is one; where any is said, such a parameter is one of them, and passed as
the model decides (a tool may take several kinds of identifier: an order's and a product's). Over every development
request of BFCL's simple, multiple and parallel categories whose call has such a string parameter and whose words
say a code, the expected value is one of the codes said in 62 of 62.

A country's code (a parameter named for a country whose name or description asks for a code: ``country_code``,
"ISO 3166-1 alpha-2 country codes, e.g. 'US'") is the code of a country the words name or of a city they name
(:func:`~voxcall.llm.local.places.countries_for`): copied, "the UK" is ``country='UK'``, not the "GB" asked for.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Mapping, Sequence
from typing import Any

from voxcall.llm.local.lexicon import STOP_WORDS
from voxcall.llm.local.places import countries_for
from voxcall.tools.schema import Tool


class Kind(enum.Enum):
    """What a parameter's value names."""

    COLOUR = "colour"
    SIZE = "size"
    CODE = "code"
    COUNTRY = "country"


COLOURS = frozenset({
    "red", "blue", "green", "yellow", "black", "white", "grey", "gray", "pink", "purple", "orange", "brown",
    "beige", "navy", "maroon", "burgundy", "silver", "gold", "golden", "teal", "turquoise", "cyan", "magenta",
    "violet", "indigo", "lavender", "lilac", "khaki", "ivory", "crimson", "scarlet", "charcoal", "aqua", "fuchsia",
    "cerulean", "azure", "mustard", "taupe", "multicolor", "multicolour",
    "rojo", "roja", "azul", "verde", "amarillo", "amarilla", "negro", "negra", "blanco", "blanca", "gris", "rosa",
    "morado", "morada", "naranja", "marrón", "rouge", "bleu", "bleue", "vert", "verte", "jaune", "noir", "noire",
    "blanc", "blanche", "rot", "blau", "grün", "gelb", "schwarz", "weiß",
    "merah", "biru", "hijau", "kuning", "hitam", "putih", "abu-abu", "ungu", "cokelat", "coklat", "oranye",
})
"""Colour words (lowercase) in the languages of the lexicon's tables; a span that ends with one is a colour
("Sea Green", "light blue"). Words that more often name a material or a thing ("bronze", "rose", "olive") are not
here: "a bronze sculpture" says no colour."""
CJK_COLOURS = ("红色", "蓝色", "绿色", "黄色", "黑色", "白色", "灰色", "粉色", "粉红色", "紫色", "橙色", "棕色",
               "金色", "银色", "咖啡色")
"""Colours in Chinese, written with 色 as they are said."""
LETTER_SIZES = re.compile(r"(?<![\w.'’-])(?:X{0,3}S|M|X{0,4}L|[2-5]XL)(?![\w'’-])")
"""A size in letters, as written: uppercase, a word of its own ("M and L"; not the "S" of "U.S.", nor "L'Oréal")."""
SIZE_WORDS = ("extra small", "extra large", "small", "medium", "large")
"""Sizes in words, longest first."""
SIZE_MARKERS = frozenset({"size", "sizes", "ukuran", "talla", "tallas", "taille", "tailles", "größe", "tamanho",
                          "尺码"})
"""Words after which a number is a size: "size 8", "ukuran 40", "尺码 38" (not 码 alone: 密码 1234 is a password)."""
_NUMBER_SIZE = re.compile(r"\d+(?:[.,]\d+)?(?:x\d+(?:[.,]\d+)?)?")  # "8", "40", "8.5", "12x18"
_MARKED = re.compile(r"(?i)(?<!\w)(?:" + "|".join(sorted(SIZE_MARKERS, key=len, reverse=True))
                     + r")(?:\s+(?:of|to|in|is))?\s*(" + _NUMBER_SIZE.pattern + r")(?![\w.])")
CODE_WORDS = frozenset({"id", "ids", "serial", "sku", "identifier", "uuid"})
"""Words of a parameter's name that make it an identifier (``product_id``, ``sensorSerial``, ``event_identifier``)."""
_CODE = re.compile(r"(?<![\w.#'’/-])#?(?=[\w-]*\d)[A-Za-z0-9][\w-]*[A-Za-z0-9](?![\w'’/-])")
"""A code as written: letters, digits, dashes and underscores, a digit among them ("SK123", "12345-67890", "#123");
not a time of day ("8pm"), nor a piece of a path or an address ("/product/418901918/")."""
_TIME_OF_DAY = re.compile(r"(?i)\d{1,2}(?:am|pm)")
_QUOTED = re.compile(r"(?<!\w)['\"‘“]([^'\"‘’“”\s]{2,})['\"’”](?!\w)")
"""A word in quotes: an identifier where it is written like one ('Alice-One-one-One', 'med123') or said as one
('id "grgr"'); not 'burgers' in "five 'burgers' … from uber eat with id: McDonald's"."""
_NAMED_CODE = re.compile(r"(?i)\b(?:" + "|".join(sorted(CODE_WORDS)) + r")\b\W*(?:\w+\W+)?$")
_CODED_COUNTRY = re.compile(r"(?i)\b(?:ISO|alpha-2|codes?|2-letter|two-letter)\b")
"""Words of a description that ask for a country by its code ("ISO 3166-1 alpha-2", "2-letter country code")."""
_NOT_COLOUR = frozenset({"mode", "space", "scheme", "depth", "temperature", "code", "hex", "rgb", "format"})
"""Words of a parameter's name that make a ``color_…`` something other than a colour's name (``color_mode``)."""


def kind_of(name: str, schema: Any) -> Kind | None:
    """The kind of value parameter ``name`` (of ``schema``) takes: a colour for a free string named for one
    (``color``, ``dominant_color``, ``colour2``; not ``color_mode``, nor one whose description asks for a hex or RGB
    code), a size for a free string or a list of them named ``size``/``sizes`` (not ``page_size``: a number),
    a country's code for a free string named for a country whose name or description asks for a code
    (:data:`_CODED_COUNTRY`), an identifier for one named with a word of :data:`CODE_WORDS`; None otherwise, and
    for a schema that is no object (JSON Schema's ``true``: a tool's schema is the client's)."""
    if not isinstance(schema, Mapping):
        return None
    kind = schema.get("type")
    items = schema.get("items")
    listed = kind == "array" and isinstance(items, Mapping) and items.get("type") == "string"
    if not (kind == "string" or listed) or "enum" in schema or (isinstance(items, Mapping) and "enum" in items):
        return None
    parts = {p for p in re.split(r"[^a-z]+", re.sub(r"([a-z])([A-Z])", r"\1 \2", name).lower()) if p}
    description = schema.get("description")
    coded = isinstance(description, str) and re.search(r"(?i)\b(?:hex|rgb)\b", description) is not None
    if kind == "string" and parts & {"color", "colour"} and not parts & _NOT_COLOUR and not coded:
        return Kind.COLOUR
    if parts and parts <= {"size", "sizes"}:
        return Kind.SIZE
    if kind == "string" and "country" in parts and ("code" in parts or (
            isinstance(description, str) and _CODED_COUNTRY.search(description))):
        return Kind.COUNTRY
    return Kind.CODE if parts & CODE_WORDS else None


def said_of_kind(kind: Kind, text: str, spans: Sequence[str]) -> list[str]:
    """What ``text`` (the user's words, with their ``spans``) says of ``kind``, each once, in the order said: for a
    colour, each span of up to three words that ends with a colour word and has no stop word ("maroon", "Sea Green",
    "红色"); for a size, each size in letters, in words, or a number after a size word ("M", "medium", "size 8");
    for an identifier, each code of three characters or more, each word in quotes written or said as one; for a
    country's code, the codes of the countries named (:func:`~voxcall.llm.local.places.countries_for`)."""
    if kind is Kind.COUNTRY:
        return countries_for(text)
    if kind is Kind.COLOUR:
        found = [span for span in spans if _colour(span)]
    elif kind is Kind.CODE:
        found = [match.group() for match in _codes(text)]
        found += [match.group(1) for match in _QUOTED.finditer(text)
                  if re.search(r"[\d_-]", match.group(1)) or _NAMED_CODE.search(text[:match.start()])]
    else:
        found = [match.group() for match in LETTER_SIZES.finditer(text)]
        found += [word for word in SIZE_WORDS if re.search(rf"(?i)\b{word}\b", text)]
        found += [match.group(1) for match in _MARKED.finditer(text)]
    return sorted(dict.fromkeys(found), key=lambda value: _place(text, value))


def asks_country(tool: Tool) -> bool:
    """Whether ``tool`` takes a country's code in a parameter of its own (a place's city is then its name alone:
    ``weather.get(city='London', country='GB')``)."""
    return any(kind_of(name, schema) is Kind.COUNTRY for name, schema in tool.properties.items())


def identifies(text: str) -> bool:
    """Whether ``text`` says a code as an identifier: right after a word of :data:`CODE_WORDS`, up to one word
    between ("with id 12345-67890", "my user ID is 12345", "serial number Q3CC-CRT3-SZ2G", "ID produk ABC123")."""
    return any(_NAMED_CODE.search(text[:match.start()]) for match in _codes(text))


def _codes(text: str) -> list[re.Match[str]]:
    """The codes ``text`` says: three characters or more, no time of day."""
    return [match for match in _CODE.finditer(text)
            if len(match.group()) >= 3 and not _TIME_OF_DAY.fullmatch(match.group())]


def _colour(span: str) -> bool:
    """Whether ``span`` names a colour: up to three words, the last a colour word, none a stop word or a size
    ("medium red" is a size and a colour); in Chinese, a colour alone or after 深, 浅, 淡 or 亮."""
    if span in CJK_COLOURS or (span[1:] in CJK_COLOURS and span[:1] in "深浅淡亮"):
        return True
    found = span.casefold().split()
    return (0 < len(found) <= 3 and found[-1] in COLOURS
            and not any(word in STOP_WORDS or word in SIZE_WORDS or not word.replace("-", "").isalpha()
                        for word in found))


def _place(text: str, value: str) -> int:
    """Where ``value`` is first said in ``text`` (a value found in another case, at its first match)."""
    at = text.find(value)
    return at if at >= 0 else text.casefold().find(value.casefold())
