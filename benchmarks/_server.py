"""Shared by the realtime benchmarks: a voxcall server in its own process, the weather script it answers from, and
small statistics helpers.

Run as a script, this module *is* that server process: it binds a free loopback port, prints the port on stdout
and serves until SIGINT/SIGTERM. Benchmarks start it with :class:`ServerProcess`, so client and server never share
an event loop (or a GIL). :class:`VoxcallServe` runs the real ``voxcall serve`` command instead, with its flags.

    python benchmarks/_server.py [--no-prefetch] [--ttft 0.3] [--token-delay 0.02]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections import deque
from pathlib import Path
from types import TracebackType
from typing import Any, Self

WEATHER_TOOL: dict[str, Any] = {
    "type": "function", "name": "get_weather", "description": "Get the weather for a city.",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
}
"""The client tool every benchmark session offers."""

SCRIPT: dict[str, Any] = {
    "rules": [{"match": "weather", "reply": "Let me check.",
               "calls": [{"name": "get_weather", "arguments": {"city": "Paris"}}]}],
    "after_tool": "{name} says {output}, a fine day for a walk.",
    "default": "I only know about the weather.",
}
"""A user message naming the weather gets a short spoken lead-in and one ``get_weather`` call; the tool output gets
a one-sentence answer."""

HOST = "127.0.0.1"
_RUNNING = re.compile(r"Uvicorn running on http://127\.0\.0\.1:(\d+)")
_START_TIMEOUT_S = 30.0
_STOP_TIMEOUT_S = 10.0


class ServerProcess:
    """A voxcall server (scripted backend) in a child process on a free loopback port; a context manager.

    ``cpus``, when given, pins the server process to those CPUs.
    """

    def __init__(self, *, prefetch: bool, ttft: float, token_delay: float, cpus: set[int] | None = None) -> None:
        self.args = [sys.executable, str(Path(__file__).resolve()), "--ttft", str(ttft),
                     "--token-delay", str(token_delay), *([] if prefetch else ["--no-prefetch"])]
        self.cpus = cpus
        self.port = 0
        self._proc: subprocess.Popen[str] | None = None

    def __enter__(self) -> Self:
        self._proc = subprocess.Popen(self.args, stdout=subprocess.PIPE, text=True)
        try:
            assert self._proc.stdout is not None
            line = self._proc.stdout.readline()
            if not line.strip().isdigit():
                raise RuntimeError(f"benchmark server did not start (it printed {line!r})")
            self.port = int(line)
            if self.cpus is not None:
                os.sched_setaffinity(self._proc.pid, self.cpus)
            self._wait_healthy()
        except BaseException:
            self._stop()
            raise
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self._stop()

    @property
    def pid(self) -> int:
        """The server's process id."""
        assert self._proc is not None
        return self._proc.pid

    @property
    def base_url(self) -> str:
        """The OpenAI SDK's ``base_url`` for this server."""
        return f"http://{HOST}:{self.port}/v1"

    @property
    def ws_url(self) -> str:
        """The realtime WebSocket endpoint."""
        return f"ws://{HOST}:{self.port}/v1/realtime?model=bench"

    def health(self) -> dict[str, Any]:
        """The server's ``GET /healthz`` body (blocking; call it outside timed sections)."""
        with urllib.request.urlopen(f"http://{HOST}:{self.port}/healthz", timeout=5) as reply:
            body: dict[str, Any] = json.load(reply)
        return body

    def rss_kib(self) -> int:
        """The server's resident set size in KiB (``VmRSS`` of ``/proc/PID/status``)."""
        for line in Path(f"/proc/{self.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
        raise RuntimeError("no VmRSS line in /proc status")

    def cpu_seconds(self) -> float:
        """CPU time (user + system) the server process has used so far."""
        return cpu_seconds(self.pid)

    def _wait_healthy(self) -> None:
        deadline = time.monotonic() + _START_TIMEOUT_S
        while True:
            try:
                self.health()
                return
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)

    def _stop(self) -> None:
        if self._proc is None:
            return
        proc, self._proc = self._proc, None
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(_STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        if proc.stdout is not None:
            proc.stdout.close()


class VoxcallServe:
    """``voxcall serve`` itself (the command line, with ``flags``) in a child process on a free loopback port; its
    log is drained by a thread, the last lines kept to explain a failed start. ``VOXCALL_*`` variables of this
    process are not passed on."""

    def __init__(self, *flags: str) -> None:
        env = {name: value for name, value in os.environ.items() if not name.startswith("VOXCALL_")}
        args = [sys.executable, "-m", "voxcall", "serve", "--port", "0", *flags]
        self.process = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        self.url = ""
        self.log: deque[str] = deque(maxlen=200)
        started = threading.Event()
        threading.Thread(target=self._drain, args=(started,), daemon=True).start()
        threading.Thread(target=self._drain_stdout, daemon=True).start()
        if not started.wait(300) or not self.url:
            self.stop()
            raise RuntimeError("voxcall serve did not start:\n" + "".join(self.log))

    @property
    def pid(self) -> int:
        """The server's process id."""
        return self.process.pid

    def _drain(self, started: threading.Event) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            self.log.append(line)
            if not self.url and (match := _RUNNING.search(line)) is not None:
                self.url = f"ws://{HOST}:{match.group(1)}/v1/realtime"
                started.set()
        started.set()

    def _drain_stdout(self) -> None:
        assert self.process.stdout is not None
        for _ in self.process.stdout:
            pass

    def peak_rss_bytes(self) -> int | None:
        """The server's peak resident set size (``VmHWM``)."""
        return peak_rss_bytes(self.process.pid)

    def stop(self) -> None:
        """Stop the server (SIGINT, then SIGKILL after 15 s)."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def cpu_seconds(pid: int) -> float:
    """CPU time (user + system, all threads) process ``pid`` has used so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def peak_rss_bytes(pid: int) -> int | None:
    """``VmHWM`` of process ``pid`` in bytes; None when it cannot be read."""
    try:
        lines = Path(f"/proc/{pid}/status").read_text().splitlines()
    except OSError:
        return None
    return next((int(line.split()[1]) * 1024 for line in lines if line.startswith("VmHWM:")), None)


def http_base(ws_url: str) -> str:
    """``http://host:port`` of a ``ws://host:port/v1/realtime`` URL."""
    match = re.match(r"ws(s?)://([^/]+)", ws_url)
    assert match is not None, ws_url
    return f"http{match.group(1)}://{match.group(2)}"


def percentile(values: list[float], pct: float) -> float:
    """The ``pct`` percentile of ``values`` (nearest rank)."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(pct / 100 * len(ordered)) - 1)]


def transport_args(description: str) -> argparse.Namespace:
    """The command line of a transport benchmark (``bench_twilio.py``, ``bench_webrtc.py``): how many spoken
    requests, and the server's LLM."""
    parser = argparse.ArgumentParser(description=description, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--requests", type=int, default=8)
    parser.add_argument("--llm", default="scripted", help="scripted (default) or default (the server's choice)")
    return parser.parse_args()


def verdict(ok: bool) -> str:
    """``PASS`` or ``MISS``."""
    return "PASS" if ok else "MISS"


def _serve(prefetch: bool, ttft: float, token_delay: float) -> None:
    """Serve the benchmark script on a free loopback port until interrupted; print the port first."""
    import uvicorn

    from voxcall.app import create_app
    from voxcall.config import ServerSettings, SessionOptions
    from voxcall.llm import ScriptedBackend
    from voxcall.server import WS_IMPLEMENTATION

    app = create_app(ServerSettings(session=SessionOptions(prefetch=prefetch), log_level="warning"),
                     ScriptedBackend(SCRIPT, ttft=ttft, token_delay=token_delay))
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((HOST, 0))
    print(sock.getsockname()[1], flush=True)
    config = uvicorn.Config(app, log_level="warning", ws=WS_IMPLEMENTATION, lifespan="off")
    with contextlib.suppress(KeyboardInterrupt):  # uvicorn re-raises the stop signal after its graceful shutdown
        uvicorn.Server(config).run(sockets=[sock])


def main() -> None:
    """Command line of the server process."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--no-prefetch", dest="prefetch", action="store_false", help="turn speculation off")
    parser.add_argument("--ttft", type=float, default=0.3, help="scripted time to first token, seconds")
    parser.add_argument("--token-delay", type=float, default=0.02, help="scripted delay per token, seconds")
    args = parser.parse_args()
    _serve(args.prefetch, args.ttft, args.token_delay)


if __name__ == "__main__":
    main()
