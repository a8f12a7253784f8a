"""The event loop's watchdog: how late the loop runs, and the stack of whatever blocks it.

Every session of a voxcall process runs on one asyncio loop, so one blocking call (a model run outside its worker
thread, a synchronous file or network read, a long pure-Python loop) delays every session's audio at once. The
:class:`LoopWatchdog` makes such a stall visible:

- a *heartbeat* task on the loop sleeps :data:`BEAT_S` at a time and records how late it woke up (the loop's lag)
  in the histogram ``voxcall_event_loop_lag_seconds`` of the registry it is given (the app's ``/metrics``);
- a *watchdog* thread checks the heartbeat every :data:`CHECK_S`. When the loop has not beaten for longer than its
  ``threshold_s``, the loop is stalled *now*, so the thread samples the loop thread's stack
  (:func:`sys._current_frames`), which is the code that blocks it, and logs it at WARNING with how long the loop
  has been stuck, once per stall, at most one such report every ``report_every_s`` (the stalls in between are
  counted and the next report says how many); each stall also counts in ``voxcall_event_loop_stalls_total``.

Invariants: the watchdog reads only two floats written by the heartbeat (a torn read is impossible for a Python
float), so it never takes a lock the loop could hold; it never touches the loop; ``stop()`` ends both the task and
the thread, and a stopped watchdog may be started again. Its cost on the loop is one wake-up per :data:`BEAT_S`.
The task and the thread are named ``event-loop-*``, not ``voxcall-*`` (the sessions' tasks): they belong to the
process, not to a session.
"""

from __future__ import annotations

import asyncio
import logging
import sys
import threading
import time
import traceback

from prometheus_client import CollectorRegistry, Counter, Histogram

log = logging.getLogger(__name__)

BEAT_S = 0.1
"""Seconds between two heartbeats: the resolution of the lag figures."""

CHECK_S = 0.05
"""Seconds between two looks of the watchdog thread at the heartbeat."""

STALL_THRESHOLD_S = 0.5
"""A loop that has not run its heartbeat for this long past its due time is stalled: a voice call hears it."""

REPORT_EVERY_S = 30.0
"""At most one stack report per this many seconds (a loop stalling again and again would flood the log)."""

STACK_LIMIT = 30
"""The innermost frames shown of the blocking code's stack."""

LAG_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0)
"""Histogram buckets (seconds): a healthy loop stays in the first ones; past 0.1 s a listener hears gaps."""


class LoopWatchdog:
    """The heartbeat and the watchdog of one event loop; its metrics go to ``registry`` (None: a private one).

    ``threshold_s`` is how late the heartbeat may be before a stall is reported; ``report_every_s`` bounds the
    reports. Create it anywhere; :meth:`start` it from a coroutine on the loop it watches (or from another thread
    with that loop named); :meth:`stop` it before the loop closes.
    """

    def __init__(self, registry: CollectorRegistry | None = None, *, threshold_s: float = STALL_THRESHOLD_S,
                 report_every_s: float = REPORT_EVERY_S, beat_s: float = BEAT_S, check_s: float = CHECK_S) -> None:
        registry = registry if registry is not None else CollectorRegistry()
        self.lag = Histogram("voxcall_event_loop_lag_seconds", "How late the event loop ran a timer (heartbeat)",
                             buckets=LAG_BUCKETS, registry=registry)
        self.stalls = Counter("voxcall_event_loop_stalls", "Times the event loop was blocked past the threshold",
                              registry=registry)
        self.threshold_s = threshold_s
        self.report_every_s = report_every_s
        self._beat_s = beat_s
        self._check_s = check_s
        self._due = 0.0  # when the next heartbeat should run (time.monotonic), written by the heartbeat only
        self._loop_thread: int | None = None
        self._task: asyncio.Task[None] | None = None
        self._thread: threading.Thread | None = None
        self._stopping = threading.Event()
        self._last_report = -float("inf")
        self._unreported = 0

    @property
    def running(self) -> bool:
        """Whether the heartbeat and the watchdog thread run."""
        return self._thread is not None

    def start(self, loop: asyncio.AbstractEventLoop) -> None:
        """Watch ``loop``: start the heartbeat on it and the watchdog thread. Starting a running watchdog is a
        mistake (RuntimeError): one loop has one watchdog."""
        if self.running:
            raise RuntimeError("the loop watchdog is already running")
        self._stopping.clear()
        self._due = time.monotonic() + self._beat_s
        self._loop_thread = None
        if _running_loop() is loop:
            self._task = loop.create_task(self._heartbeat(), name="event-loop-heartbeat")
        else:  # from another thread: the task is created on the loop itself
            future = asyncio.run_coroutine_threadsafe(self._create_heartbeat(), loop)
            self._task = future.result()
        self._thread = threading.Thread(target=self._watch, name="event-loop-watchdog", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop the heartbeat and the watchdog thread (waits for the thread; a watchdog not running is left so)."""
        self._stopping.set()
        if self._task is not None:
            loop = self._task.get_loop()
            if _running_loop() is loop:
                self._task.cancel()
            elif not loop.is_closed():
                loop.call_soon_threadsafe(self._task.cancel)
            self._task = None
        if self._thread is not None:
            self._thread.join()
            self._thread = None

    async def _create_heartbeat(self) -> asyncio.Task[None]:
        return asyncio.create_task(self._heartbeat(), name="event-loop-heartbeat")

    async def _heartbeat(self) -> None:
        self._loop_thread = threading.get_ident()
        while True:
            await asyncio.sleep(max(0.0, self._due - time.monotonic()))
            now = time.monotonic()
            self.lag.observe(max(0.0, now - self._due))
            self._due = now + self._beat_s

    def _watch(self) -> None:
        """The watchdog thread: one report per stall, when the heartbeat is ``threshold_s`` overdue."""
        reported_due: float | None = None  # the heartbeat's due time of the stall already handled
        while not self._stopping.wait(self._check_s):
            due, late = self._due, time.monotonic() - self._due
            if late < self.threshold_s or due == reported_due or self._loop_thread is None:
                continue
            reported_due = due
            self.stalls.inc()
            self._report(late)

    def _report(self, late: float) -> None:
        now = time.monotonic()
        if now - self._last_report < self.report_every_s:
            self._unreported += 1
            return
        frame = sys._current_frames().get(self._loop_thread or 0)
        if frame is None:
            return
        stack = "".join(traceback.format_stack(frame, limit=STACK_LIMIT))
        since = f" ({self._unreported} more stalls since the last report)" if self._unreported else ""
        log.warning("the event loop has been blocked for %.2f s%s; every session waits. The blocking code:\n%s",
                    late, since, stack.rstrip())
        self._last_report, self._unreported = now, 0


def _running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None
