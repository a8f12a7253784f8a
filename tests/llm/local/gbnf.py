"""Checking grammars (test helper): whether llama.cpp parses a GBNF grammar, and whether a grammar admits a text.

*Parses*: llama.cpp itself decides, through a small server of the prebuilt engine on SmolLM2's GGUF (a request
under a grammar llama.cpp cannot parse is refused with 400). *Admits*: a recogniser of GBNF written here, since
llama.cpp's server cannot be made to generate a given text: rules, literals with escapes, character classes
(ranges, negation), groups, alternatives and the ``*``, ``+``, ``?`` and ``{m,n}`` repetitions, matched
character by character as llama.cpp's grammar engine matches the bytes of the tokens it allows.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

import httpx2

from voxcall.llm.local.embedded import EmbeddedServer, ServerOptions
from voxcall.llm.local.llamacpp import default_model_path

_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", '"': '"', "\\": "\\", "[": "[", "]": "]", "-": "-", "^": "^"}


@dataclass(frozen=True)
class Chars:
    """One character in ``ranges`` (or, ``negated``, not in them)."""

    ranges: tuple[tuple[str, str], ...]
    negated: bool

    def admits(self, char: str) -> bool:
        inside = any(low <= char <= high for low, high in self.ranges)
        return inside != self.negated


@dataclass(frozen=True)
class Ref:
    name: str


@dataclass(frozen=True)
class Seq:
    items: tuple[Node, ...]


@dataclass(frozen=True)
class Alt:
    options: tuple[Node, ...]


@dataclass(frozen=True)
class Repeat:
    node: Node
    least: int
    most: int | None


Node = str | Chars | Ref | Seq | Alt | Repeat
"""A grammar's expression; a ``str`` is a literal."""


_COMMENT = re.compile(r'("(?:[^"\\]|\\.)*"|\[(?:[^\]\\]|\\.)*\])|#[^\n]*')


class _Parser:
    """GBNF text to rules (:data:`Node` per name)."""

    def __init__(self, text: str) -> None:
        self.text = _COMMENT.sub(lambda m: m.group(1) or "", text)  # not a "#" inside a literal or a class
        self.at = 0

    def rules(self) -> dict[str, Node]:
        rules: dict[str, Node] = {}
        self.space(newlines=True)
        while self.at < len(self.text):
            name = self.name()
            self.space()
            assert self.text.startswith("::=", self.at), f"'::=' expected at {self.at}"
            self.at += 3
            rules[name] = self.alternatives()
            self.space(newlines=True)
        return rules

    def space(self, *, newlines: bool = False) -> None:
        blanks = " \t\r\n" if newlines else " \t"
        while self.at < len(self.text) and (self.text[self.at] in blanks or (
                self.text[self.at] == "\n" and self._continues())):
            self.at += 1

    def _continues(self) -> bool:
        """A newline inside a rule: the next line does not start a new rule (``name ::=``)."""
        rest = self.text[self.at + 1:]
        return not re.match(r"\s*[a-zA-Z0-9_-]+\s*::=", rest) and bool(rest.strip())

    def name(self) -> str:
        match = re.compile(r"[a-zA-Z0-9_-]+").match(self.text, self.at)
        assert match, f"a rule name expected at {self.at}: {self.text[self.at:self.at + 20]!r}"
        self.at = match.end()
        return match.group()

    def alternatives(self) -> Node:
        options = [self.sequence()]
        while self.peek() == "|":
            self.at += 1
            options.append(self.sequence())
        return options[0] if len(options) == 1 else Alt(tuple(options))

    def peek(self) -> str:
        self.space()
        return self.text[self.at] if self.at < len(self.text) else ""

    def sequence(self) -> Node:
        items: list[Node] = []
        while (char := self.peek()) and char not in "|)\n":
            items.append(self.postfix(self.atom()))
        return items[0] if len(items) == 1 else Seq(tuple(items))

    def atom(self) -> Node:
        char = self.text[self.at]
        if char == '"':
            return self.literal()
        if char == "[":
            return self.chars()
        if char == "(":
            self.at += 1
            node = self.alternatives()
            assert self.peek() == ")", f"')' expected at {self.at}"
            self.at += 1
            return node
        return Ref(self.name())

    def escaped(self) -> str:
        char = self.text[self.at]
        self.at += 1
        if char != "\\":
            return char
        code = self.text[self.at]
        self.at += 1
        if code in "xuU":
            width = {"x": 2, "u": 4, "U": 8}[code]
            value = chr(int(self.text[self.at:self.at + width], 16))
            self.at += width
            return value
        return _ESCAPES[code]

    def literal(self) -> str:
        self.at += 1
        chars = []
        while self.text[self.at] != '"':
            chars.append(self.escaped())
        self.at += 1
        return "".join(chars)

    def chars(self) -> Chars:
        self.at += 1
        negated = self.text[self.at] == "^"
        self.at += negated
        ranges: list[tuple[str, str]] = []
        while self.text[self.at] != "]":
            low = self.escaped()
            high = low
            if self.text[self.at] == "-" and self.text[self.at + 1] != "]":
                self.at += 1
                high = self.escaped()
            ranges.append((low, high))
        self.at += 1
        return Chars(tuple(ranges), negated)

    def postfix(self, node: Node) -> Node:
        while self.peek() and self.text[self.at] in "*+?{":  # blanks may come before the operator
            mark = self.text[self.at]
            self.at += 1
            if mark == "*":
                node = Repeat(node, 0, None)
            elif mark == "+":
                node = Repeat(node, 1, None)
            elif mark == "?":
                node = Repeat(node, 0, 1)
            else:
                end = self.text.index("}", self.at)
                low, _, high = self.text[self.at:end].partition(",")
                most = int(low) if "," not in self.text[self.at:end] else (int(high) if high.strip() else None)
                node = Repeat(node, int(low), most)
                self.at = end + 1
        return node


class Recogniser:
    """Whether a text is a sentence of a GBNF grammar (rule ``root``)."""

    def __init__(self, grammar: str) -> None:
        self.rules = _Parser(grammar).rules()

    def admits(self, text: str) -> bool:
        @functools.cache
        def ends(node: Node, at: int) -> frozenset[int]:
            """Where a match of ``node`` starting at ``at`` can end."""
            if isinstance(node, str):
                return frozenset({at + len(node)}) if text.startswith(node, at) else frozenset()
            if isinstance(node, Chars):
                return frozenset({at + 1}) if at < len(text) and node.admits(text[at]) else frozenset()
            if isinstance(node, Ref):
                return ends(self.rules[node.name], at)
            if isinstance(node, Alt):
                return frozenset().union(*(ends(option, at) for option in node.options))
            if isinstance(node, Seq):
                positions = frozenset({at})
                for item in node.items:
                    positions = frozenset().union(*(ends(item, p) for p in positions))
                return positions
            found = {at} if node.least == 0 else set()
            current, seen, count = {at}, {at}, 0
            while current and (node.most is None or count < node.most):
                reached = set().union(*(ends(node.node, p) for p in current))
                count += 1
                if count >= node.least:
                    found |= reached
                current = reached - seen if node.most is None and count >= node.least else reached
                seen |= reached
            return frozenset(found)

        return len(text) in ends(Ref("root"), 0)


class GrammarChecker:
    """Answers whether llama.cpp parses a grammar, and whether a grammar lets a text be generated."""

    def __init__(self) -> None:
        self._server = EmbeddedServer(default_model_path(), ServerOptions(n_ctx=256, slots=1, cache_mib=0))
        self._client = httpx2.Client(base_url=self._server.url, transport=self._server.sync_transport())

    def parses(self, grammar: str) -> bool:
        answer = self._client.post("/completion", json={"prompt": [1], "n_predict": 0, "grammar": grammar})
        return answer.status_code == 200

    def accepts(self, grammar: str, text: str) -> bool:
        """Whether ``text`` is whole under ``grammar`` (the grammar must parse)."""
        assert self.parses(grammar), "the grammar does not parse"
        return Recogniser(grammar).admits(text)

    def close(self) -> None:
        self._client.close()
        self._server.close()
