"""A real voxcall server on a free loopback port, and the official SDK's realtime client connected to it (the
fixtures that make them are in ``tests/conftest.py``)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

import uvicorn
from openai import AsyncOpenAI

from voxcall.app import create_app
from voxcall.config import ServerSettings
from voxcall.llm import LLMBackend
from voxcall.serving.admission import Admission
from voxcall.speech.voice import Voice
from voxcall.telemetry.tracing import Tracing

WEATHER_TOOL = {"type": "function", "name": "get_weather", "description": "Get the weather for a city.",
                "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}
SCRIPT = {
    "greeting": "Hello!",
    "rules": [
        {"match": "weather", "reply": "Let me check.",
         "calls": [{"name": "get_weather", "arguments": {"city": "Paris"}}]},
        {"match": "both", "reply": "Checking both.", "calls": [
            {"name": "get_weather", "arguments": {"city": "Paris"}},
            {"name": "get_weather", "arguments": {"city": "Oslo"}}]},
        {"match": "silent", "calls": [{"name": "get_weather", "arguments": {"city": "Rome"}}]},
        {"match": "break", "reply": "Something is", "error": "simulated failure"},
        {"match": "long", "reply": " ".join(["word"] * 200)},
    ],
    "after_tool": "{name} says {output}.",
    "default": "I do not know that one.",
}


class Server:
    """A uvicorn server running in the test's event loop."""

    def __init__(self, settings: ServerSettings, backend: LLMBackend, *, voice: Voice | None = None,
                 delegates: dict[str, LLMBackend] | None = None, tracing: Tracing | None = None) -> None:
        """``voice``: the shared speech models (None: text only); ``delegates``: named backends (``live.backends``);
        ``tracing``: where the sessions' traces go (None: as the settings say)."""
        self.admission = Admission(settings.max_sessions, settings.max_sessions_per_key,
                                   settings.shutdown_close_code)
        self.app = create_app(settings, backend, voice=voice, admission=self.admission, delegates=delegates,
                              tracing=tracing)
        self.backend = backend
        config = uvicorn.Config(self.app, host="127.0.0.1", port=0, log_level="warning", ws="websockets-sansio",
                                lifespan="on")
        self.server = uvicorn.Server(config)
        self.task: asyncio.Task[None] | None = None

    async def __aenter__(self) -> Server:
        self.task = asyncio.create_task(self.server.serve())
        while not self.server.started:
            await asyncio.sleep(0.01)
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.server.should_exit = True
        assert self.task is not None
        await self.task

    @property
    def port(self) -> int:
        return int(self.server.servers[0].sockets[0].getsockname()[1])

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def client(self, api_key: str = "test-key") -> AsyncOpenAI:
        return AsyncOpenAI(base_url=self.base_url, api_key=api_key)


ServerFactory = Callable[..., Awaitable[Server]]
