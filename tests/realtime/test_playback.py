"""The host's music and the assistant's speech: speech lasts until the client has played it, for every session.

The pacing is checked by the end it computes (an injected clock), never by waiting on a wall clock; the sessions
speak with stand-in voices whose answers last far longer than any test, so no timer ends them by surprise.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest

from tests.core.hearing.test_heard_audio import EnergyVAD, SilentSTT, fake_voice
from tests.harness import ControlledBackend, Harness, Turn
from voxcall.audio.formats import PCM24K
from voxcall.audio.output import AudioOutput, NullSink
from voxcall.core.events import OutputAudio
from voxcall.core.playout import Ducking
from voxcall.core.tools.toolbox import Toolbox
from voxcall.realtime.playout import ReckonedPlayout
from voxcall.speech.voice import Voice


class Clock:
    """A clock the test moves."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class Drone:
    """A stand-in voice that says each word for ten seconds (a quiet tone, 16 kHz)."""

    sample_rate = 16_000

    def synthesize(self, text: str, *, speed: float = 1.0) -> Iterator[npt.NDArray[np.int16]]:
        for _ in text.split():
            yield np.full(160_000, 100, np.int16)


def drone_voice() -> Voice:
    stt: Any = SilentSTT()
    return Voice(stt=stt, tts=Drone(), vad=EnergyVAD)


@pytest.fixture
async def output() -> Any:
    output = AudioOutput(NullSink())
    yield output
    await output.close()


# -- the reckoning --------------------------------------------------------------------------------------------


def chunk(ms: int, item: str = "item_1", response: str = "resp_1") -> OutputAudio:
    """``ms`` of the speech of message ``item``."""
    return OutputAudio(response, item, 0, 0, np.zeros(ms * 24, np.int16), PCM24K, 0, ms)


def reckoned(output: AudioOutput, clock: Clock | None = None) -> ReckonedPlayout:
    playout = ReckonedPlayout(clock=clock or time.monotonic)
    playout.watch(Ducking(output))
    return playout


async def test_speech_ends_when_the_audio_sent_has_been_played(output: AudioOutput) -> None:
    clock = Clock()
    playout = reckoned(output, clock)
    playout.capture(chunk(100))  # the first chunk, at 1000.0
    clock.now += 0.01
    playout.capture(chunk(100))  # sent ahead of playback: it plays after the first
    playout.capture(chunk(300))
    assert playout.ends_at == pytest.approx(1000.5)  # when the first chunk was sent + all the audio sent
    assert output.speakers == 1
    clock.now = 1001.0  # a pause in the sending (a slow clause): the client's buffer ran dry meanwhile
    playout.capture(chunk(200))
    assert playout.ends_at == pytest.approx(1001.2)
    assert output.speakers == 1  # one session is one speaker, however many chunks
    assert await playout.clear() is None  # the client truncates itself
    assert playout.ends_at is None and output.speakers == 0


async def test_a_response_being_spoken_holds_the_speech_through_a_slow_clause(output: AudioOutput) -> None:
    clock = Clock()
    playout = reckoned(output, clock)
    playout.capture(chunk(100))  # the first chunk: the music goes down
    assert output.speakers == 1
    clock.now += 5  # the next clause is slow: its audio was played long ago, but more is coming
    await asyncio.sleep(0)
    assert output.speakers == 1
    playout.capture(chunk(200))
    playout.flush("resp_1")  # the response is all sent; its last 200 ms still play
    assert output.speakers == 1 and playout.ends_at == pytest.approx(1005.2)
    clock.now += 0.3
    playout.flush("resp_1")  # nothing more comes: after the audio was played, the speech is over
    assert output.speakers == 0 and playout.ends_at is None


async def test_the_speech_ends_by_itself_once_played(output: AudioOutput) -> None:
    playout = reckoned(output)
    playout.capture(chunk(1))
    playout.flush("resp_1")
    assert output.speakers == 1
    await asyncio.sleep(0.05)  # its timer, due after 1 ms, fires before this sleep's
    assert output.speakers == 0 and playout.ends_at is None


async def test_a_truncate_ends_the_speech_only_for_the_audio_sent_last(output: AudioOutput) -> None:
    playout = reckoned(output, Clock())
    playout.capture(chunk(500, "item_first"))
    playout.capture(chunk(500, "item_second"))
    playout.truncated("item_first")  # an older message: the newer one still plays
    assert output.speakers == 1
    playout.truncated("item_second")
    assert output.speakers == 0 and playout.ends_at is None
    await playout.clear()  # idempotent
    assert output.speakers == 0


async def test_the_music_waits_for_every_session_sharing_the_host(output: AudioOutput) -> None:
    clock = Clock()
    one, two = reckoned(output, clock), reckoned(output, clock)
    one.capture(chunk(500))
    two.capture(chunk(500))
    assert output.speakers == 2
    await one.clear()
    assert output.speakers == 1  # the other session still speaks
    await two.clear()
    assert output.speakers == 0


# -- in a session ---------------------------------------------------------------------------------------------


async def speak(h: Harness) -> dict[str, Any]:
    """Ask for an answer and wait until all of it was sent; its ``response.done``."""
    await h.say("count")
    await h.send(type="response.create")
    return await h.wait("response.done", timeout=30)


async def test_music_stays_down_until_the_client_has_played_the_answer(output: AudioOutput) -> None:
    async with Harness(ControlledBackend(Turn("One two three.")), voice=drone_voice(),
                       toolbox=Toolbox(output=output)) as h:
        playback = h.connection._playout
        assert isinstance(playback, ReckonedPlayout)
        asked = time.monotonic()
        done = await speak(h)
        sent = time.monotonic()
        assert done["response"]["status"] == "completed"
        assert output.speakers == 1  # every chunk has been sent, but the client plays 30 s of it
        ends_at = playback.ends_at
        assert ends_at is not None and asked + 30 <= ends_at <= sent + 30  # first chunk's time + 30 s
        await h.send(type="output_audio_buffer.clear", event_id="clear_1")
        assert output.speakers == 0 and playback.ends_at is None  # the client dropped it: the music comes back
        cleared = h.of("output_audio_buffer.cleared")
        assert len(cleared) == 1 and cleared[0]["response_id"] == done["response"]["id"]
        assert not h.of("error")


async def test_a_truncate_of_the_answer_playing_brings_the_music_back(output: AudioOutput) -> None:
    async with Harness(ControlledBackend(Turn("One two three.")), voice=drone_voice(),
                       toolbox=Toolbox(output=output)) as h:
        await speak(h)
        item = h.session.conversation.items[-1]
        await h.send(type="conversation.item.truncate", item_id=item.id, content_index=0, audio_end_ms=1500)
        assert h.of("conversation.item.truncated") and output.speakers == 0


async def test_the_music_waits_for_the_speech_of_every_session(output: AudioOutput) -> None:
    toolbox = Toolbox(output=output)
    async with Harness(ControlledBackend(Turn("One.")), voice=drone_voice(), toolbox=toolbox) as one, \
            Harness(ControlledBackend(Turn("Two.")), voice=drone_voice(), toolbox=toolbox) as two:
        await speak(one)
        await speak(two)
        assert output.speakers == 2
        await one.send(type="output_audio_buffer.clear")
        assert output.speakers == 1  # the other session is still heard
        await two.send(type="output_audio_buffer.clear")
        assert output.speakers == 0
        await speak(two)  # speaks again, and its session ends while it is heard
    assert output.speakers == 0


async def test_output_audio_buffer_clear_is_never_an_error() -> None:
    """The JS Agents SDK sends it on every interruption, with or without a response, with or without music."""
    async with Harness(ControlledBackend(Turn("Hello there.")), voice=fake_voice()) as h:
        await h.send(type="output_audio_buffer.clear", event_id="early")
        assert not h.of("error") and not h.of("output_audio_buffer.cleared")  # nothing was ever sent to clear
        done = await speak(h)
        await h.send(type="output_audio_buffer.clear", event_id="late")
        assert not h.of("error")
        assert [e["response_id"] for e in h.of("output_audio_buffer.cleared")] == [done["response"]["id"]]
