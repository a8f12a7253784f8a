"""Shared, session-scoped speech models (each loaded once for the whole test run) and a spoken test utterance.

Each model fixture needs ``speech_models`` (tests/conftest.py): without the ``[local]`` extra its tests skip, or
fail under CI."""

from __future__ import annotations

import os

import numpy as np
import numpy.typing as npt
import pytest

from voxcall.audio import resample
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
    """Piper speaking :data:`QUESTION` at its native 22.05 kHz."""
    return np.concatenate(list(piper.synthesize(QUESTION)))


@pytest.fixture(scope="session")
def question_16k(question_22k: npt.NDArray[np.int16]) -> npt.NDArray[np.int16]:
    """:data:`QUESTION` at 16 kHz, as the VAD and Whisper hear it."""
    return resample(question_22k, 22050, 16000)
