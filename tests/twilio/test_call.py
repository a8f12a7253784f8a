"""The bridge between a Media Stream and a real session core (a controlled backend, no speech models): the
profile's settings, audio and marks, barge-in, keys, bad frames and hang-up."""

from __future__ import annotations

import asyncio
import base64
import json
from typing import Any

import numpy as np
import pytest

from tests.harness import ControlledBackend, Turn, host_for
from voxcall.audio.formats import PCMU
from voxcall.audio.g711 import ulaw_decode
from voxcall.config import AgentProfile
from voxcall.core.commands import AddItem, AppendAudio, Command, Respond, UpdateSettings
from voxcall.core.events import Event, OutputAudio
from voxcall.core.playout import Cleared, Heard
from voxcall.core.settings import SessionSettings
from voxcall.twilio.call import TwilioCall, profile_settings

SID = "MZ0123456789abcdef"
START = {"event": "start", "streamSid": SID, "start": {
    "streamSid": SID, "callSid": "CA01", "mediaFormat": {"encoding": "audio/x-mulaw", "sampleRate": 8000,
                                                         "channels": 1}}}


class Line:
    """A call with everything it sends to Twilio kept, every command it gives its session kept, and the session's
    ``emit`` at hand to fake its events."""

    def __init__(self, backend: ControlledBackend, profile: AgentProfile | None = None, keys_pause: float = 0) -> None:
        self.sent: list[dict[str, Any]] = []
        self.commands: list[Command] = []

        async def send_text(text: str) -> None:
            self.sent.append(json.loads(text))

        self.call = TwilioCall(host_for(backend, max_frame_bytes=65_536), send_text, profile or AgentProfile(),
                               keys_pause=keys_pause)
        self.session = self.call.session
        apply = self.session.apply

        async def recorded(command: Command) -> None:
            self.commands.append(command)
            await apply(command)

        self.session.apply = recorded  # type: ignore[method-assign]

    async def start(self) -> None:
        await self.call.start()
        self._feeding = asyncio.create_task(self.call.hosted.feed())

    async def close(self) -> None:
        self._feeding.cancel()
        await asyncio.wait([self._feeding])
        await self.call.close()

    async def emit(self, ev: Event) -> None:
        """The session emits ``ev``."""
        await self.session.emit(ev)
        await self.settle()

    async def frame(self, **frame: Any) -> bool:
        return await self.call.receive(json.dumps(frame))

    async def settle(self) -> None:
        for _ in range(20):
            await asyncio.sleep(0)

    def kinds(self) -> list[type]:
        return [type(c) for c in self.commands]


def ulaw(ms: int) -> str:
    return base64.b64encode(bytes([0xFF]) * (8 * ms)).decode()


async def test_the_profile_sets_the_session_mulaw_both_ways() -> None:
    profile = AgentProfile(instructions="Answer for the bakery.", voice="joe",
                           turn_detection={"type": "server_vad", "silence_duration_ms": 300})
    settings = profile_settings(profile, SessionSettings())
    assert (settings.input_format, settings.output_format, settings.voice) == (PCMU, PCMU, "joe")
    assert settings.turn_detection is not None and settings.turn_detection.silence_duration_ms == 300
    line = Line(ControlledBackend(), AgentProfile(instructions="Answer for the bakery."))
    await line.start()
    await line.settle()
    assert line.kinds() == [UpdateSettings]
    assert line.session.settings.instructions == "Answer for the bakery."
    assert line.session.settings.input_format.kind == line.session.settings.output_format.kind == "audio/pcmu"
    await line.close()


async def test_caller_audio_goes_in_as_sent_once_the_stream_started() -> None:
    line = Line(ControlledBackend())
    await line.start()
    assert await line.frame(event="connected", protocol="Call", version="1.0.0")
    assert await line.frame(event="media", media={"track": "inbound", "payload": ulaw(20)})  # before start: dropped
    assert await line.frame(**START)
    assert await line.frame(event="media", streamSid=SID, media={"track": "inbound", "payload": ulaw(20)})
    await line.settle()
    appends = [c for c in line.commands if isinstance(c, AppendAudio)]
    assert len(appends) == 1 and appends[0].rate == 8000
    assert (appends[0].pcm == ulaw_decode(np.frombuffer(base64.b64decode(ulaw(20)), np.uint8))).all()
    await line.close()


async def test_agent_audio_goes_out_with_marks_and_barge_in_clears_and_says_what_was_heard() -> None:
    line = Line(ControlledBackend())
    await line.start()
    await line.frame(**START)
    for n in range(3):
        await line.emit(OutputAudio("resp_a", "item_a", 0, 0, np.zeros(800, np.int16), PCMU, n * 100, 100))
    assert [f["event"] for f in line.sent] == ["media", "mark"] * 3
    assert line.sent[0] == {"event": "media", "streamSid": SID, "media": {"payload": ulaw(100)}}
    marks = [f["mark"]["name"] for f in line.sent if f["event"] == "mark"]
    await line.frame(event="mark", streamSid=SID, mark={"name": marks[0]})  # 100 ms played
    playout = line.session.playout
    assert playout is not None
    cleared = await playout.clear()  # the caller speaks over the agent: the session clears its playout
    await line.settle()
    assert line.sent[-1] == {"event": "clear", "streamSid": SID}
    assert cleared == Cleared("resp_a", (Heard("item_a", "resp_a", 100),))
    for name in marks[1:]:  # Twilio returns the cleared marks: they were not played
        await line.frame(event="mark", streamSid=SID, mark={"name": name})
    await line.emit(OutputAudio("resp_a", "item_a", 0, 0, np.zeros(800, np.int16), PCMU, 300, 100))
    assert await playout.clear() is None  # nothing is playing: nothing to clear, and the cleared reply stays silent
    assert [f["event"] for f in line.sent].count("clear") == 1 and len(line.sent) == 7
    await line.close()


async def test_keys_reach_the_model_as_one_entry() -> None:
    backend = ControlledBackend(Turn("You chose billing."))
    line = Line(backend, keys_pause=0.05)
    await line.start()
    await line.frame(**START)
    for key in "42":
        await line.frame(event="dtmf", streamSid=SID, dtmf={"track": "inbound_track", "digit": key})
    await asyncio.wait_for(_started(backend), 5)
    assert "pressed 4 2 on the phone keypad" in backend.requests[0].items[-1].text
    assert line.kinds()[-2:] == [AddItem, Respond]
    await line.close()


async def _started(backend: ControlledBackend) -> None:
    while not backend.served:
        await asyncio.sleep(0.01)
    await backend.served[0].started.wait()


async def test_hanging_up_cancels_the_running_response() -> None:
    turn = Turn("Let me look that up", hold=True)
    line = Line(ControlledBackend(turn))
    await line.start()
    await line.frame(**START)
    await line.frame(event="dtmf", streamSid=SID, dtmf={"track": "inbound_track", "digit": "0"})
    await asyncio.wait_for(turn.started.wait(), 5)
    assert not await line.frame(event="stop", streamSid=SID, stop={"callSid": "CA01"})
    await line.close()
    assert turn.closed and not turn.release.is_set()


@pytest.mark.parametrize("frame", [
    "not json", "[1, 2]", json.dumps({"event": "dance"}), json.dumps({"event": "media", "media": {}}),
    json.dumps({"event": "dtmf", "dtmf": {"digit": "A"}}), json.dumps({"event": "mark", "mark": {"name": ""}}),
    "x" * 70_000,
])
async def test_a_bad_frame_is_logged_and_the_call_goes_on(frame: str, caplog: pytest.LogCaptureFixture) -> None:
    line = Line(ControlledBackend())
    await line.start()
    await line.frame(**START)
    assert await line.call.receive(frame)
    assert "skipped a frame" in caplog.text
    assert await line.frame(event="media", streamSid=SID, media={"track": "inbound", "payload": ulaw(20)})
    await line.settle()
    assert line.kinds()[-1] == AppendAudio
    await line.close()


async def test_a_stream_in_another_format_ends_the_call(caplog: pytest.LogCaptureFixture) -> None:
    line = Line(ControlledBackend())
    await line.start()
    wrong = json.loads(json.dumps(START))
    wrong["start"]["mediaFormat"]["sampleRate"] = 16000
    assert not await line.frame(**wrong)
    assert "voxcall takes audio/x-mulaw at 8000 Hz" in caplog.text
    await line.close()
