"""An answer prepared while the user pauses, before the turn detector is sure the turn is over.

At a short silence inside a turn (the detector's ``SpeechPaused``) an :class:`EagerTurn` transcribes what was said
so far and, once it has words, asks the response lifecycle for a hidden answer to them
(:meth:`~voxcall.core.responses.lifecycle.ResponseLifecycle.answer_early`). Its user item is the one the turn will
commit, made ahead with the id the turn reserved, so the hidden answer's context is exactly what the conversation
will hold. Then one of two things happens:

- the user speaks on (``SpeechResumed``): :meth:`cancel` stops the transcription, the caller discards the hidden
  answer, and nothing of either ever reached the client;
- the turn ends (``SpeechStopped``): the caller commits the item with the transcript made here (the audio after
  the pause is silence) and claims the hidden answer, whose output was waiting in the gate.

Under ``semantic_vad`` the transcript is also handed to a ``judge``, which decides how much more silence ends the
turn (:mod:`voxcall.core.hearing.turn_detection`); the answer is started first, so that it is being prepared meanwhile.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable

from voxcall.audio.codec import PCM
from voxcall.core.conversation.items import MessageItem
from voxcall.speech.stt import Hearing, Transcript
from voxcall.speech.voice import Voice

log = logging.getLogger(__name__)


class EagerTurn:
    """One pause's transcript and hidden answer."""

    def __init__(self, item: MessageItem, pcm: PCM, speech_end: float, voice: Voice, hearing: Hearing | None,
                 earlier: Callable[[], Awaitable[None]], answer: Callable[[MessageItem, float], bool],
                 judge: Callable[[str], Awaitable[None]] | None = None) -> None:
        """Transcribe ``pcm`` (the turn so far; the user stopped speaking at ``speech_end``) into ``item`` as
        ``hearing`` says, after ``earlier`` (the transcripts of earlier turns) are done; then start a hidden answer
        with ``answer`` (given the item and ``speech_end``, which the answer is timed from) and, when given,
        ``judge`` the words (whether the user has finished)."""
        self.item = item
        self.speech_end = speech_end
        self.transcript: Transcript | None = None  # None until known, or when transcription failed
        self.transcribed_at: float | None = None
        self.stt_seconds = 0.0
        self.answering = False  # a hidden answer was started
        self._voice = voice
        self._hearing = hearing
        self._earlier = earlier
        self._answer = answer
        self._judge = judge
        self._task = asyncio.create_task(self._run(pcm), name=f"voxcall-eager-{item.id}")

    async def _run(self, pcm: PCM) -> None:
        await self._earlier()
        started = time.monotonic()
        try:
            transcript = await self._voice.transcribe(pcm, self._hearing)
        except Exception:  # the turn's end transcribes again and reports the failure
            log.exception("eager transcription of %s failed", self.item.id)
            return
        self.transcribed_at = time.monotonic()
        self.stt_seconds = self.transcribed_at - started
        self.transcript = transcript
        self.item.content[0]["transcript"] = transcript.text
        if transcript.text:
            self.answering = self._answer(self.item, self.speech_end)
            if self._judge is not None:
                await self._judge(transcript.text)

    async def result(self) -> Transcript | None:
        """The transcript, once made (None if transcription failed)."""
        await asyncio.wait([self._task])
        return self.transcript

    async def cancel(self) -> None:
        """Stop transcribing (the hidden answer, if any, is the caller's to discard)."""
        self._task.cancel()
        await asyncio.wait([self._task])
