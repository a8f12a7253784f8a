"""One response on its own: what it is given, what it emits, and how it ends however it is stopped."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest

from tests.harness import ControlledBackend, Turn, run_inputs, wired
from voxcall.core.conversation.conversation import Conversation
from voxcall.core.conversation.output_items import OutOfBand
from voxcall.core.errors import SessionError
from voxcall.core.responses.response import ResponseRun
from voxcall.core.settings import SessionSettings
from voxcall.realtime.server_events import check_server_event


class Beeps:
    """A stand-in voice: 100 ms of a quiet tone per word at speed 1, at 16 kHz."""

    sample_rate = 16_000

    def synthesize(self, text: str, *, speed: float = 1.0) -> Iterator[npt.NDArray[np.int16]]:
        for _ in text.split():
            yield np.full(round(1600 / speed), 100, np.int16)


def spoken_run(turn: Turn, emit: Any, conversation: Conversation | None = None, *, speed: float = 1.0) -> ResponseRun:
    settings = SessionSettings(output_modalities=("audio",), speed=speed)
    history = conversation if conversation is not None else Conversation()
    return ResponseRun(run_inputs(ControlledBackend(turn), history, wired(emit), settings=settings, tts=Beeps()))


async def test_a_spoken_response_with_a_lead_in_and_a_call() -> None:
    events: list[dict[str, Any]] = []

    async def emit(ev: dict[str, Any]) -> None:
        check_server_event(ev)
        events.append(ev)

    run = spoken_run(Turn("Let me check.", [("get_weather", {"city": "Oslo"})]), emit)
    await run.run()
    kinds = [e["type"] for e in events]
    assert kinds[0] == "response.created" and kinds[-2:] == ["response.done", "voxcall.response.timing"]
    assert kinds.count("response.output_audio.delta") == 3  # one 100 ms chunk per word
    assert kinds.index("response.output_audio.done") < kinds.index("response.function_call_arguments.done")
    message, call = run.output
    assert message.audio_ms == 300 and message.content[0]["transcript"] == "Let me check. "
    assert call.type == "function_call" and call.status == "completed"


async def test_the_speaking_rate_reaches_the_voice() -> None:
    async def drop(ev: dict[str, Any]) -> None:
        return None

    run = spoken_run(Turn("one two three four"), drop, speed=2.0)
    await run.run()
    assert run.output[0].audio_ms == 200  # four words at 50 ms instead of 100


async def test_cancel_at_every_event_boundary_ends_with_exactly_one_done() -> None:
    """The barge-in path: wherever the cancel lands, one ``response.done`` (cancelled or completed) closes the
    response, nothing but its timing follows it, and no item is left in progress."""
    counted: list[dict[str, Any]] = []

    async def count(ev: dict[str, Any]) -> None:
        counted.append(ev)

    await spoken_run(Turn("Let me check that.", [("get_weather", {"city": "Oslo"})]), count).run()
    assert len(counted) > 20
    for boundary in range(1, len(counted)):
        events: list[dict[str, Any]] = []
        tasks: list[asyncio.Task[None]] = []

        async def emit(ev: dict[str, Any], boundary: int = boundary, events: list[dict[str, Any]] = events,
                       tasks: list[asyncio.Task[None]] = tasks) -> None:
            check_server_event(ev)
            events.append(ev)
            if len(events) == boundary:
                tasks[0].cancel()  # lands at the response's next await

        conversation = Conversation()
        run = spoken_run(Turn("Let me check that.", [("get_weather", {"city": "Oslo"})]), emit, conversation)
        tasks.append(asyncio.create_task(run.run()))
        await asyncio.wait(tasks)
        done = [e for e in events if e["type"] == "response.done"]
        assert len(done) == 1 and events[-2] is done[0], f"cancel after event {boundary}"
        assert events[-1]["type"] == "voxcall.response.timing"
        assert run.status in ("cancelled", "completed")
        assert all(i.status != "in_progress" for i in conversation.items), f"cancel after event {boundary}"
        assert not any(i.type == "function_call" and i.status != "completed" for i in conversation.items)


async def test_the_audio_length_counts_every_chunk_sent_wherever_a_cancel_lands() -> None:
    """A client slow to read makes the response wait on every audio chunk, so a cancel can land between two chunks
    of one clause: the item's audio length is still all the audio sent, and a truncate at it is accepted."""
    for cut in range(1, 7):  # "Let me check that for" (five chunks), then "you." (one)
        events: list[dict[str, Any]] = []
        tasks: list[asyncio.Task[None]] = []

        async def emit(ev: dict[str, Any], cut: int = cut, events: list[dict[str, Any]] = events,
                       tasks: list[asyncio.Task[None]] = tasks) -> None:
            check_server_event(ev)
            if ev["type"] != "response.output_audio.delta":
                events.append(ev)
                return
            await asyncio.sleep(0)  # the socket is slow: each chunk waits for room (cancelled there: not sent)
            events.append(ev)
            if sum(e["type"] == "response.output_audio.delta" for e in events) == cut:
                tasks[0].cancel()

        conversation = Conversation()
        run = spoken_run(Turn("Let me check that for you.", [("get_weather", {"city": "Oslo"})]), emit, conversation)
        tasks.append(asyncio.create_task(run.run()))
        await asyncio.wait(tasks)
        message = run.output[0]
        sent = sum(e["type"] == "response.output_audio.delta" for e in events)
        assert sent == cut and message.audio_ms == 100 * sent, f"cancel after chunk {cut}"
        conversation.check_truncate(message.id, 0, message.audio_ms)
        with pytest.raises(SessionError):
            conversation.check_truncate(message.id, 0, message.audio_ms + 1)


async def test_out_of_band_items_join_no_conversation() -> None:
    events: list[dict[str, Any]] = []

    async def emit(ev: dict[str, Any]) -> None:
        events.append(ev)

    run = ResponseRun(run_inputs(ControlledBackend(Turn("Aside.")), OutOfBand(), wired(emit)))
    await run.run()
    assert run.status == "completed" and run.state().conversation_id is None
    assert not [e for e in events if e["type"].startswith("conversation.")]
    assert run.output[0].text == "Aside. "
