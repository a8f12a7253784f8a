"""The outbox: one ordered writer per session, and a writer that always stops."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from voxcall.serving.frames import event
from voxcall.serving.outbox import Outbox


class Socket:
    """Records what the outbox writes."""

    def __init__(self) -> None:
        self.sent: list[dict[str, Any]] = []

    async def send(self, ev: dict[str, Any]) -> None:
        self.sent.append(ev)


async def drained(outbox: Outbox[Any]) -> None:
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
