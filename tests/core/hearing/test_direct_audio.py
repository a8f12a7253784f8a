"""Direct audio: a model that hears is sent the user's turn as a WAV ``input_audio`` part (a real HTTP server behind
the official client checks the request) without waiting for speech-to-text, whose transcript still reaches the
client; the audio kept is bounded; a backend that cannot hear is refused at start-up and per session."""

from __future__ import annotations

import base64
import io
import wave
from typing import Any

import pytest

from tests.core.hearing.test_heard_audio import CHUNK_MS, CountingSTT, GatedSTT, fake_voice, silence, tone
from tests.harness import ControlledBackend, Harness
from tests.llm.fake_server import FakeServer, Reply, chat_sse
from tests.llm.test_openai_chat import text
from voxcall.config import ConfigError, ServerSettings
from voxcall.llm import OpenAIChatBackend
from voxcall.server import build_backend


def hearing(server: FakeServer) -> OpenAIChatBackend:
    return OpenAIChatBackend("m", base_url=server.base_url, max_retries=0, media=frozenset({"audio"}))


async def speak(h: Harness, ms: int) -> None:
    """``ms`` of speech, then enough silence for server VAD to end the turn."""
    for _ in range(ms // CHUNK_MS):
        await h.send(type="input_audio_buffer.append", audio=tone(CHUNK_MS))
    await silence(h, 800)


def audio_part(message: dict[str, Any]) -> bytes:
    """The WAV of a user message that is exactly one ``input_audio`` part."""
    (part,) = message["content"]
    assert part["type"] == "input_audio" and part["input_audio"]["format"] == "wav"
    return base64.b64decode(part["input_audio"]["data"])


async def test_the_model_hears_the_turn_before_its_transcript_is_made(server: FakeServer) -> None:
    server.replies.append(Reply(chat_sse(text("I heard a tone.", "stop"))))
    stt = GatedSTT()
    async with Harness(hearing(server), voice=fake_voice(stt), audio_input="direct") as h:
        await h.send(type="session.update", session={"type": "realtime", "output_modalities": ["text"]})
        await speak(h, 600)
        done = await h.wait("response.done")  # speech-to-text is still blocked: the answer did not wait for it
        assert done["response"]["status"] == "completed" and not h.of(
            "conversation.item.input_audio_transcription.completed")
        stt.gate.set()
        transcript = await h.wait("conversation.item.input_audio_transcription.completed")
        assert transcript["transcript"] == "hello"  # the client still gets its transcript
        assert "heard_wav" not in str(h.session.conversation.items[0].to_wire())
    with wave.open(io.BytesIO(audio_part(server.requests[0].body["messages"][-1]))) as wav:
        assert (wav.getnchannels(), wav.getsampwidth(), wav.getframerate()) == (1, 2, 16_000)
        assert 600 * 16 <= wav.getnframes() <= 1400 * 16  # the turn: its speech and the silence that ended it


async def test_older_turns_lose_their_audio_past_the_limit_and_keep_their_transcripts(server: FakeServer) -> None:
    server.replies.extend([Reply(chat_sse(text("One.", "stop"))), Reply(chat_sse(text("Two.", "stop")))])
    async with Harness(hearing(server), voice=fake_voice(CountingSTT()), audio_input="direct",
                       max_direct_audio_bytes=65_536) as h:  # one turn of ~1.5 s fits, two do not
        await h.send(type="session.update", session={"type": "realtime", "output_modalities": ["text"]})
        await speak(h, 400)
        await h.wait("response.done")
        await h.wait("conversation.item.input_audio_transcription.completed")
        await speak(h, 400)
        await h.wait("response.done", 2)
    second = server.requests[1].body["messages"]
    assert second[-3] == {"role": "user", "content": "hello"}  # the older turn: its transcript only
    assert second[-2] == {"role": "assistant", "content": "One."}
    assert audio_part(second[-1])  # the newest turn: its audio


async def test_a_session_chooses_direct_audio_only_when_the_model_hears(server: FakeServer) -> None:
    direct = {"type": "realtime", "audio": {"input": {"voxcall_audio_input": "direct"}}}
    async with Harness(ControlledBackend(), voice=fake_voice()) as h:
        await h.send(type="session.update", event_id="evt_d", session=direct)
        error = h.of("error")[0]["error"]
        assert error["param"] == "session.audio.input.voxcall_audio_input" and error["event_id"] == "evt_d"
        assert "hears audio" in error["message"] and h.session.settings.audio_input == "transcribe"
    async with Harness(hearing(server), voice=fake_voice()) as h:
        await h.send(type="session.update", session=direct)
        assert not h.of("error")
        assert h.of("session.updated")[0]["session"]["audio"]["input"]["voxcall_audio_input"] == "direct"


@pytest.mark.parametrize("kind", ["scripted", "openai-responses"])
def test_a_server_whose_model_cannot_hear_refuses_direct_audio_at_start_up(kind: str) -> None:
    settings = ServerSettings(llm=kind, model="m", session={"audio_input": "direct"})
    with pytest.raises(ConfigError) as caught:
        build_backend(settings)
    assert "cannot be given audio" in str(caught.value) and "session.audio_input" in str(caught.value)
