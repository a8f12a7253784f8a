"""A real ``voxcall serve`` child process for end-to-end tests: a free loopback port, stopped with Ctrl-C (SIGINT).

The child gets a clean environment (no ``VOXCALL_*`` setting from the developer's shell, no model hub) and checks
every event it sends against the SDK's models (``VOXCALL_VALIDATE_EVENTS``): an invalid event is a ``server_error``
that the client under test sees. Its log is kept, for a failing test to show.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from voxcall.realtime.server_events import ENV_VAR as VALIDATE_EVENTS

_RUNNING = re.compile(r"Uvicorn running on http://127\.0\.0\.1:(\d+)")
START_TIMEOUT_S = 60
"""Seconds a server may take to load its models and listen."""


@dataclass
class ServeProcess:
    """A ``voxcall serve`` child process, its port once it listens, and its log so far."""

    process: subprocess.Popen[str]
    port: int = 0
    log: list[str] = field(default_factory=list)

    @property
    def url(self) -> str:
        """The realtime endpoint, ``ws://127.0.0.1:PORT/v1/realtime``."""
        return f"ws://127.0.0.1:{self.port}/v1/realtime"

    @property
    def base_url(self) -> str:
        """The base URL an OpenAI SDK client takes, ``http://127.0.0.1:PORT/v1``."""
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def http_url(self) -> str:
        """The server's root, ``http://127.0.0.1:PORT/``: the playground page."""
        return f"http://127.0.0.1:{self.port}/"

    @property
    def output(self) -> str:
        """What the server has logged so far."""
        return "".join(self.log)


@contextmanager
def serve(*args: str, cwd: Path | None = None, env: Mapping[str, str] | None = None) -> Iterator[ServeProcess]:
    """Run ``voxcall serve --port 0 ARGS`` (in ``cwd``, with ``env`` added) until the block ends."""
    child_env = {name: value for name, value in os.environ.items() if not name.startswith("VOXCALL_")}
    child_env.update({"COLUMNS": "200", "HF_HUB_OFFLINE": "1", VALIDATE_EVENTS: "1", **(env or {})})
    process = subprocess.Popen([sys.executable, "-m", "voxcall", "serve", "--port", "0", *args], cwd=cwd,
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=child_env)
    served = ServeProcess(process)
    started = threading.Event()

    def read_log() -> None:  # keeps the pipe drained for the life of the server
        assert process.stderr is not None
        for line in process.stderr:
            served.log.append(line)
            if (match := _RUNNING.search(line)) is not None:
                served.port = int(match.group(1))
                started.set()
        started.set()

    threading.Thread(target=read_log, daemon=True).start()
    try:
        assert started.wait(START_TIMEOUT_S) and served.port, f"voxcall serve did not start:\n{served.output}"
        yield served
    finally:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
