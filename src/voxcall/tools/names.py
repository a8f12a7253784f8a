"""Tool names: the rule model APIs set for them, and Python-safe aliases for names that JSON Schema allows but
Python does not (``from``, ``user-id``, ``2fa``).

The local-model path shows tools as Python signatures, so every tool name and argument name needs an identifier
the model can write; the parser maps it back to the real name.
"""

from __future__ import annotations

import keyword
import re
import unicodedata
from collections.abc import Iterable

TOOL_NAME_PATTERN = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
"""The tool names model APIs (and the Realtime protocol) accept."""


def python_identifier(name: str) -> str:
    """Return ``name`` itself when it is a usable Python identifier, else a readable identifier derived from it."""
    # Python reads identifiers NFKC-normalised (``ﬁ`` is ``fi``), so only a normalised name can be kept as is.
    normal = unicodedata.normalize("NFKC", name)
    if name == normal and name.isidentifier() and not keyword.iskeyword(name):
        return name
    # Keep only characters an identifier may continue with (``\w`` alone would keep ``²``).
    alias = "".join(ch if ("_" + ch).isidentifier() else "_" for ch in normal) or "arg"
    if not alias.isidentifier():  # starts with a digit
        alias = "_" + alias
    if keyword.iskeyword(alias):
        alias += "_"
    return alias


def alias_map(names: Iterable[str]) -> dict[str, str]:
    """Map each name to a distinct Python identifier, keeping names that already are identifiers unchanged."""
    names = list(names)
    taken = {n for n in names if python_identifier(n) == n}
    aliases: dict[str, str] = {}
    for name in names:
        alias = python_identifier(name)
        if alias != name:
            base, n = alias, 2
            while alias in taken:
                alias, n = f"{base}{n}", n + 1
            taken.add(alias)
        aliases[name] = alias
    return aliases
