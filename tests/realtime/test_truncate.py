"""Truncating a spoken answer that a barge-in cut off: any point of the audio sent is accepted, none past it.

The voice is a stand-in (100 ms of tone per word), and the client reads audio only when the test lets it, so the
cancel lands exactly between two chunks of one clause, as it does when the socket is slow.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from tests.core.hearing.test_heard_audio import fake_voice
from tests.harness import WEATHER, ControlledBackend, Harness, Turn
from voxcall.core.conversation.items import MessageItem
from voxcall.serving.frames import Message
from voxcall.serving.outbox import Outbox


async def until(condition: Callable[[], bool], timeout: float = 5.0) -> None:
    async def poll() -> None:
        while not condition():
            await asyncio.sleep(0.001)
    await asyncio.wait_for(poll(), timeout)


class SlowReader:
    """A client that takes audio only when the test allows: each ``response.output_audio.delta`` waits for a
    permit before it is queued for the socket, as it waits for room in a full queue."""

    def __init__(self, outbox: Outbox[Message]) -> None:
        self._put = outbox.put
        outbox.put = self.put  # type: ignore[method-assign]
        self._permits = asyncio.Semaphore(0)
        self.sent = 0
        self.waiting = False

    async def put(self, ev: Message) -> None:
        if ev["type"] == "response.output_audio.delta":
            self.waiting = True
            await self._permits.acquire()
            self.waiting = False
            self.sent += 1
        await self._put(ev)

    async def allow(self, chunks: int) -> None:
        """Let ``chunks`` more audio chunks through, and wait until the next one waits."""
        target = self.sent + chunks
        for _ in range(chunks):
            self._permits.release()
        await until(lambda: self.sent == target and self.waiting)


async def cut_off(h: Harness, chunks: int) -> MessageItem:
    """A spoken lead-in and a tool call, cancelled after ``chunks`` chunks of audio; the assistant's message."""
    await h.send(type="session.update", session={"type": "realtime", "tools": [WEATHER]})
    reader = SlowReader(h.connection.hosted.outbox)
    await h.say("What is the weather in Oslo?")
    await h.send(type="response.create")
    await reader.allow(chunks)
    await h.send(type="response.cancel")
    done = await h.wait("response.done")
    assert done["response"]["status"] == "cancelled"
    assert len(h.of("response.output_audio.delta")) == chunks
    return next(i for i in h.session.conversation.items if isinstance(i, MessageItem) and i.role == "assistant")


def lead_in() -> ControlledBackend:
    # Clauses "Sure." (0-100 ms) and "Let me check that for you." (100-700 ms), one 100 ms chunk per word.
    return ControlledBackend(Turn("Sure. Let me check that for you.", [("get_weather", {"city": "Oslo"})]))


async def test_a_barge_in_mid_clause_can_be_truncated_anywhere_in_the_audio_sent() -> None:
    async with Harness(lead_in(), voice=fake_voice()) as h:
        item = await cut_off(h, 3)  # "Sure." and two words of the second clause went out
        assert item.audio_ms == 300
        heard: list[tuple[int, str]] = [
            (300, "Sure. Let me"),  # exactly all the audio sent
            (250, "Sure. Let me"),  # inside a chunk, inside the second clause
            (180, "Sure. Let"),
            (100, "Sure."),  # a clause boundary
            (40, ""),  # inside the first clause
            (0, ""),
        ]
        for n, (end_ms, transcript) in enumerate(heard, 1):
            await h.send(type="conversation.item.truncate", item_id=item.id, content_index=0, audio_end_ms=end_ms,
                         event_id=f"cut_{end_ms}")
            truncated = h.of("conversation.item.truncated")
            assert len(truncated) == n, h.of("error")
            assert truncated[-1] == {**truncated[-1], "item_id": item.id, "content_index": 0, "audio_end_ms": end_ms}
            assert item.content[0]["transcript"] == transcript and item.audio_ms == end_ms
        assert not h.of("error")


async def test_a_truncate_past_the_audio_sent_is_refused() -> None:
    async with Harness(lead_in(), voice=fake_voice()) as h:
        item = await cut_off(h, 3)
        transcript = item.content[0]["transcript"]
        await h.send(type="conversation.item.truncate", item_id=item.id, content_index=0, audio_end_ms=301,
                     event_id="too_far")
        error: dict[str, Any] = h.of("error")[-1]
        assert error["error"]["code"] == "invalid_value" and error["error"]["param"] == "audio_end_ms"
        assert error["error"]["event_id"] == "too_far"
        assert "300 ms" in error["error"]["message"]
        assert not h.of("conversation.item.truncated") and item.content[0]["transcript"] == transcript
