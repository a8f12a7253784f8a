"""A real ``voxcall serve`` child process, for the tests that drive the server as users run it.

The child starts through the CLI on a free loopback port (``--port 0``) without the developer's ``VOXCALL_*``
settings; its log is read on a thread for as long as it runs (so the pipe never fills) and its port is taken from
uvicorn's "running on" line. At exit it gets SIGINT, as from Ctrl-C, and is killed if it does not stop.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field

_RUNNING = re.compile(r"Uvicorn running on http://127\.0\.0\.1:(\d+)")
START_TIMEOUT_S = 60
STOP_TIMEOUT_S = 10


@dataclass
class ServeProcess:
    """A running ``voxcall serve`` and where it listens."""

    process: subprocess.Popen[str]
    port: int = 0
    log: list[str] = field(default_factory=list)

    @property
    def url(self) -> str:
        """The realtime WebSocket URL."""
        return f"ws://127.0.0.1:{self.port}/v1/realtime"

    @property
    def http_url(self) -> str:
        """The server's root: the playground page."""
        return f"http://127.0.0.1:{self.port}/"


@contextlib.contextmanager
def serve(*args: str, env: Mapping[str, str] | None = None) -> Iterator[ServeProcess]:
    """``voxcall serve --port 0 ARGS``, with ``env`` added to the environment, running for the ``with`` block."""
    child_env = {name: value for name, value in os.environ.items() if not name.startswith("VOXCALL_")}
    child_env.update(COLUMNS="200", HF_HUB_OFFLINE="1", **(env or {}))
    process = subprocess.Popen([sys.executable, "-m", "voxcall", "serve", "--port", "0", *args],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=child_env)
    served = ServeProcess(process)
    started = threading.Event()

    def read_log() -> None:
        assert process.stderr is not None
        for line in process.stderr:
            served.log.append(line)
            if (match := _RUNNING.search(line)) is not None:
                served.port = int(match.group(1))
                started.set()
        started.set()  # it exited: stop waiting

    threading.Thread(target=read_log, daemon=True).start()
    try:
        assert started.wait(START_TIMEOUT_S) and served.port, "".join(served.log)
        yield served
    finally:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
