"""A session's speech as the client plays it, reckoned from the audio sent: when the user will have heard it.

Over a WebSocket speech is sent faster than real time and the client plays it from its own buffer, so the last
chunk leaves long before the user hears it. :class:`Playback` reckons that the client plays what it is sent back
to back, in real time: a chunk of ``d`` ms sent at ``t`` is played by ``max(end, t) + d``, where ``end`` is when
the chunks before it are. For audio sent ahead of playback that is the time the first chunk was sent plus the
duration of all of it. The speech is over at that end, unless a speaker still holds it (a message still being
spoken: a slow clause must not let the music up between two clauses), or at once when the client says it stopped
playing: ``output_audio_buffer.clear``, a truncate of the audio it received last, or the end of the session.

While a session's speech lasts, the session counts as one speaker on the host's audio output
(:class:`~voxcall.audio.output.AudioOutput`), whose music stays paused or ducked until every session sharing it
is silent.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

from voxcall.audio.output import AudioOutput
from voxcall.core.conversation.items import SpokenAudio


class Playback:
    """The pacing of one session's speech on the host's audio output ``host``.

    ``clock`` tells the time in seconds (monotonic by default); a timer ends the speech when the reckoned end comes.
    """

    def __init__(self, host: AudioOutput, *, clock: Callable[[], float] = time.monotonic) -> None:
        self._host = host
        self._clock = clock
        self._talking = False  # the host was told this session speaks
        self._holds = 0  # speakers with more to say
        self._end: float | None = None  # when the audio sent so far has been played
        self._last: SpokenAudio | None = None  # the message whose audio was sent last
        self._timer: asyncio.TimerHandle | None = None

    @property
    def ends_at(self) -> float | None:
        """When the audio sent so far will have been played (``clock`` time); None before any audio and once the
        speech is over."""
        return self._end

    def hold(self) -> None:
        """A speaker starts a message: the speech lasts at least until its :meth:`release`."""
        self._holds += 1
        self._talk()
        self._settle()

    def release(self) -> None:
        """The speaker of a message has sent all it will send (or was stopped)."""
        self._holds -= 1
        self._settle()

    def sent(self, audio: SpokenAudio, ms: int) -> None:
        """``ms`` of the message ``audio`` went to the client: the speech lasts that much longer."""
        now = self._clock()
        self._end = max(now if self._end is None else self._end, now) + ms / 1000
        self._last = audio
        self._talk()
        self._settle()

    def stopped(self, audio: SpokenAudio) -> None:
        """The client stopped playing the message ``audio`` (it truncated it): if that is the audio sent last, the
        speech is over now."""
        if audio is self._last:
            self.stop()

    def stop(self) -> None:
        """The speech is over now: played out, cleared by the client, or its session ended. Idempotent."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._end = None
        if self._talking:
            self._talking = False
            self._host.speech_finished()

    def _talk(self) -> None:
        if not self._talking:
            self._talking = True
            self._host.speech_started()

    def _settle(self) -> None:
        """End the speech if no speaker holds it and its audio has been played; else wait for its end."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._holds > 0:
            return
        left = 0.0 if self._end is None else self._end - self._clock()
        if left > 0:
            self._timer = asyncio.get_running_loop().call_later(left, self._settle)
        else:
            self.stop()
