"""The voice's output: audio and its transcript, sent at the pace they are heard.

A GPT-Live voice talks in real time and stops when the user talks over it, so its audio may not run ahead of the
listener by more than a short lead (``live.output_lead_ms``): the core synthesises a sentence in a fraction of its
length, and if all of it went out at once, a barge-in would have nothing left to stop. Each chunk takes its place
on the session timeline (:attr:`OutputStream.cursor`, where the audio sent so far ends); a transcript delta gets
the span of the audio that follows it. The core writes a reply's text as the LLM streams it, well before its
audio, so the transcript of spoken words is held back and let out with the audio, at :data:`CHARS_PER_SECOND`
of audio queued (the rest when the reply's audio ends): what the client reads is what it has heard, give or take
a clause. :meth:`OutputStream.clear` drops what is not sent yet, text and audio, at once; the client's player still
holds at most the lead. A :meth:`mark` runs a callback once everything queued before it has been heard (a fixture's
``played``).

Invariant: events leave in the order they were queued, and no audio chunk leaves before ``cursor - lead``.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from voxcall.live.timeline import Timeline

Send = Callable[[dict[str, Any]], Awaitable[None]]

CHARS_PER_SECOND = 15
"""Characters of transcript per second of speech (Piper's voices at speed 1.0 say about 14 to 16)."""


@dataclass
class _Chunk:
    event: dict[str, Any] | None  # None: a mark
    duration_ms: int = 0
    then: Callable[[], Awaitable[None]] | None = None


class OutputStream:
    """One session's paced output, written by one task."""

    def __init__(self, send: Send, timeline: Timeline, *, lead_ms: int) -> None:
        self._send = send
        self._timeline = timeline
        self._lead_ms = lead_ms
        self._queue: deque[_Chunk] = deque()
        self._ready = asyncio.Event()
        self._writer: asyncio.Task[None] | None = None
        self.cursor = 0
        """Where the audio sent so far ends on the timeline (ms)."""
        self._unsaid: deque[dict[str, Any]] = deque()  # transcript deltas waiting for their audio
        self._said_chars = 0  # of the reply spoken now: transcript let out, and audio queued
        self._spoken_ms = 0

    def start(self) -> None:
        self._writer = asyncio.create_task(self._write(), name="voxcall-live-output")

    @property
    def speaking(self) -> bool:
        """Whether audio is queued or still playing at the client."""
        return bool(self._queue) or self.cursor > self._timeline.now_ms()

    def audio(self, delta: str, duration_ms: int) -> None:
        """Queue a chunk of wire audio that plays ``duration_ms`` (and the transcript it says)."""
        self._spoken_ms += duration_ms
        while self._unsaid and self._said_chars < self._spoken_ms * CHARS_PER_SECOND // 1000:
            self._say(self._unsaid.popleft())
        self._put(_Chunk({"type": "session.output_audio.delta", "delta": delta}, duration_ms))

    def transcript(self, ev: dict[str, Any], *, spoken: bool) -> None:
        """Queue a ``session.output_transcript.delta`` (its ``start_ms``/``end_ms`` are set as it leaves): at once
        for a reply in text only, with its audio for a ``spoken`` one."""
        if spoken:
            self._unsaid.append(ev)
        else:
            self._put(_Chunk(ev))

    def end_of_reply(self) -> None:
        """The reply's audio is all queued: the rest of its transcript goes with the last of it."""
        while self._unsaid:
            self._say(self._unsaid.popleft())
        self._said_chars = self._spoken_ms = 0

    def _say(self, ev: dict[str, Any]) -> None:
        self._said_chars += len(ev["delta"])
        self._put(_Chunk(ev))

    def mark(self, then: Callable[[], Awaitable[None]]) -> None:
        """Run ``then`` once everything queued so far has been heard."""
        self._put(_Chunk(None, then=then))

    def clear(self) -> bool:
        """Drop what is not sent yet (the voice stops); the audio already sent ends now. True if anything was
        dropped or still playing."""
        stopped = self.speaking or bool(self._unsaid)
        self._queue.clear()
        self._unsaid.clear()
        self._said_chars = self._spoken_ms = 0
        self.cursor = min(self.cursor, self._timeline.now_ms())
        return stopped

    async def close(self) -> None:
        self._queue.clear()
        if self._writer is not None:
            self._writer.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._writer

    def _put(self, chunk: _Chunk) -> None:
        self._queue.append(chunk)
        self._ready.set()

    async def _write(self) -> None:
        while True:
            if not self._queue:
                self._ready.clear()
                await self._ready.wait()
                continue
            chunk = self._queue[0]
            now = self._timeline.now_ms()
            wait_ms = self.cursor - self._lead_ms - now if chunk.duration_ms else 0
            if chunk.event is None:
                wait_ms = self.cursor - now
            if wait_ms > 0:
                self._ready.clear()  # a clear() while waiting wakes the writer early
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._ready.wait(), wait_ms / 1000)
                continue
            self._queue.popleft()
            if chunk.event is None:
                if chunk.then is not None:
                    await chunk.then()
                continue
            if chunk.duration_ms:
                self.cursor = max(self.cursor, now) + chunk.duration_ms
            elif chunk.event.get("type") == "session.output_transcript.delta":
                start = max(self.cursor, now)
                following = self._queue[0].duration_ms if self._queue else 0
                chunk.event.update(start_ms=start, end_ms=start + following)
            await self._send(chunk.event)
