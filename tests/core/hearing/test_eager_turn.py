"""Eager turns with the real speech models: the answer is prepared at a pause, claimed when the turn ends, and
dropped without a trace when the user speaks on."""

from __future__ import annotations

import asyncio
import base64
import json
import time

import numpy as np
import pytest

from tests.harness import ControlledBackend, Harness, Turn
from tests.realtime.test_voice import voice  # noqa: F401  (the shared speech models)
from voxcall.audio.codec import encode_audio, resample
from voxcall.audio.formats import PCM24K
from voxcall.speech.voice import Voice

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

CHUNK_MS = 40


def said(voice: Voice, *parts: str | float) -> bytes:  # noqa: F811
    """Piper speaking the text ``parts`` (trimmed to the words) with the float ``parts`` as seconds of silence
    between them, 24 kHz PCM16."""
    pieces = []
    for part in parts:
        if isinstance(part, str):
            pcm = np.concatenate([np.asarray(c, np.int16) for c in voice.tts.synthesize(part)])
            loud = np.nonzero(np.abs(pcm.astype(np.int32)) > 300)[0]  # piper's own silence around the words
            pieces.append(resample(pcm[loud[0]:loud[-1] + 1], voice.tts.sample_rate, PCM24K.rate))
        else:
            pieces.append(np.zeros(int(PCM24K.rate * part), np.int16))
    return base64.b64decode(encode_audio(np.concatenate(pieces), PCM24K))


async def live(h: Harness, audio: bytes) -> None:
    """Stream ``audio`` in real time (the pauses must last as long as they would for a speaking user)."""
    step = PCM24K.rate * CHUNK_MS // 1000 * 2
    loop = asyncio.get_running_loop()
    start = loop.time()
    for n, i in enumerate(range(0, len(audio), step)):
        chunk = base64.b64encode(audio[i:i + step]).decode()
        await h.connection.handle_frame(json.dumps({"type": "input_audio_buffer.append", "audio": chunk}))
        await asyncio.sleep(max(0.0, start + (n + 1) * CHUNK_MS / 1000 - loop.time()))


def eager(h: Harness, event: str) -> float:
    value = h.host.shared.metrics.registry.get_sample_value("voxcall_speculation_total",
                                                        {"kind": "eager_turn", "event": event})
    return value or 0.0


async def test_the_answer_prepared_at_the_pause_is_claimed_when_the_turn_ends(voice: Voice) -> None:  # noqa: F811
    backend = ControlledBackend(Turn("It is noon."))
    async with Harness(backend, voice=voice) as h:
        await live(h, said(voice, 0.3, "What time is it?", 1.0))
        done = await h.wait("response.done", timeout=30)
        assert done["response"]["status"] == "completed"
        assert len(h.of("response.created")) == 1
        # a pause between two words may have started (and dropped) an answer to the words before it
        assert eager(h, "claimed") == 1 and eager(h, "started") == 1 + eager(h, "discarded")
        assert "time" in backend.requests[-1].items[-1].text.lower()
        heard_at = backend.requests[-1].heard_at  # the end of the speech answered: a voice's waits count from it
        assert heard_at is not None and heard_at < time.monotonic()
        kinds = [e["type"] for e in h.events]
        # the client sees the turn end, its item and transcript, then the answer: never the other way round
        assert (kinds.index("input_audio_buffer.speech_stopped") < kinds.index("input_audio_buffer.committed")
                < kinds.index("response.created") < kinds.index("response.output_audio.delta"))
        user, answer = h.session.conversation.items
        assert user.id == h.of("input_audio_buffer.committed")[0]["item_id"]
        assert "time" in user.content[0]["transcript"].lower() and answer.role == "assistant"
        timing = await h.wait("voxcall.response.timing")
        assert timing["timings_ms"]["end_of_turn"] == 500 and "first_audio" in timing["timings_ms"]


async def test_speaking_on_after_a_short_pause_drops_the_prepared_answer(voice: Voice) -> None:  # noqa: F811
    backend = ControlledBackend(Turn("A timer for ten minutes."), Turn("Unexpected."))
    async with Harness(backend, voice=voice) as h:
        await live(h, said(voice, 0.3, "Set a timer for", 0.4, "ten minutes.", 1.0))
        await h.wait("response.done", timeout=30)
        await asyncio.sleep(0.3)
        assert len(h.of("input_audio_buffer.speech_stopped")) == 1  # one turn: the pause did not end it
        assert len(h.of("response.created")) == 1  # no answer started early, none of a dropped one reached us
        # an answer to "set a timer for" may have started hidden (if its transcript was back in time): then dropped
        assert eager(h, "claimed") == 1 and eager(h, "started") == 1 + eager(h, "discarded")
        transcript = h.session.conversation.items[0].content[0]["transcript"].lower()
        assert "minutes" in transcript and "minutes" in backend.requests[-1].items[-1].text.lower()


async def test_a_sentence_resumed_after_the_turn_ended_is_answered_whole(voice: Voice) -> None:  # noqa: F811
    backend = ControlledBackend(Turn("First part."), Turn("Whole sentence."), default="Whole sentence.")
    async with Harness(backend, voice=voice) as h:
        await live(h, said(voice, 0.3, "Remind me tomorrow", 0.65, "to call my sister.", 1.0))
        await asyncio.sleep(0.5)
        await h.wait("response.done", len(h.of("response.created")), timeout=30)
        last = h.of("response.done")[-1]
        assert last["response"]["status"] == "completed"
        words = " ".join(item.text for item in backend.requests[-1].items).lower()
        # the last answer read both parts (either word of each is enough: tiny.en may misspell one)
        assert ("remind" in words or "tomorrow" in words) and ("call" in words or "sister" in words)
