"""The ``speech:`` section: the models that hear and speak."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from voxcall.config.kinds import VadKind


class SpeechSettings(BaseModel):
    """The ``speech:`` section: the models that hear and speak, shared by every session."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    enabled: bool | None = None
    """Hear and speak. None: when the speech models are installed (else text only, with a note); True: required
    (a missing model stops the server); False: text only."""
    vad: VadKind = "silero"
    """Voice activity detector: Silero (accurate) or WebRTC (light)."""
    stt_model: str | None = None
    """Whisper model: an installed one by name (``tiny.en``, ``base`` with the ``[multilingual]`` extra) or a
    CTranslate2 Whisper folder; None: the packaged tiny.en. Sessions may choose another installed one."""
    tts_voice: Path | None = None
    """The default Piper voice (``.onnx``, its ``.onnx.json`` beside it; named by its ``voices`` entry, else its file
    stem); None: the packaged en_US joe medium (``joe``), or espeak-ng when that is not installed and espeak-ng is
    on ``PATH``."""
    voices: dict[str, Path] = Field(default_factory=dict)
    """More Piper voices sessions may choose by name (``audio.output.voice``): ``{name: path to .onnx}``, each
    loaded on first use. ``joe`` (the packaged voice) and espeak-ng's voices (``espeak:es`` …) are always there;
    ``voxcall voices`` lists them all."""
