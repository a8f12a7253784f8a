"""Cut a streamed LLM answer into speakable clauses as soon as each is complete.

Speaking sentence by sentence makes the user wait for a whole sentence before hearing anything; clause-level
cutting lets the first audio start at the first comma. :class:`ClauseSplitter` cuts

- after a sentence end (``. ! ? …``, with any closing quotes or brackets) followed by whitespace,
- after a clause mark (``, ; :``) followed by whitespace, or an em dash, once the clause is ``min_chars`` long,
- at a line break (list items and headings carry no punctuation),

and never inside a number (``3.5``, ``1,000``, ``10:30``) or a URL (the mark is not followed by whitespace there),
after a common abbreviation or initial (``Mr.``, ``e.g.``, ``J.``), or after a list number (``1.``).
The first piece of a message may be shorter (``first_phrase``, on by default), because the user waits for it:
it ends at the first clause mark whatever its length, or at the first word boundary once it has
``FIRST_PHRASE_WORDS`` words and ``FIRST_PHRASE_CHARS`` characters and the next word has begun — never after an
abbreviation or initial, nor after a number or a symbol (a number is said with what follows it: ``12 000``,
``5 km``, ``12 * 8``), nor in ``12 x 8``. Later pieces follow the clause rules. :func:`clean_clause` drops markdown
but keeps a ``*`` between numbers: it is a product, which :mod:`~voxcall.speech.verbalizer` says.

A decision needs the character after the mark (or the space), so a clause ending a delta is held until the next
delta (or :meth:`ClauseSplitter.flush`); feeding text character by character gives the same clauses as feeding it
at once.
"""

from __future__ import annotations

import re

_SENTENCE_ENDS = ".!?…"
_CLAUSE_MARKS = ",;:"
_MARKS = _SENTENCE_ENDS + _CLAUSE_MARKS
_DASH = "—"
_CLOSERS = "\"')]}”’»*_`"
_OPENERS = "\"'([{“‘«*_`"

# Abbreviations that (almost) never end a sentence; lower case, without the final dot.
FIRST_PHRASE_WORDS = 4
"""Words the first piece needs before it may end at a word boundary: fewer sound clipped when spoken alone."""
FIRST_PHRASE_CHARS = 20
"""Characters it needs as well, so four short words ("I am on it") still wait for a fifth."""

_ABBREVIATIONS = frozenset({
    "mr", "mrs", "ms", "dr", "prof", "sr", "jr", "st", "mt", "vs", "approx", "dept", "fig", "vol",
    "inc", "ltd", "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept", "oct", "nov", "dec",
})
_INITIALISM = re.compile(r"(?:[^\W\d_]\.)*[^\W\d_]")  # "J", "e.g", "i.e", "U.S", "a.m"
_LETTER = re.compile(r"[^\W\d_]")
_SPEAKABLE = re.compile(r"[^\W_]")

_MARKDOWN = re.compile(r"[*#`]+")
_EMPHASIS_UNDERSCORE = re.compile(r"(?<![^\W_])_+|_+(?![^\W_])")  # at a word's edge, not inside snake_case
_BULLET = re.compile(r"^(?:[-+•>]\s+)+")
_OPERAND_START = re.compile(r"[-−(]?\d")


def _markdown(match: re.Match[str]) -> str:
    """A run of markdown symbols removed, unless it is a lone ``*`` between two numbers: "12 * 8" is a product."""
    before, after = match.string[:match.start()].rstrip(), match.string[match.end():].lstrip()
    return match[0] if match[0] == "*" and before[-1:].isdigit() and _OPERAND_START.match(after) else ""


def clean_clause(text: str) -> str:
    """Text as it should be spoken: markdown symbols and bullets removed (not a ``*`` between numbers), whitespace
    collapsed."""
    text = _EMPHASIS_UNDERSCORE.sub("", _MARKDOWN.sub(_markdown, text))
    return _BULLET.sub("", " ".join(text.split()))


def _said_with_next(last: str, before_last: str, next_char: str) -> bool:
    """Whether the word after ``last`` must be said with it: after a number (its unit, an operator, the rest of
    "12 000"), after a symbol (an operator), and in "12 x 8" (an operator word between two numbers)."""
    if last[-1:].isdigit() or not _SPEAKABLE.search(last):
        return True
    return before_last[-1:].isdigit() and next_char.isdigit()


class ClauseSplitter:
    """Incrementally cut streamed text into clean, speakable clauses (one splitter per response)."""

    def __init__(self, min_chars: int = 12, *, first_phrase: bool = True) -> None:
        self.min_chars = min_chars
        self.first_phrase = first_phrase
        self._text = ""  # fed text not yet returned
        self._scan = 0  # where the search for the next cut resumes in ``_text``
        self._first = True  # nothing returned yet since the start (or the last flush)

    def feed(self, delta: str) -> list[str]:
        """Add the next piece of text; returns the clauses it completed (possibly none)."""
        self._text += delta
        clauses: list[str] = []
        while (cut := self._next_cut()) is not None:
            clause, self._text, self._scan = clean_clause(self._text[:cut]), self._text[cut:], 0
            if _SPEAKABLE.search(clause):
                clauses.append(clause)
                self._first = False
        return clauses

    def flush(self) -> list[str]:
        """End of the text: the rest as a last clause (if anything speakable is left)."""
        clause, self._text, self._scan, self._first = clean_clause(self._text), "", 0, True
        return [clause] if _SPEAKABLE.search(clause) else []

    @property
    def _in_first_phrase(self) -> bool:
        """Whether the first-phrase rule applies to the text now waiting: on, and nothing returned yet."""
        return self.first_phrase and self._first

    def _long_enough(self, end: int) -> bool:
        """Whether a clause mark may end the clause ``_text[:end]``: any length for a first phrase."""
        return self._in_first_phrase or len(clean_clause(self._text[:end])) >= self.min_chars

    def _first_words_end(self, space: int, next_word: int) -> bool:
        """Whether the first phrase may end at the word boundary ``_text[space:next_word]``."""
        before = clean_clause(self._text[:space])
        words = before.split()
        if len(words) < FIRST_PHRASE_WORDS or len(before) < FIRST_PHRASE_CHARS:
            return False
        last = words[-1].lstrip(_OPENERS)
        if last.endswith(".") and (last[:-1].lower() in _ABBREVIATIONS or _INITIALISM.fullmatch(last[:-1])):
            return False  # "Prof. | Plum", "J. | R. R. Tolkien"
        return not _said_with_next(last, words[-2] if len(words) > 1 else "", self._text[next_word])

    def _next_cut(self) -> int | None:
        """Index just past the next complete clause in ``_text``, or None when more text is needed to decide."""
        text, i = self._text, self._scan
        while i < len(text):
            ch = text[i]
            if ch == "\n":
                return i + 1
            if ch == _DASH and self._long_enough(i + 1):
                return i + 1
            if ch.isspace() and self._in_first_phrase:
                end = i
                while end < len(text) and text[end].isspace() and text[end] != "\n":
                    end += 1
                if end == len(text):  # the next word decides: wait for it
                    self._scan = i
                    return None
                if text[end] != "\n" and self._first_words_end(i, end):
                    return end
                i = end
                continue
            if ch not in _MARKS:
                i += 1
                continue
            end = i
            while end < len(text) and text[end] in _MARKS:
                end += 1
            while end < len(text) and text[end] in _CLOSERS:
                end += 1
            if end == len(text):  # the next character decides: wait for it
                self._scan = i
                return None
            if text[end].isspace():
                marks = text[i:end]
                if any(m in _SENTENCE_ENDS for m in marks):
                    if _ends_sentence(text[:i], marks):
                        return end
                elif self._long_enough(end):
                    return end
            i = end
        self._scan = len(text)
        return None


def _ends_sentence(before: str, marks: str) -> bool:
    """Whether sentence-end ``marks`` after ``before`` (and before whitespace) really end a sentence."""
    if not _LETTER.search(before):  # "1." opening a numbered list item, or a bare number
        return False
    if marks[0] != "." or marks.startswith(".."):  # "!", "?", "…" and "..." always end one
        return True
    word = before.rsplit(None, 1)[-1].lstrip(_OPENERS) if before.strip() else ""
    return word.lower() not in _ABBREVIATIONS and not _INITIALISM.fullmatch(word)
