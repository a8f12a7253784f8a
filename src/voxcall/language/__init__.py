"""Language rules as data, one module per language (:mod:`~voxcall.language.en`, :mod:`~voxcall.language.zh`), and
the few functions that read them. This package imports nothing of voxcall's: every other part may use it.
"""

from __future__ import annotations

__all__ = ["spaced"]

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
