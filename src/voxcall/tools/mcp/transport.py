"""Transports to one MCP server: a stdio child process or streamable HTTP, each telling when the server goes away.

Stdio children get a minimal environment (``PATH``, ``HOME``, locale …) plus the configured ``env``, never a
copy of voxcall's own (which may hold API keys). ``PATH`` always includes the ``bin`` folder of voxcall's
Python, so a server installed next to voxcall (``mcp-server-time``) is found even when nothing activated it.
The child's stderr goes to voxcall's log, line by line, and its last lines are kept to explain a failed start.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
import os
import sys
from collections.abc import AsyncIterator, Callable, Mapping
from pathlib import Path
from types import TracebackType
from typing import Self

import anyio
import httpx2
from mcp.client._transport import ReadStream, TransportStreams  # the SDK's stream types (no public home yet)
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.message import SessionMessage

from voxcall.tools.mcp.config import MCPServerConfig

__all__ = ["StderrLog", "child_environment", "open_transport"]

log = logging.getLogger(__name__)

INHERITED_ENV = ("HOME", "USER", "LOGNAME", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "TMPDIR", "SYSTEMROOT")
"""Variables a child inherits from voxcall: what programs need to run, nothing that could hold a secret."""

_HTTP_TIMEOUT = httpx2.Timeout(30.0, read=300.0)  # the SDK's defaults: a response stream may stay open long
_STDERR_TAIL_LINES = 20
_STDERR_MAX_LINE = 4096


def child_environment(extra: Mapping[str, str]) -> dict[str, str]:
    """The environment of a stdio server: :data:`INHERITED_ENV` and ``PATH``, then ``extra`` over them.

    ``PATH`` is voxcall's own with its Python's ``bin`` folder added; a configured ``PATH`` replaces it, and an
    empty one is ignored, so the child can always find programs. (The SDK adds ``SHELL`` and ``TERM`` beneath.)
    """
    env = {key: os.environ[key] for key in INHERITED_ENV if key in os.environ}
    env.update(extra)
    if not env.get("PATH"):
        env["PATH"] = _default_path()
    return env


def _default_path() -> str:
    dirs = [d for d in os.environ.get("PATH", os.defpath).split(os.pathsep) if d]
    bin_dir = str(Path(sys.executable).parent)
    if bin_dir not in dirs:
        dirs.insert(0, bin_dir)
    return os.pathsep.join(dirs)


class StderrLog:
    """Carries a stdio server's stderr into the log and keeps its last lines.

    :attr:`sink` is the pipe's write end, handed to the child; call :meth:`close_sink` once the child has it,
    so the pipe ends when the child does. Run :meth:`pump` as a task until then.
    """

    def __init__(self, server: str) -> None:
        self.server = server
        read_fd, write_fd = os.pipe()
        self.sink = os.fdopen(write_fd, "w")
        self._source = os.fdopen(read_fd, "rb", buffering=0)
        self.tail: collections.deque[str] = collections.deque(maxlen=_STDERR_TAIL_LINES)
        self.done = asyncio.Event()

    def close_sink(self) -> None:
        """Close voxcall's copy of the write end (idempotent)."""
        self.sink.close()

    def close(self) -> None:
        """Close both ends of the pipe (idempotent), once the pump has stopped."""
        self.sink.close()
        self._source.close()

    async def pump(self) -> None:
        """Log each line the child writes to stderr until the pipe ends (or the task is cancelled)."""
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader()
        transport, _ = await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), self._source)
        pending = b""
        try:
            while chunk := await reader.read(65536):
                *lines, pending = (pending + chunk).split(b"\n")
                for line in lines:
                    self._line(line)
                if len(pending) > _STDERR_MAX_LINE:
                    self._line(pending)
                    pending = b""
            if pending:
                self._line(pending)
        finally:
            transport.close()
            self.done.set()

    def _line(self, raw: bytes) -> None:
        line = raw[:_STDERR_MAX_LINE].decode(errors="replace").rstrip()
        if line:
            self.tail.append(line)
            log.debug("MCP server %s: %s", self.server, line)


class _EndSignal:
    """A transport's read stream that calls ``on_end`` when the stream ends: the server is gone."""

    def __init__(self, inner: ReadStream[SessionMessage | Exception], on_end: Callable[[], None]) -> None:
        self._inner = inner
        self._on_end = on_end

    @property
    def last_context(self) -> object:
        """The sender's context, which the SDK's dispatcher reads from HTTP streams."""
        return getattr(self._inner, "last_context", None)

    async def receive(self) -> SessionMessage | Exception:
        try:
            return await self._inner.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            self._on_end()
            raise

    async def aclose(self) -> None:
        await self._inner.aclose()

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> SessionMessage | Exception:
        try:
            return await self._inner.__anext__()
        except (StopAsyncIteration, anyio.ClosedResourceError):
            self._on_end()
            raise

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None, exc_val: BaseException | None,
                        exc_tb: TracebackType | None) -> None:
        await self._inner.aclose()


@contextlib.asynccontextmanager
async def open_transport(config: MCPServerConfig, on_end: Callable[[], None],
                         stderr: StderrLog | None = None) -> AsyncIterator[TransportStreams]:
    """Open the transport ``config`` asks for; ``on_end`` is called when the server stops sending.

    A stdio server needs ``stderr``; its write end is closed here once the child is running.
    """
    if config.command is not None:
        if stderr is None:
            raise ValueError("a stdio transport needs a StderrLog")
        params = StdioServerParameters(command=config.command, args=config.args, cwd=config.cwd,
                                       env=child_environment(config.env))
        try:
            async with stdio_client(params, errlog=stderr.sink) as (read, write):
                stderr.close_sink()
                yield _EndSignal(read, on_end), write
        finally:
            stderr.close_sink()
    else:
        assert config.url is not None  # the config has exactly one of command and url
        async with (httpx2.AsyncClient(headers=config.headers, timeout=_HTTP_TIMEOUT) as http,
                    streamable_http_client(config.url, http_client=http) as (read, write)):
            yield _EndSignal(read, on_end), write
