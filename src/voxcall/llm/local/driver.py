"""The reply driver: every decision of a local reply, written once for every engine.

:func:`reply_steps` is a generator (the shape of httpx's ``auth_flow``). It yields *steps* and is sent their
answers; an engine only answers them, a sync one on a worker thread (in process), an async one over HTTP
(``llama-server``):

- :class:`Said`: text of the reply, for the stream (answer: None);
- :class:`Opening`: the probability that the next token opens a call (answer: a float);
- :class:`~voxcall.llm.local.lift.Likely`: the probabilities of a few tokens as the next (answer:
  :data:`~voxcall.llm.local.lift.Weights`);
- :class:`Run`: start sampling after a prompt, under a grammar or with tokens banned (answer: the first
  :class:`Token`); then :data:`NEXT` for each following token (answer: the next :class:`Token`). A new ``Run``
  ends the one before.

It returns an :class:`Outcome`. What it decides, from the request's :class:`~voxcall.llm.local.plan.Plan`:

- ``tool_choice`` ``"auto"``: the reply opens a call when the tokens that begin one hold at least the plan's call
  threshold of the probability (or, when the plan has a ``question``, a call the user's words lack a value for,
  says that question and ends; when it has a :class:`~voxcall.llm.local.lift.Lift`, for words unrelated to every
  tool, it opens one only to the tool the words lift, if any); otherwise its first token is the likeliest that
  opens none, and words are then free; should the opener appear in them, the rest is written under the call
  grammar, from the prompt and the reply so far (unless the plan allows no ``late_calls``: then no token that
  begins the opener is sampled at all);
- a forced call: the plan opened the reply already, and the grammar holds from the first token;
- when a call could close and the model's likeliest choice there is a comma, the comma is kept only with enough of
  the probability (:mod:`voxcall.llm.local.optional`); otherwise the call is closed and the rest written under
  the grammar of what follows a call;
- when a call's block closes and the user listed a further value for it, or asked another tool for something
  after it (:mod:`voxcall.llm.local.parallel`), another block is opened for that tool alone, its values taken
  from the words after the first;
- a relayed result (the plan's ``complete``): the prefill is the whole reply, nothing is sampled;
- under a grammar (with the plan's ``jumps``), text the grammar forces is not sampled: all of it but its last token
  is said and added to the prompt (:mod:`voxcall.llm.local.grammar_cursor`), and the run goes on, a token at a
  time, under the grammar of the rest (see :data:`STEP_TOKENS`); the text of a list is held back until the list
  closes, and an item that repeats an earlier one of its list is dropped and the list closed there
  (:mod:`voxcall.llm.local.repeats`: a small model may copy one item until its tokens run out).
"""

from __future__ import annotations

from collections.abc import Generator
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from voxcall.llm.local.grammar import calls_grammar
from voxcall.llm.local.grammar_cursor import GrammarCursor, GrammarSyntaxError
from voxcall.llm.local.lift import Likely, Weights
from voxcall.llm.local.optional import CANDIDATES, CLOSE, COMMA, may_close
from voxcall.llm.local.parallel import NextCall, last_block, next_call
from voxcall.llm.local.repeats import read_lists
from voxcall.tools.codecalls.stream import CLOSE_TAG, OPEN_TAG, parse_code_calls

if TYPE_CHECKING:
    from voxcall.llm.local.plan import Plan
    from voxcall.llm.local.vocabulary import Vocabulary
    from voxcall.tools.schema import Tool

Mask = npt.NDArray[np.bool_]
"""One flag per token of the vocabulary."""
STEP_TOKENS = 1
"""Tokens of a run under a grammar that jumps: one, so that a jump never closes a run the server is still
generating. A server told to stop decodes one or two tokens more (about 90 ms each for the 0.5B model on two
cores) before it takes the next request; a request for one token costs about 5 ms more than the next token of a
stream, and jumped tokens about 8 ms each, read as prompt."""
LIST_CLOSE = "]"
"""What closes a list in a call's text, written where an item repeated (:func:`_repeat_dropped`)."""
MAX_CHARACTER_TOKENS = 4
"""Tokens a run asks for where one token ended no character (a byte of it): a character is at most four bytes."""


@dataclass(frozen=True, slots=True)
class Said:
    """Text the reply says: the prefill, an opener the driver wrote, or what a sampled token adds."""

    text: str


@dataclass(frozen=True, slots=True)
class Opening:
    """Ask for the probability that the token after ``prompt`` is one of ``openers`` (opens a call)."""

    prompt: list[int]
    openers: Mask


@dataclass(frozen=True, slots=True)
class Run:
    """Ask for tokens after ``prompt``, at most ``limit`` of them: under ``grammar`` (GBNF text) when given, else
    none of ``banned``, and for the first token none of ``first_banned`` either; with ``top``, each token with
    that many of the likeliest tokens at its place."""

    prompt: list[int]
    limit: int
    grammar: str | None = None
    banned: Mask | None = None
    first_banned: Mask | None = None
    top: int = 0


@dataclass(frozen=True, slots=True)
class Next:
    """Ask for the run's next token."""


NEXT = Next()


@dataclass(frozen=True, slots=True)
class Token:
    """The answer to a :class:`Run` or :data:`NEXT`: a sampled token's text ("" while its bytes end no character),
    or the end of the reply (``end``: ``"stop"``, the end of the turn; ``"length"``, a full context); when the
    run asked, ``top``: the likeliest tokens at its place, with their probabilities (before any grammar)."""

    text: str = ""
    end: str | None = None
    top: tuple[tuple[int, float], ...] = ()


@dataclass(frozen=True, slots=True)
class Outcome:
    """How the reply ended (``"stop"`` or ``"length"``) and how many tokens were sampled."""

    reason: str
    produced: int


Step = Said | Opening | Likely | Run | Next
Steps = Generator[Step, float | Weights | Token | None, Outcome]
"""A reply's steps: what it yields, what it is sent back, what it returns."""


def reply_steps(plan: Plan, vocabulary: Vocabulary) -> Steps:
    """The steps of the reply ``plan`` describes; ``vocabulary`` (the model's) tokenizes the reply's text."""
    tokenize = vocabulary.tokenize
    text = plan.prefill  # the reply so far; the prompt ends with the prefill already
    if text:
        yield Said(text)
    if plan.complete:
        return Outcome("stop", 0)
    produced = 0
    grammar = plan.grammar
    calling: tuple[list[Tool], str] = (list(plan.tools), plan.said)  # what the calls grammar calls, and with what

    def resumed(grammar: str | None, limit: int | None = None) -> Run:
        """A run from the prompt and the reply so far, of at most ``limit`` tokens (None: as many as are left). The
        reply's own tokens count against the tokens left: the text it was given (an opener, a closer, a further
        call's block) was never sampled, and a reply of several calls outgrew the model's context."""
        reply = tokenize(text[len(plan.prefill):])
        left = max(plan.max_tokens - max(produced, len(reply)), 0)
        return Run(plan.prompt + reply, left if limit is None else min(limit, left),
                   grammar, None if grammar else plan.banned, top=CANDIDATES if grammar and plan.optional else 0)

    step: Step = resumed(grammar)
    if plan.call_threshold is not None:
        opening = yield Opening(plan.prompt, plan.openers)
        assert isinstance(opening, float)
        opens = opening >= plan.call_threshold
        if opens and plan.question:  # a call the words lack a value for: ask for it
            yield Said(plan.question)
            return Outcome("stop", 0)
        call_grammar = plan.call_grammar
        if opens and plan.lift is not None:
            lifted = yield from plan.lift.chosen(opening)
            opens = lifted is not None
            if lifted is not None:  # a call to the tool the words lift, alone
                calling = ([plan.tools[lifted]], plan.said)
                call_grammar = calls_grammar(*calling, write_forms=plan.write_forms)
        if opens:
            text += plan.opener
            yield Said(plan.opener)
            grammar = call_grammar
            step = resumed(grammar)
        else:
            first = plan.openers if plan.banned is None else plan.openers | plan.banned
            step = Run(plan.prompt, plan.max_tokens, None, plan.banned if plan.late_calls else first, first)
    closed = 0  # the blocks closed so far
    cursor = _cursor(grammar, plan)  # where the text under the grammar stands, while one holds and jumps
    started = len(text)  # where the cursor's grammar starts in the text
    held = 0  # characters at the end of the text not said yet: a list's, until it closes (see repeats)
    while produced < plan.max_tokens:
        jump, ahead = _jump(cursor, vocabulary) if cursor is not None else ("", None)
        if jump:  # the text the grammar forces, given as prompt rather than sampled token by token
            token = Token(jump)
            produced += len(tokenize(jump)) - 1
        else:
            if cursor is not None:  # a token at a time, under the grammar of the rest: a jump may follow any
                step = resumed(cursor.grammar(), STEP_TOKENS)
            if isinstance(step, Run) and not step.limit:
                break  # the reply fills what the context leaves
            answer = yield step
            if cursor is not None and isinstance(answer, Token) and answer.end == "length" and not answer.text:
                answer = yield resumed(cursor.grammar(), MAX_CHARACTER_TOKENS)  # it was a byte of a character
            assert isinstance(answer, Token)
            token = answer
            if token.end is not None:
                if held:
                    yield Said(text[-held:])
                return Outcome(token.end, produced)
        produced += 1
        step = NEXT
        if (not jump and not held and grammar is not None and plan.optional is not None and token.text.startswith(COMMA)
                and may_close(text, calling[0]) and not plan.optional.adds(token.top)):
            text += CLOSE
            yield Said(CLOSE)
            grammar = calls_grammar(*calling, after_call=True, write_forms=plan.write_forms)
            step, cursor, started = resumed(grammar), _cursor(grammar, plan), len(text)
            continue
        watching = grammar is None and plan.call_grammar is not None
        piece, opened = _until(text, token.text, plan.opener) if watching else (token.text, False)
        text += piece
        held += len(piece)
        lists = read_lists(text[started:]) if cursor is not None else None
        dropped = (_repeat_dropped(grammar, plan, text, started, started + lists.repeat, held)
                   if lists is not None and lists.repeat is not None else None)
        if dropped is not None:  # an item of a list repeated an earlier one: dropped, and the list closed
            held += len(dropped[0]) - len(text)
            text, cursor = dropped
            lists = read_lists(text[started:])
        if held and (lists is None or not lists.open):
            yield Said(text[-held:])
            held = 0
        if dropped is not None:
            continue
        if opened:
            grammar = plan.call_grammar
            step, cursor, started = resumed(grammar), _cursor(grammar, plan), len(text)
        elif grammar is not None and text.count(CLOSE_TAG) > closed and (more := listed_call(plan, text)):
            text += OPEN_TAG
            yield Said(OPEN_TAG)
            calling = ([more.tool], more.said)
            grammar = calls_grammar(*calling, write_forms=plan.write_forms)
            step, cursor, started = resumed(grammar), _cursor(grammar, plan), len(text)
        elif cursor is not None:
            cursor = ahead if jump else cursor.after(piece)
            if cursor is None:
                raise GrammarSyntaxError(f"the grammar's cursor refuses what the server wrote under it: {piece!r}")
        closed = text.count(CLOSE_TAG)
    if held:
        yield Said(text[-held:])
    return Outcome("length", produced)


def _jump(cursor: GrammarCursor, vocabulary: Vocabulary) -> tuple[str, GrammarCursor | None]:
    """The text to jump over from ``cursor``, and the place after it: what the grammar forces there but its last
    token, which the model samples. A token may run on past the forced text: ``='`` past ``=`` (a lone ``'`` after
    the forced ``=`` made SmolLM2 write ``"`` and a whole sentence as the city), ``>\n`` past a call's ``</code>``
    (jumped over whole, the ``>`` that ends it made the 0.5B model write a further listed call less often: BFCL's
    held-out parallel calls 1/7 → 0/7)."""
    forced, _ = cursor.forced()
    tokens = vocabulary.tokenize(forced)
    head = b"".join(vocabulary.piece(token) for token in tokens[:-1]).decode(errors="ignore")
    if not head or not forced.startswith(head):
        return "", None
    return head, cursor.after(head)


def _cursor(grammar: str | None, plan: Plan) -> GrammarCursor | None:
    """A cursor at the start of ``grammar``; None without one, for a plan that makes no jumps, or for a grammar
    the cursor does not read (no jumps either)."""
    if grammar is None or not plan.jumps:
        return None
    try:
        return GrammarCursor.start(grammar)
    except GrammarSyntaxError:
        return None


def _repeat_dropped(grammar: str | None, plan: Plan, text: str, started: int, repeat: int,
                    held: int) -> tuple[str, GrammarCursor] | None:
    """``text`` cut at ``repeat`` (the separator before a list's repeated item), the list closed there, and the place
    after that under ``grammar`` (whose text starts at ``started``); None where the cut would take text already said
    (more than the last ``held`` characters), or the grammar does not close the list there
    (:mod:`voxcall.llm.local.repeats`)."""
    start = _cursor(grammar, plan)
    if start is None or repeat < len(text) - held:
        return None
    kept = text[:repeat] + LIST_CLOSE
    after = start.after(kept[started:])
    return None if after is None else (kept, after)


def listed_call(plan: Plan, reply: str) -> NextCall | None:
    """The further call the user asked for after the last block of ``reply``: a further value listed for it, or
    another tool none of the reply's calls called (see :mod:`voxcall.llm.local.parallel`); None when ``plan``
    allows no such call."""
    if not plan.listed:
        return None
    called = {call.name for call in parse_code_calls(reply, plan.listed).calls}
    return next_call(last_block(reply), plan.listed, plan.said, called, write_forms=plan.write_forms)


def _until(text: str, piece: str, opener: str) -> tuple[str, bool]:
    """``piece`` added to ``text``, cut right after the first ``opener`` of the two together (what the token
    carried beyond it is dropped), and whether the opener was found."""
    joined = text + piece
    at = joined.find(opener, max(0, len(text) - len(opener)))
    if at < 0:
        return piece, False
    return joined[len(text):at + len(opener)], True
