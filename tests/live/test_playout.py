"""The voice's paced output on GPT-Live (:mod:`voxcall.live.playout`): each clause's words go out with its audio and
span it on the timeline, and consecutive clauses and replies read as one text.

The voice is a stand-in (250 ms of tone per word), the backend the scripted one (its words stream with the spaces
between them, none after the last), the client the official SDK.
"""

from __future__ import annotations

import base64
import itertools
from collections.abc import Iterator
from typing import Any

import numpy as np
import numpy.typing as npt

from tests.core.hearing.test_heard_audio import EnergyVAD, SilentSTT
from tests.live.conftest import Factory, LiveClient, LiveServer
from voxcall.llm import ScriptedBackend
from voxcall.speech.voice import Voice

WORD_MS = 250
"""The stand-in voice's audio per word."""


class Words:
    """:data:`WORD_MS` of quiet tone per word, at 16 kHz."""

    sample_rate = 16_000

    def synthesize(self, text: str, *, speed: float = 1.0) -> Iterator[npt.NDArray[np.int16]]:
        for _ in text.split():
            yield np.full(round(16 * WORD_MS / speed), 100, np.int16)


def voice() -> Voice:
    return Voice(stt=SilentSTT(), tts=Words(), vad=EnergyVAD)


def audio_ms(ev: dict[str, Any]) -> float:
    """The length of one ``session.output_audio.delta`` (PCM16 at 24 kHz, the session's default format)."""
    return len(base64.b64decode(ev["delta"])) / 48


def words(live: LiveClient) -> list[dict[str, Any]]:
    return live.of("session.output_transcript.delta")


async def test_consecutive_replies_read_as_one_text_with_a_space_between_them(live_server: Factory) -> None:
    """Two replies in a row: "…work that out. Let me…", never "…out.Let me…"."""
    server: LiveServer = await live_server(ScriptedBackend({"default": "Let me work that out."}), voice=voice())
    live = await server.connect()
    await live.conn.session.commentary.append(content="Say you are on it.", delegation_id=None)
    await live.wait("session.output_transcript.delta", lambda ev: "out." in live.said())
    await live.conn.session.commentary.append(content="Again.", delegation_id=None)
    await live.wait("session.output_transcript.delta", lambda ev: live.said().count("out.") == 2)
    assert live.said() == "Let me work that out. Let me work that out."


async def test_each_clauses_words_go_out_with_its_audio_and_span_it(live_server: Factory) -> None:
    """A reply of several clauses: a clause's words leave only once the audio of the clauses before it has been sent,
    and each delta's ``start_ms``/``end_ms`` is the span its audio takes (250 ms a word here), not a fixed step."""
    backend = ScriptedBackend({"default": "One moment, I'm checking. The answer is ninety six."})
    server: LiveServer = await live_server(backend, voice=voice())
    live = await server.connect()
    await live.conn.session.commentary.append(content="Answer.", delegation_id=None)
    await live.wait("session.output_transcript.delta", lambda ev: "six." in live.said())
    deltas = words(live)
    assert len(deltas) >= 2 and live.said() == "One moment, I'm checking. The answer is ninety six."
    said_ms = 0
    for delta in deltas:
        spoken_ms = len(delta["delta"].split()) * WORD_MS
        assert abs((delta["end_ms"] - delta["start_ms"]) - spoken_ms) <= 20, delta
        before = live.events[:live.events.index(delta)]
        sent_ms = sum(audio_ms(ev) for ev in before if ev["type"] == "session.output_audio.delta")
        assert sent_ms >= said_ms - 20, (delta, sent_ms, said_ms)  # the clauses before it were sent first
        said_ms += spoken_ms
    assert all(later["start_ms"] >= earlier["end_ms"] - 20 for earlier, later in itertools.pairwise(deltas))
