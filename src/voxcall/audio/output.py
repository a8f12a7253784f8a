"""The host's audio output, shared by music and the assistant's speech through one arbiter.

:class:`AudioOutput` plays music files to a sink in real time and arbitrates with speech: while the assistant speaks
the music is paused (or ducked) and afterwards it comes back, unless something else happened meanwhile. Whether
music sounds is computed from three independent facts rather than kept as a state that events flip:

- a track is loaded (``play`` loads one; ``stop`` and the end of the track unload it);
- the user paused it (``pause``; cleared by ``resume``, ``play`` and ``stop``);
- the assistant is speaking (``speech_started`` / ``speech_finished``, counted: every session of a server shares
  the one host output, and the music comes back only when none of them speaks).

So speech ending never undoes a user's pause, and never restarts music that was stopped while it spoke: those are
the races users of voice assistants hit ("music resumes after an interrupt").

The samples go to a sink (:mod:`voxcall.audio.sinks`: a real output device, nowhere, or a list for tests); the
sinks are re-exported here, since a player is always built with one.
"""

from __future__ import annotations

import asyncio
import logging
import os
from pathlib import Path
from typing import Literal

from voxcall.audio.decode import AudioFileError, AudioFileReader
from voxcall.audio.sinks import AudioSink, NullSink, PlayedChunk, RecordingSink, SoundDeviceSink, default_sink

__all__ = [
    "AudioOutput",
    "AudioSink",
    "NullSink",
    "PlaybackState",
    "PlayedChunk",
    "RecordingSink",
    "SoundDeviceSink",
    "SpeechPolicy",
    "default_sink",
]

log = logging.getLogger(__name__)

SpeechPolicy = Literal["pause", "duck"]
"""What assistant speech does to music: ``pause`` it, or ``duck`` it (play it on, quieter)."""
PlaybackState = Literal["stopped", "playing", "paused"]


class AudioOutput:
    """Music playback on one sink, arbitrated with the assistant's speech (see the module docstring).

    ``speech_policy`` says what speech does to music: ``"pause"`` it or ``"duck"`` it to ``duck_gain`` times its
    volume. Use it from one event loop; a background task streams the track to the sink in ``chunk_ms`` chunks
    decoded in a worker thread, so pausing, ducking and volume changes are heard within a chunk.
    """

    def __init__(self, sink: AudioSink, *, speech_policy: SpeechPolicy = "pause", duck_gain: float = 0.2,
                 chunk_ms: int = 50) -> None:
        if speech_policy not in ("pause", "duck"):
            raise ValueError(f"speech_policy must be 'pause' or 'duck', got {speech_policy!r}")
        if not 0.0 <= duck_gain <= 1.0:
            raise ValueError(f"duck_gain must be within 0..1, got {duck_gain}")
        self.sink = sink
        self.speech_policy: SpeechPolicy = speech_policy
        self.duck_gain = duck_gain
        self.chunk_ms = chunk_ms
        self._volume = 1.0
        self._track: Path | None = None
        self._user_paused = False
        self._speakers = 0  # speakers talking now (a session's speech counts as one until its client played it)
        self._audible = asyncio.Event()  # set while the loaded track may be heard
        self._task: asyncio.Task[None] | None = None
        self._switching = asyncio.Lock()  # play and stop replace the task one at a time

    # -- what is going on ------------------------------------------------------------------------------------

    @property
    def now_playing(self) -> Path | None:
        """The loaded track (playing or paused), or ``None``."""
        return self._track

    @property
    def state(self) -> PlaybackState:
        """``stopped`` (no track), ``paused`` (by the user or by speech) or ``playing`` (ducked or not)."""
        if self._track is None:
            return "stopped"
        return "playing" if self._audible.is_set() else "paused"

    @property
    def music_volume(self) -> float:
        """The music's volume, 0.0 (silent) to 1.0 (as recorded); ducking scales it further while speech plays."""
        return self._volume

    @music_volume.setter
    def music_volume(self, level: float) -> None:
        if not 0.0 <= level <= 1.0:
            raise ValueError(f"music volume must be within 0..1, got {level}")
        self._volume = level

    # -- music -----------------------------------------------------------------------------------------------

    async def play(self, track: str | os.PathLike[str]) -> None:
        """Play ``track`` from its start, replacing what was playing and clearing a user pause.

        Raises :class:`~voxcall.audio.decode.AudioFileError` (and leaves the current track playing) when the file
        cannot be played. While the assistant speaks under the ``pause`` policy the track starts when it stops.
        """
        async with self._switching:
            reader = await asyncio.to_thread(AudioFileReader, track, self.sink.rate, self.chunk_ms)
            try:
                await self._unload()
            except BaseException:  # cancelled while the old track stopped: the new one never starts
                reader.close()
                raise
            self._track = Path(track)
            self._user_paused = False
            self._update()
            self._task = asyncio.create_task(self._stream(reader), name=f"music: {self._track.name}")

    async def stop(self) -> None:
        """Stop the music and silence what the sink still holds. Idempotent; returns once the player task ended."""
        async with self._switching:
            await self._unload()

    def pause(self) -> None:
        """The user pauses the music; only :meth:`resume`, :meth:`play` or :meth:`stop` undo it (speech does not)."""
        if self._track is not None:
            self._user_paused = True
            self._update()

    def resume(self) -> None:
        """Undo the user's pause (the music stays paused while speech pauses it)."""
        self._user_paused = False
        self._update()

    async def wait(self) -> None:
        """Return when the current track has ended or been stopped (at once when nothing is loaded)."""
        if self._task is not None:
            await asyncio.wait({self._task})

    async def close(self) -> None:
        """Stop the music and close the sink."""
        await self.stop()
        self.sink.close()

    # -- speech ----------------------------------------------------------------------------------------------

    @property
    def speakers(self) -> int:
        """How many speakers are talking now (each ``speech_started`` not yet finished)."""
        return self._speakers

    def speech_started(self) -> None:
        """A speaker (one session's assistant) started: pause or duck the music until every speaker has finished."""
        self._speakers += 1
        self._update()

    def speech_finished(self) -> None:
        """A speaker stopped (or was interrupted): once none is left, music that was paused or ducked comes back.
        Each call must match a ``speech_started``; an unmatched one is ignored."""
        self._speakers = max(0, self._speakers - 1)
        self._update()

    # -- inside ----------------------------------------------------------------------------------------------

    def _gain(self) -> float:
        ducked = self._speakers > 0 and self.speech_policy == "duck"
        return self._volume * (self.duck_gain if ducked else 1.0)

    def _update(self) -> None:
        """Recompute whether music may be heard; when it just fell silent, drop what the sink still holds."""
        audible = (self._track is not None and not self._user_paused
                   and not (self._speakers > 0 and self.speech_policy == "pause"))
        if audible:
            self._audible.set()
        elif self._audible.is_set():
            self._audible.clear()
            self.sink.flush()

    async def _unload(self) -> None:
        """Cancel the player task, wait for it to end and silence the sink."""
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            await asyncio.wait({task})  # unlike awaiting the task, a cancellation of our own still propagates
        self._track = None
        self._user_paused = False
        self._audible.clear()
        self.sink.flush()

    async def _stream(self, reader: AudioFileReader) -> None:
        """The player task: decode chunk by chunk in a worker thread and write each to the sink when audible."""
        try:
            while (chunk := await asyncio.to_thread(reader.read)) is not None:
                await self._audible.wait()
                await self.sink.write(chunk, self._gain())
        except AudioFileError as exc:
            log.warning("music stopped: %s", exc)
        except Exception:  # the top of a background task: log what went wrong rather than lose it
            log.exception("music playback of %s failed", reader.path.name)
        finally:
            reader.close()
            if self._task is asyncio.current_task():  # ended by itself, not by play or stop
                self._task = None
                self._track = None
                self._user_paused = False
                self._audible.clear()  # the sink keeps the track's last chunks: let them play out
