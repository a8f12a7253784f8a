"""A real voxcall server and the official SDK's GPT-Live client (``client.live.connect()``) connected to it.

Every server event a test reads is validated with the SDK's own union, ``openai.types.live.ServerEvent`` (the
SDK's parser alone would turn an unknown event type into a wrongly typed object), and every frame is kept.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
from openai import AsyncOpenAI
from openai.types.live import ServerEvent
from pydantic import TypeAdapter

from tests.servers import Server
from voxcall.config import ServerSettings
from voxcall.llm import LLMBackend, ScriptedBackend

SERVER_EVENT: TypeAdapter[Any] = TypeAdapter(ServerEvent)
WAIT_S = 20


class LiveClient:
    """An SDK connection whose events a background task reads, validates and keeps."""

    def __init__(self, conn: Any) -> None:
        self.conn = conn
        self.events: list[dict[str, Any]] = []
        self.arrivals: list[float] = []  # when each event arrived (time.monotonic)
        self.closed = asyncio.Event()
        self._changed = asyncio.Condition()
        self._reader = asyncio.create_task(self._read())

    async def _read(self) -> None:
        try:
            while True:
                data = await self.conn.recv_bytes()
                SERVER_EVENT.validate_json(data)  # raises for an event the SDK does not know or a missing field
                async with self._changed:
                    self.events.append(json.loads(data))
                    self.arrivals.append(time.monotonic())
                    self._changed.notify_all()
        except Exception as exc:  # the connection closed (or an event was invalid: kept for the test to see)
            self.ended_with = exc
        finally:
            self.closed.set()
            async with self._changed:
                self._changed.notify_all()

    def of(self, kind: str) -> list[dict[str, Any]]:
        return [ev for ev in self.events if ev["type"] == kind]

    async def wait(self, kind: str, where: Callable[[dict[str, Any]], bool] = lambda ev: True, *,
                   after: int = 0, timeout: float = WAIT_S) -> dict[str, Any]:
        """The first event of type ``kind`` (from index ``after`` on) that ``where`` accepts."""
        async def found() -> dict[str, Any]:
            async with self._changed:
                while True:
                    for ev in self.events[after:]:
                        if ev["type"] == kind and where(ev):
                            return ev
                    if self.closed.is_set():
                        raise AssertionError(f"closed before {kind}; got {[e['type'] for e in self.events]}")
                    await self._changed.wait()
        try:
            return await asyncio.wait_for(found(), timeout)
        except TimeoutError:
            seen = [ev["type"] if ev["type"] != "response.event" else f"response.event:{ev['event']['type']}"
                    for ev in self.events]
            raise AssertionError(f"no {kind} in {timeout} s; got {seen}; said {self.said()!r}") from None

    def said(self) -> str:
        """The voice's transcript so far."""
        return "".join(ev["delta"] for ev in self.of("session.output_transcript.delta"))


class LiveServer:
    """A server plus a way to open SDK connections to its ``/v1/live/sessions``."""

    def __init__(self, server: Server, stack: contextlib.AsyncExitStack) -> None:
        self.server = server
        self._stack = stack

    async def connect(self, session: dict[str, Any] | None = None, *, api_key: str = "test-key",
                      start: bool = True) -> LiveClient:
        """A connection, started with ``session`` (default: the model only) and past ``session.started``."""
        client = AsyncOpenAI(base_url=self.server.base_url, api_key=api_key)
        conn = await self._stack.enter_async_context(client.live.connect())
        live = LiveClient(conn)
        if start:
            await conn.session.start(session=session or {"model": "gpt-live-1"}, event_id="evt_start")
            await live.wait("session.started")
        return live


Factory = Callable[..., Any]


@pytest.fixture
async def live_server() -> AsyncIterator[Factory]:
    stack = contextlib.AsyncExitStack()

    async def make(backend: LLMBackend | dict[str, Any] | None = None, *, voice: Any = None,
                   delegates: dict[str, LLMBackend] | None = None, **settings: Any) -> LiveServer:
        chosen = ScriptedBackend(backend or {}) if backend is None or isinstance(backend, dict) else backend
        server = await stack.enter_async_context(Server(ServerSettings(**settings), chosen, voice=voice,
                                                        delegates=delegates))
        return LiveServer(server, stack)

    async with stack:
        yield make
