"""A phone call end to end: a fake Twilio (the documented frames, signed) calls a real server with the real speech
models, asks a question in Piper's voice over 8 kHz µ-law, hears the answer, presses a key, talks over the agent
and hangs up."""

from __future__ import annotations

import asyncio
import json
import time
import urllib.request

import numpy as np
import pytest

from tests.harness import Recorded, heard_only
from tests.twilio.conftest import SCRIPT, TOKEN, PhoneServer, phone_settings
from tests.twilio.fake_twilio import RATE, FakeTwilio, to_ulaw
from voxcall.audio.codec import resample
from voxcall.llm import ScriptedBackend
from voxcall.speech.voice import Voice

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

STORY = SCRIPT["rules"][2]["reply"]


def spoken(voice: Voice, text: str) -> bytes:
    """``text`` said by Piper in its steady voice (the same samples every run), as a phone line carries it."""
    pcm = np.concatenate([np.asarray(chunk, np.int16) for chunk in voice.tts.synthesize(text, steady=True)])
    return to_ulaw(pcm, voice.tts.sample_rate)


def transcript(voice: Voice, pcm8k: np.ndarray) -> str:
    return voice.stt.transcribe(resample(pcm8k, RATE, 16_000)).lower()


async def sessions(server: PhoneServer) -> int:
    """The sessions the server counts now (``/healthz``)."""
    health = server.url().replace("ws://", "http://").split("/v1/")[0] + "/healthz"

    def read() -> int:
        with urllib.request.urlopen(health, timeout=5) as reply:
            return int(json.load(reply)["sessions"])

    return await asyncio.to_thread(read)


async def test_a_caller_asks_hears_presses_a_key_interrupts_and_hangs_up(phone_server: PhoneServer,
                                                                          voice: Voice) -> None:
    twilio = await FakeTwilio.call(phone_server.url(), auth_token=TOKEN)
    try:
        await twilio.silence(0.5)
        asked = await twilio.say(spoken(voice, "What is the weather in Paris?"))
        await twilio.silence(0.3)
        first = await twilio.wait_for("media", after=asked)
        await twilio.wait_played()
        assert first > asked
        answer = twilio.heard(after=asked)
        assert len(answer) > RATE // 2  # at least half a second of speech, at 8 kHz
        assert "sunny" in transcript(voice, answer)
        frames = [f for _, f in twilio.received]
        assert {f["event"] for f in frames} <= {"media", "mark", "clear"}
        assert all(f["streamSid"] == twilio.stream_sid for f in frames)
        assert twilio.of("mark"), "every audio chunk is followed by a mark"

        pressed = time.perf_counter()
        await twilio.press("1")
        await twilio.wait_for("media", after=pressed)
        await twilio.wait_played()
        assert "sales" in transcript(voice, twilio.heard(after=pressed))

        asked = await twilio.say(spoken(voice, "Tell me a story."))
        await twilio.silence(0.2)
        await twilio.wait_for("media", after=asked)
        await twilio.silence(1.0)  # let the agent speak, then talk over it
        assert not twilio.of("clear"), "no interruption so far: nothing was cleared"
        interrupted = await twilio.say(spoken(voice, "Stop, that is enough."))
        cleared = await twilio.wait_for("clear", after=asked, timeout=30)
        assert cleared < interrupted + 5
        assert await sessions(phone_server) == 1
        await twilio.hang_up()
    finally:
        await twilio.close()
    async with asyncio.timeout(10):  # the server ends the call's session once it has seen the stream close
        while await sessions(phone_server):
            await asyncio.sleep(0.05)


async def test_after_a_barge_in_the_conversation_holds_only_what_the_caller_heard(voice: Voice) -> None:
    """Twilio's marks say what was played: the session cuts the message to it, and the model's next request holds
    the story's first words, never the rest it generated."""
    backend = Recorded(ScriptedBackend(SCRIPT))
    async with PhoneServer(phone_settings(dtmf_pause_ms=0), backend, voice) as server:  # type: ignore[arg-type]
        twilio = await FakeTwilio.call(server.url(), auth_token=TOKEN)
        try:
            await twilio.silence(0.5)
            asked = await twilio.say(spoken(voice, "Tell me a story."))
            await twilio.silence(0.2)
            await twilio.wait_for("media", after=asked)
            await twilio.silence(1.0)
            interrupted = await twilio.say(spoken(voice, "Stop, that is enough."))
            await twilio.wait_for("clear", after=asked, timeout=30)
            await twilio.silence(0.5)
            async with asyncio.timeout(30):  # the interruption is answered: its request reads the conversation
                while not any("enough" in text.lower() for text in backend.user_said()):
                    await asyncio.sleep(0.05)
            assert interrupted
            said = [text for text in backend.assistant_said() if text.startswith("Once")]
            assert len(said) == 1
            heard_only(said[0], STORY)
        finally:
            await twilio.close()
