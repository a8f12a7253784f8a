"""Transcripts of a turn while it is still being spoken: ``conversation.item.input_audio_transcription.delta``.

Under server VAD, each ``live_transcript_ms`` of new speech in a turn starts a partial transcription of the turn so
far (Whisper's cheap sized window only; one at a time: a partial still running when the next is due is not
queued, the next starts at the following step). A partial starts only while the user is speaking: once the speaker
has been silent for :data:`QUIET_MS`, no new words are coming and the turn may be ending, and the turn's final
transcription would have to wait for a partial that holds the model it needs (measured: +60-130 ms to the end of a
turn on 2 cores when partials could start in the closing silence).

The protocol's deltas are appended text, so a :class:`LiveTranscript` only ever adds to what it has said
(:attr:`said`):

- a partial's last word is held back (the audio may end inside it);
- the other words are sent when they extend what was said; when a partial hypothesis revises words already sent,
  nothing is sent for it (deltas never retract), and later partials that agree with the words sent carry on;
- at the end of the turn, when the final transcript begins with what was said, its remainder is the last delta, so
  the deltas add up to exactly the ``.completed`` transcript; when it does not, no last delta is sent.

The ``.completed`` transcript is authoritative: a client shows the deltas as the user speaks and replaces them with
it. The deltas of a turn carry the item id that ``input_audio_buffer.speech_started`` announced, so they arrive
before that item's ``conversation.item.added``.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

from voxcall.audio.codec import PCM
from voxcall.speech.stt import Hearing
from voxcall.speech.voice import Voice

log = logging.getLogger(__name__)

_NEVER = 2**62

QUIET_MS = 100
"""Silence after which no partial starts (a gap between words is shorter; a turn's closing silence is longer)."""


def next_delta(said: str, heard: str, *, final: bool, catch_up: bool = False) -> str:
    """What to append to ``said`` for the hypothesis ``heard`` ("" for nothing); ``final`` for the turn's own
    transcript, whose last word stands.

    A final transcript that revised words already said ("12" became "twelve") adds nothing: the ``.completed``
    transcript is authoritative. With ``catch_up``, for a protocol that has no final transcript to replace the
    deltas (GPT-Live), it adds its words past as many words as were said: "What is 12" + " times eight?", never a
    turn cut short."""
    if final:
        if heard.startswith(said):
            return heard[len(said):]
        return "".join(f" {word}" for word in heard.split()[len(said.split()):]) if catch_up else ""
    words, sent = heard.split()[:-1], said.split()
    if words[:len(sent)] != sent or len(words) <= len(sent):
        return ""
    added = " ".join(words[len(sent):])
    return f" {added}" if said else added


class LiveTranscript:
    """The partial transcripts of one turn being spoken, which began at ``start_ms`` on the stream clock."""


    def __init__(self, item_id: str, start_ms: int, every_ms: int, voice: Voice, hearing: Hearing | None,
                 send: Callable[[str], Awaitable[None]]) -> None:
        """Every ``every_ms`` of the turn, transcribe it with ``voice`` as ``hearing`` says (None: the server's
        model); ``send`` a delta."""
        self.item_id = item_id
        self.said = ""
        """The text the deltas have said so far."""
        self._every_ms = every_ms
        self._due_ms = start_ms + every_ms
        self._voice = voice
        self._hearing = hearing
        self._send = send
        self._task: asyncio.Task[None] | None = None

    def heard(self, position_ms: int, turn: Callable[[int], PCM], *, silent_ms: int = 0) -> None:
        """The stream reached ``position_ms``, the speaker silent for the last ``silent_ms``; when a partial is due,
        none is running and the user is speaking, start one on ``turn(position_ms)``, the turn's audio so far."""
        if position_ms < self._due_ms or silent_ms >= QUIET_MS or (self._task is not None and not self._task.done()):
            return
        self._due_ms = position_ms + self._every_ms
        self._task = asyncio.create_task(self._partial(turn(position_ms)), name=f"voxcall-live-{self.item_id}")

    async def stop(self) -> None:
        """No more partials; waits for one still running, which costs no time: it holds the model the turn's final
        transcription needs next."""
        self._due_ms = _NEVER
        if self._task is not None:
            await asyncio.wait([self._task])

    async def _partial(self, pcm: PCM) -> None:
        try:
            heard = await self._voice.partial(pcm, self._hearing)
        except Exception:  # a partial is a courtesy: the turn's end transcribes and reports a failure
            log.exception("partial transcription of %s failed", self.item_id)
            return
        delta = next_delta(self.said, heard.text, final=False) if heard is not None else ""
        if delta:
            self.said += delta
            await self._send(delta)
