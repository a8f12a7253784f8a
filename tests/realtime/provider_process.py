"""An OpenAI-compatible Chat Completions server in a process of its own, for the fault tests: a test can kill it.

    python -m tests.realtime.provider_process PORT stall|answer

It binds loopback ``PORT`` (0: a free one), prints its base URL, and serves every request the same way: ``stall``
streams the words "Let me" and then holds the connection open (until the process is killed); ``answer`` streams
"Back again." and finishes. It is :class:`tests.llm.fake_server.FakeServer` with an endless supply of replies.
"""

from __future__ import annotations

import asyncio
import sys
from collections import deque
from typing import Any

from tests.llm.fake_server import HOLD, FakeServer, Reply, chat_sse


def _text(content: str, finish: str | None = None) -> dict[str, Any]:
    return {"choices": [{"index": 0, "delta": {"content": content}, "finish_reason": finish}]}


REPLIES = {
    "stall": lambda: Reply([*chat_sse(_text("Let "), _text("me "), done=False), HOLD]),
    "answer": lambda: Reply(chat_sse(_text("Back "), _text("again.", "stop"))),
}


class _Endless(deque[Reply]):
    """A reply queue that never runs dry: every request gets a fresh reply of the kind asked for."""

    def __init__(self, kind: str) -> None:
        super().__init__()
        self.kind = kind

    def popleft(self) -> Reply:
        return REPLIES[self.kind]()


async def serve(port: int, kind: str) -> None:
    """Serve until killed; print the base URL first."""
    server = FakeServer()
    server.replies = _Endless(kind)
    await server.start(port)
    print(server.base_url, flush=True)
    await asyncio.Event().wait()


if __name__ == "__main__":
    asyncio.run(serve(int(sys.argv[1]), sys.argv[2]))
