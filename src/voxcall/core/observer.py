"""Where a session reports its measurements, at the points where each is final.

The core measures (a transcription's time, a response's end with its status, tokens and
:class:`~voxcall.core.responses.timing.ResponseTiming`, each hidden response's fate, each move of a tool call) and
tells its :class:`Observer`; what is made of it is not the core's business. The server's ``/metrics``
(:class:`~voxcall.serving.metrics.Metrics`) is the process's observer: it adds figures up, so it is told no names.

The session's trace (:mod:`voxcall.telemetry.tracing`) needs to know which response and which call each figure
belongs to, so it rides with them instead, told at the same points from the same readings: a response's
:class:`~voxcall.core.responses.timing.ResponseTiming` hands each mark to its turn as it takes it, the response
lifecycle ends a turn (or discards or claims a hidden one) where it tells the observer, and the tool ledger reports
each move of a call where it counts it.
"""

from __future__ import annotations

from typing import Protocol

from voxcall.core.responses.timing import ResponseTiming


class Observer(Protocol):
    """Told of a session's measurements."""

    def transcribed(self, stt_seconds: float) -> None:
        """A user turn was transcribed in ``stt_seconds``."""
        ...

    def response_ended(self, status: str, input_tokens: int, output_tokens: int, timing: ResponseTiming,
                       client_calls: int) -> None:
        """A visible (or claimed) response ended with ``status``, having used those tokens and made
        ``client_calls`` calls of client tools; ``timing`` says where its time went."""
        ...

    def hidden(self, kind: str, event: str, *, input_tokens: int = 0, output_tokens: int = 0) -> None:
        """A hidden response of ``kind`` was ``started``, ``claimed`` or ``discarded`` (with its tokens)."""
        ...

    def tool_call_state(self, state: str) -> None:
        """A tool call moved to ``state``."""
        ...


class Unobserved:
    """An observer that keeps nothing: a session run on its own."""

    def transcribed(self, stt_seconds: float) -> None:
        return None

    def response_ended(self, status: str, input_tokens: int, output_tokens: int, timing: ResponseTiming,
                       client_calls: int) -> None:
        return None

    def hidden(self, kind: str, event: str, *, input_tokens: int = 0, output_tokens: int = 0) -> None:
        return None

    def tool_call_state(self, state: str) -> None:
        return None
