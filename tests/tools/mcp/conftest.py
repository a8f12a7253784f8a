"""Shared helpers for the MCP tests: the demo server's config, an HTTP demo server, and a process check."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from voxcall.tools.mcp import MCPServerConfig

DEMO = Path(__file__).with_name("demo_server.py")


def demo_config(name: str = "demo", **overrides: Any) -> MCPServerConfig:
    """A stdio config that runs the demo server with this Python."""
    return MCPServerConfig(name=name, command=sys.executable, args=[str(DEMO)], **overrides)


def process_alive(pid: int) -> bool:
    """Whether process ``pid`` exists and is not a zombie."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    stat = Path(f"/proc/{pid}/stat")
    return not (stat.exists() and stat.read_text().rsplit(")", 1)[1].split()[0] == "Z")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="module")
def http_url() -> Iterator[str]:
    """The demo server over streamable HTTP on a free loopback port, up and answering."""
    port = free_port()
    proc = subprocess.Popen([sys.executable, str(DEMO), "--http", "--port", str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    pytest.fail("the HTTP demo server did not start")
                time.sleep(0.05)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        try:
            proc.wait(5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
