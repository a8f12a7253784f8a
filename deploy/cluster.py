"""``make cluster``: voxcall replicas behind HAProxy on loopback, in the foreground, until Ctrl-C.

It starts, in this order and each once the one before answers:

1. the shared inference engine, llama.cpp's server from the prebuilt ``xllamacpp`` wheel
   (``python -m voxcall.llm.local.serve``) with ``--parallel`` slots, when the LLM is ``llama-server``
   (``auto``: when ``xllamacpp`` is installed; nothing is compiled);
2. ``--replicas`` voxcall replicas on ports PORT+1 … PORT+REPLICAS, each ``voxcall serve --config
   deploy/replica.yaml`` (1012 on drain) with the LLM on the command line: the engine through ``--replica-llm``
   (``llama-server`` by default), or the ``scripted`` demo;
3. HAProxy on PORT with ``deploy/haproxy.cfg`` and a generated file listing the replicas.

Every child's output is printed with its name in front (but for the replicas' access log of passed health checks). A
replica that exits (SIGTERM it to watch a drain) is reported and the others go on; when HAProxy or the engine exits,
or the last replica, everything stops. Ctrl-C (or SIGTERM) stops the replicas first, so that each drains (running
responses finish, sessions close with 1012), then HAProxy and the engine; a second Ctrl-C hurries the drains, a
third kills. On Linux every child also gets SIGTERM if this process dies without stopping it (no orphans).

Run with the voxcall environment's Python (``make cluster`` does): replicas are ``python -m voxcall``.
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import importlib.util
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path
from types import FrameType

HOST = "127.0.0.1"
"""Everything listens on loopback."""
HERE = Path(__file__).resolve().parent
HAPROXY_CONFIG = HERE / "haproxy.cfg"
REPLICA_CONFIG = HERE / "replica.yaml"
START_TIMEOUT_S = 120.0
"""Seconds a child may take to answer its health check (the engine loads a model; a replica its speech models)."""
STOP_TIMEOUT_S = 60.0
"""Seconds a child may take to exit after SIGTERM (a replica drains for its shutdown_grace) before it is killed."""
POLL_S = 0.1
QUIET = re.compile(r'"GET /healthz HTTP/1\.[01]" 200')
"""Output lines not printed: a replica's access log of each passed health check (HAProxy checks every second)."""
PR_SET_PDEATHSIG = 1


class Stopping(Exception):
    """A stop signal arrived while the cluster was starting."""


class Child:
    """One process of the cluster: its name, the process (in its own session, so that the terminal's Ctrl-C
    reaches only the supervisor, which stops the children in order) and a thread printing its output."""

    def __init__(self, name: str, argv: list[str], env: dict[str, str] | None = None) -> None:
        self.name = name
        self.process = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                        stderr=subprocess.STDOUT, text=True, errors="replace", bufsize=1,
                                        env={**os.environ, **(env or {})}, start_new_session=True,
                                        preexec_fn=_die_with_parent)
        threading.Thread(target=self._relay, daemon=True).start()

    def _relay(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            if not QUIET.search(line):
                say(f"[{self.name}] {line.rstrip()}")

    @property
    def pid(self) -> int:
        return self.process.pid

    def running(self) -> bool:
        return self.process.poll() is None

    def signal(self, number: signal.Signals) -> None:
        if self.running():
            with contextlib.suppress(ProcessLookupError):
                self.process.send_signal(number)


class Cluster:
    """The engine (optional), the replicas and the balancer, started and stopped in order."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.engine: Child | None = None
        self.replicas: list[Child] = []
        self.balancer: Child | None = None
        self.stops = 0  # stop signals received
        self._folder = tempfile.TemporaryDirectory(prefix="voxcall-cluster-")

    def on_signal(self, number: int, frame: FrameType | None) -> None:
        """SIGINT/SIGTERM: the first stops the cluster, the second hurries the replicas' drains, the third kills."""
        self.stops += 1
        if self.stops == 2:
            say("hurrying the drains (once more to kill)")
            for replica in self.replicas:
                replica.signal(signal.SIGTERM)
        elif self.stops >= 3:
            for child in self.children():
                child.signal(signal.SIGKILL)

    def children(self) -> list[Child]:
        return [child for child in (self.engine, *self.replicas, self.balancer) if child is not None]

    def start(self) -> None:
        args = self.args
        llm_flags, llm_env = ["--llm", "scripted"], {}
        if args.llm == "llama-server":
            engine_port = args.port + args.replicas + 1
            self.engine = Child("llama-server", [
                sys.executable, "-m", "voxcall.llm.local.serve", "--model", args.model, "--host", HOST,
                "--port", str(engine_port), "--parallel", str(args.parallel), "--ctx-size", str(args.ctx_per_slot)])
            self.wait_until_up(self.engine, f"http://{HOST}:{engine_port}/health")
            # llama-server: the local tool-calling path, reading the GGUF's vocabulary; openai-chat: the model's
            # own tool calls through the server's OpenAI API (named by the file's stem)
            model = args.model if args.replica_llm == "llama-server" else Path(args.model).stem
            llm_flags = ["--llm", args.replica_llm, "--base-url", f"http://{HOST}:{engine_port}/v1",
                         "--model", model]
            llm_env = {"VOXCALL_LLM_API_KEY": "none"}  # llama-server wants none; the OpenAI SDK wants one
        ports = [args.port + n for n in range(1, args.replicas + 1)]
        for number, port in enumerate(ports, 1):
            self.replicas.append(Child(f"replica{number}", [
                sys.executable, "-m", "voxcall", "serve", "--config", str(args.config), "--host", HOST,
                "--port", str(port), *llm_flags], env={"HF_HUB_OFFLINE": "1", **llm_env}))
        for replica, port in zip(self.replicas, ports, strict=True):
            self.wait_until_up(replica, f"http://{HOST}:{port}/healthz")
        replicas_cfg = Path(self._folder.name) / "replicas.cfg"
        replicas_cfg.write_text("backend voxcall\n" + "".join(
            f"    server replica{number} {HOST}:{port}\n" for number, port in enumerate(ports, 1)))
        self.balancer = Child("haproxy", [args.haproxy, "-db", "-f", str(args.haproxy_config),
                                          "-f", str(replicas_cfg)],
                              env={"VOXCALL_BIND": f"{HOST}:{args.port}"})
        self.wait_until_up(self.balancer, f"http://{HOST}:{args.port}/healthz")
        say(f"voxcall cluster ready: ws://{HOST}:{args.port}/v1/realtime, {args.replicas} replica(s) on ports "
            f"{ports[0]}-{ports[-1]} ({args.llm} LLM); replica pids "
            f"{' '.join(str(replica.pid) for replica in self.replicas)}; Ctrl-C stops it")

    def wait_until_up(self, child: Child, url: str) -> None:
        """Wait until ``url`` answers 200; raises SystemExit when ``child`` exits first or takes too long."""
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.stops:
                raise Stopping
            if not child.running():
                raise SystemExit(f"{child.name} exited with status {child.process.returncode} while starting")
            with contextlib.suppress(OSError, urllib.error.URLError), urllib.request.urlopen(url, timeout=2) as answer:
                if answer.status == 200:
                    return
            time.sleep(POLL_S)
        raise SystemExit(f"{child.name} did not answer {url} within {START_TIMEOUT_S:g} s")

    def watch(self) -> int:
        """Run until a stop signal (exit status 0) or a lost balancer, engine or last replica (1)."""
        reported: set[str] = set()
        while not self.stops:
            for replica in self.replicas:
                if not replica.running() and replica.name not in reported:
                    reported.add(replica.name)
                    say(f"{replica.name} (pid {replica.pid}) exited with status {replica.process.returncode}; "
                        "the balancer sends its clients to the others")
            essential = [child for child in (self.engine, self.balancer) if child is not None]
            if any(not child.running() for child in essential) or len(reported) == len(self.replicas):
                say("the cluster lost " + ", ".join(child.name for child in self.children()
                                                      if not child.running()) + "; stopping")
                return 1
            time.sleep(POLL_S)
        return 0

    def stop(self) -> None:
        """Drain the replicas, then stop the balancer and the engine; kill what outlives :data:`STOP_TIMEOUT_S`."""
        say("stopping: the replicas drain (running responses finish, sessions close with 1012)")
        for replica in self.replicas:
            replica.signal(signal.SIGTERM)
        self._wait_for(self.replicas)
        for child in (self.balancer, self.engine):
            if child is not None:
                child.signal(signal.SIGTERM)
        self._wait_for([child for child in (self.balancer, self.engine) if child is not None])
        self._folder.cleanup()

    def _wait_for(self, children: list[Child]) -> None:
        deadline = time.monotonic() + STOP_TIMEOUT_S
        while any(child.running() for child in children) and time.monotonic() < deadline:
            time.sleep(POLL_S)
        for child in children:
            if child.running():
                say(f"{child.name} did not stop in time: killed")
                child.signal(signal.SIGKILL)
            child.process.wait()


_SAYING = threading.Lock()


def say(line: str) -> None:
    """Print one whole line: the relay threads print at once, and ``print`` writes a line and its end apart, so
    without the lock one child's line could run into another's (a test waiting for the ready line would miss it)."""
    with _SAYING:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()


def _die_with_parent() -> None:
    """In the child, before it runs: receive SIGTERM when the supervisor dies (Linux), so that no child is left."""
    if sys.platform.startswith("linux"):
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


def engine_installed() -> bool:
    """Whether llama.cpp's prebuilt engine (``xllamacpp``, the ``[local]`` extra) is installed."""
    return importlib.util.find_spec("xllamacpp") is not None


def default_model() -> str:
    """The packaged SmolLM2 GGUF that in-process llama.cpp uses too."""
    from voxcall.llm.local.llamacpp import default_model_path

    return str(default_model_path())


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--port", type=int, default=8765, help="the balancer's port; replicas on the next ones")
    parser.add_argument("--replicas", type=int, default=3)
    parser.add_argument("--llm", choices=["auto", "scripted", "llama-server"], default="auto",
                        help="auto: llama-server (llama.cpp's, from the xllamacpp wheel) when installed, else "
                        "scripted")
    parser.add_argument("--replica-llm", default="llama-server", choices=["llama-server", "openai-chat"],
                        help="the backend kind through which replicas use llama-server: llama-server (voxcall's "
                        "grammar-constrained tool calls) or openai-chat (the model's own)")
    parser.add_argument("--parallel", type=int, default=4, help="llama-server's slots (sessions decoded at once)")
    parser.add_argument("--ctx-per-slot", type=int, default=4096, help="llama-server's context per slot")
    parser.add_argument("--model", default=None, help="GGUF for llama-server (default: the packaged SmolLM2)")
    parser.add_argument("--config", type=Path, default=REPLICA_CONFIG, help="each replica's voxcall YAML")
    parser.add_argument("--haproxy-config", type=Path, default=HAPROXY_CONFIG)
    parser.add_argument("--haproxy", default=os.environ.get("HAPROXY") or shutil.which("haproxy")
                        or shutil.which("haproxy", path="/usr/sbin:/usr/local/sbin"))
    args = parser.parse_args(argv)
    if args.haproxy is None:
        parser.error("haproxy is not installed (Debian: apt-get install haproxy), or set HAPROXY")
    if args.llm == "auto":
        args.llm = "llama-server" if engine_installed() else "scripted"
        if args.llm == "scripted":
            say("note: llama.cpp's engine is not installed (pip install 'voxcall[local]'): the replicas answer "
                "with the scripted demo")
    elif not engine_installed():
        parser.error("llama-server needs llama.cpp's engine: pip install 'voxcall[local]'")
    if args.llm == "llama-server" and args.model is None:
        args.model = default_model()
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    cluster = Cluster(args)
    handler: Callable[[int, FrameType | None], None] = cluster.on_signal
    signal.signal(signal.SIGINT, handler)
    signal.signal(signal.SIGTERM, handler)
    status = 1
    try:
        cluster.start()
        status = cluster.watch()
    except Stopping:
        status = 0
    finally:
        cluster.stop()
    return status


if __name__ == "__main__":
    sys.exit(main())
