"""The speech of a Realtime WebSocket client, reckoned from the audio sent: when the user will have heard it.

Over a WebSocket speech is sent faster than real time and the client plays it from its own buffer, so the last
chunk leaves long before the user hears it. :class:`ReckonedPlayout` reckons that the client plays what it is sent
back to back, in real time: a chunk of ``d`` ms sent at ``t`` is played by ``max(end, t) + d``, where ``end`` is when
the chunks before it are. For audio sent ahead of playback that is the time the first chunk was sent plus the
duration of all of it. The speech is over at that end, unless a response is still being spoken (captured but not
flushed: a slow clause must not end it between two clauses), or at once when the client says it stopped playing:
``output_audio_buffer.clear`` (the core clears it), or a truncate of the audio it received last (:meth:`truncated`).

The client truncates its messages itself, as the Realtime protocol says: :meth:`clear` answers None. What the
reckoning is for is its listener (:class:`~voxcall.core.playout.Ducking`: the host's music stays down while the
session's speech is heard).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

from voxcall.core.events import OutputAudio
from voxcall.core.playout import Cleared, PlaybackListener


class ReckonedPlayout:
    """The reckoned playback of one Realtime WebSocket client (the :class:`~voxcall.core.playout.Playout` of a
    client that plays its audio itself); ``clock`` tells the time in seconds (monotonic by default)."""

    def __init__(self, *, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._listeners: list[PlaybackListener] = []
        self._playing: str | None = None  # the response whose speech is heard now (None: silence)
        self._spoken: set[str] = set()  # responses captured and not yet flushed
        self._end: float | None = None  # when the audio sent so far has been played
        self._heard_ms = 0  # audio sent since the speech began
        self._last_item: str | None = None  # the message whose audio was sent last
        self._timer: asyncio.TimerHandle | None = None

    @property
    def ends_at(self) -> float | None:
        """When the audio sent so far will have been played (``clock`` time); None before any audio and once the
        speech is over."""
        return self._end

    def watch(self, listener: PlaybackListener) -> None:
        self._listeners.append(listener)

    def capture(self, audio: OutputAudio) -> None:
        """``audio`` went to the client: the speech lasts that much longer."""
        now = self._clock()
        self._end = max(now if self._end is None else self._end, now) + audio.duration_ms / 1000
        self._last_item = audio.item_id
        self._heard_ms += audio.duration_ms
        self._spoken.add(audio.response_id)
        if self._playing is None:
            self._playing = audio.response_id
            for listener in self._listeners:
                listener.playback_started(audio.response_id)
        self._settle()

    def flush(self, response_id: str) -> None:
        """The response's audio is all sent; its last chunks still play."""
        self._spoken.discard(response_id)
        self._settle()

    async def clear(self) -> Cleared | None:
        """The client dropped what it had not played: the speech is over now."""
        self._stop(interrupted=True)
        return None

    def truncated(self, item_id: str) -> None:
        """The client stopped playing the message ``item_id`` (it truncated it): if that is the audio sent last, the
        speech is over now."""
        if item_id == self._last_item:
            self._stop(interrupted=True)

    def _settle(self) -> None:
        """End the speech if no response is being spoken and its audio has been played; else wait for its end."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._spoken:
            return
        left = 0.0 if self._end is None else self._end - self._clock()
        if left > 0:
            self._timer = asyncio.get_running_loop().call_later(left, self._settle)
        else:
            self._stop(interrupted=False)

    def _stop(self, *, interrupted: bool) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        playing, heard = self._playing, self._heard_ms
        self._end, self._playing, self._heard_ms = None, None, 0
        self._spoken.clear()
        if playing is not None:
            for listener in self._listeners:
                listener.playback_finished(playing, heard, interrupted)
