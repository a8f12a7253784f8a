"""Which Whisper model hears a session, in which language: ``audio.input.transcription`` (``model``, ``language``).

``model`` picks an installed model by name (``voxcall models``: ``tiny.en``, ``base`` …); OpenAI's own transcription
model names (``whisper-1``, ``gpt-4o-transcribe`` …) are accepted with a warning and hear with the server's model;
another name is refused. ``language`` (ISO 639-1) must be one the chosen model transcribes; when no model is named
and the server's model does not know the language, the first installed multilingual model hears it. Without a
language, a multilingual model detects it on every turn (and reports it in ``.completed``'s ``languages``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from voxcall.core.errors import SessionError
from voxcall.speech.stt import Hearing

OPENAI_TRANSCRIPTION_MODELS = frozenset({"whisper-1", "gpt-4o-transcribe", "gpt-4o-mini-transcribe",
                                         "gpt-4o-transcribe-latest", "gpt-4o-mini-transcribe-2025-03-20",
                                         "gpt-4o-transcribe-diarize", "gpt-realtime-whisper"})
"""Names OpenAI clients send; voxcall hears them with its own model (and warns)."""


def choose_hearing(transcription: Any, models: Mapping[str, frozenset[str]], default: str, *,
                   param: str = "session.audio.input.transcription") -> Hearing:
    """The :class:`Hearing` that ``transcription`` (the client's object, or None) asks for, among ``models``
    (installed name → the languages it transcribes; ``default`` is the server's); a ``SessionError`` naming the
    parameter when it cannot be honoured."""
    settings = transcription if isinstance(transcription, dict) else {}
    asked, language = settings.get("model"), settings.get("language")
    if asked is not None and not isinstance(asked, str):
        raise SessionError(f"'{param}.model' must be a string", code="invalid_type", param=f"{param}.model")
    if language is not None and not isinstance(language, str):
        raise SessionError(f"'{param}.language' must be a string", code="invalid_type", param=f"{param}.language")
    if asked is not None and asked not in models and asked not in OPENAI_TRANSCRIPTION_MODELS:
        raise SessionError(f"'{param}.model': no speech-to-text model {asked!r} on this server; installed: "
                            f"{', '.join(models)} (more with pip install 'voxcall[multilingual]')",
                            code="unsupported_value", param=f"{param}.model")
    model = asked if asked is not None and asked in models else default
    if language is not None and language not in models[model]:
        fitting = [name for name, languages in models.items() if language in languages]
        if asked in models or not fitting:
            hint = "" if fitting else "; pip install 'voxcall[multilingual]' adds a model for 99 languages"
            raise SessionError(f"'{param}.language': the speech-to-text model {model!r} does not transcribe "
                                f"{language!r}{hint}", code="unsupported_value", param=f"{param}.language")
        model = fitting[0]
    return Hearing(model, language)
