"""The gate of a hidden response: it holds its events, then flushes them in order, or drops them."""

from __future__ import annotations

import asyncio

from voxcall.core.events import Event, TranscriptDelta
from voxcall.core.responses.gate import OutputGate


async def test_gate_holds_then_flushes_in_order_or_drops() -> None:
    sent: list[Event] = []

    async def emit(ev: Event) -> None:
        sent.append(ev)

    def said(n: int) -> TranscriptDelta:
        return TranscriptDelta("item_1", str(n))

    gate = OutputGate(emit, limit=8)
    await gate.emit(said(1))
    await gate.emit(said(2))
    await asyncio.sleep(0)
    assert sent == [] and [e.delta for e in gate.buffered if isinstance(e, TranscriptDelta)] == ["1", "2"]
    await gate.open()
    await gate.emit(said(3))
    dropped = OutputGate(emit, limit=8)
    await dropped.emit(said(4))
    dropped.drop()
    await dropped.emit(said(5))
    assert [e.delta for e in sent if isinstance(e, TranscriptDelta)] == ["1", "2", "3"]
