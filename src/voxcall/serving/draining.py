"""uvicorn's server with voxcall's graceful stop in front of its own.

uvicorn stops (on SIGINT or SIGTERM) by closing its listening sockets, sending every WebSocket close code 1012 at
once, waiting for the connections and their handlers to end (at most ``timeout_graceful_shutdown``), then running
the app's lifespan shutdown. :class:`DrainingServer` first drains the sessions
(:meth:`~voxcall.serving.admission.Admission.drain`) while it still listens, so that a new connection and a
health check get a 503 rather than a refused connection, and running responses may finish; by the time uvicorn's
own shutdown runs, every session has been closed (code 1001, or 1012 for a replica) and uvicorn only waits for
the handlers to end and stops the MCP servers (lifespan). A second stop signal ends the grace period at once; a
second Ctrl-C also makes uvicorn skip its waiting, as it always does.
"""

from __future__ import annotations

import asyncio
import socket
from types import FrameType

import uvicorn

from voxcall.serving.admission import Admission


class DrainingServer(uvicorn.Server):
    """A :class:`uvicorn.Server` that drains ``admission``'s sessions, for up to ``grace`` seconds, before it shuts
    down."""

    def __init__(self, config: uvicorn.Config, admission: Admission, grace: float) -> None:
        super().__init__(config)
        self.admission = admission
        self.grace = grace
        self._draining_in: asyncio.AbstractEventLoop | None = None

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        """Drain, then shut down as uvicorn does."""
        if not self.force_exit:
            self._draining_in = asyncio.get_running_loop()
            await self.admission.drain(self.grace)
        await super().shutdown(sockets)

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        """The stop signal handler: the first one stops the server; one more while draining hurries the drain."""
        if self._draining_in is not None:
            self._draining_in.call_soon_threadsafe(self.admission.hurry)
        super().handle_exit(sig, frame)
