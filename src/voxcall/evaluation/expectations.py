"""Checking a turn against its expectations: one :class:`~voxcall.evaluation.record.Check` per expectation, each
saying why it held or why not, in words a reader of the report can act on.

Calls match by name and by the arguments the expectation gives (a call may have more); numbers compare by value
(``8`` is ``8.0``), everything else exactly. Without ``in_order`` each expected call needs a distinct call of its
own, in any order; with it, they must come in that order (other calls may come between). Words match whole, in any
case, with runs of spaces as one.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from voxcall.evaluation.record import CallRecord, Check, TurnRecord
from voxcall.evaluation.scenario import Expect, ExpectedCall

QUOTE_CHARS = 120
"""How much of an answer or transcript a failure quotes."""


def check_turn(record: TurnRecord) -> list[Check]:
    """The checks of ``record``'s turn: first what went wrong in any case, then each expectation."""
    expect = record.turn.expect
    checks = [Check("completed", False, problem) for problem in record.problems]
    if expect.calls:
        checks.append(_calls(record.calls, expect))
    checks += [_absent(record.calls, call) for call in expect.absent_calls]
    checks += [_words("says", phrase, record.answer, "the answer", present=True) for phrase in expect.says]
    checks += [_words("not_says", phrase, record.answer, "the answer", present=False) for phrase in expect.not_says]
    checks += [_words("heard", phrase, record.heard, "the server's transcript", present=True)
               for phrase in expect.heard]
    if expect.responds is not None:
        checks.append(_responds(record, expect.responds))
    if expect.interrupted is not None:
        checks.append(_interrupted(record, expect.interrupted))
    if expect.max_first_audio_ms is not None:
        checks.append(_first_audio(record, expect.max_first_audio_ms))
    if expect.max_tool_to_audio_ms is not None:
        checks.append(_tool_to_audio(record.calls, expect.max_tool_to_audio_ms))
    return checks


def matches(call: CallRecord, expected: ExpectedCall) -> bool:
    """Whether ``call`` is one ``expected`` describes."""
    if call.name != expected.name:
        return False
    if expected.arguments is None:
        return True
    arguments = call.parsed_arguments
    return arguments is not None and all(key in arguments and _same(arguments[key], value)
                                         for key, value in expected.arguments.items())


def _same(actual: Any, expected: Any) -> bool:
    if isinstance(actual, bool) or isinstance(expected, bool):
        return type(actual) is type(expected) and actual == expected
    if isinstance(actual, int | float) and isinstance(expected, int | float):
        return float(actual) == float(expected)
    if isinstance(actual, dict) and isinstance(expected, dict):
        return actual.keys() == expected.keys() and all(_same(actual[k], expected[k]) for k in expected)
    if isinstance(actual, list) and isinstance(expected, list):
        return len(actual) == len(expected) and all(_same(a, e) for a, e in zip(actual, expected, strict=True))
    return bool(actual == expected)


def _calls(calls: list[CallRecord], expect: Expect) -> Check:
    name = "calls in order" if expect.in_order else "calls"
    wanted = ", ".join(call.describe() for call in expect.calls)
    made = "; ".join(call.describe() for call in calls) or "no call"
    found = _in_order(calls, expect.calls) if expect.in_order else _assigned(calls, expect.calls, set())
    if found:
        return Check(name, True, f"made {made}")
    return Check(name, False, f"expected {wanted}{' in this order' if expect.in_order else ''}; made {made}")


def _in_order(calls: Sequence[CallRecord], expected: Sequence[ExpectedCall]) -> bool:
    position = 0
    for call in calls:
        if position < len(expected) and matches(call, expected[position]):
            position += 1
    return position == len(expected)


def _assigned(calls: Sequence[CallRecord], expected: Sequence[ExpectedCall], used: set[int]) -> bool:
    """Whether every expected call can be given a distinct matching call (backtracking; lists are short)."""
    if not expected:
        return True
    first, rest = expected[0], expected[1:]
    for index, call in enumerate(calls):
        if index not in used and matches(call, first) and _assigned(calls, rest, used | {index}):
            return True
    return False


def _absent(calls: list[CallRecord], absent: ExpectedCall) -> Check:
    offending = [call for call in calls if matches(call, absent)]
    if offending:
        return Check(f"absent {absent.name}", False,
                     f"made {'; '.join(call.describe() for call in offending)}, which must not be called")
    return Check(f"absent {absent.name}", True, f"no call of {absent.describe()}")


def _words(name: str, phrase: str, text: str, where: str, *, present: bool) -> Check:
    found = contains(text, phrase)
    quoted = _quote(text) if text.strip() else "(nothing)"
    if found == present:
        return Check(f"{name} {phrase!r}", True, f"{where} {'says' if present else 'does not say'} {phrase!r}")
    verb = "does not say" if present else "says"
    return Check(f"{name} {phrase!r}", False, f"{where} {verb} {phrase!r}: {quoted}")


def contains(text: str, phrase: str) -> bool:
    """Whether ``phrase`` is in ``text`` as whole words, in any case (runs of spaces count as one)."""
    words = r"\s+".join(re.escape(word) for word in phrase.split())
    return bool(words) and re.search(rf"(?<!\w){words}(?!\w)", text, re.IGNORECASE) is not None


def _responds(record: TurnRecord, expected: bool) -> Check:
    if record.answered == expected:
        return Check("responds", True, "the turn was answered" if expected else "no answer, as expected")
    return Check("responds", False, "the turn got no answer" if expected else
                 f"the turn was answered: {_quote(record.answer) or 'with a response'}")


def _interrupted(record: TurnRecord, expected: bool) -> Check:
    statuses = ", ".join(f"{r.status}{f' ({r.reason})' if r.reason else ''}" for r in record.responses) or "none"
    cut = f"cut after {record.cut_at_ms} ms of audio" if record.cut_at_ms is not None else "heard to its end"
    facts = f"{cut}; responses: {statuses}"
    if record.interrupted == expected:
        return Check("interrupted", True, facts)
    return Check("interrupted", False, f"expected the answer to be {'cut short' if expected else 'whole'}: {facts}")


def _first_audio(record: TurnRecord, limit: int) -> Check:
    measured = record.first_audio_ms
    if measured is None:
        why = "no answer audio came" + (" (the session answers in text)" if record.first_text is not None else "")
        return Check(f"first audio ≤ {limit} ms", False, why)
    return Check(f"first audio ≤ {limit} ms", measured <= limit, f"{measured} ms")


def _tool_to_audio(calls: list[CallRecord], limit: int) -> Check:
    name = f"tool → audio ≤ {limit} ms"
    resulted = [call for call in calls if call.result_at is not None]
    if not resulted:
        return Check(name, False, "no tool result in this turn")
    unspoken = [call.name for call in resulted if call.to_audio_ms is None]
    slow = [f"{call.name} {call.to_audio_ms} ms" for call in resulted
            if call.to_audio_ms is not None and call.to_audio_ms > limit]
    figures = ", ".join(f"{call.name} {call.to_audio_ms} ms" for call in resulted if call.to_audio_ms is not None)
    if unspoken or slow:
        parts = ([f"no audio after the result of {', '.join(unspoken)}"] if unspoken else []) + slow
        return Check(name, False, "; ".join(parts))
    return Check(name, True, figures)


def _quote(text: str) -> str:
    text = " ".join(text.split())
    return json.dumps(text if len(text) <= QUOTE_CHARS else text[: QUOTE_CHARS - 1] + "…", ensure_ascii=False)
