"""Text to speech: Piper (the embedded default), the espeak-ng fallback, and picking the default."""

from __future__ import annotations

import threading
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest

from tests.requirements import require_program
from tests.speech.conftest import QUESTION
from voxcall.speech import EspeakTTS, PiperTTS, SpeechModelError, get_piper, load_default_tts


def test_piper_speaks_a_question_at_22050_hz(piper: PiperTTS, question_22k: npt.NDArray[np.int16]) -> None:
    assert piper.sample_rate == 22050
    assert question_22k.dtype == np.int16
    assert 1.0 < len(question_22k) / piper.sample_rate < 3.5  # six words
    assert np.abs(question_22k.astype(np.int32)).max() > 10000  # normalised speech, not silence


def test_piper_yields_a_chunk_per_sentence(piper: PiperTTS) -> None:
    chunks = list(piper.synthesize("Hello there. How are you?"))
    assert len(chunks) == 2
    assert all(chunk.dtype == np.int16 and len(chunk) > 0.3 * piper.sample_rate for chunk in chunks)


def test_piper_speed_scales_the_duration(piper: PiperTTS, question_22k: npt.NDArray[np.int16]) -> None:
    fast = np.concatenate(list(piper.synthesize(QUESTION, speed=1.5)))
    slow = np.concatenate(list(piper.synthesize(QUESTION, speed=0.5)))
    assert len(fast) < 0.85 * len(question_22k) < len(question_22k) < 0.6 * len(slow)


def test_steady_piper_speaks_the_same_samples_every_time(piper: PiperTTS) -> None:
    steady = [np.concatenate(list(piper.synthesize("Hello there.", steady=True))) for _ in range(3)]
    assert all(np.array_equal(steady[0], other) for other in steady[1:])
    varied = [np.concatenate(list(piper.synthesize("Hello there."))) for _ in range(6)]
    assert any(not np.array_equal(varied[0], other) for other in varied[1:])  # Piper's own noise, which it removes


@pytest.mark.parametrize("text", ["", "   ", "\n"])
def test_piper_says_nothing_for_blank_text(piper: PiperTTS, text: str) -> None:
    assert list(piper.synthesize(text)) == []


def test_one_piper_voice_serves_concurrent_callers(piper: PiperTTS) -> None:
    durations: list[float] = []

    def speak() -> None:
        audio = np.concatenate(list(piper.synthesize(QUESTION)))
        durations.append(len(audio) / piper.sample_rate)

    threads = [threading.Thread(target=speak) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(durations) == 3
    assert all(1.0 < d < 3.5 for d in durations)


@pytest.mark.usefixtures("speech_models")
def test_a_missing_voice_is_a_speech_model_error(tmp_path: Path) -> None:
    with pytest.raises(SpeechModelError, match="voice config not found"):
        PiperTTS(tmp_path / "nobody.onnx")


@pytest.mark.usefixtures("speech_models")
def test_the_default_tts_is_the_shared_piper_voice() -> None:
    assert load_default_tts() is get_piper()


def test_espeak_speaks_through_stdin() -> None:
    require_program("espeak-ng")  # CI installs it
    tts = EspeakTTS()
    chunks = list(tts.synthesize("-v Hello from espeak."))  # a leading dash is text, not an option
    audio = np.concatenate(chunks)
    assert audio.dtype == np.int16
    assert tts.sample_rate == 22050
    assert 0.8 < len(audio) / tts.sample_rate < 4
    assert np.abs(audio.astype(np.int32)).max() > 1000
    assert list(tts.synthesize(" ")) == []
