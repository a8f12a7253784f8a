"""What a session hears: input audio in, user turns and their transcripts out.

:class:`HeardAudio` owns the ``input_audio_buffer`` (:class:`~voxcall.core.hearing.input_buffer.InputAudio`), the
resampling of the client's format to the speech models' 16 kHz (one streaming resampler, continuous across appends), the
turn detector (server VAD) and the transcription tasks. A turn, whether ended by the detector or committed by the
client, becomes a user audio item in the conversation at once; its transcript follows from a worker thread. What a turn
means for responses goes to the :class:`~voxcall.core.responses.lifecycle.ResponseLifecycle`: speech discards a hidden
response and, with ``interrupt_response``, stops the assistant (the session's barge-in: its speech cleared, its response
cancelled); a transcribed turn under ``create_response`` asks the session to respond. Under ``create_response`` a pause
of ``eager_turn_ms`` inside the turn starts an :class:`~voxcall.core.hearing.eager_turn.EagerTurn`: the answer is
prepared hidden and claimed when the turn ends, or dropped when the user speaks on. Under ``semantic_vad`` that pause's
transcript is also judged (the voice's :class:`~voxcall.speech.turns.TurnJudge`) and the verdict sets the silence that
ends this turn (:data:`~voxcall.core.hearing.turn_detection.EAGERNESS_TURN_END`). While a turn is spoken, a
:class:`~voxcall.core.hearing.partials.LiveTranscript` sends its partial transcripts (``live_transcript_ms``). Every
transcription hears as the session's ``audio.input.transcription`` asks (:mod:`voxcall.core.hearing.transcription`).

A turn is answered only if no new speech began after it: when the user resumes before a turn's transcript is back, the
answer waits for the end of the whole sentence, which then answers every part of it.

A turn lasts at most ``max_turn_ms``: there it ends as if the user had paused (``speech_stopped``, committed,
transcribed, answered), so the audio held never grows past it. A user who speaks on starts a new turn at once, and, as
above, the answer then waits for the end of everything they say. At most :data:`MAX_TRANSCRIBING` turns are transcribed
at once: a client that sends audio faster than it can be transcribed waits (its next event is read when a transcript is
done) rather than piling up turns in memory.

``idle_timeout_ms`` (``server_vad``) is kept on the audio stream's own clock: when that much audio has arrived with
neither side speaking, counted from the end of the assistant's last audio as the client plays it (in real time from its
first chunk), the silence is committed as a user item (``input_audio_buffer.timeout_triggered``) and answered, as
OpenAI's server does.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Protocol

from voxcall.audio.codec import PCM, StreamResampler
from voxcall.core.conversation.conversation import Conversation
from voxcall.core.conversation.items import MessageItem
from voxcall.core.errors import SessionError
from voxcall.core.events import (
    AudioCleared,
    AudioCommitted,
    Emit,
    IdleTimedOut,
    ItemAdded,
    ItemDone,
    SpeechStarted,
    SpeechStopped,
    TranscriptCompleted,
    TranscriptDelta,
    TranscriptFailed,
    TurnCapped,
)
from voxcall.core.hearing.direct_audio import keep_recent_audio, wav_base64
from voxcall.core.hearing.eager_turn import EagerTurn
from voxcall.core.hearing.input_buffer import AudioBufferFull, InputAudio
from voxcall.core.hearing.partials import LiveTranscript, next_delta
from voxcall.core.hearing.turn_detection import TurnDetection
from voxcall.core.ids import new_id
from voxcall.core.observer import Observer
from voxcall.core.responses.lifecycle import Phase, ResponseLifecycle
from voxcall.core.responses.response import ResponseRun
from voxcall.core.responses.timing import HeardTurn
from voxcall.speech import turns
from voxcall.speech.stt import SAMPLE_RATE, Hearing, Transcript
from voxcall.speech.turns import SpeechPaused, SpeechResumed, TurnDetector, TurnJudge
from voxcall.speech.voice import Voice

log = logging.getLogger(__name__)

VAD_SLICE_SAMPLES = SAMPLE_RATE // 2
"""The most audio (16 kHz samples: half a second) the turn detector reads in one go; an append holding more is read
slice by slice, handing the event loop back between slices, so a client streaming far faster than real time never
holds the loop (and every other session's pings) for the length of its append; each slice, the first too, waits
its turn, so a flood of small appends never does either."""

MIN_COMMIT_MS = 100
"""The shortest audio a client may commit (as OpenAI's server requires)."""

MAX_TRANSCRIBING = 2
"""Turns of one session being transcribed at once; committing another waits for one of them to finish."""


class Hooks(Protocol):
    """What heard audio asks of its session."""

    async def respond_to_turn(self, turn: HeardTurn) -> None:
        """Answer a user turn with the session's settings (under ``create_response``)."""
        ...

    async def barge_in(self) -> None:
        """The user speaks over the assistant (under ``interrupt_response``): it stops talking."""
        ...

    def hearing(self) -> Hearing | None:
        """How the session is heard (None: the server's model)."""
        ...

    def speech_began(self) -> None:
        """A user turn began."""
        ...

    def preparing_here(self) -> bool:
        """Whether the backend is preparing the next turn's prompt on this machine's CPU: live partial transcripts
        wait meanwhile (on two cores they slowed the evaluation of a fresh session's tools: its first audio came
        1.50/1.66 s after the end of speech with them, 1.29/1.24 s without); the partial due comes once it is ready."""
        ...

    def hears_directly(self) -> bool:
        """Whether the model hears turns themselves (:mod:`voxcall.core.hearing.direct_audio`): a turn is then
        answered at once, its transcript following for the client only, and no eager answer is prepared."""
        ...


class HeardAudio:
    """A session's input audio: buffer, resampling, turn detection and transcription."""

    def __init__(self, voice: Voice | None, emit: Emit, conversation: Conversation,
                 responses: ResponseLifecycle, hooks: Hooks, observer: Observer, *, max_turn_ms: int,
                 eager_turn_ms: int = 0, live_transcript_ms: int = 0, max_direct_audio_bytes: int = 0) -> None:
        """``hooks`` is the session; ``max_turn_ms`` is the longest turn under server VAD; ``eager_turn_ms`` (0: off)
        is the pause after which an answer is prepared hidden; ``live_transcript_ms`` (0: off) the speech between
        partial transcripts; at most ``max_direct_audio_bytes`` of turns are kept for a model that hears them."""
        self.voice = voice
        self._hooks = hooks
        self._max_direct_audio_bytes = max_direct_audio_bytes
        self._live_transcript_ms = live_transcript_ms
        self._live: LiveTranscript | None = None
        self._max_turn_ms = max_turn_ms
        self._eager_turn_ms = eager_turn_ms
        self._eager: EagerTurn | None = None
        self._turns_begun = 0  # user turns started so far (a transcript answers only the latest)
        self._observer = observer
        self.buffer = InputAudio()
        self._emit = emit
        self._conversation = conversation
        self._responses = responses
        self._turns: TurnDetection | None = None
        self._detector: TurnDetector | None = None
        self._pause: SpeechPaused | None = None  # the pause of the turn in progress, under semantic_vad
        self._turn_item: str | None = None  # id reserved for the user item of the turn being spoken
        self._resampler: StreamResampler | None = None
        self._transcriptions: set[asyncio.Task[None]] = set()
        self._quiet_since_ms = 0  # stream position since which neither side has spoken
        self._playback: tuple[ResponseRun, int] | None = None  # the last response heard, and where its audio began

    def use_turn_detection(self, turns: TurnDetection | None) -> None:
        """Server VAD with ``turns`` (a fresh detector), or push-to-talk when None."""
        self._turns, self._pause = turns, None
        self._quiet_since_ms = self.buffer.position_ms
        detector = None
        if turns is not None and self.voice is not None:
            judging = self._judge(turns) is not None
            eager = (self._eager_turn_ms if (turns.create_response or judging) and self._eager_turn_ms > 0
                     else None)
            silence = turns.turn_end.unfinished if judging and turns.turn_end else turns.silence_duration_ms
            detector = TurnDetector(self.voice.vad(), threshold=turns.threshold,
                                    prefix_padding_ms=turns.prefix_padding_ms,
                                    silence_duration_ms=silence, pause_ms=eager, max_turn_ms=self._max_turn_ms)
        self._detector = detector
        self.buffer.use_detector(detector)

    def _judge(self, turns: TurnDetection | None) -> TurnJudge | None:
        """The judge of whether the user has finished, under ``semantic_vad`` with pauses reported (the eager
        turn's transcript is what it judges) and a judge installed; else None (fixed silences)."""
        if turns is None or not turns.semantic or self.voice is None or self._eager_turn_ms <= 0:
            return None
        return self.voice.turn_end

    def need_voice(self) -> Voice:
        """The speech models, or a protocol error when this server has none."""
        if self.voice is None:
            raise SessionError("audio input is not available: this server runs without speech models; send text",
                                code="unsupported_event", param="type")
        return self.voice

    # -- client events ------------------------------------------------------------------------------------------

    async def append(self, audio: PCM, rate: int) -> None:
        """Heard ``audio`` at ``rate``: resample to 16 kHz, detect turn boundaries and act on them."""
        self.need_voice()
        if self._resampler is None or self._resampler.src_rate != rate:
            self._resampler = StreamResampler(rate, SAMPLE_RATE)
        pcm = self._resampler.process(audio)
        for start in range(0, len(pcm), VAD_SLICE_SAMPLES):
            await asyncio.sleep(0)  # each slice waits its turn on the event loop, also of a flood of small appends
            await self._heard(pcm[start:start + VAD_SLICE_SAMPLES])
        await self._check_idle()

    async def _heard(self, pcm: PCM) -> None:
        """One slice of an append: into the buffer, through the turn detector, and its boundaries acted on."""
        try:
            boundaries = self.buffer.append(pcm)
        except AudioBufferFull as exc:
            raise SessionError(f"input audio buffer full: {exc}; it was cleared", code="input_audio_buffer_full",
                                param="audio") from None
        for boundary in boundaries:
            if isinstance(boundary, turns.SpeechStarted):
                await self._speech_started(boundary.audio_start_ms)
            elif isinstance(boundary, SpeechPaused):
                self._paused(boundary)
            elif isinstance(boundary, SpeechResumed):
                self._pause = None
                eager, self._eager = self._eager, None
                await self._drop_eager(eager, "speech resumed")
            else:
                await self._speech_stopped(boundary.audio_end_ms, cut=boundary.cut)
        if self._live is not None and not self._hooks.preparing_here():
            self._live.heard(self.buffer.position_ms, self.buffer.peek_turn, silent_ms=self.buffer.silence_ms)

    async def commit(self) -> None:
        """``input_audio_buffer.commit`` (push-to-talk): the held audio becomes a user item; no response."""
        self.need_voice()
        if self.buffer.duration_ms < MIN_COMMIT_MS:
            raise SessionError(f"buffer too small: expected at least {MIN_COMMIT_MS} ms of audio, have "
                                f"{self.buffer.duration_ms} ms", code="input_audio_buffer_commit_empty")
        await self._commit(self.buffer.take_all(), new_id("item"), respond=False)

    async def clear(self) -> None:
        """``input_audio_buffer.clear``: forget the held audio."""
        self.need_voice()
        self.buffer.clear()
        await self._emit(AudioCleared())

    async def transcribed(self) -> None:
        """Wait for the transcripts still being made (a response must read every part of what the user just
        said); called from a transcription, for the others."""
        others = self._transcriptions - {asyncio.current_task()}
        if others:
            await asyncio.wait(others)

    async def close(self) -> None:
        """Stop the transcriptions in flight."""
        if self._eager is not None:
            await self._eager.cancel()
        if self._live is not None:
            await self._live.stop()
        for task in list(self._transcriptions):
            task.cancel()
        await self.transcribed()

    # -- turns --------------------------------------------------------------------------------------------------

    async def _check_idle(self) -> None:
        """Fire ``idle_timeout_ms`` when the audio since both sides fell quiet has reached it."""
        timeout = self._turns.idle_timeout_ms if self._turns is not None else None
        if timeout is None:
            return
        now = self.buffer.position_ms
        heard = self._responses.heard
        if heard is not None and (self._playback is None or self._playback[0] is not heard):
            self._playback = (heard, now)
        if self._responses.visible is not None or self.buffer.in_turn or self._transcriptions:
            self._quiet_since_ms = now
        if self._playback is not None:
            played, start = self._playback
            audio_ms = sum(item.audio_ms for item in played.output if isinstance(item, MessageItem))
            self._quiet_since_ms = max(self._quiet_since_ms, start + audio_ms)
        if now - self._quiet_since_ms >= timeout:
            item_id, start = new_id("item"), self._quiet_since_ms
            self._quiet_since_ms = now
            await self._emit(IdleTimedOut(start, now, item_id))
            await self._commit(self.buffer.take_all(), item_id, respond=True, even_if_silent=True)

    async def _speech_started(self, start_ms: int) -> None:
        """A user turn began: its item id is reserved, a hidden response is dropped, and with
        ``interrupt_response`` the assistant stops talking (barge-in)."""
        self._turn_item = new_id("item")
        self._turns_begun += 1
        if self._live_transcript_ms > 0 and self.voice is not None:
            self._live = LiveTranscript(self._turn_item, start_ms, self._live_transcript_ms, self.voice,
                                        self._hooks.hearing(), self._delta_sender(self._turn_item))
        await self._emit(SpeechStarted(start_ms, self._turn_item))
        await self._responses.discard("user speech")
        if self._turns is not None and self._turns.interrupt_response:
            await self._hooks.barge_in()
        self._hooks.speech_began()

    def _paused(self, pause: SpeechPaused) -> None:
        """A short silence inside the turn: transcribe what was said and prepare the answer, hidden (under
        ``create_response``); under ``semantic_vad`` the silence that ends the turn is the unsure one until the
        words are judged."""
        judge = self._judge(self._turns)
        if judge is not None and self._turns is not None and self._turns.turn_end and self._detector is not None:
            self._pause = pause
            self._detector.end_after(self._turns.turn_end.unsure)
        if self.voice is None or self._turn_item is None or self._eager is not None or self._hooks.hears_directly():
            return
        item = MessageItem(self._turn_item, "user", [{"type": "input_audio", "transcript": None}])
        answer = self._responses.answer_early if self._turns is not None and self._turns.create_response else _no
        pcm = self.buffer.peek_turn(pause.audio_end_ms)
        self._eager = EagerTurn(item, pcm, self._speech_end(pause.speech_end_ms), self.voice, self._hooks.hearing(),
                                self.transcribed, answer, None if judge is None else self._judging(judge, pcm))

    def _judging(self, judge: TurnJudge, pcm: PCM) -> Callable[[str], Awaitable[None]]:
        """What an eager turn's transcript is handed to: the judge's verdict, on the words and on the sound of
        ``pcm`` (heard from now on, beside the transcription), sets the silence that ends the turn (finished:
        short; unfinished: the eagerness's maximum; unsure: as it is). A verdict that comes after the user spoke
        on, or the turn ended, changes nothing."""
        sound = judge.listen(pcm)

        async def verdict(text: str) -> None:
            pause = self._pause
            try:
                judged = await judge.judge(text, sound)
            except Exception:  # the unsure silence stands
                log.exception("judging the end of the turn failed")
                return
            silences = self._turns.turn_end if self._turns is not None else None
            if silences is None or self._detector is None or self._pause is not pause or pause is None:
                return
            if judged.finished:
                self._detector.end_after(silences.finished)
            elif judged.unfinished:
                self._detector.end_after(silences.unfinished)
        return verdict

    async def _drop_eager(self, eager: EagerTurn | None, reason: str) -> None:
        """Forget a prepared answer: its transcription stops, its hidden response is discarded (nothing of either
        reached the client)."""
        if eager is not None:
            await eager.cancel()
            if eager.answering:
                await self._responses.discard(reason)

    def _speech_end(self, end_ms: int) -> float:
        """When (on the monotonic clock) the stream was at ``end_ms``: the client streams in real time, so the
        audio after it arrived since (an estimate that is exact for real-time streams)."""
        return time.monotonic() - max(0, self.buffer.position_ms - end_ms) / 1000

    async def _speech_stopped(self, end_ms: int, *, cut: bool) -> None:
        """The turn ended at ``end_ms``: after the silence that ends a turn, or ``cut`` at its longest."""
        pause, self._pause = self._pause, None
        waited = self._turns.silence_duration_ms if self._turns is not None and not cut else 0
        if pause is not None and not cut:  # semantic_vad: the silence this turn's verdict asked for
            waited = end_ms - pause.speech_end_ms
        speech_end = self._speech_end(end_ms - waited)
        item_id = self._turn_item or new_id("item")
        self._turn_item = None
        live, self._live = self._live, None
        said = ""
        if live is not None:
            await live.stop()
            said = live.said
        if cut:
            await self._emit(TurnCapped(end_ms, item_id, self._max_turn_ms))
        await self._emit(SpeechStopped(end_ms, item_id))
        respond = self._turns is not None and self._turns.create_response
        pcm = self.buffer.take_turn(end_ms)
        eager, self._eager = self._eager, None
        if eager is not None:
            if eager.item.id == item_id and await eager.result() is not None:
                heard = eager.transcript.text if eager.transcript is not None else ""
                # the end of speech as the eager turn placed it (the same moment: speaking on would have dropped
                # it), which its hidden answer is timed from
                await self._confirm(eager, pcm, respond, HeardTurn(eager.speech_end, waited,
                                                                   eager.transcribed_at or 0.0, eager.stt_seconds,
                                                                   heard), said)
                return
            await self._drop_eager(eager, "eager turn failed")
        await self._commit(pcm, item_id, respond=respond, speech_end=speech_end, waited_ms=waited, said=said)

    async def _confirm(self, eager: EagerTurn, pcm: PCM, respond: bool, turn: HeardTurn, said: str) -> None:
        """The turn is over and its eager transcript stands: commit it, then claim the prepared answer (or, if none
        could be prepared, answer now). ``said``: what live deltas already said of it."""
        item = eager.item
        transcript = eager.transcript or Transcript("", "en")
        self._observer.transcribed(eager.stt_seconds)
        previous = self._conversation.add(item)
        await self._emit(AudioCommitted(previous, item.id))
        await self._emit(ItemAdded(item.snapshot(), previous))
        await self._transcript_events(item, transcript, pcm, said)
        if not respond or not transcript.text:
            await self._drop_eager(eager, "nothing to answer")
        elif not await self._responses.claim(None, turn=turn):
            await self._hooks.respond_to_turn(turn)

    async def _commit(self, pcm: PCM, item_id: str, *, respond: bool, even_if_silent: bool = False,
                      speech_end: float | None = None, waited_ms: int = 0, said: str = "") -> None:
        """Make a user audio item of ``pcm`` and transcribe it; then, if asked, answer it (when something was said,
        or ``even_if_silent``), timed from ``speech_end`` after ``waited_ms`` of silence (a commit: from now).
        Waits first while :data:`MAX_TRANSCRIBING` turns are being transcribed."""
        while len(self._transcriptions) >= MAX_TRANSCRIBING:
            await asyncio.wait(self._transcriptions, return_when=asyncio.FIRST_COMPLETED)
        await self._responses.discard("new user audio")
        item = MessageItem(item_id, "user", [{"type": "input_audio", "transcript": None}])
        direct = self._hooks.hears_directly()
        if direct:
            item.heard_wav = wav_base64(pcm)
        previous = self._conversation.add(item)
        if direct:
            keep_recent_audio(self._conversation.items, self._max_direct_audio_bytes)
        await self._emit(AudioCommitted(previous, item_id))
        await self._emit(ItemAdded(item.snapshot(), previous))
        ended = time.monotonic() if speech_end is None else speech_end
        task = asyncio.create_task(self._transcribe(item, pcm, respond and not direct, even_if_silent, ended,
                                                    waited_ms, self._turns_begun, said), name=f"voxcall-stt-{item_id}")
        self._transcriptions.add(task)
        task.add_done_callback(self._transcriptions.discard)
        if direct and respond and self._responses.phase is not Phase.VISIBLE:  # the model hears it: no waiting
            await self._hooks.respond_to_turn(HeardTurn(ended, waited_ms, time.monotonic()))

    async def _transcribe(self, item: MessageItem, pcm: PCM, respond: bool, even_if_silent: bool, speech_end: float,
                          waited_ms: int, turns_begun: int, said: str) -> None:
        voice = self.need_voice()
        started = time.monotonic()
        try:
            transcript = await voice.transcribe(pcm, self._hooks.hearing())
        except Exception as exc:  # a model failure must not end the session
            log.exception("transcription of %s failed", item.id)
            await self._emit(TranscriptFailed(item.id, type(exc).__name__))
            return
        done = time.monotonic()
        self._observer.transcribed(done - started)
        item.content[0]["transcript"] = transcript.text
        await self._transcript_events(item, transcript, pcm, said)
        if not respond or not (transcript.text or even_if_silent) or self._turns_begun != turns_begun:
            return  # nothing to answer, or the user spoke on: the end of what they say now answers this too
        await self.transcribed()
        if self._responses.phase is not Phase.VISIBLE and self._conversation.get(item.id) is item:
            await self._hooks.respond_to_turn(HeardTurn(speech_end, waited_ms, done, done - started, transcript.text))

    def _delta_sender(self, item_id: str) -> Callable[[str], Awaitable[None]]:
        async def send(delta: str) -> None:
            await self._emit(TranscriptDelta(item_id, delta))
        return send

    async def _transcript_events(self, item: MessageItem, transcript: Transcript, pcm: PCM, said: str) -> None:
        """The transcript's last delta (what live deltas have not ``said``), ``.completed`` and ``item.done``."""
        delta = next_delta(said, transcript.text, final=True)
        if delta:
            await self._delta_sender(item.id)(delta)
        await self._emit(TranscriptCompleted(item.id, transcript.text, transcript.language,
                                             round(len(pcm) / SAMPLE_RATE, 3)))
        await self._emit(ItemDone(item.snapshot()))


def _no(item: MessageItem, speech_end: float) -> bool:
    """Prepare no answer (the turn will not be answered: no ``create_response``)."""
    return False
