"""Small helpers shared by the backend tests."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from voxcall.llm import LLMEvent, ToolCallArgumentsDelta

TIMEOUT = 10.0  # seconds: a test that would hang fails instead


async def collect(events: AsyncIterator[LLMEvent]) -> list[LLMEvent]:
    """Every event of a stream, failing after :data:`TIMEOUT` seconds."""
    async with asyncio.timeout(TIMEOUT):
        return [event async for event in events]


def arguments_text(events: list[LLMEvent], call_id: str) -> str:
    """The argument fragments streamed for ``call_id``, joined."""
    return "".join(e.delta for e in events if isinstance(e, ToolCallArgumentsDelta) and e.call_id == call_id)
