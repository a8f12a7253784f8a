"""A tiny real HTTP/1.1 server for backend tests: each request gets the next scripted reply, streamed in steps.

A reply's steps are written in order: ``bytes`` are sent and flushed; an ``asyncio.Event`` pauses the reply until
the test sets it (to prove the client acted before the rest arrived); :data:`HOLD` keeps the connection open
until the client drops it, which sets :attr:`FakeServer.disconnected`.
"""

from __future__ import annotations

import asyncio
import json
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Final


class _Hold:
    def __repr__(self) -> str:
        return "HOLD"


HOLD: Final = _Hold()

Step = bytes | asyncio.Event | _Hold


@dataclass
class Reply:
    """One scripted answer: an HTTP status, a content type and the body in steps."""

    steps: list[Step] = field(default_factory=list)
    status: int = 200
    content_type: str = "text/event-stream"


@dataclass
class Recorded:
    """A request the server received."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any


def chat_sse(*chunks: dict[str, Any], done: bool = True) -> list[Step]:
    """Chat Completions SSE frames for ``chunks`` (each filled out as a ``chat.completion.chunk``), then
    ``[DONE]``."""
    frames: list[Step] = [
        b"data: " + json.dumps({"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 0,
                                "model": "m", **chunk}).encode() + b"\n\n"
        for chunk in chunks
    ]
    if done:
        frames.append(b"data: [DONE]\n\n")
    return frames


def responses_sse(*events: dict[str, Any]) -> list[Step]:
    """Responses API SSE frames (``event:`` line plus ``data:``) for ``events``, numbered in order."""
    return [f"event: {event['type']}\ndata: {json.dumps({'sequence_number': n, **event})}\n\n".encode()
            for n, event in enumerate(events)]


class FakeServer:
    """Serves :class:`Reply` objects from :attr:`replies` in order and records each request."""

    def __init__(self) -> None:
        self.replies: deque[Reply] = deque()
        self.requests: list[Recorded] = []
        self.disconnected = asyncio.Event()
        self._server: asyncio.Server | None = None
        self._writers: set[asyncio.StreamWriter] = set()

    @property
    def base_url(self) -> str:
        assert self._server is not None
        port = self._server.sockets[0].getsockname()[1]
        return f"http://127.0.0.1:{port}/v1"

    async def start(self, port: int = 0) -> None:
        """Listen on loopback ``port`` (0: a free one)."""
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", port)

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
            for writer in self._writers:
                writer.close()
            await self._server.wait_closed()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._writers.add(writer)
        try:
            await self._answer(reader, writer)
        except (ConnectionError, asyncio.IncompleteReadError):
            self.disconnected.set()
        finally:
            self._writers.discard(writer)
            writer.close()

    async def _answer(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        method, path, _ = (await reader.readline()).decode().split(" ", 2)
        headers: dict[str, str] = {}
        while (line := (await reader.readline()).decode().strip()):
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        raw = await reader.readexactly(int(headers.get("content-length", "0")))
        self.requests.append(Recorded(method, path, headers, json.loads(raw) if raw else None))
        reply = self.replies.popleft()
        writer.write(f"HTTP/1.1 {reply.status} Fake\r\nContent-Type: {reply.content_type}\r\n"
                     "Connection: close\r\n\r\n".encode())
        await writer.drain()
        for step in reply.steps:
            if isinstance(step, bytes):
                writer.write(step)
                await writer.drain()
            elif isinstance(step, asyncio.Event):
                await step.wait()
            else:
                await reader.read()  # returns b"" once the client has closed the connection
                self.disconnected.set()
                return
