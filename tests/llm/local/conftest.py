"""Fixtures for the local path's tests: the engine on SmolLM2-135M over its two transports, llama.cpp's server in
this process and one in a child process (the scale-out launcher, ``python -m voxcall.llm.local.serve``), each
started once for the whole run; and the grammar checker (whether llama.cpp parses a grammar), once per module."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from typing import TYPE_CHECKING

import pytest

from tests.llm.llama_serve import llama_serve
from tests.requirements import require_smollm2
from voxcall.llm import LlamaCppBackend, LlamaServerBackend

if TYPE_CHECKING:
    from tests.llm.local.gbnf import GrammarChecker

SLOT_CTX = 2048  # a server slot's context, and the in-process backend's


@pytest.fixture(scope="session")
def llama_server() -> Iterator[str]:
    """The base URL of llama.cpp's server serving SmolLM2-135M with two slots, in a child process."""
    with llama_serve(require_smollm2(), parallel=2, ctx=SLOT_CTX) as url:
        yield url


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


@pytest.fixture(scope="module")
def checker() -> Iterator[GrammarChecker]:
    """llama.cpp's grammar parser, through a small server on SmolLM2's vocabulary."""
    require_smollm2()
    from tests.llm.local.gbnf import GrammarChecker

    checking = GrammarChecker()
    yield checking
    checking.close()
