"""Test helper: llama.cpp's server from the prebuilt wheel (``python -m voxcall.llm.local.serve``) in a child
process on a loopback port, as the scale-out deployments run it."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

STARTUP_TIMEOUT_S = 120.0


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


@contextlib.contextmanager
def llama_serve(model: Path, *, parallel: int = 2, ctx: int = 2048, threads: int = 2) -> Iterator[str]:
    """The base URL (``http://127.0.0.1:PORT``) of the launcher serving ``model`` with ``parallel`` slots of ``ctx``
    tokens, until the block ends."""
    port = free_port()
    command = [sys.executable, "-m", "voxcall.llm.local.serve", "--model", str(model), "--port", str(port),
               "--parallel", str(parallel), "--ctx-size", str(ctx), "--threads", str(threads)]
    with tempfile.TemporaryFile() as log:  # not a pipe: a chatty server could fill one and stall
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT,
                                   env={**os.environ, "HF_HUB_OFFLINE": "1"})
        try:
            deadline = time.monotonic() + STARTUP_TIMEOUT_S
            while not answers(f"http://127.0.0.1:{port}/health"):
                if process.poll() is not None or time.monotonic() > deadline:
                    log.seek(0)
                    pytest.fail(f"the llama.cpp launcher did not start ({process.poll()}):\n"
                                f"{log.read().decode(errors='replace')[-2000:]}")
                time.sleep(0.2)
            yield f"http://127.0.0.1:{port}"
        finally:
            stop(process)
