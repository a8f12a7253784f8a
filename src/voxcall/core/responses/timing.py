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

The same readings are the trace's (:mod:`voxcall.telemetry.tracing`): each mark is passed on, as it is taken, to the
response's :class:`~voxcall.telemetry.tracing.TurnTrace`, so the timing event, ``/metrics`` and the spans tell one
measurement.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from voxcall.core.events import ResponseTimed, ToolTimes
from voxcall.telemetry.tracing import Stage, Trigger, TurnTrace

Clock = float
"""Seconds on :func:`time.monotonic`."""


@dataclass(frozen=True)
class HeardTurn:
    """How a spoken turn ended: when the user stopped speaking, the silence waited to be sure, when its transcript
    was done and how long transcribing took (0: the model hears the audio itself), and what was said."""

    speech_end: Clock
    end_of_turn_ms: int
    transcribed: Clock
    stt_seconds: float = 0.0
    transcript: str = ""


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
    """The marks of one response against its origin, and what started it (``trigger``); ``trace`` is told each."""

    origin: Clock = field(default_factory=time.monotonic)
    turn: HeardTurn | None = None
    first_token: Clock | None = None
    first_audio: Clock | None = None
    tools: list[ToolTiming] = field(default_factory=list)
    trigger: Trigger = Trigger.REQUEST
    trace: TurnTrace = field(default_factory=TurnTrace)

    @classmethod
    def for_turn(cls, turn: HeardTurn) -> ResponseTiming:
        """The timing of the answer to a spoken turn: measured from the end of the user's speech."""
        return cls(origin=turn.speech_end, turn=turn, trigger=Trigger.SPEECH)

    def traced(self, trace: TurnTrace) -> None:
        """Tell ``trace`` (the response's turn, just opened) every mark from now on, and the stages of a spoken
        turn, which were over before the response began."""
        self.trace = trace
        self._stages()

    def claimed(self, at: Clock) -> None:
        """The hidden response was claimed at ``at`` (after :meth:`rebase` or :meth:`confirmed`): its trace is
        measured as this timing is."""
        self.trace.claimed(at=at, origin=self.origin)
        self._stages()

    def _stages(self) -> None:
        turn = self.turn
        if turn is None:
            return
        self.trace.stage(Stage.END_OF_TURN, start=turn.speech_end,
                         end=turn.speech_end + turn.end_of_turn_ms / 1000)
        if turn.stt_seconds:
            self.trace.stage(Stage.TRANSCRIPTION, start=turn.transcribed - turn.stt_seconds, end=turn.transcribed)
        self.trace.heard(turn.transcript)

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

    def token(self) -> Clock:
        """The model produced output (text or a call): the first marks the response's first token. Returns the
        reading (the first output of each model request is its own first token)."""
        now = time.monotonic()
        if self.first_token is None:
            self.first_token = now
        return now

    def audio(self) -> None:
        """An audio chunk went out."""
        now = time.monotonic()
        if self.first_audio is None:
            self.first_audio = now
        for tool in self.tools:
            if tool.ended is not None and tool.next_audio is None:
                tool.next_audio = now
        self.trace.audio(at=now)

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
