"""Partial transcripts while the user speaks (``...input_audio_transcription.delta``), with real speech."""

from __future__ import annotations

import asyncio
import base64
import json
from dataclasses import dataclass, field

import pytest

from tests.harness import ControlledBackend, Harness
from tests.realtime.test_voice import speech, voice  # noqa: F401  (the module's shared models)
from voxcall.audio.codec import PCM
from voxcall.core.hearing.partials import QUIET_MS, LiveTranscript, next_delta
from voxcall.speech.stt import Hearing, Transcript
from voxcall.speech.voice import Voice

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

DELTA = "conversation.item.input_audio_transcription.delta"
COMPLETED = "conversation.item.input_audio_transcription.completed"


@pytest.mark.parametrize(("said", "heard", "final", "delta"), [
    ("", "Turn off the", False, "Turn off"),  # the last word may be cut: held back
    ("Turn off", "Turn off the lights in", False, " the lights"),
    ("Turn off the", "Turn of the lights", False, ""),  # a revision: nothing is retracted, nothing sent
    ("Turn off the", "Turn off", False, ""),
    ("Turn off the", "Turn off the lights.", True, " lights."),  # the final's last word stands
    ("Turn off the", "Turn of the lights.", True, ""),  # the final disagrees: .completed is authoritative
    ("", "", True, ""),
])
def test_deltas_only_ever_append(said: str, heard: str, final: bool, delta: str) -> None:
    assert next_delta(said, heard, final=final) == delta


class CountingVoice:
    """Stands in for :class:`Voice` in :class:`LiveTranscript`: counts the partial transcriptions asked of it."""

    def __init__(self) -> None:
        self.partials = 0

    async def partial(self, pcm: object, hearing: object) -> None:
        self.partials += 1


async def test_no_partial_starts_once_the_speaker_has_fallen_silent() -> None:
    counting = CountingVoice()

    async def send(delta: str) -> None:
        raise AssertionError("no delta expected")

    live = LiveTranscript("item_1", 0, 500, counting, None, send)  # type: ignore[arg-type]
    live.heard(600, lambda end_ms: b"", silent_ms=QUIET_MS)  # due, but the turn may be ending: none starts
    await live.stop()
    assert counting.partials == 0
    live = LiveTranscript("item_2", 0, 500, counting, None, send)  # type: ignore[arg-type]
    live.heard(400, lambda end_ms: b"")  # speaking, not yet due
    live.heard(600, lambda end_ms: b"", silent_ms=QUIET_MS - 32)  # a gap between words: it starts
    await live.stop()
    assert counting.partials == 1


@dataclass
class PacedVoice(Voice):
    """The shared :class:`Voice`, telling when no partial transcription is running (:attr:`idle`), so that a test
    can hold its stream while one is: partials are timed by the audio, and the test then hears the same partials
    however loaded the machine is."""

    idle: asyncio.Event = field(default_factory=asyncio.Event)

    def __post_init__(self) -> None:
        super().__post_init__()
        self.idle.set()

    @classmethod
    def of(cls, shared: Voice) -> PacedVoice:
        return cls(shared.stt, shared.tts, shared.vad, shared.voices, shared.turn_end)

    async def partial(self, pcm: PCM, hearing: Hearing | None = None) -> Transcript | None:
        self.idle.clear()
        try:
            return await super().partial(pcm, hearing)
        finally:
            self.idle.set()


async def stream_live(h: Harness, b64: str, chunk_ms: int = 40, *, paced: PacedVoice | None = None) -> None:
    """Send 24 kHz audio in ``chunk_ms`` appends at the pace of speech (partials are timed by the audio); with
    ``paced``, each append waits for the partial in flight."""
    raw = base64.b64decode(b64)
    step = 24_000 * chunk_ms // 1000 * 2
    for i in range(0, len(raw), step):
        await h.connection.handle_frame(json.dumps({"type": "input_audio_buffer.append",
                                                 "audio": base64.b64encode(raw[i:i + step]).decode()}))
        await asyncio.sleep(chunk_ms / 1000)
        if paced is not None:
            await paced.idle.wait()
    await h.settle()


async def test_partial_transcripts_come_while_the_user_speaks(voice: Voice) -> None:  # noqa: F811
    question = ("Please turn off the lights in the living room, then lock the front door and set the alarm for "
                "seven in the morning.")
    paced = PacedVoice.of(voice)
    async with Harness(ControlledBackend(), voice=paced, live_transcript_ms=500, eager_turn_ms=0) as h:
        await h.send(type="session.update", session={"type": "realtime", "audio": {"input": {"turn_detection": {
            "type": "server_vad", "create_response": False}}}})
        await stream_live(h, speech(voice, question), paced=paced)
        done = await h.wait(COMPLETED, timeout=60)
        kinds = [e["type"] for e in h.events]
        committed = kinds.index("input_audio_buffer.committed")
        assert DELTA in kinds[:committed], "no partial transcript while the user was speaking"
        partial = [e for e in h.events[:committed] if e["type"] == DELTA]  # a turn's partials precede its commit
        last = [e for e in h.events[committed:] if e["type"] == DELTA]
        assert {d["item_id"] for d in partial + last} == {done["item_id"]}
        said = "".join(d["delta"] for d in partial)
        assert any(word in said.lower() for word in ("turn", "lights", "living"))
        # Deltas only append: they add up to the final transcript when it begins with what they said, else the
        # final transcript (authoritative) comes with no further delta.
        if done["transcript"].startswith(said):
            assert said + "".join(d["delta"] for d in last) == done["transcript"]
        else:
            assert last == []
        assert "lights" in done["transcript"].lower()
        assert done["languages"] == [{"code": "en"}]


async def test_live_transcripts_off_send_one_delta_after_the_turn(voice: Voice) -> None:  # noqa: F811
    async with Harness(ControlledBackend(), voice=voice, live_transcript_ms=0) as h:
        await h.send(type="session.update", session={"type": "realtime", "audio": {"input": {"turn_detection": {
            "type": "server_vad", "create_response": False}}}})
        await stream_live(h, speech(voice, "What is the weather in Paris?"))
        done = await h.wait(COMPLETED, timeout=60)
        kinds = [e["type"] for e in h.events]
        assert kinds.index(DELTA) > kinds.index("input_audio_buffer.speech_stopped")
        assert [d["delta"] for d in h.of(DELTA)] == [done["transcript"]]



class PreparingBackend(ControlledBackend):
    """A backend computing on this machine's CPU whose preparation of a prompt lasts until :attr:`ready` is set."""

    computes_here = True

    def __init__(self) -> None:
        super().__init__()
        self.ready = asyncio.Event()
        self.warms = 0

    async def warm(self, request: object) -> None:
        self.warms += 1
        await self.ready.wait()


async def test_partial_transcripts_wait_while_the_prompt_is_prepared_on_this_machine(voice: Voice) -> None:  # noqa: F811
    question = ("Please turn off the lights in the living room, then lock the front door and set the alarm for "
                "seven in the morning.")
    backend, paced = PreparingBackend(), PacedVoice.of(voice)
    raw = base64.b64decode(speech(voice, question))
    half = len(raw) // 4 * 2  # whole samples
    async with Harness(backend, voice=paced, live_transcript_ms=500, eager_turn_ms=0) as h:
        await h.send(type="session.update", session={"type": "realtime", "audio": {"input": {"turn_detection": {
            "type": "server_vad", "create_response": False}}}})
        await stream_live(h, base64.b64encode(raw[:half]).decode(), paced=paced)
        assert h.of("input_audio_buffer.speech_started") and backend.warms >= 1
        assert h.of(DELTA) == [], "a partial transcript while the prompt was being prepared"
        backend.ready.set()  # prepared: the partial that is due comes at the next audio
        await stream_live(h, base64.b64encode(raw[half:]).decode(), paced=paced)
        done = await h.wait(COMPLETED, timeout=60)
        kinds = [e["type"] for e in h.events]
        partial = [e for e in h.events[:kinds.index("input_audio_buffer.committed")] if e["type"] == DELTA]
        assert partial, "no partial transcript once the prompt was ready"
        assert any(word in "".join(d["delta"] for d in partial).lower() for word in ("turn", "lights", "living"))
        assert "lights" in done["transcript"].lower()
