"""A WebRTC call end to end, with aiortc as the client: the offer posted, Opus audio both ways with the real
speech models, the Realtime events on the data channel, barge-in, and the refusals."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator

import httpx2 as httpx
import numpy as np
import pytest

from tests.harness import Recorded, heard_only
from tests.servers import Server
from tests.webrtc.peer import RATE, Peer
from voxcall.audio.codec import resample
from voxcall.config import ServerSettings
from voxcall.llm import ScriptedBackend
from voxcall.speech.voice import Voice

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

KEY = "webrtc-test-key"
SCRIPT = {
    "rules": [
        {"match": "weather", "reply": "It is sunny in Paris today."},
        {"match": "story", "reply": "Once upon a time, in a small village by the sea, there lived an old "
                                    "fisherman who went out every morning before the sun came up. " * 4},
    ],
    "default": "Sorry, I did not get that.",
}


def spoken(voice: Voice, text: str) -> np.ndarray:
    pcm = np.concatenate([np.asarray(chunk, np.int16) for chunk in voice.tts.synthesize(text)])
    return resample(pcm, voice.tts.sample_rate, RATE)


def transcript(voice: Voice, pcm: np.ndarray) -> str:
    return voice.stt.transcribe(resample(pcm, RATE, 16_000)).lower()


STORY = SCRIPT["rules"][1]["reply"]


@pytest.fixture
def backend() -> Recorded:
    return Recorded(ScriptedBackend(SCRIPT))


@pytest.fixture
async def server(voice: Voice, backend: Recorded) -> AsyncIterator[Server]:
    settings = ServerSettings(api_keys=[KEY])
    async with Server(settings, backend, voice=voice) as served:  # type: ignore[arg-type]
        yield served


def calls_url(server: Server) -> str:
    return f"{server.base_url}/realtime/calls"


async def test_a_spoken_question_is_answered_aloud_and_a_barge_in_stops_the_speech(server: Server,
                                                                                    voice: Voice) -> None:
    peer = Peer()
    try:
        reply = await peer.call(calls_url(server), KEY)
        assert reply.status_code == 201, reply.text
        assert peer.location is not None and peer.location.startswith("/v1/realtime/calls/rtc_")
        created = await peer.wait_for("session.created")
        assert created["session"]["type"] == "realtime"
        peer.send({"type": "session.update", "session": {"type": "realtime", "audio": {"input": {
            "format": {"type": "audio/pcmu"},  # ignored on a call: the media are Opus
            "turn_detection": {"type": "server_vad", "silence_duration_ms": 400}}}}})
        updated = await peer.wait_for("session.updated")
        assert updated["session"]["audio"]["input"]["format"]["type"] == "audio/pcm"

        peer.microphone.say(np.zeros(RATE // 2, np.int16))
        asked = time.perf_counter()
        peer.microphone.say(spoken(voice, "What is the weather in Paris?"))
        done = await peer.wait_for("response.done", after=asked)
        assert done["response"]["status"] == "completed"
        started = await peer.wait_for("output_audio_buffer.started", after=asked)
        assert started["response_id"] == done["response"]["id"]
        await peer.wait_for("output_audio_buffer.stopped", after=asked)
        assert not peer.of("response.output_audio.delta"), "audio goes on the track, not the data channel"
        assert "sunny" in transcript(voice, peer.heard_after(asked))

        asked = time.perf_counter()
        peer.microphone.say(spoken(voice, "Tell me a story."))
        await peer.wait_for("output_audio_buffer.started", after=asked)
        await asyncio.sleep(1.5)  # let the agent speak, then talk over it
        interrupted = peer.microphone.say(spoken(voice, "Stop, that is enough."))
        cleared = await peer.wait_for("output_audio_buffer.cleared", after=asked)
        truncated = await peer.wait_for("conversation.item.truncated", after=asked)
        assert 1000 <= truncated["audio_end_ms"] < 10_000
        stopped_at = time.perf_counter()
        await asyncio.sleep(0.5)
        story = [at for at, _ in peer.heard if asked < at]
        assert cleared and story and min(story) < interrupted
        # frames already sent still arrive through the network and the receiver's jitter buffer (about 0.1 s)
        heard_late = [at for at, _ in peer.heard if stopped_at + 0.25 < at < stopped_at + 0.5]
        assert not heard_late, "the speech stops at once"
    finally:
        await peer.close()


async def test_after_a_barge_in_the_conversation_holds_only_what_the_user_heard(server: Server, voice: Voice,
                                                                                backend: Recorded) -> None:
    """The track plays the speech, so the session cuts the message to what it played: the model's next request
    holds the story's first words, never the rest it generated."""
    peer = Peer()
    try:
        assert (await peer.call(calls_url(server), KEY)).status_code == 201
        await peer.wait_for("session.created")
        peer.microphone.say(np.zeros(RATE // 2, np.int16))
        asked = time.perf_counter()
        peer.microphone.say(spoken(voice, "Tell me a story."))
        await peer.wait_for("output_audio_buffer.started", after=asked)
        await asyncio.sleep(1.5)
        peer.microphone.say(spoken(voice, "Stop, that is enough."))
        peer.microphone.say(np.zeros(RATE, np.int16))
        await peer.wait_for("conversation.item.truncated", after=asked)
        async with asyncio.timeout(60):  # the interruption is answered: its request reads the conversation
            while not any("enough" in text.lower() for text in backend.user_said()):
                await asyncio.sleep(0.05)
        said = [text for text in backend.assistant_said() if text.startswith("Once")]
        assert len(said) == 1
        heard_only(said[0], STORY)
    finally:
        await peer.close()


async def test_a_call_needs_a_key_and_a_real_offer(server: Server) -> None:
    peer = Peer()
    try:
        missing = await peer.call(calls_url(server))
        assert missing.status_code == 401
        assert missing.json()["error"]["code"] == "invalid_api_key"
    finally:
        await peer.close()


async def test_a_client_secret_opens_one_call_with_its_session(server: Server) -> None:
    async with httpx.AsyncClient(base_url=server.base_url) as http:
        refused = await http.post("/realtime/client_secrets", json={})
        assert refused.status_code == 401, "only a key holder mints"
        minted = await http.post("/realtime/client_secrets", headers={"Authorization": f"Bearer {KEY}"}, json={
            "expires_after": {"anchor": "created_at", "seconds": 60},
            "session": {"type": "realtime", "instructions": "You are a pirate."}})
        assert minted.status_code == 200, minted.text
        secret = minted.json()
        assert secret["value"].startswith("ek_") and secret["expires_at"] > time.time() + 50
        with_secret = await http.post("/realtime/client_secrets", json={},
                                      headers={"Authorization": f"Bearer {secret['value']}"})
        assert with_secret.status_code == 401, "a secret cannot mint another"
        bad_session = await http.post("/realtime/client_secrets", headers={"Authorization": f"Bearer {KEY}"},
                                      json={"session": {"type": "realtime", "instructions": 5}})
        assert bad_session.status_code == 400 and "instructions" in bad_session.json()["error"]["message"]

    first, second = Peer(), Peer()
    try:
        assert (await first.call(calls_url(server), secret["value"])).status_code == 201
        created = await first.wait_for("session.created")
        updated = await first.wait_for("session.updated")
        assert created["session"]["instructions"] != "You are a pirate."
        assert updated["session"]["instructions"] == "You are a pirate."
        reused = await second.call(calls_url(server), secret["value"])
        assert reused.status_code == 401 and "used already" in reused.json()["error"]["message"]
        assert first.location is not None
        async with httpx.AsyncClient() as http:
            hung_up = await http.post(f"http://127.0.0.1:{server.port}{first.location}/hangup",
                                      headers={"Authorization": f"Bearer {KEY}"})
        assert hung_up.status_code == 200
        async with asyncio.timeout(10):
            while server.admission.active:
                await asyncio.sleep(0.05)
    finally:
        await first.close()
        await second.close()


async def test_refusals_spend_nothing_and_say_why(server: Server) -> None:
    async with httpx.AsyncClient(base_url=server.base_url) as http:
        auth = {"Authorization": f"Bearer {KEY}"}
        secret = (await http.post("/realtime/client_secrets", headers=auth, json={})).json()["value"]
        not_sdp = await http.post("/realtime/calls", content=b"hello", headers={
            "Authorization": f"Bearer {secret}", "Content-Type": "application/sdp"})
        assert not_sdp.status_code == 400 and not_sdp.json()["error"]["code"] == "invalid_offer"
        wrong_type = await http.post("/realtime/calls", content=b"v=0", headers={**auth, "Content-Type": "text/plain"})
        assert wrong_type.status_code == 415
        unknown = await http.post("/realtime/calls/rtc_nope/hangup", headers=auth)
        assert unknown.status_code == 404
        preflight = await http.options("/realtime/calls", headers={"Origin": f"http://127.0.0.1:{server.port}",
                                                                   "Access-Control-Request-Method": "POST"})
        assert preflight.status_code == 204
        assert "Authorization" in preflight.headers["access-control-allow-headers"]
        assert preflight.headers["access-control-expose-headers"] == "Location"
        foreign = await http.post("/realtime/client_secrets", headers={**auth, "Origin": "https://evil.example"})
        assert foreign.status_code == 403
    peer = Peer()
    try:
        assert (await peer.call(calls_url(server), secret)).status_code == 201, "the refused offer spent nothing"
    finally:
        await peer.close()
    assert server.admission.active <= 1


async def test_a_form_with_a_file_in_it_is_refused_with_a_reason(server: Server) -> None:
    async with httpx.AsyncClient(base_url=server.base_url) as http:
        reply = await http.post("/realtime/calls", headers={"Authorization": f"Bearer {KEY}"},
                                files={"sdp": ("offer.sdp", b"v=0", "application/sdp")})
    assert reply.status_code == 400 and reply.json()["error"]["code"] == "invalid_offer"


async def test_a_call_that_never_connects_gives_its_seat_back(server: Server, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("voxcall.webrtc.call.CONNECT_TIMEOUT", 0.5)
    peer = Peer()
    try:
        await peer.pc.setLocalDescription(await peer.pc.createOffer())
        async with httpx.AsyncClient() as http:  # the answer is never set: ICE never starts on this side
            reply = await http.post(calls_url(server), content=peer.pc.localDescription.sdp, headers={
                "Authorization": f"Bearer {KEY}", "Content-Type": "application/sdp"})
        assert reply.status_code == 201
        assert server.admission.active == 1
        async with asyncio.timeout(10):
            while server.admission.active:
                await asyncio.sleep(0.05)
    finally:
        await peer.close()
