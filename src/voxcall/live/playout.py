"""The voice's output: audio and its words, sent at the pace they are heard; the session's
:class:`~voxcall.core.playout.Playout`.

A GPT-Live voice talks in real time and stops when the user talks over it, so its audio may not run ahead of the
listener by more than a short lead (``live.output_lead_ms``): the core synthesises a sentence in a fraction of its
length, and if all of it went out at once, a barge-in would have nothing left to stop. Each chunk takes its place on
the session timeline (:attr:`PacedPlayout.cursor`, where the audio sent so far ends). The words of a spoken reply go
out with their audio, clause by clause (:class:`~voxcall.core.events.SpokenClause`): each clause's
``session.output_transcript.delta`` leaves with the first chunk of its audio, and its ``start_ms``/``end_ms`` are the
span that audio takes on the timeline. A written reply (a voice without speech) goes out as it comes. Deltas join
into one text: a space goes between two clauses, and between two replies, where the language puts one.

:meth:`PacedPlayout.clear` drops what is not sent yet, words and audio, at once (the client's player still holds at
most the lead, which it plays), drops what is still on its way from the reply that was heard, and says how much of
each message was sent: what the user heard. A :meth:`mark` runs a callback once everything queued before it has been
heard (a fixture's ``played``).

Invariant: messages leave in the order they were queued, and no audio chunk leaves before ``cursor - lead``.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from voxcall.core.events import OutputAudio, SpokenClause
from voxcall.core.playout import Cleared, Heard, PlaybackListener
from voxcall.language import spaced
from voxcall.live.audio_bridge import AudioBridge
from voxcall.live.timeline import Timeline
from voxcall.serving.frames import Send, event


@dataclass
class _Chunk:
    """One queued message: audio (``duration_ms``), words (``span_ms``: the audio they are said over), or a mark."""

    event: dict[str, Any] | None  # None: a mark
    duration_ms: int = 0
    span_ms: int = 0
    response_id: str | None = None
    item_id: str | None = None
    item_end_ms: int = 0  # where this chunk's audio ends in its message's audio
    then: Callable[[], Awaitable[None]] | None = None


class PacedPlayout:
    """One session's paced output, written by one task."""

    def __init__(self, send: Send, timeline: Timeline, bridge: AudioBridge, *, lead_ms: int) -> None:
        self._send = send
        self._timeline = timeline
        self._bridge = bridge
        self._lead_ms = lead_ms
        self._queue: deque[_Chunk] = deque()
        self._ready = asyncio.Event()
        self._writer: asyncio.Task[None] | None = None
        self.cursor = 0
        """Where the audio sent so far ends on the timeline (ms)."""
        self._sent: dict[str, int] = {}  # per message item: how much of its audio was sent
        self._items: dict[str, set[str]] = {}  # the message items of each reply
        self._silenced: set[str] = set()  # replies cleared: what is still on its way from them is dropped
        self._playing: str | None = None  # the reply heard now
        self._said = ""  # the end of what the deltas have said
        self._written: str | None = None  # the reply whose words were written last
        self._listeners: list[PlaybackListener] = []

    def start(self) -> None:
        self._writer = asyncio.create_task(self._write(), name="voxcall-live-output")

    @property
    def speaking(self) -> bool:
        """Whether audio is queued or still playing at the client."""
        return bool(self._queue) or self.cursor > self._timeline.now_ms()

    # -- the playout contract -------------------------------------------------------------------------------------

    def watch(self, listener: PlaybackListener) -> None:
        self._listeners.append(listener)

    def capture(self, audio: OutputAudio) -> None:
        """Queue a chunk of the voice's audio, in the wire format."""
        if audio.response_id in self._silenced:
            return
        wire, ms = self._bridge.outward(audio.pcm)
        if ms:
            self._items.setdefault(audio.response_id, set()).add(audio.item_id)
            self._put(_Chunk({"type": "session.output_audio.delta", "delta": wire}, ms, 0, audio.response_id,
                             audio.item_id, audio.start_ms + audio.duration_ms))

    def flush(self, response_id: str) -> None:
        """The reply's audio is all queued: once it is heard, it is over."""
        if response_id in self._silenced:
            self._silenced.discard(response_id)
            return
        self._put(_Chunk(None, response_id=response_id))

    async def clear(self) -> Cleared | None:
        """Drop what is not sent yet (the voice stops), and what is still coming from the reply heard; what of its
        messages was sent. None when nothing was playing."""
        playing = self._playing or next((c.response_id for c in self._queue if c.response_id), None)
        stopped = self.speaking
        self._queue = deque(chunk for chunk in self._queue if chunk.then is not None)  # a fixture's ``played``
        self.cursor = min(self.cursor, self._timeline.now_ms())
        if playing is None or not stopped:
            return None
        self._silenced.add(playing)
        self._playing = None
        items = self._items.pop(playing, set())
        heard = tuple(Heard(item, playing, self._sent.get(item, 0)) for item in sorted(items))
        self._report_finished(playing, heard, interrupted=True)
        return Cleared(playing, heard)

    # -- words, fixtures, marks -----------------------------------------------------------------------------------

    def clause(self, clause: SpokenClause) -> None:
        """Queue the words of a spoken clause, to leave with the first chunk of its audio."""
        if clause.response_id not in self._silenced:
            self._put(_Chunk(event("session.output_transcript.delta", delta=clause.text),
                             span_ms=clause.end_ms - clause.start_ms, response_id=clause.response_id))

    def text(self, response_id: str, delta: str) -> None:
        """Queue more of a written reply (a voice without speech): it leaves at once."""
        if response_id not in self._silenced:
            self._put(_Chunk(event("session.output_transcript.delta", delta=delta), response_id=response_id))

    def fixture(self, wire: str, duration_ms: int) -> None:
        """Queue a chunk of a fixture's audio (already in the wire format)."""
        self._put(_Chunk({"type": "session.output_audio.delta", "delta": wire}, duration_ms))

    def mark(self, then: Callable[[], Awaitable[None]]) -> None:
        """Run ``then`` once everything queued so far has been heard."""
        self._put(_Chunk(None, then=then))

    async def close(self) -> None:
        self._queue.clear()
        if self._writer is not None:
            self._writer.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._writer

    # -- the writer -----------------------------------------------------------------------------------------------

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
            wait_ms = self.cursor - self._lead_ms - now if chunk.duration_ms or chunk.span_ms else 0
            if chunk.event is None:
                wait_ms = self.cursor - now
            if wait_ms > 0:
                self._ready.clear()  # a clear() while waiting wakes the writer early
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._ready.wait(), wait_ms / 1000)
                continue
            self._queue.popleft()
            if chunk.then is not None:
                await chunk.then()
            elif chunk.event is None:
                self._finished(chunk.response_id)
            else:
                await self._send(self._placed(chunk, now))

    def _placed(self, chunk: _Chunk, now: int) -> dict[str, Any]:
        """The chunk's message as it leaves: audio moves the cursor, words get their span on the timeline."""
        event = chunk.event
        assert event is not None
        if chunk.duration_ms:
            self.cursor = max(self.cursor, now) + chunk.duration_ms
            if chunk.response_id is not None and chunk.item_id is not None:
                self._sent[chunk.item_id] = chunk.item_end_ms
                self._started(chunk.response_id)
            return event
        start = max(self.cursor, now)
        if chunk.response_id != self._written or chunk.span_ms:
            event = {**event, "delta": spaced(self._said, event["delta"])}
        self._written = chunk.response_id
        self._said = (self._said + event["delta"])[-1:]
        return {**event, "start_ms": start, "end_ms": start + chunk.span_ms}

    def _started(self, response_id: str) -> None:
        if self._playing != response_id:
            self._playing = response_id
            for listener in self._listeners:
                listener.playback_started(response_id)

    def _finished(self, response_id: str | None) -> None:
        """A reply's audio has all been heard."""
        if response_id is not None and response_id == self._playing:
            self._playing = None
            items = self._items.pop(response_id, set())
            self._report_finished(response_id, tuple(Heard(item, response_id, self._sent.get(item, 0))
                                                     for item in sorted(items)), interrupted=False)

    def _report_finished(self, response_id: str, heard: tuple[Heard, ...], *, interrupted: bool) -> None:
        position = sum(part.audio_end_ms for part in heard)
        for listener in self._listeners:
            listener.playback_finished(response_id, position, interrupted)
