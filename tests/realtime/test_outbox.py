"""The outbox: one ordered writer per session, beta names, the hidden-output gate, and server event validation."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from voxcall.core.events import Event, TranscriptDelta
from voxcall.core.protocol import event
from voxcall.core.responses.outbox import Outbox, OutputGate
from voxcall.core.server_events import ENV_VAR, InvalidServerEvent, check_server_event, validation_enabled


class Socket:
    """Records what the outbox writes."""

    def __init__(self) -> None:
        self.sent: list[dict[str, Any]] = []

    async def send(self, ev: dict[str, Any]) -> None:
        self.sent.append(ev)


async def drained(outbox: Outbox) -> None:
    await outbox.close(flush=True)


async def test_events_are_written_in_order() -> None:
    socket = Socket()
    outbox = Outbox(socket.send)
    outbox.start()
    for n in range(5):
        await outbox.put(event("input_audio_buffer.cleared", n=n))
    await drained(outbox)
    assert [e["n"] for e in socket.sent] == [0, 1, 2, 3, 4]


async def test_a_flush_cut_short_still_stops_the_writer() -> None:
    """A client that stops reading: the writer hangs in send and the queue is full; cancelling the flushing close
    (a drain giving up on it) must not leave the writer behind."""
    stuck = asyncio.Event()

    async def send(ev: dict[str, Any]) -> None:
        await stuck.wait()

    outbox = Outbox(send, maxsize=1)
    outbox.start()
    for n in range(2):  # one in the writer's hands, one filling the queue
        await outbox.put(event("input_audio_buffer.cleared", n=n))
    writers = [t for t in asyncio.all_tasks() if t.get_name() == "voxcall-outbox"]
    with pytest.raises(TimeoutError):
        await asyncio.wait_for(outbox.close(flush=True), 0.1)
    await asyncio.sleep(0)
    assert outbox.closed and all(t.done() for t in writers)


async def test_beta_outbox_renames_and_drops() -> None:
    socket = Socket()
    outbox = Outbox(socket.send, beta=True)
    outbox.start()
    item = {"id": "item_1", "object": "realtime.item", "type": "message", "status": "completed", "role": "assistant",
            "content": [{"type": "output_text", "text": "hi"}]}
    await outbox.put(event("conversation.item.added", previous_item_id=None, item=item))
    await outbox.put(event("conversation.item.done", previous_item_id=None, item=item))
    await drained(outbox)
    assert [e["type"] for e in socket.sent] == ["conversation.item.created"]
    assert socket.sent[0]["item"]["content"][0]["type"] == "text"


async def test_validation_rejects_a_misspelt_event_where_it_is_built() -> None:
    outbox = Outbox(Socket().send, validate=True)
    with pytest.raises(InvalidServerEvent, match="audio_start_ms"):
        await outbox.put(event("input_audio_buffer.speech_started", audio_start=5, item_id="item_1"))
    await outbox.put(event("input_audio_buffer.speech_started", audio_start_ms=5, item_id="item_1"))
    await outbox.put(event("voxcall.tool_call.rejected", anything="goes"))  # extensions have no SDK model


async def test_validation_is_off_unless_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENV_VAR, raising=False)
    assert not validation_enabled()
    outbox = Outbox(Socket().send)
    await outbox.put(event("input_audio_buffer.speech_started", audio_start=5))  # not checked
    monkeypatch.setenv(ENV_VAR, "1")
    assert validation_enabled()
    with pytest.raises(InvalidServerEvent):
        await Outbox(Socket().send).put(event("input_audio_buffer.speech_started", audio_start=5))


def test_unknown_server_event_types_are_rejected() -> None:
    with pytest.raises(InvalidServerEvent, match="not a server event type"):
        check_server_event(event("response.text.delta", delta="beta name"))


async def test_gate_holds_then_flushes_in_order_or_drops() -> None:
    sent: list[Event] = []

    async def emit(ev: Event) -> None:
        sent.append(ev)

    def said(n: int) -> TranscriptDelta:
        return TranscriptDelta("item_1", str(n))

    gate = OutputGate(emit)
    await gate.emit(said(1))
    await gate.emit(said(2))
    await asyncio.sleep(0)
    assert sent == [] and [e.delta for e in gate.buffered if isinstance(e, TranscriptDelta)] == ["1", "2"]
    await gate.open()
    await gate.emit(said(3))
    dropped = OutputGate(emit)
    await dropped.emit(said(4))
    dropped.drop()
    await dropped.emit(said(5))
    assert [e.delta for e in sent if isinstance(e, TranscriptDelta)] == ["1", "2", "3"]
