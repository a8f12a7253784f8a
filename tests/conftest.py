"""Fixtures shared across test folders."""

from pathlib import Path

import pytest

from tests.requirements import require_smollm2, require_speech_models

pytest_plugins = ["tests.audio.output_fixtures"]


@pytest.fixture(scope="session")
def speech_models() -> None:
    """The ``[local]`` speech models are installed: the test skips without them, or fails under CI."""
    require_speech_models()


@pytest.fixture(scope="session")
def smollm2() -> Path:
    """llama.cpp and the packaged SmolLM2-135M GGUF (its path): the test skips without them, or fails under CI."""
    return require_smollm2()
