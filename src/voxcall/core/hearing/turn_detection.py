"""Turn detection settings: ``server_vad`` as the protocol defines it, and ``semantic_vad``.

voxcall ends a user turn after a stretch of silence its VAD hears (:class:`voxcall.speech.turns.TurnDetector`).
``server_vad`` sets that detector directly, exactly as the client sent it. ``semantic_vad`` ends a turn when the user
has finished: at a pause, the words heard so far are judged (the voice's :class:`~voxcall.speech.turns.TurnJudge`), and
the silence that ends the turn follows from the verdict and the requested ``eagerness`` (:data:`EAGERNESS_TURN_END`):
short after a finished-sounding utterance, up to the eagerness's maximum after one whose last word cannot end a
sentence, and :data:`EAGERNESS_SILENCE_MS` when unsure (or when no judge is installed). The setting is reported back as
``semantic_vad``, as the client sent it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from voxcall.core.errors import SessionError, refuse_unknown

Eagerness = Literal["low", "medium", "high", "auto"]

EAGERNESS_SILENCE_MS: dict[str, int] = {"low": 1200, "medium": 500, "auto": 500, "high": 250}
"""Silence that ends a turn under ``semantic_vad`` when the judge is unsure, or there is none: a low eagerness
waits longer. Each is longer than the pauses inside a sentence that eagerness must not answer (auto: 400 ms, low:
700 ms; ``benchmarks/bench_turns.py``)."""


@dataclass(frozen=True)
class TurnEndSilences:
    """The silences (ms) that end a ``semantic_vad`` turn, by the judge's verdict on the words before them."""

    finished: int
    """After an utterance that sounds finished."""
    unsure: int
    """When the judge cannot tell (or could not judge)."""
    unfinished: int
    """After an utterance whose last word cannot end a sentence: the eagerness's maximum, as OpenAI documents it
    (8 s, 4 s, 2 s for low, medium, high; auto is medium)."""


EAGERNESS_TURN_END: dict[str, TurnEndSilences] = {
    eagerness: TurnEndSilences(finished, EAGERNESS_SILENCE_MS[eagerness], unfinished)
    for eagerness, finished, unfinished in (("low", 750, 8000), ("medium", 200, 4000), ("auto", 200, 4000),
                                             ("high", 150, 2000))}
"""The turn-ending silences of each eagerness. Low waits out a 700 ms pause even after a finished-sounding
utterance: Whisper can hear a sentence cut at a pause as a whole one ("Why is the … ocean salty?" as "Why is
that?"), which the judge rightly calls finished (``benchmarks/bench_turns.py``: one early answer in 20 cut requests
with 300 ms)."""

_EAGERNESS: dict[Any, Eagerness] = {"low": "low", "medium": "medium", "high": "high", "auto": "auto"}
_MAX_MS = 10_000
_MAX_IDLE_MS = 600_000
_COMMON = frozenset({"type", "create_response", "interrupt_response"})
_SERVER_VAD = _COMMON | {"threshold", "prefix_padding_ms", "silence_duration_ms", "idle_timeout_ms"}
_SEMANTIC_VAD = _COMMON | {"eagerness"}


@dataclass(frozen=True)
class TurnDetection:
    """When a user turn starts and ends, and what that triggers.

    ``idle_timeout_ms`` (``server_vad`` only): after this long without speech once the assistant has finished,
    the server commits the buffer and answers, as if the user had spoken. ``eagerness`` is set for ``semantic_vad``,
    whose ``silence_duration_ms`` follows from it (the silence that ends a turn the judge is unsure of).
    """

    threshold: float = 0.5
    prefix_padding_ms: int = 300
    silence_duration_ms: int = 500
    create_response: bool = True
    interrupt_response: bool = True
    idle_timeout_ms: int | None = None
    eagerness: Eagerness | None = None

    @property
    def semantic(self) -> bool:
        """Whether the client asked for ``semantic_vad`` (the end of a turn judged from the words)."""
        return self.eagerness is not None

    @property
    def turn_end(self) -> TurnEndSilences | None:
        """The silences that end a turn by the judge's verdict (``semantic_vad``); None for ``server_vad``."""
        return None if self.eagerness is None else EAGERNESS_TURN_END[self.eagerness]

    def to_wire(self) -> dict[str, Any]:
        """The GA ``turn_detection`` object, of the type the client asked for."""
        flags = {"create_response": self.create_response, "interrupt_response": self.interrupt_response}
        if self.semantic:
            return {"type": "semantic_vad", "eagerness": self.eagerness, **flags}
        return {"type": "server_vad", "threshold": self.threshold, "prefix_padding_ms": self.prefix_padding_ms,
                "silence_duration_ms": self.silence_duration_ms, **flags, "idle_timeout_ms": self.idle_timeout_ms}


def parse_turn_detection(value: Any, *, where: str) -> TurnDetection | None:
    """``null`` (push-to-talk), a ``server_vad`` object, or a ``semantic_vad`` one; a missing type is server_vad."""
    if value is None:
        return None
    if not isinstance(value, dict):
        raise SessionError(f"'{where}' must be an object", code="invalid_type", param=where)
    kind = value.get("type", "server_vad")
    if kind not in ("server_vad", "semantic_vad"):
        raise SessionError(f"'{where}.type' must be 'server_vad' or 'semantic_vad'", code="invalid_value",
                            param=f"{where}.type")
    known = _SERVER_VAD if kind == "server_vad" else _SEMANTIC_VAD
    refuse_unknown(value, known, where, of=kind)
    create, interrupt = (_flag(value, key, where) for key in ("create_response", "interrupt_response"))
    if kind == "semantic_vad":
        eagerness = _EAGERNESS.get(value.get("eagerness") or "auto")
        if eagerness is None:
            raise SessionError(f"'{where}.eagerness' must be low, medium, high or auto", code="invalid_value",
                                param=f"{where}.eagerness")
        return TurnDetection(silence_duration_ms=EAGERNESS_SILENCE_MS[eagerness], create_response=create,
                             interrupt_response=interrupt, eagerness=eagerness)
    base = TurnDetection()
    threshold = value.get("threshold", base.threshold)
    if not isinstance(threshold, int | float) or isinstance(threshold, bool) or not 0 <= threshold <= 1:
        raise SessionError(f"'{where}.threshold' must be a number from 0 to 1", code="invalid_value",
                            param=f"{where}.threshold")
    padding, silence = (_ms(value.get(key, getattr(base, key)), f"{where}.{key}", _MAX_MS)
                        for key in ("prefix_padding_ms", "silence_duration_ms"))
    idle = value.get("idle_timeout_ms")
    return TurnDetection(threshold=float(threshold), prefix_padding_ms=padding, silence_duration_ms=silence,
                         create_response=create, interrupt_response=interrupt,
                         idle_timeout_ms=None if idle is None else _ms(idle, f"{where}.idle_timeout_ms", _MAX_IDLE_MS,
                                                                       low=1))


def _flag(value: dict[str, Any], key: str, where: str) -> bool:
    flag = value.get(key, getattr(TurnDetection, key))
    if not isinstance(flag, bool):
        raise SessionError(f"'{where}.{key}' must be a boolean", code="invalid_type", param=f"{where}.{key}")
    return flag


def _ms(number: Any, param: str, high: int, *, low: int = 0) -> int:
    if not isinstance(number, int) or isinstance(number, bool) or not low <= number <= high:
        raise SessionError(f"'{param}' must be an integer from {low} to {high}", code="invalid_value", param=param)
    return number
