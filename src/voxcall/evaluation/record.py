"""What a run of a scenario saw, turn by turn: the values the drivers fill, the checks read and the report prints.

Times are :func:`time.monotonic` readings taken by the client as events arrive or leave, so every latency is what
a caller on this machine would live through: from the end of the user's speech (the last speech sample sent), or
the request of a typed turn, to the first answer audio received.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Literal

from voxcall.evaluation.scenario import Turn

CallSide = Literal["client", "server", "delegate"]
"""Where a tool ran: the client (the runner answered it), the server (an ``mcp_call``), or a GPT-Live delegation."""


@dataclass
class CallRecord:
    """One tool call the model made, and what became of it."""

    call_id: str
    name: str
    arguments: str
    side: CallSide
    output: str | None = None
    error: str | None = None
    result_at: float | None = None
    """When its result was available to the model (sent by the runner, or reported done by the server)."""
    to_audio_ms: int | None = None
    """From the result to the first audio of an answer begun after it."""

    @property
    def parsed_arguments(self) -> dict[str, Any] | None:
        """The arguments as a JSON object, or None when they are not one."""
        try:
            parsed = json.loads(self.arguments or "{}")
        except ValueError:
            return None
        return parsed if isinstance(parsed, dict) else None

    def describe(self) -> str:
        """``name({"a": 1})``, as the report shows it."""
        return f"{self.name}({self.arguments or ''})"

    def to_json(self) -> dict[str, Any]:
        parsed = self.parsed_arguments
        return {"call_id": self.call_id, "name": self.name,
                "arguments": parsed if parsed is not None else self.arguments,
                "side": self.side, "output": self.output, "error": self.error, "to_audio_ms": self.to_audio_ms}


@dataclass
class ResponseRecord:
    """One response of the server (Realtime): its id, and how it ended (status and reason)."""

    response_id: str
    status: str = "in_progress"
    reason: str | None = None
    server_timing: dict[str, Any] | None = None
    """What a voxcall server measured of it (``voxcall.response.timing``), when it says."""

    def to_json(self) -> dict[str, Any]:
        return {"id": self.response_id, "status": self.status, "reason": self.reason,
                "server_timing": self.server_timing}


@dataclass(frozen=True)
class Check:
    """One expectation checked: its name as the scenario wrote it, whether it held, and why (or why not)."""

    expectation: str
    passed: bool
    detail: str

    def to_json(self) -> dict[str, Any]:
        return {"expectation": self.expectation, "passed": self.passed, "detail": self.detail}


@dataclass
class TurnRecord:
    """What one turn of a scenario saw."""

    number: int
    turn: Turn
    origin: float | None = None
    """The end of the user's speech (spoken turns), the request (typed turns), None for silence."""
    heard: str = ""
    answer: str = ""
    responses: list[ResponseRecord] = field(default_factory=list)
    calls: list[CallRecord] = field(default_factory=list)
    first_audio: float | None = None
    first_text: float | None = None
    cut_at_ms: int | None = None
    """How much of this turn's answer had been heard when the user spoke over it (None: heard to its end)."""
    notes: list[str] = field(default_factory=list)
    """What is worth knowing about the turn (a barge-in that came too late …), in words."""
    problems: list[str] = field(default_factory=list)
    """What went wrong whatever the expectations (no answer in time, a server error …): each fails the turn."""
    checks: list[Check] = field(default_factory=list)
    ran: bool = False
    _said_item: str | None = None

    def problem(self, what: str) -> None:
        """Note what went wrong (once: a server repeating an error is one problem)."""
        if what not in self.problems:
            self.problems.append(what)

    def say(self, item_id: str, delta: str) -> None:
        """Add ``delta`` of the answer item ``item_id`` to :attr:`answer` (items joined with a space)."""
        if item_id != self._said_item and self.answer and not self.answer[-1].isspace():
            self.answer += " "
        self._said_item = item_id
        self.answer += delta

    @property
    def first_audio_ms(self) -> int | None:
        """From the origin to the first answer audio."""
        return _ms(self.origin, self.first_audio)

    @property
    def first_text_ms(self) -> int | None:
        """From the origin to the first answer text (or transcript)."""
        return _ms(self.origin, self.first_text)

    @property
    def answered(self) -> bool:
        """Whether the turn got an answer: a response, text, audio or a call."""
        return bool(self.responses or self.answer or self.first_audio is not None or self.calls)

    @property
    def interrupted(self) -> bool:
        """Whether the answer was cut short: the user spoke over its audio, or a response was cancelled."""
        return self.cut_at_ms is not None or any(response.status == "cancelled" for response in self.responses)

    @property
    def passed(self) -> bool:
        """Whether it ran and every check held."""
        return self.ran and all(check.passed for check in self.checks)

    def to_json(self) -> dict[str, Any]:
        turn = self.turn
        return {"turn": self.number, "kind": turn.kind.value, "input": turn.describe(), "heard": self.heard,
                "answer": self.answer, "ran": self.ran, "passed": self.passed,
                "latency_ms": {"first_audio": self.first_audio_ms, "first_text": self.first_text_ms,
                               "tool_to_audio": [call.to_audio_ms for call in self.calls]},
                "cut_at_ms": self.cut_at_ms,
                "responses": [r.to_json() for r in self.responses], "calls": [c.to_json() for c in self.calls],
                "notes": list(self.notes), "problems": list(self.problems),
                "checks": [c.to_json() for c in self.checks]}


@dataclass
class ScenarioRecord:
    """A scenario's run: its turns, and an error that stopped it (the connection failed …)."""

    name: str
    turns: list[TurnRecord]
    error: str | None = None
    seconds: float = 0.0

    @property
    def passed(self) -> bool:
        return self.error is None and all(turn.passed for turn in self.turns)

    @property
    def failed_checks(self) -> list[tuple[TurnRecord, Check]]:
        return [(turn, check) for turn in self.turns for check in turn.checks if not check.passed]

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "passed": self.passed, "error": self.error, "seconds": round(self.seconds, 2),
                "turns": [turn.to_json() for turn in self.turns]}


def _ms(start: float | None, end: float | None) -> int | None:
    if start is None or end is None:
        return None
    return max(0, round((end - start) * 1000))
