"""The process's Prometheus metrics, served at ``GET /metrics``.

One :class:`Metrics` per app (an instance with its own registry, so tests can make their own). It is every session's
:class:`~voxcall.core.observer.Observer`: the session parts report to it at the points where a figure is final (the
heard audio after each transcription, the response lifecycle when a response ends, with its status, tokens and
:class:`~voxcall.core.responses.timing.ResponseTiming`, and when a hidden response starts, is claimed or discarded,
the tool ledger at each move of a call); the session host counts sessions, the gate connections refused one.

Names (all prefixed ``voxcall_``): histograms ``end_of_turn_seconds``, ``stt_seconds``, ``llm_first_token_seconds``,
``first_audio_seconds`` (end of speech, or ``response.create``, to the first audio), ``tool_duration_seconds``
(label ``tool``), ``tool_to_audio_seconds``; counters ``sessions_total``, ``sessions_refused_total`` (``reason``:
the limit, ``max_sessions``, ``max_sessions_per_key``, or ``shutting_down``), ``responses_total`` (``status``),
``tool_calls_total`` (``outcome``: ``ok``, ``error`` or ``client``), ``tool_cache_hits_total`` (``tool``: server
tool calls answered from the tool cache), ``speculation_total`` (``kind``, ``event``:
``started``, ``claimed``, ``discarded``), ``tokens_total`` (``direction``: ``in``, ``out``),
``discarded_tokens_total`` (``direction``), ``tool_call_states_total`` (``state``: each move of a call in the
:mod:`tool ledger <voxcall.core.tools.tool_ledger>`, ``proposed`` … ``timed_out``); gauges ``sessions_active``,
``asyncio_tasks`` (the tasks alive on the server's event loop, read when the page is rendered: a figure that grows
while the sessions stay as many is a leak; ``benchmarks/bench_soak.py`` watches it), and the server tools' threads
(:mod:`voxcall.tools.threads`): ``tool_threads_alive``, ``tool_threads_abandoned`` (timed-out calls whose thread
still runs) and ``tool_threads_abandoned_calls`` (since start).
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest

from voxcall.core.responses.timing import ResponseTiming
from voxcall.tools.threads import ToolThreads

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
"""The Prometheus text exposition format."""

_LATENCY_BUCKETS = (0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.8, 1.0, 1.25, 1.5, 2.0, 3.0, 5.0, 10.0)
_TOOL_BUCKETS = (0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)


class Metrics:
    """Counters and histograms of one voxcall process."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        r = self.registry
        self.end_of_turn = Histogram("voxcall_end_of_turn_seconds", "Silence waited before a spoken turn ended",
                                     buckets=_LATENCY_BUCKETS, registry=r)
        self.stt = Histogram("voxcall_stt_seconds", "Speech-to-text time per user turn", buckets=_LATENCY_BUCKETS,
                             registry=r)
        self.first_token = Histogram("voxcall_llm_first_token_seconds",
                                     "End of speech (or response.create) to the model's first output",
                                     buckets=_LATENCY_BUCKETS, registry=r)
        self.first_audio = Histogram("voxcall_first_audio_seconds",
                                     "End of speech (or response.create) to the first answer audio",
                                     buckets=_LATENCY_BUCKETS, registry=r)
        self.tool_duration = Histogram("voxcall_tool_duration_seconds", "Server tool run time", ["tool"],
                                       buckets=_TOOL_BUCKETS, registry=r)
        self.tool_to_audio = Histogram("voxcall_tool_to_audio_seconds",
                                       "A server tool's result to the next answer audio", buckets=_LATENCY_BUCKETS,
                                       registry=r)
        self.sessions_total = Counter("voxcall_sessions", "Sessions opened", registry=r)
        self.sessions_refused = Counter("voxcall_sessions_refused", "Connections refused a session, by reason",
                                        ["reason"], registry=r)
        self.sessions_active = Gauge("voxcall_sessions_active", "Sessions open now", registry=r)
        self.tasks = Gauge("voxcall_asyncio_tasks", "asyncio tasks alive on the event loop", registry=r)
        self.tasks.set_function(_tasks_alive)
        self.responses = Counter("voxcall_responses", "Responses that ended, by status", ["status"], registry=r)
        self.tool_calls = Counter("voxcall_tool_calls", "Tool calls, by outcome", ["outcome"], registry=r)
        self.tool_cache_hits = Counter("voxcall_tool_cache_hits", "Server tool calls answered from the tool cache",
                                       ["tool"], registry=r)
        self.speculation = Counter("voxcall_speculation", "Hidden responses, by kind and event", ["kind", "event"],
                                   registry=r)
        self.tokens = Counter("voxcall_tokens", "Model tokens of visible responses", ["direction"], registry=r)
        self.discarded_tokens = Counter("voxcall_discarded_tokens", "Model tokens of discarded hidden responses",
                                        ["direction"], registry=r)
        self.tool_call_states = Counter("voxcall_tool_call_states", "Moves of tool calls in the ledger, by new state",
                                        ["state"], registry=r)
        self._threads: Callable[[], ToolThreads | None] = lambda: None
        for name, doc in (("alive", "Threads running sync server tools"),
                          ("abandoned", "Tool threads of timed-out calls still running"),
                          ("abandoned_calls", "Tool calls whose thread was abandoned, since start")):
            gauge = Gauge(f"voxcall_tool_threads_{name}", doc, registry=r)
            gauge.set_function(functools.partial(self._read_threads, name))

    def watch_tool_threads(self, threads: Callable[[], ToolThreads | None]) -> None:
        """Report the server tools' threads (read when the page is rendered: the toolbox may be built later)."""
        self._threads = threads

    def _read_threads(self, figure: str) -> float:
        threads = self._threads()
        if threads is None:
            return 0.0
        return float({"alive": threads.alive, "abandoned": threads.abandoned,
                      "abandoned_calls": threads.abandoned_total}[figure])

    def tool_call_state(self, state: str) -> None:
        """A tool call moved to ``state``."""
        self.tool_call_states.labels(state).inc()

    def render(self) -> bytes:
        """The metrics in the Prometheus text format."""
        return generate_latest(self.registry)

    def transcribed(self, stt_seconds: float) -> None:
        """A user turn was transcribed in ``stt_seconds``."""
        self.stt.observe(stt_seconds)

    def response_ended(self, status: str, input_tokens: int, output_tokens: int, timing: ResponseTiming,
                       client_calls: int) -> None:
        """A visible (or claimed) response ended."""
        self.responses.labels(status).inc()
        self.tokens.labels("in").inc(input_tokens)
        self.tokens.labels("out").inc(output_tokens)
        stages = timing.stages_ms()
        if "end_of_turn" in stages:
            self.end_of_turn.observe(stages["end_of_turn"] / 1000)
        if "llm_first_token" in stages:
            self.first_token.observe(stages["llm_first_token"] / 1000)
        if "first_audio" in stages:
            self.first_audio.observe(stages["first_audio"] / 1000)
        for tool in timing.tools:
            if tool.ended is not None:
                self.tool_duration.labels(tool.name).observe(tool.ended - tool.started)
                self.tool_calls.labels("error" if tool.failed else "ok").inc()
                if tool.cached:
                    self.tool_cache_hits.labels(tool.name).inc()
                if tool.next_audio is not None:
                    self.tool_to_audio.observe(tool.next_audio - tool.ended)
        if client_calls:
            self.tool_calls.labels("client").inc(client_calls)

    def hidden(self, kind: str, event: str, *, input_tokens: int = 0, output_tokens: int = 0) -> None:
        """A hidden response of ``kind`` was ``started``, ``claimed`` or ``discarded`` (with its tokens)."""
        self.speculation.labels(kind, event).inc()
        if event == "discarded":
            self.discarded_tokens.labels("in").inc(input_tokens)
            self.discarded_tokens.labels("out").inc(output_tokens)


def _tasks_alive() -> float:
    """The tasks of the running event loop (the page is rendered on it); 0 when rendered outside one."""
    try:
        return len(asyncio.all_tasks())
    except RuntimeError:
        return 0
