"""``MCPConnection``: one MCP server, kept connected by one owner task.

The SDK's client holds anyio cancel scopes and task groups, which must be exited by the task that entered
them; closing clients out of order from other tasks fails with "exit cancel scope in a different task". So
one owner task per connection enters the client, waits while it serves, and exits it: on close, when the
server goes away, or when start-up times out. Callers never touch those context managers: they send requests
through the client's own API, which is safe to use from any task (each request waits on its own stream, under
the caller's own timeout).

When the server goes away (a stdio child crashed, the stream closed), the owner restarts it with exponential
backoff. A call in flight at that moment fails (it is never retried: a tool must not run twice); later calls
wait for the restart within their own timeout, or fail at once with a clear message when the next attempt is
further away than that. ``tools/list_changed`` makes the owner list the tools again
(:func:`~voxcall.tools.mcp.listing.list_tools`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import time
from collections.abc import Callable, Mapping
from typing import Any

import anyio
from anyio.abc import TaskStatus
from mcp import Client
from mcp.client.session import IncomingMessage
from mcp.shared.exceptions import MCPError
from mcp.types import CONNECTION_CLOSED, Implementation, ToolListChangedNotification

from voxcall import __version__
from voxcall.tools.calls import ToolResult
from voxcall.tools.mcp.config import MCPServerConfig
from voxcall.tools.mcp.listing import MCPTool, list_tools
from voxcall.tools.mcp.results import describe_exception, failure_text, normalize_result
from voxcall.tools.mcp.transport import StderrLog, open_transport

__all__ = ["MCPConnection", "MCPStartupError", "MCPTool"]

log = logging.getLogger(__name__)

BACKOFF_START = 0.25
"""Seconds before the first restart after a server went away; doubled for each quick failure that follows."""
BACKOFF_MAX = 30.0
"""The longest wait between restart attempts."""
STABLE_AFTER = 60.0
"""A connection that lived this long resets the backoff: its end was not part of a crash loop."""
CLOSE_GRACE = 2.0
"""Seconds :meth:`MCPConnection.close` lets a connected server close politely before cancelling the connection."""
CLOSE_TIMEOUT = 10.0
"""The longest :meth:`MCPConnection.close` waits for the owner task (the SDK bounds a child's shutdown to ~6 s)."""

_CLIENT_INFO = Implementation(name="voxcall", version=__version__)
_MAX_DOUBLINGS = 10  # BACKOFF_START * 2**10 is past BACKOFF_MAX already
_STDERR_DRAIN = 1.0  # seconds to read a failed child's last stderr lines, to explain the failure
_STDERR_REPORT_LINES = 5


class MCPStartupError(RuntimeError):
    """An MCP server could not be started and listed within its start-up timeout; ``reason`` says why."""

    def __init__(self, server: str, reason: str) -> None:
        super().__init__(f"MCP server {server!r} did not start: {reason}")
        self.server = server
        self.reason = reason


class _Unavailable(Exception):
    """The server cannot take a call now; the message is written for the model."""


class MCPConnection:
    """One MCP server over stdio or streamable HTTP: start it, list its tools, call them, close it.

    ``on_tools_changed`` is called (in the owner task) after a ``tools/list_changed`` refresh changed
    :attr:`tools`.
    """

    def __init__(self, config: MCPServerConfig, *,
                 on_tools_changed: Callable[[MCPConnection], None] | None = None) -> None:
        self.config = config
        self.on_tools_changed = on_tools_changed
        self._tools: list[MCPTool] = []
        self._client: Client | None = None
        self._generation = 0  # counts connections, so a late signal from an old one is ignored
        self._owner: asyncio.Task[None] | None = None
        self._started: asyncio.Future[None] | None = None
        self._scope: anyio.CancelScope | None = None
        self._stderr: StderrLog | None = None
        self._retry_at: float | None = None  # anyio clock time of the next restart attempt, while waiting
        self._close_requested = asyncio.Event()
        self._lost = False
        self._refresh = False
        self._wake = asyncio.Event()  # wakes the owner: lost, refresh or close
        self._changed = asyncio.Event()  # wakes callers waiting for the server; replaced after each wake-up

    @property
    def name(self) -> str:
        """The server's name (from the configuration)."""
        return self.config.name

    @property
    def tools(self) -> list[MCPTool]:
        """The server's tools that ``allowed_tools`` lets through, as last listed."""
        return list(self._tools)

    @property
    def ready(self) -> bool:
        """Whether the server is connected now (not starting, restarting or closed)."""
        return self._client is not None

    # -- life cycle ------------------------------------------------------------------------------------------

    async def start(self) -> None:
        """Start the server and list its tools within ``startup_timeout``; raise :class:`MCPStartupError`."""
        if self._owner is not None or self._close_requested.is_set():
            raise RuntimeError(f"MCP connection {self.name!r} was already started or closed")
        self._started = asyncio.get_running_loop().create_future()
        self._owner = asyncio.create_task(self._own(), name=f"mcp-{self.name}")
        try:
            await asyncio.shield(self._started)
        except BaseException:
            self._started.cancel()  # no-op after a failure; after a cancellation, nobody is left to read it
            await self.close()
            raise

    async def close(self) -> None:
        """Stop the server (idempotent); returns within about :data:`CLOSE_TIMEOUT` whatever the server does.

        A connected server is closed politely (stdin closed, or the HTTP session deleted) for
        :data:`CLOSE_GRACE` seconds; after that, or at once while it is starting or restarting, the owner's
        cancel scope is cancelled, so the owner still leaves the client's context managers in its own task.
        """
        self._close_requested.set()
        self._wake.set()
        self._notify()
        owner = self._owner
        if owner is None or owner.done():
            return
        if not self.ready:
            self._cancel_connection()
        if await _finished(owner, CLOSE_GRACE):
            return
        self._cancel_connection()
        if await _finished(owner, CLOSE_TIMEOUT - CLOSE_GRACE):
            return
        log.error("MCP server %s did not close within %g s; abandoning it", self.name, CLOSE_TIMEOUT)
        owner.cancel()
        await _finished(owner, 1.0)

    def _cancel_connection(self) -> None:
        if self._scope is not None:
            self._scope.cancel()

    # -- calls -----------------------------------------------------------------------------------------------

    async def call(self, tool_name: str, arguments: Mapping[str, Any] | None = None) -> ToolResult:
        """Call ``tool_name`` (the server's name for it) and return its normalised result; never raises.

        Everything that can go wrong (an unknown or disallowed tool, the ``call_timeout``, a server that is
        down or crashes during the call, protocol errors) becomes an error result with short text for the model.
        """
        refusal = self._refusal(tool_name)
        if refusal is not None:
            return ToolResult(refusal, is_error=True)
        timeout = self.config.call_timeout
        with anyio.move_on_after(timeout) as scope:
            try:
                client, generation = await self._ready_client(scope.deadline)
            except _Unavailable as exc:
                return ToolResult(str(exc), is_error=True)
            try:
                result = await client.call_tool(tool_name, dict(arguments or {}))
            except Exception as exc:  # protocol errors, a lost connection, an invalid result
                if isinstance(exc, MCPError) and exc.code == CONNECTION_CLOSED:
                    self._mark_lost(generation)
                log.warning("MCP tool %s of %s failed: %s", tool_name, self.name, describe_exception(exc))
                return ToolResult(f"MCP tool {tool_name!r} failed: {failure_text(exc)}", is_error=True)
            return normalize_result(result)
        log.warning("MCP tool %s of %s timed out after %g s", tool_name, self.name, timeout)
        return ToolResult(f"MCP tool {tool_name!r} timed out after {timeout:g} s", is_error=True, timed_out=True)

    def _refusal(self, tool_name: str) -> str | None:
        """Why ``tool_name`` may not be called at all, or ``None``."""
        allowed = self.config.allowed_tools
        listed = {tool.name for tool in self._tools}
        if (allowed is not None and tool_name not in allowed) or (listed and tool_name not in listed):
            return f"MCP server {self.name!r} offers no tool {tool_name!r}"
        return None

    async def _ready_client(self, deadline: float) -> tuple[Client, int]:
        """The connected client, waiting for a (re)start that can finish by ``deadline``; else :class:`_Unavailable`."""
        while True:
            if self._close_requested.is_set():
                raise _Unavailable(f"MCP server {self.name!r} is shut down")
            if self._client is not None:
                return self._client, self._generation
            if self._owner is None or self._owner.done():
                raise _Unavailable(f"MCP server {self.name!r} is not running")
            if self._retry_at is not None and self._retry_at > deadline:
                wait = self._retry_at - anyio.current_time()
                raise _Unavailable(f"MCP server {self.name!r} is restarting; try again in {math.ceil(wait)} s")
            changed = self._changed
            await changed.wait()

    def _notify(self) -> None:
        """Wake every caller waiting for the server's state to change."""
        self._changed.set()
        self._changed = asyncio.Event()

    # -- the owner task --------------------------------------------------------------------------------------

    async def _own(self) -> None:
        """Keep the server connected until closed: connect, serve, and restart with backoff when it goes away."""
        assert self._started is not None
        failures = 0
        try:
            while not self._close_requested.is_set():
                began = time.monotonic()
                error = await self._connection()
                if self._close_requested.is_set():
                    break
                if not self._started.done():
                    self._started.set_exception(MCPStartupError(self.name, self._startup_failure(error)))
                    return
                failures = 0 if time.monotonic() - began >= STABLE_AFTER else min(failures + 1, _MAX_DOUBLINGS)
                delay = min(BACKOFF_MAX, BACKOFF_START * 2**failures)
                why = describe_exception(error) if error is not None else "the connection ended"
                log.warning("MCP server %s stopped (%s); restarting in %.2g s", self.name, why, delay)
                self._retry_at = anyio.current_time() + delay
                self._notify()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._close_requested.wait(), delay)
                self._retry_at = None
        except Exception:  # a bug here must not leave callers waiting forever
            log.exception("MCP server %s: connection owner failed", self.name)
        finally:
            if not self._started.done():
                self._started.set_exception(MCPStartupError(self.name, "closed while starting"))
            self._client = None
            self._notify()

    async def _connection(self) -> BaseException | None:
        """One connection from start to end, entered and exited in this task; the error that ended it, if any.

        The cancel scope bounds start-up (its deadline is lifted once the tools are listed) and lets
        :meth:`close` stop the connection at any point.
        """
        self._generation += 1
        self._lost = False
        stderr = self._stderr = StderrLog(self.name) if self.config.transport == "stdio" else None
        error: BaseException | None = None
        try:
            with anyio.CancelScope(deadline=anyio.current_time() + self.config.startup_timeout) as scope:
                self._scope = scope
                if self._close_requested.is_set():
                    scope.cancel()
                async with anyio.create_task_group() as tasks:
                    if stderr is not None:
                        tasks.start_soon(stderr.pump)
                    try:
                        await self._serve(scope, self._generation, stderr)
                    finally:
                        if stderr is not None and not self._close_requested.is_set():
                            with anyio.move_on_after(_STDERR_DRAIN, shield=True):
                                await stderr.done.wait()
                        tasks.cancel_scope.cancel()
            if scope.cancelled_caught and not self._close_requested.is_set():
                error = TimeoutError(f"no answer within {self.config.startup_timeout:g} s")
        except Exception as exc:
            error = exc
        finally:
            self._scope = None
            self._client = None
            if stderr is not None:
                stderr.close()
            self._notify()
        return error

    async def _serve(self, scope: anyio.CancelScope, generation: int, stderr: StderrLog | None) -> None:
        """Connect, list the tools, then serve until the server goes away or the connection is closed."""
        transport = open_transport(self.config, lambda: self._mark_lost(generation), stderr)
        client = Client(transport, message_handler=self._on_message, cache=None, client_info=_CLIENT_INFO)
        async with client, anyio.create_task_group() as tasks:
            capability = client.server_capabilities.tools
            if capability is not None and capability.list_changed:
                await tasks.start(self._listen, client)  # subscribed before listing: no change goes unseen
            self._tools = await list_tools(client, self.name, self.config.allowed_tools)
            scope.deadline = math.inf
            self._client = client
            self._notify()
            if self._started is not None and not self._started.done():
                self._started.set_result(None)
            log.info("MCP server %s ready: %d tools (%s)", self.name, len(self._tools), client.protocol_version)
            await self._watch(client)
            tasks.cancel_scope.cancel()

    async def _watch(self, client: Client) -> None:
        """Wait until the server goes away or the connection is closed; refresh the tools when told to."""
        while True:
            await self._wake.wait()
            self._wake.clear()
            if self._close_requested.is_set() or self._lost:
                return
            if self._refresh:
                self._refresh = False
                try:
                    with anyio.fail_after(self.config.call_timeout):
                        tools = await list_tools(client, self.name, self.config.allowed_tools)
                except Exception as exc:
                    log.warning("MCP server %s: listing tools failed: %s", self.name, describe_exception(exc))
                    continue
                if tools != self._tools:
                    self._tools = tools
                    self._tools_changed()

    async def _listen(self, client: Client, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Subscribe to ``tools/list_changed`` (2026-07-28 servers send it only to subscribers).

        Reports itself started once subscribed, or once subscribing failed (older protocols notify anyway).
        """
        subscribed = False
        try:
            async with client.listen(tools_list_changed=True) as subscription:
                task_status.started()
                subscribed = True
                async for _event in subscription:
                    self._request_refresh()
        except Exception as exc:
            log.debug("MCP server %s: tools/list_changed subscription: %s", self.name, describe_exception(exc))
        if not subscribed:
            task_status.started()

    async def _on_message(self, message: IncomingMessage) -> None:
        """The client's message handler: server notifications and transport errors."""
        if isinstance(message, ToolListChangedNotification):
            self._request_refresh()
        elif isinstance(message, Exception):
            log.debug("MCP server %s: transport error: %s", self.name, describe_exception(message))

    def _request_refresh(self) -> None:
        self._refresh = True
        self._wake.set()

    def _mark_lost(self, generation: int) -> None:
        """The server of connection ``generation`` went away: have the owner restart it (if still current)."""
        if generation == self._generation and not self._lost:
            self._lost = True
            self._client = None  # new calls wait for the restart instead of using a dead connection
            self._wake.set()
            self._notify()

    def _tools_changed(self) -> None:
        log.info("MCP server %s tools changed: %s", self.name, ", ".join(tool.name for tool in self._tools))
        if self.on_tools_changed is not None:
            try:
                self.on_tools_changed(self)
            except Exception:
                log.exception("MCP server %s: on_tools_changed callback failed", self.name)

    def _startup_failure(self, error: BaseException | None) -> str:
        """Why the first start failed, with the child's last stderr lines when there are any."""
        reason = describe_exception(error) if error is not None else "the connection ended while starting"
        if self._stderr is not None and self._stderr.tail:
            reason += "; stderr: " + " | ".join(list(self._stderr.tail)[-_STDERR_REPORT_LINES:])
        return reason


async def _finished(task: asyncio.Task[None], timeout: float) -> bool:
    """Wait up to ``timeout`` seconds for ``task``; whether it is done."""
    done, _ = await asyncio.wait({task}, timeout=timeout)
    return bool(done)
