"""The streaming ``<code>`` call scanner: cuts a model's token stream into speakable text and tool calls.

Text outside call blocks is released at once, holding back only the shortest tail that could still begin a block
opener (``<code>`` or a ```` ```python ```` fence). Inside a block a small lexer tracks string literals, comments
and bracket depth, so a ``</code>``, ``)`` or quote inside a string never ends a block or a call. A call is
emitted by the :meth:`CodeCallStream.feed` that completes it. Every decision depends on the characters alone, never
on where the chunks were cut, so any chunking yields the same events as :func:`parse_code_calls` on the whole text.

A ```` ```python ```` fence counts as a call block only when its first statement is a call to a known tool; any
other fence is ordinary text and is passed through verbatim. Tool syntax never reaches a :class:`TextDelta`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from enum import Enum, auto

from voxcall.tools.calls import ToolCall
from voxcall.tools.codecalls.events import CodeCallEvent, CodeCallResult, RejectedCall, TextDelta
from voxcall.tools.codecalls.segments import Segment, ToolIndex, parse_segment, segment_is_call
from voxcall.tools.schema import Tool

OPEN_TAG = "<code>"
CLOSE_TAG = "</code>"
FENCE = "```"
FENCE_TAGS = frozenset({"python", "py", "python3", "tool_code", "tool_call"})

_EARLY_PARSE_LIMIT = 4000  # longer segments are parsed only when they end, keeping the cost linear

_TEXT_SPECIAL = re.compile(r"[<`]")
_FENCE_OPEN = re.compile(r"```([A-Za-z0-9_]{0,16})[ \t]*\n")
_FENCE_PARTIAL = re.compile(r"`{1,3}\Z|```([A-Za-z0-9_]{0,16})([ \t]*)\Z")
_NORMAL_SPECIAL = re.compile(r"[\"'#()\[\]{}\n;<`]")
_COMMENT_SPECIAL = re.compile(r"[\n<`]")
_STRING_SPECIAL = re.compile(r"[\\\"'\n<`]")
_FENCE_TEXT_SPECIAL = re.compile(r"`")


class _Mode(Enum):
    TEXT = auto()  # prose, released at once
    BLOCK = auto()  # inside <code>…</code>
    FENCE = auto()  # inside a ```python fence, not yet known to hold calls
    FENCE_CALLS = auto()  # a fence whose first statement called a known tool
    FENCE_TEXT = auto()  # a fence of ordinary code: passed through as text


class CodeCallStream:
    """Incremental parser: ``feed(chunk)`` and ``close()`` return :class:`TextDelta`, ``ToolCall`` and
    :class:`RejectedCall` events in the order they occur in the text."""

    def __init__(self, tools: Iterable[Tool] | ToolIndex) -> None:
        self._index = tools if isinstance(tools, ToolIndex) else ToolIndex(tools)
        self._pending = ""  # input not yet decided (at most a few characters, or a held string tail)
        self._mode = _Mode.TEXT
        self._events: list[CodeCallEvent] = []
        self._text: list[str] = []
        self._closed = False
        self._fence_opener = ""
        self._fence_raw: list[str] = []
        self._closer = CLOSE_TAG
        self._reset_lexer()

    # -- public API -------------------------------------------------------------------------------------------

    def feed(self, chunk: str) -> list[CodeCallEvent]:
        """Consume the next piece of model output; return the events it completes."""
        if self._closed:
            raise RuntimeError("feed() after close()")
        if (self._mode is _Mode.TEXT and not self._pending and "<" not in chunk and "`" not in chunk):
            return [TextDelta(chunk)] if chunk else []  # the common case: plain prose
        self._pending += chunk
        self._run(final=False)
        return self._drain()

    def close(self) -> list[CodeCallEvent]:
        """End of stream: release held text and settle an unclosed block (never as text)."""
        if self._closed:
            return []
        self._closed = True
        self._run(final=True)
        while self._mode is not _Mode.TEXT:
            self._finish_block(final=True)
        return self._drain()

    # -- event plumbing ---------------------------------------------------------------------------------------

    def _say(self, text: str) -> None:
        if text:
            self._text.append(text)

    def _emit(self, events: Iterable[ToolCall | RejectedCall]) -> None:
        for event in events:
            self._flush_text()
            self._events.append(event)

    def _flush_text(self) -> None:
        if self._text:
            self._events.append(TextDelta("".join(self._text)))
            self._text.clear()

    def _drain(self) -> list[CodeCallEvent]:
        self._flush_text()
        events, self._events = self._events, []
        return events

    # -- the scanner ------------------------------------------------------------------------------------------

    def _run(self, *, final: bool) -> None:
        """Scan ``_pending`` as far as the characters allow, switching modes as blocks open and close."""
        s, i = self._pending, 0
        while i < len(s):
            mode = self._mode
            if mode is _Mode.TEXT:
                j = self._scan_text(s, i, final)
            elif mode is _Mode.FENCE_TEXT:
                j = self._scan_fence_text(s, i, final)
            else:
                j = self._scan_block(s, i, final)
            if j < 0:  # a string was reopened as text: the scanner handed back new input
                s, i = self._pending, 0
                continue
            if j == i and mode is self._mode:
                break  # waiting for more input
            i = j
        self._pending = s[i:]

    def _scan_text(self, s: str, i: int, final: bool) -> int:
        while i < len(s):
            m = _TEXT_SPECIAL.search(s, i)
            if m is None:
                self._say(s[i:])
                return len(s)
            j = m.start()
            self._say(s[i:j])
            if s.startswith(OPEN_TAG, j):
                self._open_block(_Mode.BLOCK, CLOSE_TAG)
                return j + len(OPEN_TAG)
            if s.startswith(CLOSE_TAG, j):  # a stray closer is tool syntax too: drop it
                i = j + len(CLOSE_TAG)
                continue
            if s[j] == "<":
                if not final and (OPEN_TAG.startswith(s[j:]) or CLOSE_TAG.startswith(s[j:])):
                    return j
                self._say("<")
                i = j + 1
                continue
            fence = _FENCE_OPEN.match(s, j)
            if fence and fence.group(1).lower() in FENCE_TAGS:
                self._fence_opener = fence.group(0)
                self._open_block(_Mode.FENCE, FENCE)
                return fence.end()
            partial = _FENCE_PARTIAL.match(s, j)
            if partial and _could_open_fence(partial):
                if not final:
                    return j
                if (partial.group(1) or "").lower() in FENCE_TAGS:
                    return len(s)  # an empty call fence cut off by the end of the stream: nothing to say
            self._say("`")
            i = j + 1
        return i

    def _scan_fence_text(self, s: str, i: int, final: bool) -> int:
        """Pass an ordinary code fence through as text until its closing backticks."""
        while i < len(s):
            m = _FENCE_TEXT_SPECIAL.search(s, i)
            if m is None:
                self._say(s[i:])
                return len(s)
            j = m.start()
            self._say(s[i:j])
            if s.startswith(FENCE, j):
                self._say(FENCE)
                self._mode = _Mode.TEXT
                return j + len(FENCE)
            if not final and FENCE.startswith(s[j:]):
                return j
            self._say("`")
            i = j + 1
        return i

    # -- inside a block ---------------------------------------------------------------------------------------

    def _open_block(self, mode: _Mode, closer: str) -> None:
        self._mode = mode
        self._closer = closer
        self._fence_raw = []
        self._reset_lexer()

    def _reset_lexer(self) -> None:
        self._seg: list[str] = []
        self._seg_len = 0
        self._depth = 0
        self._quote: str | None = None
        self._comment = False
        self._closer_in_string = -1  # offset in the segment of a closer seen inside the current string

    def _keep(self, text: str) -> None:
        self._seg.append(text)
        self._seg_len += len(text)

    def _scan_block(self, s: str, i: int, final: bool) -> int:
        """Lex block content from ``s[i:]``; return where scanning stopped (or -1 after handing input back)."""
        mode = self._mode
        while i < len(s) and self._mode is mode:
            if self._quote is not None:
                j = self._lex_string(s, i, final)
            elif self._comment:
                j = self._lex_comment(s, i, final)
            else:
                j = self._lex_normal(s, i, final)
            if j == i:
                return i
            i = j
        return i

    def _at_closer(self, s: str, j: int, final: bool) -> bool | None:
        """True at a block closer, None when the input ends in a prefix of one (wait), else False."""
        if s.startswith(self._closer, j):
            return True
        if not final and self._closer.startswith(s[j:]):
            return None
        return False

    def _lex_normal(self, s: str, i: int, final: bool) -> int:
        m = _NORMAL_SPECIAL.search(s, i)
        if m is None:
            self._keep(s[i:])
            return len(s)
        j = m.start()
        self._keep(s[i:j])
        c = s[j]
        if c in "<`":
            closer = self._at_closer(s, j, final)
            if closer is None:
                return j
            if closer:
                self._finish_block(final=False)
                return j + len(self._closer)
            self._keep(c)
        elif c in "'\"":
            rest = s[j:j + 3]
            if not final and len(rest) < 3 and rest == c * len(rest):
                return j  # '' or ''' ? wait for the next character
            self._quote = c * 3 if rest == c * 3 else c
            self._closer_in_string = -1
            self._keep(self._quote)
            return j + len(self._quote)
        elif c == "#":
            self._comment = True
            self._keep(c)
        elif c in "([{":
            self._depth += 1
            self._keep(c)
        elif c in ")]}":
            self._depth = max(0, self._depth - 1)
            self._keep(c)
            if self._depth == 0 and c != "}" and self._seg_len < _EARLY_PARSE_LIMIT:
                segment = Segment.parse("".join(self._seg))
                if segment.module is not None:
                    self._end_segment(segment)
        else:  # newline or ';'
            self._keep(c)
            if self._depth == 0:
                self._end_segment()
        return j + 1

    def _lex_comment(self, s: str, i: int, final: bool) -> int:
        m = _COMMENT_SPECIAL.search(s, i)
        if m is None:
            self._keep(s[i:])
            return len(s)
        j = m.start()
        self._keep(s[i:j])
        if s[j] == "\n":
            self._comment = False  # the newline itself is lexed as code
            return self._lex_normal(s, j, final)
        closer = self._at_closer(s, j, final)
        if closer is None:
            return j
        if closer:
            self._finish_block(final=False)
            return j + len(self._closer)
        self._keep(s[j])
        return j + 1

    def _lex_string(self, s: str, i: int, final: bool) -> int:
        quote = self._quote or ""
        m = _STRING_SPECIAL.search(s, i)
        if m is None:
            self._keep(s[i:])
            return len(s)
        j = m.start()
        self._keep(s[i:j])
        c = s[j]
        if c == "\\":
            if j + 1 >= len(s) and not final:
                return j
            self._keep(s[j:j + 2])
            return j + 2
        if c == quote[0]:
            if len(quote) == 1 or s.startswith(quote, j):
                self._keep(quote)
                self._quote = None
                return j + len(quote)
            rest = s[j:j + 3]
            if not final and rest == c * len(rest):
                return j
            self._keep(c)
            return j + 1
        if c == "\n" and len(quote) == 1:
            # A one-line string cannot hold a newline: the literal was broken (``'it's'``). If a closer was
            # seen inside it, the block really ended there; otherwise lex on after the broken literal.
            if self._closer_in_string >= 0:
                return self._reopen_after_string_closer(s[j:])
            self._quote = None
            return self._lex_normal(s, j, final)
        if c in "<`":
            closer = self._at_closer(s, j, final)
            if closer is None:
                return j
            if closer:
                if self._closer_in_string < 0:
                    self._closer_in_string = self._seg_len
                self._keep(self._closer)
                return j + len(self._closer)
        self._keep(c)
        return j + 1

    def _reopen_after_string_closer(self, unread: str) -> int:
        """End the block at the closer found inside a broken string; hand what followed it back as input."""
        text = "".join(self._seg)
        cut = self._closer_in_string
        self._seg, self._seg_len = [text[:cut]], cut
        self._quote = None
        self._finish_block(final=False)
        self._pending = text[cut + len(self._closer):] + unread
        return -1

    def _end_segment(self, segment: Segment | None = None) -> None:
        """The current segment is complete: emit its calls (or, in an undecided fence, decide what it is)."""
        raw = "".join(self._seg)
        self._seg, self._seg_len = [], 0
        self._depth, self._quote, self._comment, self._closer_in_string = 0, None, False, -1
        if segment is None:
            segment = Segment.parse(raw)
        if self._mode is _Mode.FENCE:
            verdict = segment_is_call(segment, self._index)
            if verdict is None:
                self._fence_raw.append(raw)
                return
            if not verdict:
                self._say(self._fence_opener + "".join(self._fence_raw) + raw)
                self._fence_raw = []
                self._mode = _Mode.FENCE_TEXT
                return
            self._mode = _Mode.FENCE_CALLS
        self._emit(parse_segment(segment, self._index))

    def _finish_block(self, *, final: bool) -> None:
        """The block ended (closer or end of stream): settle its last segment and return to text."""
        if final and self._quote is not None and self._closer_in_string >= 0:
            self._reopen_after_string_closer("")
            self._run(final=True)
            return
        if self._mode is not _Mode.FENCE_TEXT:
            self._end_segment()  # may find that an undecided fence is ordinary code
        if not final and self._mode is _Mode.FENCE_TEXT:
            self._say(FENCE)
        self._mode = _Mode.TEXT


def _could_open_fence(partial: re.Match[str]) -> bool:
    """Whether a fence start cut off by the end of the input could still become a call fence opener."""
    tag = (partial.group(1) or "").lower()
    if partial.group(2):
        return tag in FENCE_TAGS
    return any(t.startswith(tag) for t in FENCE_TAGS)


def parse_code_calls(text: str, tools: Iterable[Tool] | ToolIndex) -> CodeCallResult:
    """Parse a whole reply: the speakable text, the valid calls and the rejected calls."""
    stream = CodeCallStream(tools)
    return CodeCallResult.of([*stream.feed(text), *stream.close()])
