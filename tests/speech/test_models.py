"""Model sharing and loading: one copy per process, found inside installed packages, clear errors otherwise."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from voxcall.speech import (
    PiperTTS,
    SileroModel,
    SpeechModelError,
    WhisperSTT,
    default_model_dir,
    default_voice_path,
    get_piper,
    get_silero,
    get_whisper,
)
from voxcall.speech.loading import package_file

pytestmark = pytest.mark.usefixtures("speech_models")  # the [local] extra


def test_every_getter_returns_one_shared_model(piper: PiperTTS, silero: SileroModel, whisper: WhisperSTT) -> None:
    assert get_silero() is silero
    assert get_whisper() is whisper
    assert get_whisper(default_model_dir()) is whisper  # the default and its explicit path are one model
    assert get_piper() is piper
    assert get_piper(str(default_voice_path())) is piper


def test_models_come_from_installed_packages() -> None:
    assert default_voice_path().name == "en_US-joe-medium.onnx"
    assert package_file("faster_whisper", "assets", "silero_vad_v6.onnx").is_file()


def test_a_missing_package_is_a_speech_model_error() -> None:
    with pytest.raises(SpeechModelError, match=r"'no_such_model_package' is not installed.*voxcall\[local\]"):
        package_file("no_such_model_package", "model")


def test_a_missing_file_in_a_package_is_a_speech_model_error() -> None:
    with pytest.raises(SpeechModelError, match="missing from the installed package 'faster_whisper'"):
        package_file("faster_whisper", "assets", "nothing.onnx")


def test_a_missing_silero_file_is_a_speech_model_error(tmp_path: Path) -> None:
    with pytest.raises(SpeechModelError, match="ONNX model file not found"):
        SileroModel(tmp_path / "vad.onnx")


def test_importing_speech_loads_no_model_library() -> None:
    code = ("import sys, voxcall.speech; "
            "print(sorted(m for m in ('faster_whisper', 'ctranslate2', 'onnxruntime', 'piper', 'webrtcvad') "
            "if m in sys.modules))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"
