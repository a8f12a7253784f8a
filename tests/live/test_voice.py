"""GPT-Live with the real embedded speech models (Silero VAD, Whisper tiny.en, Piper), the official SDK as client.

A spoken question answered in audio with both transcripts (PCM16 at 24 and 16 kHz, G.711 µ-law); the user talking
over the voice stops it; muted audio is not heard; an output audio fixture plays and drops the input meanwhile.
Audio is streamed in real time (20 ms appends), as a microphone would.
"""

from __future__ import annotations

import asyncio
import base64
import re
import time
from difflib import SequenceMatcher

import numpy as np
import pytest

from tests.harness import Recorded, heard_only
from tests.live.conftest import Factory, LiveClient, LiveServer
from voxcall.audio.codec import decode_audio, encode_audio, resample
from voxcall.audio.formats import PCM24K, PCMU, AudioFormat
from voxcall.llm import ScriptedBackend
from voxcall.speech.voice import Voice

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

SCRIPT = {"rules": [{"match": "weather", "reply": "It is sunny in Paris today."},
                    {"match": "order", "calls": [{"name": "delegate", "arguments": {"task": "where order 42 is"}}]},
                    {"match": "story", "reply": " ".join(["Once upon a time there was a long story."] * 12)}],
          "after_tool": "{output}", "default": "I did not catch that."}
CHUNK_MS = 20
STORY = SCRIPT["rules"][2]["reply"]


@pytest.fixture(scope="module")
def voice() -> Voice:
    from voxcall.speech.models import get_piper, get_silero, get_whisper
    from voxcall.speech.vad import SileroVAD

    return Voice(stt=get_whisper(), tts=get_piper(), vad=lambda: SileroVAD(get_silero()))


def spoken(voice: Voice, text: str, rate: int, *, tail_s: float = 1.2) -> np.ndarray:  # type: ignore[type-arg]
    """``text`` said by Piper at ``rate``, with silence before and after, in its steady voice (the same samples each
    run: its varying renderings of "What is the weather in Paris?" at 8 kHz μ-law were now and then heard wrong)."""
    pcm = np.concatenate([np.asarray(chunk, np.int16) for chunk in voice.tts.synthesize(text, steady=True)])
    pcm = resample(pcm, voice.tts.sample_rate, rate)
    return np.concatenate([np.zeros(rate * 3 // 10, np.int16), pcm, np.zeros(int(rate * tail_s), np.int16)])


async def stream(live: LiveClient, pcm: np.ndarray, rate: int, fmt: AudioFormat) -> None:  # type: ignore[type-arg]
    """Send ``pcm`` in real time, 20 ms per append, encoded in ``fmt``."""
    step = rate * CHUNK_MS // 1000
    started = time.monotonic()
    for n, i in enumerate(range(0, len(pcm), step)):
        await live.conn.session.input_audio.append(audio=encode_audio(pcm[i:i + step], fmt))
        await asyncio.sleep(max(0.0, started + (n + 1) * CHUNK_MS / 1000 - time.monotonic()))


def heard(voice: Voice, live: LiveClient, rate: int, fmt: AudioFormat) -> str:
    """What Whisper hears in the voice's audio."""
    chunks = [decode_audio(ev["delta"], fmt) for ev in live.of("session.output_audio.delta")]
    return voice.stt.transcribe(resample(np.concatenate(chunks), rate, 16_000)).lower()


def says(text: str, words: str) -> bool:
    """Whether every word of ``words`` is in ``text`` as Whisper may spell it: tiny.en once heard the voice's clear
    "sunny" as "suny", so a heard word counts when it differs by a dropped or added letter (difflib ratio above 0.85:
    "suny" 0.89 counts for "sunny", "funny" 0.80 does not)."""
    heard_words = re.findall(r"[a-z']+", text.lower())
    return all(any(SequenceMatcher(None, word, said).ratio() > 0.85 for said in heard_words)
               for word in words.lower().split())


@pytest.mark.parametrize(("wire", "rate", "fmt"), [
    ({"type": "audio/pcm", "rate": 24000}, 24000, PCM24K),
    ({"type": "audio/pcm", "rate": 16000}, 16000, PCM24K),  # PCM decodes alike at any rate
    ({"type": "audio/pcmu", "rate": 8000}, 8000, PCMU),
], ids=["pcm24k", "pcm16k", "pcmu"])
async def test_a_spoken_question_is_answered_in_audio_with_both_transcripts(
        live_server: Factory, voice: Voice, wire: dict[str, object], rate: int, fmt: AudioFormat) -> None:
    server: LiveServer = await live_server(SCRIPT, voice=voice)
    live = await server.connect({"model": "gpt-live-1", "audio": {"format": wire}})
    await stream(live, spoken(voice, "What is the weather in Paris?", rate), rate, fmt)
    await live.wait("session.output_transcript.delta", lambda ev: "today" in live.said(), timeout=30)
    await asyncio.sleep(2.5)  # the rest of the answer's audio, paced in real time
    said_by_user = "".join(ev["delta"] for ev in live.of("session.input_transcript.delta")).lower()
    assert "weather" in said_by_user
    assert all(ev["start_ms"] <= ev["end_ms"] for ev in live.of("session.input_transcript.delta"))
    assert live.said() == "It is sunny in Paris today."
    audio = [base64.b64decode(ev["delta"]) for ev in live.of("session.output_audio.delta")]
    assert audio and all(len(chunk) % fmt.sample_width == 0 for chunk in audio)
    assert says(heard(voice, live, rate, fmt), "sunny")


async def test_talking_over_the_voice_stops_it(live_server: Factory, voice: Voice) -> None:
    server: LiveServer = await live_server(SCRIPT, voice=voice, live={"output_lead_ms": 200})
    live = await server.connect()
    await stream(live, spoken(voice, "Tell me a story.", 24000, tail_s=0.8), 24000, PCM24K)
    await live.wait("session.output_audio.delta", timeout=30)
    await asyncio.sleep(1.0)  # the voice is talking
    interruption = spoken(voice, "Stop, what is the weather?", 24000, tail_s=1.2)
    spoke_at = time.monotonic() + 0.3  # the words begin 0.3 s into it
    await stream(live, interruption, 24000, PCM24K)
    await live.wait("session.output_transcript.delta", lambda ev: "today" in live.said(), timeout=30)
    after = [(ev, t) for ev, t in zip(live.events, live.arrivals, strict=True) if t > spoke_at]
    answer = next(n for n, (ev, _) in enumerate(after)
                  if ev["type"] == "session.output_transcript.delta" and ev["delta"].strip().startswith("It "))
    story_audio = [t for ev, t in after[:answer] if ev["type"] == "session.output_audio.delta"]
    went_on = max(story_audio) - spoke_at if story_audio else 0.0
    print(f"the voice went on {went_on * 1000:.0f} ms after the user spoke")
    assert went_on < 0.5, f"the voice went on {went_on:.3f} s after the user spoke"
    assert live.said().count("Once upon a time") < 12  # the story was cut short


async def test_after_a_barge_in_the_conversation_holds_only_what_the_user_heard(live_server: Factory,
                                                                                voice: Voice) -> None:
    """The voice is paced, so the session knows what was sent when the user talked over it, and cuts the reply to
    it: the model's next request holds the story's first words, never the rest it generated."""
    backend = Recorded(ScriptedBackend(SCRIPT))
    server: LiveServer = await live_server(backend, voice=voice, live={"output_lead_ms": 200})
    live = await server.connect()
    await stream(live, spoken(voice, "Tell me a story.", 24000, tail_s=0.8), 24000, PCM24K)
    await live.wait("session.output_audio.delta", timeout=30)
    await asyncio.sleep(1.0)
    await stream(live, spoken(voice, "Stop, what is the weather?", 24000, tail_s=1.2), 24000, PCM24K)
    await live.wait("session.output_transcript.delta", lambda ev: "today" in live.said(), timeout=30)
    said = [text for text in backend.assistant_said() if text.startswith("Once")]
    assert len(said) == 1
    heard_only(said[0], STORY)
    assert said[0] in live.said()  # the words kept are words the user was shown, with their audio


async def test_muted_audio_is_not_heard(live_server: Factory, voice: Voice) -> None:
    server: LiveServer = await live_server(SCRIPT, voice=voice)
    live = await server.connect()
    await live.conn.session.input_audio.mute()
    await live.wait("session.input_audio.muted")
    question = spoken(voice, "What is the weather in Paris?", 24000)
    await stream(live, question, 24000, PCM24K)
    await asyncio.sleep(1.0)
    assert not live.of("session.input_transcript.delta") and not live.of("session.output_transcript.delta")
    await live.conn.session.input_audio.unmute()
    await stream(live, question, 24000, PCM24K)
    await live.wait("session.output_transcript.delta", lambda ev: "today" in live.said(), timeout=30)


async def test_a_fixture_plays_as_the_voice_and_input_waits(live_server: Factory, voice: Voice) -> None:
    server: LiveServer = await live_server(SCRIPT, voice=voice)
    live = await server.connect()
    greeting = spoken(voice, "Hello, this is a recorded greeting.", 24000, tail_s=0.1)
    await live.conn.session.output_audio.fixture.play(audio=encode_audio(greeting, PCM24K), event_id="evt_fx")
    playing = await live.wait("session.output_audio.fixture.playing")
    assert playing["client_event_id"] == "evt_fx"
    await live.conn.session.commentary.append(content="hi", delegation_id=None, event_id="evt_refused")
    assert (await live.wait("error"))["error"]["code"] == "fixture_playing"
    played_at = time.monotonic()
    await live.wait("session.output_audio.fixture.played", timeout=15)
    assert time.monotonic() - played_at > len(greeting) / 24000 - 0.6  # played in real time, not dumped
    assert says(heard(voice, live, 24000, PCM24K), "recorded greeting")


async def test_a_spoken_request_delegated_to_the_client_gets_its_answer_spoken(live_server: Factory,
                                                                              voice: Voice) -> None:
    server: LiveServer = await live_server(SCRIPT, voice=voice)
    live = await server.connect({"model": "gpt-live-1",
                                 "delegation": {"type": "client", "acknowledgement_delay_ms": 100}})
    await stream(live, spoken(voice, "Where is my order?", 24000), 24000, PCM24K)
    created = await live.wait("session.delegation.created", timeout=30)
    await live.wait("session.output_audio.delta")  # the voice acknowledges while the application works
    acknowledged = live.said()
    assert acknowledged and "ships" not in acknowledged
    await live.conn.session.commentary.append(content="Your order ships tomorrow.",
                                              delegation_id=created["delegation"]["id"])
    await live.wait("session.output_transcript.delta", lambda ev: "tomorrow" in live.said(), timeout=30)
    await asyncio.sleep(3.0)  # the answer's audio, in real time
    assert says(heard(voice, live, 24000, PCM24K), "tomorrow")
