"""The caller's side of the sound: the audio of each spoken turn, a microphone that streams it in real time, and a
speaker that plays the answers as they arrive, so that a barge-in happens where a caller's would.

- :func:`turn_audio`: a ``say`` turn synthesized with a voice voxcall has (Piper's ``joe``, a configured Piper voice,
  espeak-ng's for other languages), or a ``wav`` turn's file, as PCM16 at 24 kHz.
- :class:`Microphone`: 20 ms chunks on a real-time clock (a deadline per chunk, so the pace never drifts); between
  utterances it sends silence (server VAD hears a live line) or nothing (push-to-talk).
- :class:`Speaker`: plays each chunk of answer audio when the one before it has played (or at once, when it is idle),
  and knows at any moment which item is playing and how far into it: what the user has heard.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from voxcall.audio.codec import resample
from voxcall.client.session import AUDIO_FORMAT
from voxcall.client.talk import CHUNK_MS
from voxcall.client.wavfile import read_wav
from voxcall.evaluation.scenario import ScenarioFile, Turn, TurnKind

PCM = npt.NDArray[np.int16]
FORMAT = AUDIO_FORMAT
"""The format of every sample the runner sends and receives: the Realtime default, PCM16 mono at 24 kHz."""
RATE = FORMAT.rate


def turn_audio(scenarios: ScenarioFile, turn: Turn) -> PCM | None:
    """The audio of a spoken turn (None for the others); blocking (synthesis): run it in a worker thread.

    Raises :class:`~voxcall.speech.SpeechModelError` when the voice is not installed, and
    :class:`~voxcall.client.wavfile.WavError` for a file that is not a PCM WAV.
    """
    if turn.kind is TurnKind.WAV:
        return read_wav(scenarios.wav_path(turn), RATE)
    if turn.kind is not TurnKind.SAY:
        return None
    from voxcall.speech.voices import VoiceCatalog

    assert turn.say is not None
    catalog = VoiceCatalog({})
    name = turn.voice or (catalog.for_language(turn.language) if turn.language else scenarios.voice)
    voice = catalog.load(name)
    chunks = list(voice.synthesize(turn.say))
    pcm = np.concatenate(chunks) if chunks else np.zeros(0, np.int16)
    return resample(pcm, voice.sample_rate, RATE)


VOICE_LEVEL = 328
"""The sample magnitude (-40 dBFS) above which audio counts as voice, to find where an utterance ends."""


def tail_seconds(pcm: PCM) -> float:
    """How long ``pcm`` is silent at its end (a voice's or a recording's trailing silence): the end of the
    speech is that long before its last sample."""
    voiced = np.flatnonzero(np.abs(pcm.astype(np.int32)) > VOICE_LEVEL)
    last = int(voiced[-1]) + 1 if voiced.size else 0
    return (len(pcm) - last) / RATE


def silence(ms: int) -> PCM:
    """``ms`` of silence at :data:`RATE`."""
    return np.zeros(RATE * ms // 1000, np.int16)


class Microphone:
    """Sends what the caller says through ``send``, 20 ms at a time in real time; ``live`` sends silence when the
    caller says nothing. Start it, :meth:`say` into it, and :meth:`stop` it."""

    def __init__(self, send: Callable[[PCM], Awaitable[None]], *, live: bool) -> None:
        self._send = send
        self.live = live
        self._queue: deque[tuple[PCM, asyncio.Future[float]]] = deque()
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name="eval-microphone")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
            self._task = None
        for _, done in self._queue:
            if not done.done():
                done.cancel()

    async def say(self, pcm: PCM) -> float:
        """Say ``pcm``; returns once it is all sent, with the moment the speech in it ended (:func:`time.monotonic`:
        when its last sample went out, less its trailing silence)."""
        done: asyncio.Future[float] = asyncio.get_running_loop().create_future()
        self._queue.append((pcm, done))
        self._wake.set()
        if self._task is not None and self._task.done():
            self._task.result()  # a send that failed: say why
        return await done - tail_seconds(pcm)

    async def _run(self) -> None:
        step = RATE * CHUNK_MS // 1000
        loop = asyncio.get_running_loop()
        due = loop.time()
        offset = 0
        while True:
            if not self._queue and not self.live:
                self._wake.clear()
                await self._wake.wait()
                due = max(due, loop.time())
            await asyncio.sleep(max(0.0, due - loop.time()))
            due += CHUNK_MS / 1000
            if not self._queue:
                await self._send(silence(CHUNK_MS))
                continue
            pcm, done = self._queue[0]
            chunk = pcm[offset:offset + step]
            offset += step
            try:
                await self._send(chunk)
            except BaseException as exc:
                if not done.done():
                    done.set_exception(exc)
                raise
            if offset >= len(pcm):
                self._queue.popleft()
                offset = 0
                if not done.done():
                    done.set_result(time.monotonic())


@dataclass
class _Played:
    """One item's audio on the speaker: when it starts playing and how long it lasts (seconds)."""

    owner: int
    start: float
    seconds: float = 0.0


class Speaker:
    """The caller's speaker: answer audio plays in arrival order, each chunk after the one before it."""

    def __init__(self) -> None:
        self._items: dict[str, _Played] = {}
        self._end = 0.0  # when the last chunk queued will have played

    def play(self, item_id: str, owner: int, samples: int, now: float) -> None:
        """A chunk of ``samples`` of ``item_id`` (an answer to turn ``owner``) arrived at ``now``."""
        start = max(now, self._end)
        played = self._items.setdefault(item_id, _Played(owner, start))
        played.seconds += samples / RATE
        self._end = start + samples / RATE

    def heard_ms(self, owner: int, now: float) -> int:
        """How much of the answers to turn ``owner`` has been heard by ``now``."""
        return round(1000 * sum(min(p.seconds, max(0.0, now - p.start)) for p in self._items.values()
                                if p.owner == owner))

    def queued_ms(self, owner: int) -> int:
        """How much audio of the answers to turn ``owner`` arrived."""
        return round(1000 * sum(p.seconds for p in self._items.values() if p.owner == owner))

    def playing(self, now: float) -> tuple[str, int, int] | None:
        """The item playing at ``now``, how far into it (ms) and the turn it answers; None when the speaker is
        quiet."""
        if now >= self._end:
            return None
        for item_id, p in self._items.items():
            if p.start <= now < p.start + p.seconds:
                return item_id, round(1000 * (now - p.start)), p.owner
        return None

    def quiet_at(self) -> float:
        """When everything queued will have played."""
        return self._end

    def stop(self, now: float) -> None:
        """The caller spoke over the answer: what has not played is dropped."""
        for p in self._items.values():
            p.seconds = min(p.seconds, max(0.0, now - p.start))
        self._end = min(self._end, now)
