"""A switch said: the value of a flag that turns something on (``set_lights(on=...)``), when the words say which.

The words of a request hold the flag's value when they say "on" and not "off", or "off" and not "on" ("Switch the
lounge lights on.": True; "Lights off in the bathroom.": False); in Chinese 开 and 关 ("把书房的灯打开。"). The
0.5B thinker wrote ``on=False`` for "Switch the lounge lights on." (the model's first token there was sure, so no
threshold helps). A request that says both ("Turn off the lights on the porch") or neither leaves the value to
the model, as does any flag whose name does not end with "on" (``include_hidden`` is set by naming it:
:meth:`~voxcall.llm.local.said.Said.sets`). Which words switch is each language's own (the lexicon's
``switches``), so the rule holds for every tool that names a flag so (``on``, ``lights_on``, ``is_on``), none in
particular.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from voxcall.llm.local.lexicon import LATIN_WORD, LEXICONS


def _said(side: int) -> re.Pattern[str]:
    """Any language's word for on (``side`` 0) or off (1): a whole word where words are spaced, else anywhere."""
    return re.compile("|".join(rf"\b{re.escape(word)}\b" if lexicon.spaced else re.escape(word)
                               for lexicon in LEXICONS for word in lexicon.switches[side]), re.IGNORECASE)


_ON, _OFF = _said(0), _said(1)
FLAG_NAMES = frozenset({"on"})
"""The words a flag's name ends with for it to switch something on (split as :data:`~voxcall.llm.local.lexicon.
LATIN_WORD` splits names: ``lightsOn``, ``is_on``; not ``include_on_hold``, whose "on" switches nothing)."""


def switched(text: str, name: str, schema: Any) -> bool | None:
    """The value the words ``text`` give flag ``name`` (of ``schema``): True for "on" said alone, False for "off"
    said alone, None when the flag switches nothing or the words say both or neither (the model's to write)."""
    if not isinstance(schema, Mapping) or schema.get("type") != "boolean" or not _switches(name):
        return None
    on, off = bool(_ON.search(text)), bool(_OFF.search(text))
    return on if on != off else None


def _switches(name: str) -> bool:
    """Whether a flag named ``name`` turns something on: its name ends with "on" (:data:`FLAG_NAMES`)."""
    named = LATIN_WORD.findall(name)
    return bool(named) and named[-1].casefold() in FLAG_NAMES
