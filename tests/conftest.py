"""Fixtures shared across test folders."""

import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from tests.llm.fake_server import FakeServer
from tests.requirements import require_smollm2, require_speech_models
from tests.servers import SCRIPT, Server, ServerFactory
from voxcall.config import ServerSettings
from voxcall.llm import LLMBackend, ScriptedBackend
from voxcall.realtime.server_events import ENV_VAR

pytest_plugins = ["tests.audio.output_fixtures"]


@pytest.fixture(scope="session")
def speech_models() -> None:
    """The ``[local]`` speech models are installed: the test skips without them, or fails under CI."""
    require_speech_models()


@pytest.fixture(scope="session")
def smollm2() -> Path:
    """llama.cpp and the packaged SmolLM2-135M GGUF (its path): the test skips without them, or fails under CI."""
    return require_smollm2()


@pytest.fixture(autouse=True)
def validate_server_events(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every server event of these tests is checked against the SDK's models as it is queued."""
    monkeypatch.setenv(ENV_VAR, "1")


@pytest.fixture
async def make_server() -> AsyncIterator[ServerFactory]:
    stack = contextlib.AsyncExitStack()

    async def make(backend: LLMBackend | None = None, **settings: Any) -> Server:
        backend = backend or ScriptedBackend(SCRIPT)
        return await stack.enter_async_context(Server(ServerSettings(**settings), backend))

    async with stack:
        yield make


@pytest.fixture
async def server() -> AsyncIterator[FakeServer]:
    """A real OpenAI-compatible HTTP server that answers with the replies a test queues."""
    fake = FakeServer()
    await fake.start()
    yield fake
    await fake.stop()
