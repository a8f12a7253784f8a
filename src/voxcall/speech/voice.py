"""The speech models a server shares between all its sessions.

:class:`Voice` holds the server's speech-to-text model, its default text-to-speech voice and the voice-activity model;
each session gets cheap per-stream state from it (a turn detector), never a model copy. A session may speak with
another voice of the server's :class:`~voxcall.speech.voices.VoiceCatalog`, loaded when first used, and hear with
another installed Whisper model (as the session's transcription settings choose): it is loaded on its first turn, in
the worker thread, and shared from then on. Blocking inference runs in worker threads.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field

from voxcall.audio.codec import PCM
from voxcall.speech.catalog import MODELS, installed_models
from voxcall.speech.models import get_whisper
from voxcall.speech.stt import Hearing, Transcript, WhisperSTT
from voxcall.speech.tts import TTS
from voxcall.speech.turns import TurnJudge
from voxcall.speech.vad import VAD
from voxcall.speech.voices import LazyVoice, VoiceCatalog, verbalizing


@dataclass
class Voice:
    """Shared speech models: ``stt`` (16 kHz in, text out), ``tts`` (the default voice, ``voices.default``, loaded)
    and a factory of per-stream VAD state; the other ``voices`` load when a session first speaks with them.
    ``turn_end`` judges whether a user has finished (``semantic_vad``; None: not installed, fixed silences)."""

    stt: WhisperSTT
    tts: TTS
    vad: Callable[[], VAD]
    voices: VoiceCatalog = field(default_factory=lambda: VoiceCatalog({}))
    turn_end: TurnJudge | None = None
    models: dict[str, frozenset[str]] = field(init=False)
    """The Whisper models sessions may choose, by name, with the languages each transcribes (the server's first)."""

    def __post_init__(self) -> None:
        multilingual = frozenset().union(*(self.stt.languages, *self._multilingual_languages()))
        self.models = {self.stt.name: self.stt.languages}
        for name in installed_models():
            self.models.setdefault(name, multilingual if MODELS[name].multilingual else frozenset({"en"}))

    @property
    def hearing(self) -> Hearing:
        """How a session that asks for nothing is heard."""
        return Hearing(self.stt.name)

    def speaking(self, name: str, language: str | None) -> TTS:
        """The voice a session speaks with: the one named ``name`` when that is a voice here other than the default,
        else the voice for the ``language`` it is heard in (:meth:`VoiceCatalog.for_language`); it reads symbols as
        words in its own language (:func:`~voxcall.speech.voices.verbalizing`)."""
        chosen = (name if name != self.voices.default and self.voices.knows(name)
                  else self.voices.for_language(language))
        voice = self.tts if chosen == self.voices.default else LazyVoice(self.voices, chosen)
        return verbalizing(voice, self.voices.language(chosen))

    async def transcribe(self, pcm: PCM, hearing: Hearing | None = None) -> Transcript:
        """Speech to text in a worker thread (the model serialises concurrent calls)."""
        heard = await asyncio.to_thread(self._hear, pcm, hearing or self.hearing, False)
        assert heard is not None  # only a partial may be unsettled
        return Transcript(heard.text.strip(), heard.language)

    async def partial(self, pcm: PCM, hearing: Hearing | None = None) -> Transcript | None:
        """A cheap transcript of a turn still being spoken, or None when the sized window did not settle it."""
        return await asyncio.to_thread(self._hear, pcm, hearing or self.hearing, True)

    def _hear(self, pcm: PCM, hearing: Hearing, partial: bool) -> Transcript | None:
        stt = self.stt if hearing.model == self.stt.name else get_whisper(hearing.model)
        return stt.hear(pcm, language=hearing.language, partial=partial)

    def _multilingual_languages(self) -> list[frozenset[str]]:
        """The languages of Whisper's multilingual models (faster-whisper's list), when any is installed."""
        if not any(MODELS[name].multilingual for name in installed_models()):
            return []
        from faster_whisper.tokenizer import _LANGUAGE_CODES  # type: ignore[import-untyped]

        return [frozenset(_LANGUAGE_CODES)]
