"""The streaming call scanner for a model's own tool format: cuts its token stream into speakable text and calls.

The sibling of :class:`~voxcall.tools.codecalls.stream.CodeCallStream` for the formats of
:mod:`voxcall.tools.codecalls.formats` (``<tool_call>{…}</tool_call>``, ``[TOOL_CALLS][…]`` …), with the same
events and the same guarantees. Text outside call blocks is released at once, holding back only the shortest
tail that could still begin an opener (or a closer, which is dropped when stray). Inside a block a small lexer
tracks strings (JSON's ``"…"`` with backslash escapes, or FunctionGemma's ``<escape>…<escape>``) and bracket depth,
so a closer inside a string never ends a block; a block without a closer ends with its JSON value's last
bracket. A block's calls are emitted by the :meth:`FormatCallStream.feed` that completes it, and a block cut off
by the end of the stream is settled as calls or rejections, never as text. Every decision depends on the
characters alone, never on where the chunks were cut, so any chunking yields the same events.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from enum import Enum, auto

from voxcall.tools.calls import ToolCall
from voxcall.tools.codecalls.events import CodeCallEvent, CodeCallResult, RejectedCall, TextDelta
from voxcall.tools.codecalls.formats import ToolFormat
from voxcall.tools.codecalls.segments import ToolIndex
from voxcall.tools.schema import Tool

_BLANKS = " \t\r\n"
_BRACKETS = "{}[]"


class _Mode(Enum):
    TEXT = auto()  # prose, released at once
    BODY = auto()  # inside a call block


class FormatCallStream:
    """Incremental parser of one reply in ``tool_format``: ``feed(chunk)`` and ``close()`` return
    :class:`TextDelta`, ``ToolCall`` and :class:`RejectedCall` events in the order they occur in the text.

    Calls are checked against ``tools`` by their own names (the model was shown them natively)."""

    def __init__(self, tool_format: ToolFormat, tools: Iterable[Tool] | ToolIndex) -> None:
        self.format = tool_format
        self._index = tools if isinstance(tools, ToolIndex) else ToolIndex(tools, native=True)
        delimiter = tool_format.string_delimiter
        self._markers = (*tool_format.openers, *([tool_format.closer] if tool_format.closer else []))
        self._text_special = re.compile("[" + re.escape("".join({m[0] for m in self._markers})) + "]")
        body_special = {*_BRACKETS, delimiter[0], *(tool_format.closer[:1])}
        self._body_special = re.compile("[" + re.escape("".join(sorted(body_special))) + "]")
        self._string_special = re.compile(r'[\\"]') if delimiter == '"' else None
        self._pending = ""
        self._mode = _Mode.TEXT
        self._at_start = bool(tool_format.at_start)  # nothing but blanks so far: ``at_start`` may open a block
        self._events: list[CodeCallEvent] = []
        self._text: list[str] = []
        self._closed = False
        self._reset_body()

    # -- public API -------------------------------------------------------------------------------------------

    def feed(self, chunk: str) -> list[CodeCallEvent]:
        """Consume the next piece of model output; return the events it completes."""
        if self._closed:
            raise RuntimeError("feed() after close()")
        self._pending += chunk
        self._run(final=False)
        return self._drain()

    def close(self) -> list[CodeCallEvent]:
        """End of stream: release held text and settle an unclosed block (never as text)."""
        if self._closed:
            return []
        self._closed = True
        self._run(final=True)
        if self._mode is _Mode.BODY:
            self._finish_body()
        return self._drain()

    # -- event plumbing ---------------------------------------------------------------------------------------

    def _say(self, text: str) -> None:
        if text:
            self._text.append(text)
            if self._at_start and text.strip(_BLANKS):
                self._at_start = False

    def _drain(self) -> list[CodeCallEvent]:
        if self._text:
            self._events.append(TextDelta("".join(self._text)))
            self._text.clear()
        events, self._events = self._events, []
        return events

    # -- the scanner ------------------------------------------------------------------------------------------

    def _run(self, *, final: bool) -> None:
        s, i = self._pending, 0
        while i < len(s):
            mode = self._mode
            j = self._scan_text(s, i, final) if mode is _Mode.TEXT else self._scan_body(s, i, final)
            if j == i and mode is self._mode:
                break  # waiting for more input
            i = j
        self._pending = s[i:]

    def _scan_text(self, s: str, i: int, final: bool) -> int:
        if self._at_start:
            k = i
            while k < len(s) and s[k] in _BLANKS:
                k += 1
            if k == len(s):
                if not final:
                    return i  # blanks only: what follows decides
                self._say(s[i:])
                return len(s)
            if s[k] == self.format.at_start:
                self._at_start = False
                self._mode = _Mode.BODY  # the character belongs to the body; the blanks before it are dropped
                return k
        while i < len(s):
            m = self._text_special.search(s, i)
            if m is None:
                self._say(s[i:])
                return len(s)
            j = m.start()
            self._say(s[i:j])
            opener = next((o for o in self.format.openers if s.startswith(o, j)), None)
            if opener is not None:
                self._mode = _Mode.BODY
                self._at_start = False
                return j + len(opener)
            if self.format.closer and s.startswith(self.format.closer, j):  # a stray closer is syntax: drop it
                i = j + len(self.format.closer)
                continue
            if not final and any(marker.startswith(s[j:]) for marker in self._markers):
                return j
            self._say(s[j])
            i = j + 1
        return i

    # -- inside a block ---------------------------------------------------------------------------------------

    def _reset_body(self) -> None:
        self._body: list[str] = []
        self._depth = 0
        self._in_string = False

    def _scan_body(self, s: str, i: int, final: bool) -> int:
        """Lex block content from ``s[i:]``; return where scanning stopped."""
        closer, delimiter = self.format.closer, self.format.string_delimiter
        while i < len(s) and self._mode is _Mode.BODY:
            if self._in_string:
                j = self._lex_string(s, i, final)
                if j == i:
                    return i
                i = j
                continue
            m = self._body_special.search(s, i)
            if m is None:
                self._body.append(s[i:])
                return len(s)
            j = m.start()
            self._body.append(s[i:j])
            if closer and s.startswith(closer, j):
                self._finish_body()
                return j + len(closer)
            if s.startswith(delimiter, j):
                self._in_string = True
                self._body.append(delimiter)
                i = j + len(delimiter)
                continue
            if not final and (closer.startswith(s[j:]) or delimiter.startswith(s[j:])):
                return j
            c = s[j]
            self._body.append(c)
            i = j + 1
            if c in "{[":
                self._depth += 1
            elif c in "}]":
                self._depth = max(0, self._depth - 1)
                if self._depth == 0 and not closer:
                    self._finish_body()  # the block's JSON value is complete
        return i

    def _lex_string(self, s: str, i: int, final: bool) -> int:
        """Lex inside a string from ``s[i:]``: up to and including its end, or as far as the input allows."""
        if self._string_special is not None:  # JSON: "…" with backslash escapes
            m = self._string_special.search(s, i)
            if m is None:
                self._body.append(s[i:])
                return len(s)
            j = m.start()
            if s[j] == "\\":
                if j + 1 >= len(s) and not final:
                    self._body.append(s[i:j])
                    return j
                self._body.append(s[i:j + 2])
                return j + 2
            self._body.append(s[i:j + 1])
            self._in_string = False
            return j + 1
        delimiter = self.format.string_delimiter
        j = s.find(delimiter, i)
        if j >= 0:
            self._body.append(s[i:j + len(delimiter)])
            self._in_string = False
            return j + len(delimiter)
        held = 0 if final else next((k for k in range(len(delimiter) - 1, 0, -1) if s.endswith(delimiter[:k])), 0)
        self._body.append(s[i:len(s) - held])
        return len(s) - held

    def _finish_body(self) -> None:
        """The block ended (closer, last bracket or end of stream): emit its calls and return to text."""
        events: list[ToolCall | RejectedCall] = self.format.decode("".join(self._body), self._index)
        if events and self._text:
            self._events.append(TextDelta("".join(self._text)))
            self._text.clear()
        self._events.extend(events)
        self._reset_body()
        self._mode = _Mode.TEXT


def parse_format_calls(text: str, tool_format: ToolFormat, tools: Iterable[Tool] | ToolIndex) -> CodeCallResult:
    """Parse a whole reply in ``tool_format``: the speakable text, the valid calls and the rejected calls."""
    stream = FormatCallStream(tool_format, tools)
    return CodeCallResult.of([*stream.feed(text), *stream.close()])
