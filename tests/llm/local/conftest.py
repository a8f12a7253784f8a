"""Fixtures for the local path's tests: the two engines' backends on SmolLM2-135M, one in process and one on a
real ``llama-server`` (built by ``deploy/build-llama-server.sh``), each started once for the whole run."""

from __future__ import annotations

import asyncio
import subprocess
import tempfile
import time
from collections.abc import AsyncIterator, Iterator

import pytest

from tests.llm.test_llamacpp_server import answers, free_port, stop
from tests.requirements import require_llama_server, require_smollm2
from voxcall.llm import LlamaCppBackend, LlamaServerBackend

STARTUP_TIMEOUT_S = 120.0
SLOT_CTX = 2048  # a server slot's context, and the in-process backend's


@pytest.fixture(scope="session")
def llama_server() -> Iterator[str]:
    """The base URL of a ``llama-server`` serving SmolLM2-135M with two slots."""
    server, model = require_llama_server(), require_smollm2()
    port = free_port()
    command = [str(server), "--model", str(model), "--host", "127.0.0.1", "--port", str(port),
               "--parallel", "2", "--ctx-size", str(2 * SLOT_CTX), "--threads", "2"]
    with tempfile.TemporaryFile() as log:
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
        try:
            deadline = time.monotonic() + STARTUP_TIMEOUT_S
            while not answers(f"http://127.0.0.1:{port}/health"):
                if process.poll() is not None or time.monotonic() > deadline:
                    log.seek(0)
                    pytest.fail(f"llama-server did not start ({process.poll()}):\n"
                                f"{log.read().decode(errors='replace')[-2000:]}")
                time.sleep(0.2)
            yield f"http://127.0.0.1:{port}"
        finally:
            stop(process)


@pytest.fixture(scope="session")
def in_process() -> Iterator[LlamaCppBackend]:
    """SmolLM2-135M in process, with a slot's context."""
    require_smollm2()
    backend = LlamaCppBackend(n_ctx=SLOT_CTX)
    yield backend
    asyncio.run(backend.aclose())


@pytest.fixture
async def served(llama_server: str) -> AsyncIterator[LlamaServerBackend]:
    """A backend on :func:`llama_server` (one per test: it holds the test's event loop's connections)."""
    backend = await asyncio.to_thread(LlamaServerBackend, llama_server)
    yield backend
    await backend.aclose()
