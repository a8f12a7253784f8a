"""Listening and speaking: voice activity and turn detection, speech to text, text to speech.

The protocols (:class:`VAD`, :class:`TTS`) keep the rest of voxcall independent of any model. The embedded
defaults come from PyPI packages (the ``[local]`` extra) and are imported only when a model is first built, so
this package imports fast and works without them. Share loaded models through :func:`get_whisper`,
:func:`get_silero` and :func:`get_piper`. A :class:`Verbalizer` (:func:`verbalizer_for` a language) reads symbols
as words before synthesis: "12 * 8 = 96" is spoken "12 times 8 equals 96".
"""

from __future__ import annotations

from voxcall.speech.clauses import ClauseSplitter, clean_clause
from voxcall.speech.errors import SpeechModelError
from voxcall.speech.models import get_piper, get_silero, get_whisper
from voxcall.speech.stt import WhisperSTT, default_model_dir
from voxcall.speech.tts import TTS, EspeakTTS, PiperTTS, default_voice_path, load_default_tts
from voxcall.speech.turns import SpeechStarted, SpeechStopped, TurnDetector, TurnEvent
from voxcall.speech.vad import VAD, SileroModel, SileroVAD, WebRtcVAD
from voxcall.speech.verbalizer import Verbalizer, verbalizer_for

__all__ = [
    "TTS",
    "VAD",
    "ClauseSplitter",
    "EspeakTTS",
    "PiperTTS",
    "SileroModel",
    "SileroVAD",
    "SpeechModelError",
    "SpeechStarted",
    "SpeechStopped",
    "TurnDetector",
    "TurnEvent",
    "Verbalizer",
    "WebRtcVAD",
    "WhisperSTT",
    "clean_clause",
    "default_model_dir",
    "default_voice_path",
    "get_piper",
    "get_silero",
    "get_whisper",
    "load_default_tts",
    "verbalizer_for",
]
