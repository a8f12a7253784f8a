"""Speaking one assistant message as its text streams: clause by clause, never waiting for whole sentences.

Text deltas go through a :class:`~voxcall.speech.clauses.ClauseSplitter`; each complete clause is synthesised,
resampled to the session's output rate and scaled by the session's voice gain in a worker thread while the model
keeps generating, then sent in chunks of :data:`CHUNK_MS` (:class:`~voxcall.core.events.OutputAudio`). Tool syntax
never gets here: the text is what the ``<code>`` parser released. A speaker of a hidden (speculative) response
waits for its claim before it synthesises anything. Each clause is recorded with its audio span as its audio starts
to go out (and sent, :class:`~voxcall.core.events.SpokenClause`, just before its audio), and every chunk sent is
counted (:class:`~voxcall.core.conversation.items.SpokenAudio`), so a truncation can cut the transcript to what the
user actually heard, wherever a cancel stopped the speech.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Protocol

from voxcall.audio.codec import PCM, apply_gain, pcm_duration_ms, resample
from voxcall.audio.formats import AudioFormat
from voxcall.core.conversation.items import Spoken, SpokenAudio
from voxcall.speech.clauses import ClauseSplitter
from voxcall.speech.tts import TTS

CHUNK_MS = 100
"""Audio per chunk sent."""


class SpeechOut(Protocol):
    """Where a speaker's output goes: each clause as its audio starts, then that audio chunk by chunk."""

    async def clause(self, spoken: Spoken) -> None:
        """The clause whose audio follows, with its span in the message's audio."""
        ...

    async def audio(self, pcm: PCM, start_ms: int, duration_ms: int) -> None:
        """A chunk: its samples, where it starts in the message's audio (ms), and how long it lasts (ms)."""
        ...


class Speaker:
    """Turns one message's text into audio events; ``finish()`` waits for the last chunk, ``cancel()`` stops."""

    def __init__(self, tts: TTS, fmt: AudioFormat, gain: Callable[[], float],
                 out: SpeechOut, released: asyncio.Event, *, speed: float = 1.0) -> None:
        """``out`` takes the clauses and their audio once ``released`` is set; ``speed`` is the speaking rate the
        TTS is asked for."""
        self._tts = tts
        self._speed = speed
        self._fmt = fmt
        self._gain = gain
        self._out = out
        self._released = released
        self._splitter = ClauseSplitter()
        self._clauses: asyncio.Queue[str | None] = asyncio.Queue()
        self.audio = SpokenAudio()
        self._task = asyncio.create_task(self._speak(), name="voxcall-speaker")

    def feed(self, text: str) -> None:
        """Queue the clauses that ``text`` completes."""
        for clause in self._splitter.feed(text):
            self._clauses.put_nowait(clause)

    async def finish(self) -> None:
        """Speak what is left and wait until the last audio chunk has been sent."""
        for clause in self._splitter.flush():
            self._clauses.put_nowait(clause)
        self._clauses.put_nowait(None)
        await self._task

    async def cancel(self) -> None:
        """Stop at once: no further audio is sent."""
        self._task.cancel()
        await asyncio.wait([self._task])

    def _render(self, clause: str) -> list[tuple[PCM, int]]:
        """The clause's audio at the session's rate and volume: chunks, each with its length (ms)."""
        chunks: list[tuple[PCM, int]] = []
        step = self._fmt.rate * CHUNK_MS // 1000
        for pcm in self._tts.synthesize(clause, speed=self._speed):
            audio = apply_gain(resample(pcm, self._tts.sample_rate, self._fmt.rate), self._gain())
            for i in range(0, len(audio), step):
                piece = audio[i:i + step]
                chunks.append((piece, pcm_duration_ms(len(piece), self._fmt.rate)))
        return chunks

    async def _speak(self) -> None:
        await self._released.wait()
        while (clause := await self._clauses.get()) is not None:
            chunks = await asyncio.to_thread(self._render, clause)
            start = self.audio.sent_ms
            spoken = Spoken(clause, start, start + sum(ms for _, ms in chunks))
            self.audio.clauses.append(spoken)
            await self._out.clause(spoken)
            for chunk, ms in chunks:
                await self._out.audio(chunk, self.audio.sent_ms, ms)
                self.audio.sent_ms += ms
