"""Fixtures for the client tests: a real ``voxcall serve`` process, the speech models, a calculator tool module."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pytest

from tests.serve import ServeProcess, serve
from voxcall.client.wavfile import read_wav, write_wav
from voxcall.speech import PiperTTS, WhisperSTT

os.environ["HF_HUB_OFFLINE"] = "1"  # nothing in these tests may reach a model hub

CALCULATOR_MODULE = '''
from pathlib import Path

TOOLS = [{"type": "function", "name": "calculator", "description": "Do arithmetic.",
          "parameters": {"type": "object", "required": ["op", "a", "b"], "properties": {
              "op": {"type": "string", "enum": ["add", "sub", "mul", "div"]},
              "a": {"type": "number"}, "b": {"type": "number"}}}}]

RAN = Path(__file__).with_name("ran.txt")


async def execute_tool(name, arguments):
    a, b = arguments["a"], arguments["b"]
    result = {"add": a + b, "sub": a - b, "mul": a * b, "div": a / b}[arguments["op"]]
    with RAN.open("a") as ran:
        ran.write(f"{name} {arguments['op']} {a} {b} = {result}\\n")
    return result
'''
"""A client tool module: a calculator that logs every call it runs to ``ran.txt`` beside itself."""


@pytest.fixture(scope="session")
def server(speech_models: None) -> Iterator[ServeProcess]:
    """``voxcall serve --llm scripted`` with speech (the packaged models) on a free loopback port."""
    with serve("--llm", "scripted", "--speech") as served:
        yield served


@pytest.fixture(scope="session")
def piper(speech_models: None) -> PiperTTS:
    from voxcall.speech import get_piper

    return get_piper()


@pytest.fixture(scope="session")
def whisper(speech_models: None) -> WhisperSTT:
    from voxcall.speech import get_whisper

    return get_whisper()


@pytest.fixture
def say(piper: PiperTTS, tmp_path: Path) -> Callable[[str], Path]:
    """Writes ``text`` spoken by piper (steadily: the same samples every run), with a little silence before it, to
    a WAV file and returns its path."""

    def write(text: str) -> Path:
        pcm = np.concatenate([np.asarray(chunk, np.int16) for chunk in piper.synthesize(text, steady=True)])
        pcm = np.concatenate([np.zeros(piper.sample_rate // 4, np.int16), pcm])
        path = tmp_path / "question.wav"
        write_wav(path, pcm, piper.sample_rate)
        return path

    return write


@pytest.fixture
def hear(whisper: WhisperSTT) -> Callable[[Path], str]:
    """What Whisper hears in a 24 kHz WAV file (lower case)."""
    def transcribe(path: Path) -> str:
        return whisper.transcribe(read_wav(path, 16000)).lower()

    return transcribe


@pytest.fixture
def tool_module(tmp_path: Path) -> Path:
    """A calculator tool module file; the calls it ran are in ``ran.txt`` beside it."""
    path = tmp_path / "calculator_tools.py"
    path.write_text(CALCULATOR_MODULE, encoding="utf-8")
    return path
