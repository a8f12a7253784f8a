"""Where the time of one response went, measured from the moment its user finished asking.

A :class:`ResponseTiming` is started with its *origin*: for a spoken turn the end of the user's speech (the
``speech_stopped`` audio end, placed on the wall clock), for anything else the client's ``response.create``. The
response marks its first token, its first audio, and each server tool call (start, end, and the first audio after
its result). After ``response.done`` the session sends the figures as ``voxcall.response.timing``::

    {"type": "voxcall.response.timing", "response_id": "resp_…",
     "timings_ms": {"end_of_turn": 520, "transcript": 95, "llm_first_token": 210, "first_audio": 380},
     "tools": [{"call_id": "call_…", "name": "calculator", "duration_ms": 2, "to_audio_ms": 140}]}

A stage that did not happen is absent. A hidden response claimed by ``response.create`` is re-based on the claim:
what it produced before the claim counts as 0 ms.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from voxcall.core.events import ResponseTimed, ToolTimes

Clock = float
"""Seconds on :func:`time.monotonic`."""


@dataclass(frozen=True)
class HeardTurn:
    """How a spoken turn ended: when the user stopped speaking, the silence waited to be sure, the transcript."""

    speech_end: Clock
    end_of_turn_ms: int
    transcribed: Clock


@dataclass
class ToolTiming:
    """One server tool call of the response."""

    call_id: str
    name: str
    started: Clock
    ended: Clock | None = None
    failed: bool = False
    cached: bool = False
    next_audio: Clock | None = None

    def times(self) -> ToolTimes:
        """Its figures (those measured so far)."""
        if self.ended is None:
            return ToolTimes(self.call_id, self.name)
        return ToolTimes(self.call_id, self.name, _ms(self.ended - self.started),
                         None if self.next_audio is None else _ms(self.next_audio - self.ended))


@dataclass
class ResponseTiming:
    """The marks of one response against its origin."""

    origin: Clock = field(default_factory=time.monotonic)
    turn: HeardTurn | None = None
    first_token: Clock | None = None
    first_audio: Clock | None = None
    tools: list[ToolTiming] = field(default_factory=list)

    @classmethod
    def for_turn(cls, turn: HeardTurn) -> ResponseTiming:
        """The timing of the answer to a spoken turn: measured from the end of the user's speech."""
        return cls(origin=turn.speech_end, turn=turn)

    def rebase(self, origin: Clock) -> None:
        """A hidden follow-up was claimed at ``origin``: measure from there (earlier marks count as 0 ms)."""
        self.origin, self.turn = origin, None

    def confirmed(self, turn: HeardTurn, released: Clock) -> None:
        """An eager answer to ``turn`` was confirmed at ``released``: it is timed from the end of the speech, and
        nothing it made reached the client before ``released``."""
        self.origin, self.turn = turn.speech_end, turn
        if self.first_audio is not None:
            self.first_audio = max(self.first_audio, released)
        for tool in self.tools:
            if tool.next_audio is not None:
                tool.next_audio = max(tool.next_audio, released)

    def token(self) -> None:
        """The model produced its first output (text or a call)."""
        if self.first_token is None:
            self.first_token = time.monotonic()

    def audio(self) -> None:
        """An audio chunk went out."""
        now = time.monotonic()
        if self.first_audio is None:
            self.first_audio = now
        for tool in self.tools:
            if tool.ended is not None and tool.next_audio is None:
                tool.next_audio = now

    def tool_started(self, call_id: str, name: str) -> None:
        """A server tool call began running."""
        self.tools.append(ToolTiming(call_id, name, time.monotonic()))

    def tool_ended(self, call_id: str, *, failed: bool, cached: bool = False) -> None:
        """The server tool call ``call_id`` finished (``failed``: with an error result; ``cached``: its result
        came from the tool cache)."""
        tool = next((t for t in self.tools if t.call_id == call_id and t.ended is None), None)
        if tool is not None:
            tool.ended, tool.failed, tool.cached = time.monotonic(), failed, cached

    def stages_ms(self) -> dict[str, int]:
        """The figures of ``timings_ms``; a stage that did not happen is absent."""
        out: dict[str, int] = {}
        if self.turn is not None:
            out["end_of_turn"] = self.turn.end_of_turn_ms
            out["transcript"] = _ms(self.turn.transcribed - self.origin)
        if self.first_token is not None:
            out["llm_first_token"] = _ms(self.first_token - self.origin)
        if self.first_audio is not None:
            out["first_audio"] = _ms(self.first_audio - self.origin)
        return out

    def report(self, response_id: str) -> ResponseTimed:
        """The figures as they stand: the ``voxcall.response.timing`` event of response ``response_id``."""
        return ResponseTimed(response_id, self.stages_ms(), tuple(tool.times() for tool in self.tools))


def _ms(seconds: float) -> int:
    return max(0, round(seconds * 1000))
