"""OpenAIChatBackend against a real OpenAI-compatible server: llama.cpp's, serving SmolLM2-135M.

Only the protocol's shape is asserted (a forced call arrives as a parsed ToolCall, text arrives as text, the
stream ends with Usage and Done): a 135M model's answers are not worth asserting.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import AsyncIterator, Iterator

import pytest

from tests.llm.helpers import collect
from tests.requirements import require_smollm2
from voxcall.llm import Done, LLMRequest, Message, OpenAIChatBackend, TextDelta, ToolCall, Usage
from voxcall.tools import Tool

SMOLLM2 = require_smollm2()

STARTUP_TIMEOUT = 120.0


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=1.0) as response:
            return bool(response.status == 200)
    except (urllib.error.URLError, OSError):
        return False


def stop(process: subprocess.Popen[bytes]) -> None:
    """Terminate a server process, killing it if it does not exit within 10 s."""
    process.terminate()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


@pytest.fixture(scope="module")
def llama_server() -> Iterator[str]:
    port = free_port()
    command = [sys.executable, "-m", "llama_cpp.server", "--model", str(SMOLLM2),
               "--chat_format", "chatml-function-calling", "--host", "127.0.0.1", "--port", str(port),
               "--n_ctx", "2048"]
    base_url = f"http://127.0.0.1:{port}/v1"
    with tempfile.TemporaryFile() as log:  # not a pipe: llama.cpp logs enough to fill one and stall
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT,
                                   env={**os.environ, "HF_HUB_OFFLINE": "1"})
        try:
            deadline = time.monotonic() + STARTUP_TIMEOUT
            while not answers(f"{base_url}/models"):
                if process.poll() is not None or time.monotonic() > deadline:
                    log.seek(0)
                    output = log.read().decode(errors="replace")[-2000:]
                    pytest.fail(f"llama_cpp.server did not start (exit code {process.poll()}):\n{output}")
                time.sleep(0.2)
            yield base_url
        finally:
            stop(process)


@pytest.fixture
async def backend(llama_server: str) -> AsyncIterator[OpenAIChatBackend]:
    chat = OpenAIChatBackend("smollm2", base_url=llama_server, timeout=60.0)
    yield chat
    await chat.aclose()


WEATHER = Tool(name="get_weather", description="Get the current weather for a city.",
               parameters={"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]})


async def test_forced_tool_call(backend: OpenAIChatBackend) -> None:
    request = LLMRequest(items=[Message("user", "What is the weather in Paris?")], tools=[WEATHER],
                         tool_choice={"type": "function", "name": "get_weather"}, max_output_tokens=60,
                         temperature=0.0)
    events = await collect(backend.stream(request))
    calls = [e for e in events if isinstance(e, ToolCall)]
    assert calls and calls[0].name == "get_weather" and isinstance(calls[0].arguments, dict)
    assert isinstance(events[-2], Usage)
    assert events[-1] == Done("tool_calls")


async def test_plain_text_reply(backend: OpenAIChatBackend) -> None:
    request = LLMRequest(items=[Message("user", "Say hello.")], instructions="You are a helpful assistant.",
                         max_output_tokens=16, temperature=0.0)
    events = await collect(backend.stream(request))
    assert "".join(e.text for e in events if isinstance(e, TextDelta)).strip()
    assert isinstance(events[-2], Usage)
    assert isinstance(events[-1], Done) and events[-1].finish_reason in ("stop", "length")
