"""The session fields voxcall does not act on in full: which it refuses, and which it accepts with a warning.

Every field of the GA session object is honoured (:mod:`voxcall.core.settings`), mapped, refused with an
``error`` naming it, or accepted with a ``voxcall.session.warning`` extension event ``{param, message}`` sent after
``session.updated`` (the SDKs ignore event types they do not know). Here is each field that is not simply honoured:

====================================  ==========================================================================
``model``, ``reasoning``, ``tracing``  warned: the operator chooses the model; voxcall has no reasoning effort or
                                       traces
``prompt``                             refused: voxcall stores no prompt templates
``include``                            refused unless empty: its only value asks for transcription logprobs, which
                                       voxcall's speech-to-text does not produce
``truncation``                         ``auto`` honoured (oldest items go first, at the server's history limit);
                                       ``disabled`` refused; a ``retention_ratio`` warned (whole items are trimmed)
``audio.input.noise_reduction``        warned unless null: audio is used as received
``audio.input.transcription``          ``model`` and ``language`` honoured (:mod:`voxcall.core.hearing.transcription`):
                                       an installed model by name, OpenAI's names warned, others refused; a
                                       language (and each of ``languages``) refused unless the model knows it;
                                       ``prompt``, ``keywords``, ``delay`` warned; null warned (voxcall must
                                       transcribe to understand, so transcripts keep coming)
``audio.output.voice``                 a voice of the server (:mod:`voxcall.speech.voices`) honoured; an OpenAI
                                       voice name warned and spoken by the default voice for the session's
                                       language; a custom voice ``{id}`` or another name refused
====================================  ==========================================================================
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from voxcall.core.errors import SessionError
from voxcall.core.hearing.transcription import OPENAI_TRANSCRIPTION_MODELS, choose_hearing
from voxcall.serving.frames import Message, event
from voxcall.speech.voices import VoiceCatalog

__all__ = ["OPENAI_VOICES", "SettingWarning", "review_fields"]

OPENAI_VOICES = frozenset({"alloy", "ash", "ballad", "coral", "echo", "sage", "shimmer", "verse", "marin", "cedar"})
"""The voice names of the OpenAI Realtime API; voxcall speaks each with its default voice (for the language)."""

_WARNED = {
    "model": "the server's operator chooses the model; this one is not used",
    "reasoning": "voxcall's models have no reasoning settings; ignored",
    "tracing": "voxcall writes no traces; ignored",
}
_TRANSCRIPTION_WARNED = {
    "prompt": "the speech-to-text model takes no prompt; ignored",
    "keywords": "the speech-to-text model takes no keywords; ignored",
    "delay": "transcription runs once per turn; the delay setting is ignored",
}


@dataclass(frozen=True)
class SettingWarning:
    """A setting accepted but not acted on (or acted on differently), and why."""

    param: str
    message: str

    def to_event(self) -> Message:
        """The ``voxcall.session.warning`` extension event for it."""
        return event("voxcall.session.warning", param=self.param, message=self.message)


def review_fields(data: dict[str, Any], *, where: str, voices: VoiceCatalog, models: Mapping[str, frozenset[str]],
                  stt_model: str) -> list[SettingWarning]:
    """Refuse (``SessionError``) or warn about the fields of GA-shaped settings ``data`` voxcall cannot honour.

    ``voices`` are the server's voices; ``models`` the speech-to-text models sessions may choose (name → the
    languages it understands), ``stt_model`` the server's own.
    """
    warnings = [SettingWarning(f"{where}{key}", message) for key, message in _WARNED.items()
                if data.get(key) is not None]
    if data.get("prompt") is not None:
        raise SessionError(f"'{where}prompt': voxcall stores no prompt templates; send 'instructions' instead",
                            code="unsupported_parameter", param=f"{where}prompt")
    _check_include(data.get("include"), f"{where}include")
    warnings += _truncation(data.get("truncation"), f"{where}truncation")
    audio = _section(data, "audio")
    heard = _section(audio, "input")
    if heard.get("noise_reduction") is not None:
        warnings.append(SettingWarning(f"{where}audio.input.noise_reduction",
                                       "voxcall has no noise reduction; audio is used as received"))
    if "transcription" in heard:
        warnings += _transcription(heard["transcription"], f"{where}audio.input.transcription", models, stt_model)
    spoken = _section(audio, "output")
    if spoken.get("voice") is not None:
        warnings += _voice(spoken["voice"], f"{where}audio.output.voice", voices)
    return warnings


def _section(data: dict[str, Any], key: str) -> dict[str, Any]:
    """``data[key]`` when it is an object (else empty: the settings reader names the wrong type)."""
    value = data.get(key)
    return value if isinstance(value, dict) else {}


def _check_include(value: Any, param: str) -> None:
    if value is None:
        return
    if not isinstance(value, list):
        raise SessionError(f"'{param}' must be an array", code="invalid_type", param=param)
    if value:
        raise SessionError(f"'{param}[0]': {value[0]!r} cannot be produced: voxcall's speech-to-text model gives no "
                            "logprobs", code="unsupported_value", param=f"{param}[0]")


def _truncation(value: Any, param: str) -> list[SettingWarning]:
    if value is None or value == "auto":
        return []
    if value == "disabled":
        raise SessionError(f"'{param}': truncation cannot be disabled; voxcall keeps the history within the server's "
                            "limit, oldest items first ('auto')", code="unsupported_value", param=param)
    return [SettingWarning(param, "voxcall trims whole items, oldest first, at the server's history limit; the "
                                  "retention ratio is not used")]


def _transcription(value: Any, param: str, models: Mapping[str, frozenset[str]], stt_model: str,
                   ) -> list[SettingWarning]:
    if value is None:
        return [SettingWarning(param, "voxcall transcribes input audio to understand it, so transcription events "
                                      "keep coming")]
    if not isinstance(value, dict):
        raise SessionError(f"'{param}' must be an object or null", code="invalid_type", param=param)
    model = choose_hearing(value, models, stt_model, param=param).model
    for n, language in enumerate(value.get("languages") or []):
        if language not in models[model]:
            raise SessionError(f"'{param}.languages[{n}]': the speech-to-text model {model!r} does not transcribe "
                                f"{language!r}", code="unsupported_value", param=f"{param}.languages[{n}]")
    warnings = [SettingWarning(f"{param}.{key}", message) for key, message in _TRANSCRIPTION_WARNED.items()
                if value.get(key) is not None]
    if value.get("model") in OPENAI_TRANSCRIPTION_MODELS:
        warnings.append(SettingWarning(f"{param}.model", f"input audio is transcribed by the server's model "
                                                         f"{model!r}; {value['model']!r} is not used"))
    return warnings


def _voice(value: Any, param: str, voices: VoiceCatalog) -> list[SettingWarning]:
    if isinstance(value, str) and voices.knows(value):
        return []
    if isinstance(value, str) and value in OPENAI_VOICES:
        return [SettingWarning(param, f"voxcall has no voice {value!r}: the session speaks with the server's default "
                                      f"voice {voices.default!r} (or its voice for the session's language)")]
    shown = value if isinstance(value, str) else value.get("id") if isinstance(value, dict) else value
    raise SessionError(f"'{param}': {voices.unknown_message(str(shown))} (OpenAI's voice names, "
                        f"{', '.join(sorted(OPENAI_VOICES))}, speak with the default)", code="unsupported_value",
                        param=param)
