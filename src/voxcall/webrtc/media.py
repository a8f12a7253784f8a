"""The call's audio: the agent's speech as an outgoing WebRTC track, and the caller's microphone read into PCM.

Over WebRTC the server plays its own speech out, in real time, as the track's frames: unlike a WebSocket client,
the browser holds no buffer of its own to clear. So :class:`SpeechTrack` (the call's
:class:`~voxcall.core.playout.Playout`) knows at every moment what the user has heard, which is what a barge-in needs:
:meth:`SpeechTrack.clear` drops the audio not yet played (the speech stops within one 20 ms frame), and any still on
its way from the response cut short, and says how much of each message was heard, for the session to cut it to.

The track tells its owner when a response's audio starts and stops being heard (``output_audio_buffer.started``
and ``.stopped`` as OpenAI's WebRTC service sends them): ``started`` at its first frame, ``stopped`` once every
frame of a response whose audio is complete has been played. Frames are 20 ms of mono PCM16 at the session's 24 kHz;
aiortc's Opus encoder resamples them to Opus's 48 kHz.
"""

from __future__ import annotations

import asyncio
import fractions
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from aiortc import MediaStreamTrack
from aiortc.mediastreams import MediaStreamError
from av import AudioFrame

from voxcall.audio.codec import StreamResampler
from voxcall.audio.formats import PCM24K
from voxcall.core.events import OutputAudio
from voxcall.core.playout import Cleared, Heard, PlaybackListener

PCM = npt.NDArray[np.int16]

RATE = PCM24K.rate
"""The session's audio rate, in and out (PCM16 at the Realtime default rate: a call takes no formats)."""

FRAME_SAMPLES = RATE // 50
"""One 20 ms frame, the packet time WebRTC audio uses."""


@dataclass
class _Chunk:
    item_id: str
    response_id: str
    pcm: PCM


class SpeechTrack(MediaStreamTrack):
    r"""The agent's voice: the audio :meth:`capture`\ d, paced in real time, silence between.

    ``started(response_id)`` and ``stopped(response_id)`` are called when a response's audio begins to be heard
    and when the last of it has been (after :meth:`flush`), as are the listeners :meth:`watch` adds; ``clock`` tells
    monotonic seconds.
    """

    kind = "audio"

    def __init__(self, started: Callable[[str], None], stopped: Callable[[str], None], *,
                 clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__()
        self._started, self._stopped = started, stopped
        self._clock = clock
        self._queue: deque[_Chunk] = deque()
        self._heard: dict[str, int] = {}  # samples played per message item
        self._items: dict[str, set[str]] = {}  # the message items of each response heard
        self._audible: str | None = None  # the response being heard
        self._complete: set[str] = set()  # responses whose audio is all queued
        self._silenced: set[str] = set()  # responses cut short: audio still on its way from them is dropped
        self._listeners: list[PlaybackListener] = []
        self._start: float | None = None
        self._pts = 0

    def watch(self, listener: PlaybackListener) -> None:
        self._listeners.append(listener)

    def capture(self, audio: OutputAudio) -> None:
        """Queue a chunk of the speech (24 kHz), unless its response was cut short."""
        if audio.pcm.size and audio.response_id not in self._silenced:
            self._queue.append(_Chunk(audio.item_id, audio.response_id, audio.pcm))

    def flush(self, response_id: str) -> None:
        """Response ``response_id`` has no more audio to queue: once it is played, it has stopped."""
        self._silenced.discard(response_id)
        if self._audible == response_id and not self._queue:
            self._finish()
        elif self._audible == response_id or any(chunk.response_id == response_id for chunk in self._queue):
            self._complete.add(response_id)

    @property
    def speaking(self) -> str | None:
        """The response whose audio the user hears now or is about to (None: nothing played or queued)."""
        if self._audible is not None:
            return self._audible
        return self._queue[0].response_id if self._queue else None

    async def clear(self) -> Cleared | None:
        """Drop every frame not yet played, and what is still on its way from the response playing: what of each
        message cut short was heard (None: nothing was playing)."""
        speaking = self.speaking
        if speaking is None:
            return None
        cut = {chunk.item_id: Heard(chunk.item_id, chunk.response_id, self._heard.get(chunk.item_id, 0) * 1000 // RATE)
               for chunk in self._queue}
        self._silenced.update({speaking, *(chunk.response_id for chunk in self._queue)})
        self._queue.clear()
        self._complete.discard(self._audible or "")
        if self._audible is not None:
            audible, self._audible = self._audible, None
            self._report_finished(audible, interrupted=True)
        return Cleared(speaking, tuple(cut.values()))

    async def recv(self) -> AudioFrame:
        """The next 20 ms frame, when it is due (aiortc's sender calls this in a loop)."""
        if self.readyState != "live":
            raise MediaStreamError
        now = self._clock()
        if self._start is None:
            self._start = now
        due = self._start + self._pts / RATE
        if due > now:
            await asyncio.sleep(due - now)
        elif now - due > 0.2:  # the loop was held up: move the clock on rather than send a burst (pts go on)
            self._start = now - self._pts / RATE
        frame = AudioFrame.from_ndarray(self._next_samples().reshape(1, -1), format="s16", layout="mono")
        frame.sample_rate = RATE
        frame.pts = self._pts
        frame.time_base = fractions.Fraction(1, RATE)
        self._pts += FRAME_SAMPLES
        return frame

    def _next_samples(self) -> PCM:
        out = np.zeros(FRAME_SAMPLES, np.int16)
        filled = 0
        while filled < FRAME_SAMPLES and self._queue:
            chunk = self._queue[0]
            if self._audible != chunk.response_id:
                if self._audible is not None:
                    self._finish()
                self._audible = chunk.response_id
                self._started(chunk.response_id)
                for listener in self._listeners:
                    listener.playback_started(chunk.response_id)
            take = min(FRAME_SAMPLES - filled, chunk.pcm.size)
            out[filled:filled + take] = chunk.pcm[:take]
            self._heard[chunk.item_id] = self._heard.get(chunk.item_id, 0) + take
            self._items.setdefault(chunk.response_id, set()).add(chunk.item_id)
            filled += take
            if take == chunk.pcm.size:
                self._queue.popleft()
            else:
                chunk.pcm = chunk.pcm[take:]
        if not self._queue and self._audible in self._complete:
            self._finish()
        return out

    def _finish(self) -> None:
        assert self._audible is not None
        response_id, self._audible = self._audible, None
        self._complete.discard(response_id)
        self._stopped(response_id)
        self._report_finished(response_id, interrupted=False)

    def _report_finished(self, response_id: str, *, interrupted: bool) -> None:
        for listener in self._listeners:
            listener.playback_finished(response_id, self._heard_ms(response_id), interrupted)

    def _heard_ms(self, response_id: str) -> int:
        return sum(self._heard.get(item, 0) for item in self._items.get(response_id, ())) * 1000 // RATE


class Microphone:
    """The caller's decoded audio (aiortc's frames: 48 kHz, interleaved channels) as 24 kHz mono PCM16."""

    def __init__(self) -> None:
        self._resampler: StreamResampler | None = None

    def pcm(self, frame: AudioFrame) -> PCM:
        """One received frame's audio: its first channel, at :data:`RATE`."""
        samples = frame.to_ndarray().reshape(-1, len(frame.layout.channels))[:, 0].astype(np.int16, copy=False)
        if self._resampler is None or self._resampler.src_rate != frame.sample_rate:
            self._resampler = StreamResampler(frame.sample_rate, RATE)
        return self._resampler.process(np.ascontiguousarray(samples))
