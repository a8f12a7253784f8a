"""The bridge between a Media Stream and a real session core (a controlled backend, no speech models): the
profile's settings, audio and marks, barge-in, keys, bad frames and hang-up."""

from __future__ import annotations

import asyncio
import base64
import json
from typing import Any

import pytest

from tests.realtime.harness import ControlledBackend, Turn
from voxcall.config import AgentProfile
from voxcall.core.responses.outbox import Send
from voxcall.core.session import Session
from voxcall.twilio.call import TwilioCall, profile_session

SID = "MZ0123456789abcdef"
START = {"event": "start", "streamSid": SID, "start": {
    "streamSid": SID, "callSid": "CA01", "mediaFormat": {"encoding": "audio/x-mulaw", "sampleRate": 8000,
                                                         "channels": 1}}}


class RecordingSession(Session):
    """A session that keeps every client event it was handed."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.frames: list[dict[str, Any]] = []

    async def handle_frame(self, data: str | bytes) -> None:
        self.frames.append(json.loads(data))
        await super().handle_frame(data)


class Line:
    """A call with everything it sends to Twilio kept, and the session's ``send`` at hand to fake its events."""

    def __init__(self, backend: ControlledBackend, profile: AgentProfile | None = None, keys_pause: float = 0) -> None:
        self.sent: list[dict[str, Any]] = []
        self.emit: Send | None = None

        async def send_text(text: str) -> None:
            self.sent.append(json.loads(text))

        def make_session(send: Send) -> RecordingSession:
            self.emit = send
            return RecordingSession(backend, send)

        self.call = TwilioCall(send_text, profile or AgentProfile(), make_session, keys_pause=keys_pause,
                               max_frame_bytes=65_536)

    @property
    def session(self) -> RecordingSession:
        assert isinstance(self.call.session, RecordingSession)
        return self.call.session

    async def frame(self, **frame: Any) -> bool:
        return await self.call.receive(json.dumps(frame))

    async def settle(self) -> None:
        for _ in range(20):
            await asyncio.sleep(0)

    def kinds(self) -> list[str]:
        return [f["type"] for f in self.session.frames]


def ulaw(ms: int) -> str:
    return base64.b64encode(bytes([0xFF]) * (8 * ms)).decode()


async def test_the_profile_sets_the_session_mulaw_both_ways() -> None:
    profile = AgentProfile(instructions="Answer for the bakery.", voice="joe",
                           turn_detection={"type": "server_vad", "silence_duration_ms": 300})
    assert profile_session(profile)["audio"] == {
        "input": {"format": {"type": "audio/pcmu"}, "turn_detection": {"type": "server_vad",
                                                                       "silence_duration_ms": 300}},
        "output": {"format": {"type": "audio/pcmu"}, "voice": "joe"}}
    line = Line(ControlledBackend(), AgentProfile(instructions="Answer for the bakery."))
    await line.call.start()
    await line.settle()
    assert line.kinds() == ["session.update"]
    assert line.session.settings.instructions == "Answer for the bakery."
    assert line.session.settings.input_format.kind == line.session.settings.output_format.kind == "audio/pcmu"
    await line.call.close()


async def test_caller_audio_goes_in_as_sent_once_the_stream_started() -> None:
    line = Line(ControlledBackend())
    await line.call.start()
    assert await line.frame(event="connected", protocol="Call", version="1.0.0")
    assert await line.frame(event="media", media={"track": "inbound", "payload": ulaw(20)})  # before start: dropped
    assert await line.frame(**START)
    assert await line.frame(event="media", streamSid=SID, media={"track": "inbound", "payload": ulaw(20)})
    await line.settle()
    appends = [f for f in line.session.frames if f["type"] == "input_audio_buffer.append"]
    assert appends == [{"type": "input_audio_buffer.append", "audio": ulaw(20)}]
    await line.call.close()


async def test_agent_audio_goes_out_with_marks_and_barge_in_clears_and_truncates() -> None:
    line = Line(ControlledBackend())
    await line.call.start()
    await line.frame(**START)
    assert line.emit is not None
    for _ in range(3):
        await line.emit({"type": "response.output_audio.delta", "item_id": "item_a", "delta": ulaw(100)})
    assert [f["event"] for f in line.sent] == ["media", "mark"] * 3
    assert line.sent[0] == {"event": "media", "streamSid": SID, "media": {"payload": ulaw(100)}}
    marks = [f["mark"]["name"] for f in line.sent if f["event"] == "mark"]
    await line.frame(event="mark", streamSid=SID, mark={"name": marks[0]})  # 100 ms played
    await line.emit({"type": "input_audio_buffer.speech_started", "audio_start_ms": 0, "item_id": "item_u"})
    await line.settle()
    assert line.sent[-1] == {"event": "clear", "streamSid": SID}
    truncate = line.session.frames[-1]
    assert truncate == {"type": "conversation.item.truncate", "item_id": "item_a", "content_index": 0,
                        "audio_end_ms": 100}
    for name in marks[1:]:  # Twilio returns the cleared marks: they were not played
        await line.frame(event="mark", streamSid=SID, mark={"name": name})
    await line.emit({"type": "input_audio_buffer.speech_started", "audio_start_ms": 0, "item_id": "item_v"})
    assert [f["event"] for f in line.sent].count("clear") == 1  # nothing is playing: nothing to clear
    await line.call.close()


async def test_keys_reach_the_model_as_one_entry() -> None:
    backend = ControlledBackend(Turn("You chose billing."))
    line = Line(backend, keys_pause=0.05)
    await line.call.start()
    await line.frame(**START)
    for key in "42":
        await line.frame(event="dtmf", streamSid=SID, dtmf={"track": "inbound_track", "digit": key})
    await asyncio.wait_for(_started(backend), 5)
    assert "pressed 4 2 on the phone keypad" in backend.requests[0].items[-1].text
    assert line.kinds()[-2:] == ["conversation.item.create", "response.create"]
    await line.call.close()


async def _started(backend: ControlledBackend) -> None:
    while not backend.served:
        await asyncio.sleep(0.01)
    await backend.served[0].started.wait()


async def test_hanging_up_cancels_the_running_response() -> None:
    turn = Turn("Let me look that up", hold=True)
    line = Line(ControlledBackend(turn))
    await line.call.start()
    await line.frame(**START)
    await line.frame(event="dtmf", streamSid=SID, dtmf={"track": "inbound_track", "digit": "0"})
    await asyncio.wait_for(turn.started.wait(), 5)
    assert not await line.frame(event="stop", streamSid=SID, stop={"callSid": "CA01"})
    await line.call.close()
    assert turn.closed and not turn.release.is_set()


@pytest.mark.parametrize("frame", [
    "not json", "[1, 2]", json.dumps({"event": "dance"}), json.dumps({"event": "media", "media": {}}),
    json.dumps({"event": "dtmf", "dtmf": {"digit": "A"}}), json.dumps({"event": "mark", "mark": {"name": ""}}),
    "x" * 70_000,
])
async def test_a_bad_frame_is_logged_and_the_call_goes_on(frame: str, caplog: pytest.LogCaptureFixture) -> None:
    line = Line(ControlledBackend())
    await line.call.start()
    await line.frame(**START)
    assert await line.call.receive(frame)
    assert "skipped a frame" in caplog.text
    assert await line.frame(event="media", streamSid=SID, media={"track": "inbound", "payload": ulaw(20)})
    await line.settle()
    assert line.kinds()[-1] == "input_audio_buffer.append"
    await line.call.close()


async def test_a_stream_in_another_format_ends_the_call(caplog: pytest.LogCaptureFixture) -> None:
    line = Line(ControlledBackend())
    await line.call.start()
    wrong = json.loads(json.dumps(START))
    wrong["start"]["mediaFormat"]["sampleRate"] = 16000
    assert not await line.frame(**wrong)
    assert "voxcall takes audio/x-mulaw at 8000 Hz" in caplog.text
    await line.call.close()
