"""``voxcall talk`` live (over Realtime and over GPT-Live), with a stand-in ``sounddevice``: a microphone that says
a question, a speaker that records.

The stand-in streams run in threads and call their callbacks every 20 ms, as PortAudio does. The microphone
refuses 24 kHz (so its audio is resampled from its 16 kHz default); the speaker takes 24 kHz as is.
"""

from __future__ import annotations

import asyncio
import sys
import threading
import time
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pytest
from rich.console import Console

from tests.client.conftest import ServeProcess
from voxcall.client import talk_gpt_live as gpt_live
from voxcall.client.display import ConsoleReporter
from voxcall.client.talk import TalkOptions, talk_live
from voxcall.client.wavfile import read_wav

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

MIC_RATE = 16000


class FakeStream:
    """A PortAudio stream stand-in: a thread calls ``callback`` with 20 ms blocks while the stream is open."""

    def __init__(self, samplerate: int, channels: int, dtype: str, callback: Callable[..., None],
                 blocksize: int | None = None) -> None:
        assert channels == 1 and dtype == "int16"
        self.rate = samplerate
        self.block = blocksize or samplerate // 50
        self.callback = callback
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> FakeStream:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        while not self._stop.wait(self.block / self.rate):
            self.step()

    def step(self) -> None:
        raise NotImplementedError


class FakeMicrophone(FakeStream):
    audio = np.zeros(0, np.int16)  # what the user says, at MIC_RATE; silence after it

    def step(self) -> None:
        block = np.zeros((self.block, 1), np.int16)
        said, FakeMicrophone.audio = FakeMicrophone.audio[:self.block], FakeMicrophone.audio[self.block:]
        block[:len(said), 0] = said
        self.callback(block, self.block, None, None)


class FakeSpeaker(FakeStream):
    played: ClassVar[list[np.ndarray[Any, Any]]] = []

    def step(self) -> None:
        block = np.full((self.block, 1), 7, np.int16)  # garbage the callback must overwrite
        self.callback(block, self.block, None, None)
        FakeSpeaker.played.append(block[:, 0].copy())


def fake_sounddevice() -> types.ModuleType:
    module = types.ModuleType("sounddevice")

    def check_input_settings(**settings: Any) -> None:
        if settings["samplerate"] != MIC_RATE:
            raise ValueError("invalid sample rate")

    module.__dict__.update(
        query_devices=lambda kind: {"default_samplerate": float(MIC_RATE if kind == "input" else 48000)},
        check_input_settings=check_input_settings, check_output_settings=lambda **settings: None,
        InputStream=FakeMicrophone, OutputStream=FakeSpeaker)
    return module


@pytest.mark.parametrize("protocol", ["realtime", "gpt-live"])
async def test_live_talk_hears_the_microphone_and_plays_the_answer(
        server: ServeProcess, say: Callable[[str], Path], monkeypatch: pytest.MonkeyPatch, protocol: str) -> None:
    monkeypatch.setitem(sys.modules, "sounddevice", fake_sounddevice())
    FakeMicrophone.audio = read_wav(say("Hello there."), MIC_RATE)
    FakeSpeaker.played = []
    console = Console(record=True, width=200)
    talk, url = ((talk_live, server.url) if protocol == "realtime"
                 else (gpt_live.talk_live, f"ws://127.0.0.1:{server.port}/v1/live/sessions"))
    live = asyncio.create_task(talk(TalkOptions(url=url), ConsoleReporter(console)))
    deadline = time.monotonic() + 30
    while (sum(np.count_nonzero(block) for block in FakeSpeaker.played) < 24000 // 2  # half a second heard
           or "today?" not in console.export_text(clear=False)):  # GPT-Live lets the words out with the audio
        assert not live.done(), live.exception()
        assert time.monotonic() < deadline, console.export_text()
        await asyncio.sleep(0.1)
    live.cancel()
    with pytest.raises(asyncio.CancelledError):
        await live
    text = console.export_text()
    assert "you › Hello there." in text and "assistant › Hello! How can I help you today?" in text
    assert not FakeSpeaker.played[0].any()  # silence, not garbage, before the answer
