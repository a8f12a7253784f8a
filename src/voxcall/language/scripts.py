"""Writing systems: which language a text's script gives away, and where running text puts a space between two
pieces (none between Chinese clauses, one between English sentences)."""

from __future__ import annotations

import unicodedata

__all__ = ["language_of", "spaced"]

_SCRIPTS = (("CJK UNIFIED", "zh"), ("HIRAGANA", "ja"), ("KATAKANA", "ja"), ("HANGUL", "ko"))

_NO_SPACE_BEFORE = frozenset(",.;:!?)]}»”’…。，、；：！？）」』")


def _unspaced(char: str) -> bool:
    """Whether ``char`` belongs to a script written without spaces between words (Han, kana, Hangul syllables are
    spaced in Korean, but a clause boundary needs none either way)."""
    code = ord(char)
    return (0x2E80 <= code <= 0x9FFF or 0xAC00 <= code <= 0xD7AF or 0xF900 <= code <= 0xFAFF
            or 0xFF00 <= code <= 0xFFEF or 0x3000 <= code <= 0x303F)


def spaced(said: str, text: str) -> str:
    """``text`` as it follows ``said`` in one running text: with a space between them where the language puts one
    (two sentences of English), and none where it does not (Chinese, punctuation, a space already there)."""
    if not said or not text or said[-1].isspace() or text[0].isspace() or text[0] in _NO_SPACE_BEFORE:
        return text
    if _unspaced(said[-1]) or _unspaced(text[0]):
        return text
    return f" {text}"


def language_of(text: str) -> str | None:
    """The language a text's script gives away (Chinese, Japanese, Korean), or None for any other script."""
    found: str | None = None
    for char in text:
        if ord(char) < 0x2E80:
            continue
        name = unicodedata.name(char, "")
        for prefix, language in _SCRIPTS:
            if name.startswith(prefix):
                if language != "zh":  # kana or Hangul decide; Han characters alone mean Chinese
                    return language
                found = language
    return found
