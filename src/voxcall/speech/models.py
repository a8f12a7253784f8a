"""Process-wide caches of loaded speech models, so every session shares one copy of each.

A model is loaded on first use and kept for the life of the process. Loading happens under one lock, so two
sessions that start together still load a model once. Importing this module loads nothing (and imports none of
the heavy model libraries).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar, cast

if TYPE_CHECKING:
    from voxcall.speech.baker import BakerVoice
    from voxcall.speech.stt import WhisperSTT
    from voxcall.speech.tts import EspeakTTS, PiperTTS
    from voxcall.speech.vad import SileroModel

_T = TypeVar("_T")

log = logging.getLogger(__name__)

_lock = threading.Lock()
_loaded: dict[tuple[str, str | None], object] = {}


def _cached(kind: str, path: Path | str | None, load: Callable[[], _T]) -> _T:
    """The model cached under ``(kind, path)`` (a file, or a catalog name), loading it with ``load`` the first time."""
    key = (kind, str(path.resolve()) if isinstance(path, Path) else path)
    with _lock:
        if key not in _loaded:
            _loaded[key] = load()
        return cast(_T, _loaded[key])  # the key's kind fixes the type


def get_whisper(model: str | Path | None = None) -> WhisperSTT:
    """The shared :class:`~voxcall.speech.stt.WhisperSTT` for ``model``: a name of :mod:`voxcall.speech.catalog`
    or a model folder (default: the packaged tiny.en)."""
    from voxcall.speech.catalog import DEFAULT_MODEL, named_folder
    from voxcall.speech.stt import WhisperSTT, is_model_path

    chosen = DEFAULT_MODEL if model is None else model
    key: str | Path = str(chosen)
    if is_model_path(chosen):
        key = named_folder(Path(chosen)) or Path(chosen)
    return _cached("whisper", key, lambda: WhisperSTT(key))


def get_silero() -> SileroModel:
    """The shared :class:`~voxcall.speech.vad.SileroModel` (give each stream its own ``SileroVAD`` on it)."""
    from voxcall.speech.vad import SileroModel

    return _cached("silero", None, SileroModel)


def get_piper(voice: str | Path | None = None) -> PiperTTS:
    """The shared :class:`~voxcall.speech.tts.PiperTTS` for the ``voice`` ONNX file (default: en_US joe medium)."""
    from voxcall.speech.tts import PiperTTS, default_voice_path

    path = Path(voice) if voice is not None else default_voice_path()
    return _cached("piper", path, lambda: PiperTTS(path))


def get_espeak(voice: str) -> EspeakTTS:
    """The shared :class:`~voxcall.speech.tts.EspeakTTS` speaking with espeak-ng's ``voice`` (``es``, ``en-us`` …)."""
    from voxcall.speech.tts import EspeakTTS

    return _cached("espeak", voice, lambda: EspeakTTS(voice))


def get_baker() -> BakerVoice:
    """The shared :class:`~voxcall.speech.baker.BakerVoice` (the installed Mandarin voice); loading it logs its
    licence (trained on the Baker corpus: non-commercial use only)."""
    from voxcall.speech.baker import LICENCE, NAME, BakerVoice

    def load() -> BakerVoice:
        voice = BakerVoice()
        log.warning("loaded the %s voice; its licence: %s", NAME, LICENCE)
        return voice

    return _cached("baker", None, load)
