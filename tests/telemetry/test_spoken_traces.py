"""The trace of a spoken session: a voxcall server that hears and speaks (Silero VAD, Whisper tiny.en, Piper), on the
scripted backend, driven by the official SDK over the Realtime protocol, its spans caught by the SDK's in-memory
exporter. Piper says "What is 12 times 8?", the scripted model answers it with the calculator (a server tool); then
a typed question runs a slow server tool, which the voice acknowledges and whose result is spoken when it lands.
The turn is timed from the end of the speech, its stages are its children, the tool's span holds one event per
ledger move (and ``acknowledged``), and each result's time to the next audio is a span."""

from __future__ import annotations

import asyncio
import base64
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.requirements import require_module
from tests.servers import Server
from voxcall.audio.codec import encode_audio, resample
from voxcall.audio.formats import PCM24K
from voxcall.config import ServerSettings
from voxcall.llm import ScriptedBackend
from voxcall.speech.voice import Voice
from voxcall.telemetry.tracing import TracingOptions

require_module("opentelemetry.sdk")

from opentelemetry.sdk.trace import ReadableSpan  # noqa: E402
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter  # noqa: E402

from tests.telemetry.test_session_traces import children, events, named, session_spans  # noqa: E402
from voxcall.telemetry.otel import OtelTracing  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

SCRIPT = {"rules": [
    {"match": "/what is (?P<a>\\d+) times (?P<b>\\d+)/", "reply": "Let me work that out.",
     "calls": [{"name": "calculator", "arguments": {"op": "mul", "a": "{a}", "b": "{b}"}}]},
    {"match": "forecast", "calls": [{"name": "forecast", "arguments": {}}]},
], "after_tool": "{name} says {output}.", "default": "Fine."}
SLOW_TOOL = """
import time

from voxcall.tools import tool


@tool
def forecast() -> str:
    \"\"\"Tomorrow's forecast, slowly.\"\"\"
    time.sleep(1.0)
    return "sunny"
"""
CHUNK_MS = 40


@pytest.fixture(scope="module")
def voice(speech_models: None) -> Voice:
    from voxcall.speech.models import get_piper, get_silero, get_whisper
    from voxcall.speech.vad import SileroVAD

    return Voice(stt=get_whisper(), tts=get_piper(), vad=lambda: SileroVAD(get_silero()))


def spoken(voice: Voice, text: str) -> bytes:
    """``text`` said by Piper, with silence before and after (enough for the turn detector), as 24 kHz PCM16: the
    same audio every run (Whisper once heard the varying voice as "twelve times eight")."""
    pcm = np.concatenate([np.asarray(chunk, np.int16) for chunk in voice.tts.synthesize(text, steady=True)])
    pcm = resample(pcm, voice.tts.sample_rate, PCM24K.rate)
    silence = lambda s: np.zeros(int(PCM24K.rate * s), np.int16)  # noqa: E731
    return base64.b64decode(encode_audio(np.concatenate([silence(0.3), pcm, silence(1.2)]), PCM24K))


async def until_done(conn: Any) -> list[Any]:
    """Every event up to and including the next ``response.done``."""
    seen = []
    async for ev in conn:
        assert ev.type != "error", ev.error.message
        seen.append(ev)
        if ev.type == "response.done":
            return seen
    raise AssertionError("connection closed")


def attributes(span: ReadableSpan) -> dict[str, Any]:
    return dict(span.attributes or {})


def ordered(span: ReadableSpan) -> bool:
    """The span has both times, its start no later than its end."""
    return span.start_time is not None and span.end_time is not None and span.start_time <= span.end_time


def within(span: ReadableSpan, parent: ReadableSpan) -> bool:
    """``span`` (ordered) lies inside ``parent``'s time."""
    return (ordered(span) and ordered(parent) and parent.start_time is not None and span.start_time is not None
            and span.end_time is not None and parent.end_time is not None
            and parent.start_time <= span.start_time and span.end_time <= parent.end_time)


async def test_a_spoken_question_answered_with_a_server_tool_and_a_slow_tool_acknowledged(
        voice: Voice, tmp_path: Path) -> None:
    (tmp_path / "slow.py").write_text(SLOW_TOOL, encoding="utf-8")
    exporter = InMemorySpanExporter()
    tracing = OtelTracing(TracingOptions(record_content=True), [exporter], batch=False)
    settings = ServerSettings(session={"prefetch": False}, tools={
        "builtin": ["calculator"], "modules": [str(tmp_path / "slow.py")], "acknowledge_after_ms": 100})
    audio = spoken(voice, "What is 12 times 8?")
    step = PCM24K.rate * CHUNK_MS // 1000 * 2
    async with Server(settings, ScriptedBackend(SCRIPT), voice=voice, tracing=tracing) as server:
        async with server.client().realtime.connect(model="m") as conn:
            for i in range(0, len(audio), step):  # in real time, as the server's clock of the speech's end assumes
                await conn.input_audio_buffer.append(audio=base64.b64encode(audio[i:i + step]).decode())
                await asyncio.sleep(CHUNK_MS / 1000)
            calculated = (await until_done(conn))[-1].response  # the server answers the speech itself
            await conn.conversation.item.create(item={"type": "message", "role": "user", "content": [
                {"type": "input_text", "text": "and the forecast?"}]})
            await conn.response.create()
            acknowledged = (await until_done(conn))[-1].response
            landed = (await until_done(conn))[-1].response  # the slow result, spoken when it lands, unasked
        spans = await session_spans(exporter)
    tracing.shutdown()

    assert [item.output for item in calculated.output if item.type == "mcp_call"] == ["96"]
    session, = named(spans, "voxcall.session")
    turns = {attributes(turn)["voxcall.response.id"]: turn for turn in children(spans, session)}
    assert set(turns) == {calculated.id, acknowledged.id, landed.id}

    # the spoken turn: timed from the end of the speech, its stages before its model requests
    turn = turns[calculated.id]
    said = attributes(turn)
    assert said["voxcall.turn.trigger"] == "speech" and said["voxcall.turn.status"] == "completed"
    assert said["voxcall.turn.first_audio_ms"] > 0 and "first_audio" in events(turn)
    assert "12 times 8" in str(said["voxcall.turn.heard"])
    inside = children(spans, turn)
    end_of_turn, = [span for span in inside if span.name == "voxcall.end_of_turn"]
    transcription, = [span for span in inside if span.name == "voxcall.transcription"]
    # the turn starts where the speech ended (an eager answer too, though it began later) and holds its stages
    assert within(end_of_turn, turn) and within(transcription, turn)
    assert turn.start_time == end_of_turn.start_time
    chats = [span for span in inside if span.name == "chat scripted"]
    assert len(chats) == 2 and transcription.end_time is not None and chats[0].start_time is not None
    assert transcription.end_time <= chats[0].start_time  # the model read the transcript

    tool, = [span for span in inside if span.name == "execute_tool calculator"]
    assert attributes(tool).items() >= {"voxcall.tool.side": "server", "voxcall.tool.outcome": "done",
                                        "gen_ai.tool.call.result": "96"}.items()
    assert events(tool) == ["proposed", "running", "done"]
    to_audio, = [span for span in inside if span.name == "voxcall.tool_to_audio"]
    assert attributes(to_audio)["gen_ai.tool.call.id"] == attributes(tool)["gen_ai.tool.call.id"]
    assert ordered(to_audio) and to_audio.start_time == tool.end_time  # from the result to the next audio

    # the slow tool: acknowledged while it ran, its result spoken by the turn it landed in
    slow, = [span for span in children(spans, turns[acknowledged.id]) if span.name == "execute_tool forecast"]
    assert events(slow) == ["proposed", "running", "acknowledged", "done"]
    assert attributes(slow)["voxcall.tool.outcome"] == "done"
    later = turns[landed.id]
    assert attributes(later)["voxcall.turn.trigger"] == "tool_output"
    assert attributes(later)["voxcall.turn.said"] == "forecast says sunny."
    spoke, = [span for span in children(spans, later) if span.name == "voxcall.tool_to_audio"]
    assert attributes(spoke)["gen_ai.tool.call.id"] == attributes(slow)["gen_ai.tool.call.id"]
    assert spoke.start_time == slow.end_time and ordered(spoke)
