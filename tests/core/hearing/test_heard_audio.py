"""Heard audio without the speech models: an energy VAD and a silent STT stand in, so turn timing is exact."""

from __future__ import annotations

import asyncio
import base64
import json
import threading
from collections.abc import Iterator
from typing import Any

import numpy as np
import numpy.typing as npt

from tests.harness import ControlledBackend, Harness, Turn
from voxcall.audio.codec import PCM
from voxcall.core.hearing.heard_audio import MAX_TRANSCRIBING
from voxcall.speech.stt import Transcript
from voxcall.speech.voice import Voice

CHUNK_MS = 40
WHISPER_WINDOW_MS = 30_000
"""What Whisper hears at once: the longest a turn should last, so that no transcription grows with a flood."""


class EnergyVAD:
    """Speech is any 32 ms frame louder than a whisper."""

    sample_rate = 16_000
    frame_samples = 512

    def probability(self, frame: npt.NDArray[np.int16]) -> float:
        return 1.0 if np.abs(frame.astype(np.int32)).mean() > 1000 else 0.0

    def reset(self) -> None:
        return None


class StandInSTT:
    """An English-only stand-in for Whisper: :meth:`hear` gives what :meth:`transcribe` says (subclasses say it);
    a partial (live) transcript never settles, so only whole turns are heard."""

    name = "tiny.en"
    languages = frozenset({"en"})

    def transcribe(self, pcm: PCM) -> str:
        raise NotImplementedError

    def hear(self, pcm: PCM, *, language: str | None = None, partial: bool = False) -> Transcript | None:
        return None if partial else Transcript(self.transcribe(pcm), "en")


class SilentSTT(StandInSTT):
    """Hears nothing in anything."""

    def transcribe(self, pcm: PCM) -> str:
        return ""


class Beeps:
    """100 ms of quiet tone per word, at 16 kHz."""

    sample_rate = 16_000

    def synthesize(self, text: str, *, speed: float = 1.0) -> Iterator[npt.NDArray[np.int16]]:
        for _ in text.split():
            yield np.full(round(1600 / speed), 100, np.int16)


def fake_voice(stt: Any = None) -> Voice:
    return Voice(stt=stt or SilentSTT(), tts=Beeps(), vad=EnergyVAD)


async def silence(h: Harness, ms: int) -> None:
    chunk = base64.b64encode(bytes(24_000 * 2 * CHUNK_MS // 1000)).decode()
    for _ in range(ms // CHUNK_MS):
        await h.send(type="input_audio_buffer.append", audio=chunk)


async def idle_session(h: Harness, timeout_ms: int, modalities: list[str]) -> None:
    await h.send(type="session.update", session={
        "type": "realtime", "output_modalities": modalities,
        "audio": {"input": {"turn_detection": {"type": "server_vad", "idle_timeout_ms": timeout_ms}}}})


async def test_idle_timeout_commits_the_silence_and_answers() -> None:
    async with Harness(ControlledBackend(Turn("Are you still there?")), voice=fake_voice()) as h:
        await idle_session(h, 1000, ["text"])
        await silence(h, 960)
        assert not h.of("input_audio_buffer.timeout_triggered")
        await silence(h, 80)
        fired = await h.wait("input_audio_buffer.timeout_triggered")
        assert fired["audio_end_ms"] - fired["audio_start_ms"] >= 1000
        committed = await h.wait("input_audio_buffer.committed")
        assert committed["item_id"] == fired["item_id"]
        assert (await h.wait("response.done"))["response"]["status"] == "completed"


async def test_the_assistants_audio_postpones_the_idle_timeout() -> None:
    words = " ".join(["word"] * 20)  # two seconds of audio
    async with Harness(ControlledBackend(Turn("Hi."), Turn(words)), voice=fake_voice()) as h:
        await idle_session(h, 1000, ["audio"])
        await h.send(type="response.create")
        await h.wait("response.done")
        await silence(h, 40)  # the response is seen: its playback starts here
        await h.send(type="response.create")
        await h.wait("response.done", 2)
        await silence(h, 1600)  # still inside the two seconds of playback and the second after it
        assert not h.of("input_audio_buffer.timeout_triggered")
        await silence(h, 1600)
        assert h.of("input_audio_buffer.timeout_triggered")


async def test_without_idle_timeout_silence_is_just_silence() -> None:
    async with Harness(ControlledBackend(), voice=fake_voice()) as h:
        await silence(h, 3000)
        assert not h.of("input_audio_buffer.timeout_triggered") and not h.of("response.created")


class CountingSTT(StandInSTT):
    """Hears "hello" in anything, and records how many samples each turn held."""

    def __init__(self) -> None:
        self.heard: list[int] = []

    def transcribe(self, pcm: PCM) -> str:
        self.heard.append(len(pcm))
        return "hello"


def tone(ms: int) -> str:
    """``ms`` of a loud 440 Hz tone (speech to the energy VAD), 24 kHz PCM, base64."""
    t = np.arange(24 * ms) / 24_000
    return base64.b64encode((8000 * np.sin(2 * np.pi * 440 * t)).astype(np.int16).tobytes()).decode()


async def long_turns_session(h: Harness) -> None:
    await h.send(type="session.update", session={
        "type": "realtime", "output_modalities": ["text"],
        "audio": {"input": {"turn_detection": {"type": "server_vad", "silence_duration_ms": 10_000}}}})


async def test_a_turn_that_never_pauses_ends_at_max_turn_seconds() -> None:
    stt = CountingSTT()
    async with Harness(ControlledBackend(), voice=fake_voice(stt), max_turn_seconds=1) as h:
        await long_turns_session(h)
        chunk = tone(CHUNK_MS)
        held = []
        for _ in range(5000 // CHUNK_MS):  # five seconds without a pause
            await h.send(type="input_audio_buffer.append", audio=chunk)
            held.append(h.session.audio.buffer.duration_ms)
        assert max(held) <= 1024 + CHUNK_MS  # the turn (in 32 ms frames) and the chunk that ended it, never more
        stopped = h.of("input_audio_buffer.speech_stopped")
        assert len(stopped) == 4  # at 1, 2, 3 and 4 s (in frames); the fifth second is still being spoken
        await h.wait("conversation.item.input_audio_transcription.completed", 4)
        committed = [e["item_id"] for e in h.of("input_audio_buffer.committed")]
        assert committed == [e["item_id"] for e in stopped]
        assert all(abs(n - 16_384) <= 512 for n in stt.heard)  # a second each (32 frames), nothing lost between
        assert not h.of("error")


async def test_a_turn_cut_at_its_longest_is_answered_as_usual() -> None:
    async with Harness(ControlledBackend(Turn("Go on.")), voice=fake_voice(CountingSTT()), max_turn_seconds=1) as h:
        await long_turns_session(h)
        for _ in range(1040 // CHUNK_MS):
            await h.send(type="input_audio_buffer.append", audio=tone(CHUNK_MS))
        await silence(h, 200)
        stopped = await h.wait("input_audio_buffer.speech_stopped")
        assert stopped["audio_end_ms"] == 1024
        done = await h.wait("conversation.item.input_audio_transcription.completed")
        assert done["item_id"] == stopped["item_id"] and done["transcript"] == "hello"
        assert (await h.wait("response.done"))["response"]["status"] == "completed"


async def test_one_big_chunk_of_speech_is_cut_into_whole_turns() -> None:
    stt = CountingSTT()
    async with Harness(ControlledBackend(), voice=fake_voice(stt), max_turn_seconds=1) as h:
        await long_turns_session(h)
        await h.send(type="input_audio_buffer.append", audio=tone(3500))  # 168 kB: three turns end inside it
        assert len(h.of("input_audio_buffer.speech_stopped")) == 3
        assert len(h.of("input_audio_buffer.speech_started")) == 4
        await h.wait("conversation.item.input_audio_transcription.completed", 3)
        assert stt.heard == [16_384] * 3  # each turn whole: none empty, none sharing audio with another
        assert h.session.audio.buffer.duration_ms <= 3500 - 3 * 1024


class GatedSTT(CountingSTT):
    """Hears "hello" once the test opens the gate."""

    def __init__(self) -> None:
        super().__init__()
        self.gate = threading.Event()

    def transcribe(self, pcm: PCM) -> str:
        self.gate.wait(10)
        return super().transcribe(pcm)


async def test_audio_faster_than_transcription_waits_instead_of_piling_up() -> None:
    stt = GatedSTT()
    async with Harness(ControlledBackend(), voice=fake_voice(stt), max_turn_seconds=1) as h:
        await long_turns_session(h)
        sending = asyncio.create_task(h.send(type="input_audio_buffer.append", audio=tone(4500)))  # four turns end
        while len(h.of("input_audio_buffer.committed")) < MAX_TRANSCRIBING:
            await asyncio.sleep(0.01)
        await asyncio.sleep(0.1)
        assert not sending.done()  # the third turn waits for a transcript: so does the client's next event
        assert len(h.of("input_audio_buffer.committed")) == MAX_TRANSCRIBING  # the third is not committed yet
        stt.gate.set()
        await asyncio.wait_for(sending, 10)
        await h.wait("conversation.item.input_audio_transcription.completed", 4)
        assert stt.heard == [16_384] * 4


async def test_a_long_append_hands_the_event_loop_back_while_the_vad_reads_it() -> None:
    """A client streaming far faster than real time (15 s of audio in one append) must not hold the event loop for
    the whole append: every other session (and its keepalive pings) runs between half-second slices."""
    async with Harness(ControlledBackend(), voice=fake_voice()) as h:
        ticks = 0

        async def other_sessions() -> None:
            nonlocal ticks
            while True:
                await asyncio.sleep(0)
                ticks += 1

        ticker = asyncio.create_task(other_sessions())
        await asyncio.sleep(0)
        audio = base64.b64encode(bytes(24_000 * 2 * 15)).decode()
        before = ticks
        await h.connection.handle_frame(json.dumps({"type": "input_audio_buffer.append", "audio": audio}))
        during = ticks - before
        ticker.cancel()
        assert during >= 15 * 2 - 1  # one turn of the loop per slice at least
        assert h.session.audio.buffer.position_ms > 14_900 and not h.of("error")  # the resampler holds a few ms


async def test_a_flood_of_speech_is_cut_into_capped_turns_each_said_and_none_transcribed_longer() -> None:
    """A client streaming speech far faster than real time with a long silence setting and no responses (the flood
    that once had the server transcribe two-minute turns): at the default cap each turn ends, a
    ``voxcall.input_audio_buffer.turn_capped`` event says so (before that turn's ``speech_stopped``), and no
    transcription holds more than the cap, one Whisper window."""
    stt = CountingSTT()
    async with Harness(ControlledBackend(), voice=fake_voice(stt)) as h:
        await h.send(type="session.update", session={"type": "realtime", "audio": {"input": {"turn_detection": {
            "type": "server_vad", "silence_duration_ms": 10_000, "create_response": False}}}})
        flood = tone(15_800)  # 758 kB of audio, 1 MB as a frame
        for _ in range(8):  # two minutes, without a pause
            await h.send(type="input_audio_buffer.append", audio=flood)
        capped = h.of("voxcall.input_audio_buffer.turn_capped")
        stopped = h.of("input_audio_buffer.speech_stopped")
        assert len(capped) == len(stopped) == 4 and [e["item_id"] for e in capped] == [e["item_id"] for e in stopped]
        assert all(e["max_turn_ms"] == WHISPER_WINDOW_MS for e in capped)
        assert [e["audio_end_ms"] for e in capped] == [e["audio_end_ms"] for e in stopped]
        kinds = [e["type"] for e in h.events]
        assert kinds.index("voxcall.input_audio_buffer.turn_capped") < kinds.index("input_audio_buffer.speech_stopped")
        await h.wait("conversation.item.input_audio_transcription.completed", 4)
        assert max(stt.heard) <= WHISPER_WINDOW_MS * 16 + 512  # 16 samples a ms at 16 kHz; a frame of rounding
        assert not h.of("error")
