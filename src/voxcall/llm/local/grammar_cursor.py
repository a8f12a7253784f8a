"""``GrammarCursor``: a place in a GBNF grammar (llama.cpp's format) after some text: the text every continuation
must begin with there (what the grammar *forces*), and the grammar of what may follow.

Why: most of a call written under a grammar is text no choice of the model's can change: the rest of a tool's
name once its first token told the tools apart, ``(order_number='`` before the value, ``')</code>`` after it.
Sampled, each such token costs a decoding step (about 90 ms for the 0.5B model on two cores); handed to the
server as prompt, a few of them cost about as much as one (jump-forward decoding). The reply driver
(:mod:`voxcall.llm.local.driver`) follows each run under a grammar with a cursor and jumps over the forced text;
the server, whose grammar starts from its root with each request, is then sent the grammar of the rest.

How: the grammar is read into rules whose alternatives are sequences of character sets and references to rules
(a group, an option or a repetition becomes a rule of its own, as llama.cpp reads it). A cursor is the set of
stacks llama.cpp's sampler would hold after the same text: each stack the places to go on from, the innermost
last, each top a character set; an empty stack means the grammar may end there. A character is forced when every
stack's top admits it and nothing else, and no stack may end. The grammar of the rest has a root whose
alternatives are the stacks, each the rest of its places' sequences, innermost first, and the rules they refer to.

Only what voxcall's grammars use is read (rules, literals, character classes, ``.``, groups, ``|``, ``*``, ``+``,
``?``, ``{m,n}``, comments); anything else (token references, left recursion) raises :class:`GrammarSyntaxError`,
and the driver then samples every token as before.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

MAX_STACK = 256
"""Places on one stack before the grammar is taken for left-recursive (llama.cpp refuses those too)."""

_NAME = re.compile(r"[A-Za-z0-9_-]+")
_ESCAPES = {"n": "\n", "r": "\r", "t": "\t", "\\": "\\", '"': '"', "'": "'", "[": "[", "]": "]", "-": "-", "^": "^",
            "/": "/"}
_HEX_DIGITS = {"x": 2, "u": 4, "U": 8}


class GrammarSyntaxError(ValueError):
    """A grammar this module does not read."""


@dataclass(frozen=True, slots=True)
class Chars:
    """A character set: ``ranges`` of code points, inclusive, or every character but them (``negated``)."""

    ranges: tuple[tuple[int, int], ...]
    negated: bool = False

    def admits(self, char: str) -> bool:
        point = ord(char)
        return any(low <= point <= high for low, high in self.ranges) != self.negated

    def only(self) -> str | None:
        """The one character the set admits, if it admits one only."""
        if self.negated or len(self.ranges) != 1 or self.ranges[0][0] != self.ranges[0][1]:
            return None
        return chr(self.ranges[0][0])

    def gbnf(self) -> str:
        """The set as a GBNF character class (or a one-character literal)."""
        if (char := self.only()) is not None:
            return _literal(char)
        body = "".join(_class_char(low) if low == high else f"{_class_char(low)}-{_class_char(high)}"
                       for low, high in self.ranges)
        return f"[{'^' if self.negated else ''}{body}]"


Element = Chars | int
"""A character set to match, or the index of a rule to go through."""
Place = tuple[int, int, int]
"""A rule, one of its alternatives, and the index of the next element of it."""
Stack = tuple[Place, ...]


@dataclass(frozen=True, slots=True)
class Rules:
    """A grammar read: each rule's alternatives (sequences of elements), its name, and the root's index."""

    alternatives: tuple[tuple[tuple[Element, ...], ...], ...]
    names: tuple[str, ...]
    root: int


class _Reader:
    """Reads GBNF text into :class:`Rules` (a recursive descent over llama.cpp's syntax)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.at = 0
        self.bodies: list[list[tuple[Element, ...]] | None] = []
        self.names: list[str] = []
        self.index: dict[str, int] = {}

    def read(self) -> Rules:
        self._space(newlines=True)
        while self.at < len(self.text):
            name = self._name()
            self._space()
            if not self.text.startswith("::=", self.at):
                raise GrammarSyntaxError(f"expected ::= after {name!r}")
            self.at += 3
            self._space(newlines=True)
            rule = self._rule(name)
            if self.bodies[rule] is not None:
                raise GrammarSyntaxError(f"rule {name!r} is defined twice")
            self.bodies[rule] = self._alternatives(nested=False)
            self._space(newlines=True)
        missing = [name for name, body in zip(self.names, self.bodies, strict=True) if body is None]
        if missing or "root" not in self.index:
            raise GrammarSyntaxError(f"undefined rules: {missing or ['root']}")
        bodies = tuple(tuple(body or ()) for body in self.bodies)
        return Rules(bodies, tuple(self.names), self.index["root"])

    def _rule(self, name: str) -> int:
        if name not in self.index:
            self.index[name] = len(self.names)
            self.names.append(name)
            self.bodies.append(None)
        return self.index[name]

    def _anonymous(self, hint: str, alternatives: list[tuple[Element, ...]]) -> int:
        rule = self._fresh(hint)
        self.bodies[rule] = alternatives
        return rule

    def _fresh(self, hint: str) -> int:
        """A new rule for a group, an option or a repetition (a rule of that name defined later is refused as
        defined twice)."""
        name = next(f"{hint}-{n}" for n in range(len(self.names), 2 * len(self.names) + 2)
                    if f"{hint}-{n}" not in self.index)
        return self._rule(name)

    def _space(self, *, newlines: bool = False) -> None:
        while self.at < len(self.text):
            char = self.text[self.at]
            if char == "#":
                while self.at < len(self.text) and self.text[self.at] not in "\r\n":
                    self.at += 1
            elif char in " \t" or (newlines and char in "\r\n"):
                self.at += 1
            else:
                return

    def _name(self) -> str:
        match = _NAME.match(self.text, self.at)
        if match is None:
            raise GrammarSyntaxError(f"expected a rule name at {self.at}")
        self.at = match.end()
        return match.group()

    def _alternatives(self, *, nested: bool) -> list[tuple[Element, ...]]:
        alternatives = [self._sequence(nested=nested)]
        while self.at < len(self.text) and self.text[self.at] == "|":
            self.at += 1
            self._space(newlines=True)
            alternatives.append(self._sequence(nested=nested))
        return alternatives

    def _sequence(self, *, nested: bool) -> tuple[Element, ...]:
        sequence: list[Element] = []
        last: list[Element] = []  # the last item's elements, which a repetition applies to
        while self.at < len(self.text):
            char = self.text[self.at]
            if char == '"':
                self.at += 1
                last = []
                while self.at < len(self.text) and self.text[self.at] != '"':
                    point = self._char()
                    last.append(Chars(((point, point),)))
                self._expect('"')
            elif char == "[":
                last = [self._class()]
            elif char == ".":
                self.at += 1
                last = [Chars((), negated=True)]
            elif char == "(":
                self.at += 1
                self._space(newlines=True)
                group = self._alternatives(nested=True)
                self._expect(")")
                last = [self._anonymous("group", group)]
            elif _NAME.match(char):
                last = [self._rule(self._name())]
            elif char in "*+?{":
                if not last:
                    raise GrammarSyntaxError(f"a repetition with nothing to repeat at {self.at}")
                del sequence[len(sequence) - len(last):]
                last = self._repeated(tuple(last))
            elif char in "|)\r\n":
                break
            else:
                raise GrammarSyntaxError(f"unexpected {char!r} at {self.at}")
            sequence.extend(last)
            self._space(newlines=nested)
        return tuple(sequence)

    def _repeated(self, item: tuple[Element, ...]) -> list[Element]:
        """``item`` followed by ``*``, ``+``, ``?`` or ``{m,n}`` at the reading place, as elements."""
        char = self.text[self.at]
        self.at += 1
        if char == "*":
            return [self._star(item)]
        if char == "+":
            return [*item, self._star(item)]
        if char == "?":
            return [self._anonymous("option", [item, ()])]
        match = re.compile(r"\s*(\d+)\s*(,\s*(\d*)\s*)?}").match(self.text, self.at)
        if match is None:
            raise GrammarSyntaxError(f"a malformed repetition at {self.at}")
        self.at = match.end()
        least = int(match.group(1))
        most = least if match.group(2) is None else (int(match.group(3)) if match.group(3) else None)
        head = [element for _ in range(least) for element in item]
        if most is None:
            return [*head, self._star(item)]
        if most < least:
            raise GrammarSyntaxError(f"a repetition of at most {most} and at least {least}")
        tail: tuple[Element, ...] = ()
        for _ in range(most - least):
            tail = (self._anonymous("option", [(*item, *tail), ()]),)
        return [*head, *tail]

    def _star(self, item: tuple[Element, ...]) -> int:
        rule = self._fresh("repeat")
        self.bodies[rule] = [(*item, rule), ()]
        return rule

    def _class(self) -> Chars:
        self.at += 1
        negated = self.text.startswith("^", self.at)
        self.at += negated
        ranges: list[tuple[int, int]] = []
        while self.at < len(self.text) and self.text[self.at] != "]":
            low = self._char()
            high = low
            if self.text.startswith("-", self.at) and not self.text.startswith("-]", self.at):
                self.at += 1
                high = self._char()
            ranges.append((low, high))
        self._expect("]")
        return Chars(tuple(ranges), negated)

    def _char(self) -> int:
        """The code point at the reading place, escapes read."""
        if self.at >= len(self.text):
            raise GrammarSyntaxError("the grammar ends inside a literal")
        char = self.text[self.at]
        self.at += 1
        if char != "\\":
            return ord(char)
        escape = self.text[self.at:self.at + 1]
        self.at += 1
        if escape in _HEX_DIGITS:
            digits = self.text[self.at:self.at + _HEX_DIGITS[escape]]
            if len(digits) != _HEX_DIGITS[escape] or not all(d in "0123456789abcdefABCDEF" for d in digits):
                raise GrammarSyntaxError(f"a malformed escape at {self.at}")
            self.at += len(digits)
            return int(digits, 16)
        if escape not in _ESCAPES:
            raise GrammarSyntaxError(f"an unknown escape \\{escape} at {self.at}")
        return ord(_ESCAPES[escape])

    def _expect(self, char: str) -> None:
        if not self.text.startswith(char, self.at):
            raise GrammarSyntaxError(f"expected {char!r} at {self.at}")
        self.at += 1


@functools.lru_cache(maxsize=64)
def read_grammar(text: str) -> Rules:
    """``text`` read into :class:`Rules` (the last grammars read are kept: a reply asks for the same one at each of
    its runs). Raises :class:`GrammarSyntaxError`."""
    return _Reader(text).read()


class GrammarCursor:
    """A place in ``rules`` after some text: the ``stacks`` llama.cpp's sampler would hold there (see the
    module's docstring). Immutable: :meth:`after` gives the place after more text."""

    __slots__ = ("rules", "stacks")

    def __init__(self, rules: Rules, stacks: frozenset[Stack]) -> None:
        self.rules = rules
        self.stacks = stacks

    @classmethod
    def start(cls, grammar: str) -> GrammarCursor:
        """The place before any text of ``grammar``. Raises :class:`GrammarSyntaxError`."""
        rules = read_grammar(grammar)
        stacks: set[Stack] = set()
        for alternative in range(len(rules.alternatives[rules.root])):
            _expand(rules, ((rules.root, alternative, 0),), stacks)
        return cls(rules, frozenset(stacks))

    def after(self, text: str) -> GrammarCursor | None:
        """The place after ``text`` follows this one; None when the grammar does not admit it."""
        stacks = self.stacks
        for char in text:
            following: set[Stack] = set()
            for stack in stacks:
                if stack and self._top(stack).admits(char):
                    rule, alternative, index = stack[-1]
                    _expand(self.rules, (*stack[:-1], (rule, alternative, index + 1)), following)
            if not following:
                return None
            stacks = frozenset(following)
        return GrammarCursor(self.rules, stacks)

    def forced(self, limit: int = 256) -> tuple[str, GrammarCursor]:
        """The text every continuation from here begins with (at most ``limit`` characters; "" where the model
        has a choice, or the grammar may end), and the place after it."""
        forced: list[str] = []
        cursor = self
        while len(forced) < limit and () not in cursor.stacks:
            chars = {cursor._top(stack).only() for stack in cursor.stacks}
            if len(chars) != 1 or (char := chars.pop()) is None:
                break
            forced.append(char)
            ahead = cursor.after(char)
            assert ahead is not None  # every stack admits it
            cursor = ahead
        return "".join(forced), cursor

    def grammar(self) -> str:
        """The GBNF grammar of what may follow this place: its root the stacks' rests (those that share the places
        below their tops written once: the alternatives of a value are one group before the rest of the call), then
        the rules they reach."""
        rules = self.rules
        names = _names(rules)
        tops: dict[Stack, list[str]] = {}  # the stacks by the places below their tops, which they share
        for stack in self.stacks:
            if stack:
                tops.setdefault(stack[:-1], []).append(" ".join(_elements(rules, names, stack[-1:])) or '""')
        rests = sorted(" ".join([sorted(alike)[0] if len(alike) == 1 else f"({' | '.join(sorted(alike))})",
                                 *_elements(rules, names, below)]) for below, alike in tops.items())
        root = " | ".join(rests)
        if () in self.stacks:
            root = f"({root})?"
        reached = _reached(rules, [place for stack in self.stacks for place in stack])
        return "".join([f"root ::= {root}\n", *(f"{names[rule]} ::= {_alternatives(rules, names, rule)}\n"
                                                 for rule in sorted(reached))])

    def _top(self, stack: Stack) -> Chars:
        rule, alternative, index = stack[-1]
        element = self.rules.alternatives[rule][alternative][index]
        assert isinstance(element, Chars)  # stacks are expanded until their tops are character sets
        return element


def _expand(rules: Rules, stack: Stack, into: set[Stack]) -> None:
    """Add to ``into`` the stacks ``stack`` stands for with every top a character set: a finished alternative
    returns to the place below it, a rule's reference becomes each of its alternatives (over the place after the
    reference, unless that ends its alternative: a repetition's stack does not grow)."""
    while stack:
        rule, alternative, index = stack[-1]
        sequence = rules.alternatives[rule][alternative]
        if index == len(sequence):
            stack = stack[:-1]
            continue
        element = sequence[index]
        if isinstance(element, Chars):
            into.add(stack)
            return
        if len(stack) > MAX_STACK:
            raise GrammarSyntaxError("the grammar recurses without reading a character (left recursion)")
        below = stack[:-1] if index + 1 == len(sequence) else (*stack[:-1], (rule, alternative, index + 1))
        for each in range(len(rules.alternatives[element])):
            _expand(rules, (*below, (element, each, 0)), into)
        return
    into.add(())


def _names(rules: Rules) -> list[str]:
    """The rules' names in GBNF: their own, and ``root`` renamed (the grammar of a rest has a root of its own)."""
    taken = set(rules.names)
    renamed = next(f"old-root-{n}" for n in range(len(taken) + 1) if f"old-root-{n}" not in taken)
    return [renamed if name == "root" else name for name in rules.names]


def _elements(rules: Rules, names: list[str], stack: Stack) -> list[str]:
    """What ``stack`` still has to read, innermost place first, as GBNF items (runs of characters as literals)."""
    items: list[str] = []
    run: list[str] = []
    for rule, alternative, index in reversed(stack):
        for element in rules.alternatives[rule][alternative][index:]:
            if isinstance(element, Chars) and (char := element.only()) is not None:
                run.append(char)
                continue
            if run:
                items.append(_literal("".join(run)))
                run = []
            items.append(element.gbnf() if isinstance(element, Chars) else names[element])
    if run:
        items.append(_literal("".join(run)))
    return items


def _alternatives(rules: Rules, names: list[str], rule: int) -> str:
    return " | ".join(" ".join(_elements(rules, names, ((rule, alternative, 0),))) or '""'
                      for alternative in range(len(rules.alternatives[rule])))


def _reached(rules: Rules, places: list[Place]) -> set[int]:
    """The rules referred to from the rest of ``places``' sequences, and from theirs, and so on."""
    reached: set[int] = set()
    pending = [element for rule, alternative, index in places
               for element in rules.alternatives[rule][alternative][index:] if isinstance(element, int)]
    while pending:
        rule = pending.pop()
        if rule in reached:
            continue
        reached.add(rule)
        pending.extend(element for sequence in rules.alternatives[rule] for element in sequence
                       if isinstance(element, int))
    return reached


def _literal(text: str) -> str:
    """``text`` as a GBNF literal."""
    return '"' + "".join(_escaped(ord(char), '"\\') for char in text) + '"'


def _class_char(point: int) -> str:
    """A code point inside a GBNF character class."""
    return _escaped(point, "]\\-^[")


def _escaped(point: int, special: str) -> str:
    char = chr(point)
    if char in special:
        return "\\" + char
    if char == "\n":
        return "\\n"
    if char == "\r":
        return "\\r"
    if char == "\t":
        return "\\t"
    if point < 0x20 or point == 0x7F:
        return f"\\x{point:02X}"
    return char
