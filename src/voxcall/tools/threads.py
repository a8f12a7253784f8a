"""``ToolThreads``: the worker threads sync tool handlers run in, apart from everything else.

A sync tool cannot be interrupted: when its call times out (or its response is cancelled), its thread runs on. In
asyncio's default executor such a thread would hold a worker that speech-to-text and text-to-speech need, and
interpreter shutdown would wait for it. Here every call gets a *daemon* thread of its own, at most ``limit`` alive at
once:

- a call whose awaiting task is cancelled (its timeout, its response) is **abandoned**: the caller goes on at once,
  the thread runs to its end unobserved, its result dropped; it still counts against ``limit`` until it ends, so
  hung tools can exhaust the tools' threads but never anyone else's;
- a call that finds every thread taken is refused at once (:class:`ToolThreadsBusy`) rather than queued behind
  threads that may never end;
- no thread is ever joined: a stopping process exits whatever its tools are doing.

:attr:`ToolThreads.abandoned` (still running) and :attr:`ToolThreads.abandoned_total` feed ``/metrics``.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import threading
from collections.abc import Callable
from typing import Any

__all__ = ["ToolThreads", "ToolThreadsBusy"]


class ToolThreadsBusy(RuntimeError):
    """Every tool thread is taken (by running or abandoned calls)."""


class ToolThreads:
    """At most ``limit`` daemon threads running sync tool handlers; thread-safe counters of what they do."""

    def __init__(self, limit: int) -> None:
        if limit < 1:
            raise ValueError(f"limit must be at least 1, got {limit}")
        self.limit = limit
        self._lock = threading.Lock()
        self._alive = 0
        self._abandoned = 0
        self._abandoned_total = 0

    @property
    def alive(self) -> int:
        """Threads running a handler now (abandoned ones included)."""
        return self._alive

    @property
    def abandoned(self) -> int:
        """Threads still running a call nobody waits for any more."""
        return self._abandoned

    @property
    def abandoned_total(self) -> int:
        """Calls abandoned since start."""
        return self._abandoned_total

    async def run(self, fn: Callable[..., Any], /, **kwargs: Any) -> Any:
        """``fn(**kwargs)`` in a thread of its own (with the caller's context variables); its value or exception.

        Raises :class:`ToolThreadsBusy` when ``limit`` threads are alive. Cancelling the caller abandons the thread.
        """
        with self._lock:
            if self._alive >= self.limit:
                raise ToolThreadsBusy(f"all {self.limit} tool threads are busy ({self._abandoned} abandoned calls "
                                      "still hold theirs)")
            self._alive += 1
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Any] = loop.create_future()
        call = _Call()
        context = contextvars.copy_context()

        def work() -> None:
            try:
                value, error = context.run(fn, **kwargs), None
            except BaseException as exc:  # handed to the caller, whatever it is
                value, error = None, exc
            with self._lock:
                self._alive -= 1
                call.finished = True
                if call.abandoned:
                    self._abandoned -= 1
                    return
            with contextlib.suppress(RuntimeError):  # a closed loop: nobody is left to tell
                loop.call_soon_threadsafe(_settle, future, value, error)

        threading.Thread(target=work, name=f"voxcall-tool-{getattr(fn, '__name__', 'call')}", daemon=True).start()
        try:
            return await future
        except asyncio.CancelledError:
            with self._lock:
                if not call.finished:
                    call.abandoned = True
                    self._abandoned += 1
                    self._abandoned_total += 1
            raise


class _Call:
    """One call's fate, read and written under the pool's lock."""

    __slots__ = ("abandoned", "finished")

    def __init__(self) -> None:
        self.finished = False
        self.abandoned = False


def _settle(future: asyncio.Future[Any], value: Any, error: BaseException | None) -> None:
    if future.done():
        return
    if error is not None:
        future.set_exception(error)
    else:
        future.set_result(value)
