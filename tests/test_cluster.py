"""``make cluster`` end to end: two scripted replicas behind HAProxy, started by ``deploy/cluster.py`` with the
repository's ``deploy/haproxy.cfg`` and ``deploy/replica.yaml``.

Sessions opened through the balancer spread over both replicas (HAProxy's ``X-Voxcall-Replica`` header names the
one that answered; each replica's ``/healthz`` its pid). SIGTERM to one replica in the middle of its responses:
its sessions get their ``response.done`` and then close code 1012, the other replica's sessions go on, and new
sessions all land on the survivor. Ctrl-C to the cluster then stops every process it started.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import random
import signal
import socket
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

import httpx2 as httpx
import pytest
import websockets
import yaml

from tests.requirements import require_program, require_smollm2
from tests.test_server import descendants

from .tools.mcp.conftest import process_alive

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="POSIX signals and /proc")

DEPLOY = Path(__file__).resolve().parents[1] / "deploy"
READY_TIMEOUT_S = 60
ANSWER = "Here it comes, slowly."
SCRIPT = {"rules": [{"match": "tell", "reply": ANSWER, "delay": 2}], "default": "Fine."}
"""Each response waits 2 s before its text: long enough to SIGTERM a replica while they all run."""


def free_ports(count: int) -> int:
    """A port P such that P … P+count-1 are free on loopback now."""
    for _ in range(100):
        base = random.randrange(20_000, 60_000)
        with contextlib.ExitStack() as stack:
            sockets = [stack.enter_context(socket.socket()) for _ in range(count)]
            try:
                for offset, sock in enumerate(sockets):
                    sock.bind(("127.0.0.1", base + offset))
            except OSError:
                continue
            return base
    pytest.fail("no run of free ports")


class Cluster:
    """``deploy/cluster.py --replicas 2 --llm LLM`` in a subprocess, its output collected (``scripted``, or
    ``llama-server``: the shared engine of the prebuilt wheel)."""

    def __init__(self, folder: Path, haproxy: str, llm: str = "scripted") -> None:
        config = yaml.safe_load((DEPLOY / "replica.yaml").read_text())  # what an operator runs, plus the test's
        (folder / "script.yaml").write_text(yaml.safe_dump(SCRIPT))
        config.update({"script": str(folder / "script.yaml"), "speech": {"enabled": False},
                       "session": {"prefetch": False}})
        (folder / "replica.yaml").write_text(yaml.safe_dump(config))
        self.port = free_ports(4)
        env = {name: value for name, value in os.environ.items() if not name.startswith("VOXCALL_")}
        self.process = subprocess.Popen(
            [sys.executable, str(DEPLOY / "cluster.py"), "--port", str(self.port), "--replicas", "2", "--llm",
             llm, "--config", str(folder / "replica.yaml"), "--haproxy", haproxy],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env={**env, "HF_HUB_OFFLINE": "1"})
        self.lines: list[str] = []
        self.ready = threading.Event()
        threading.Thread(target=self._read, daemon=True).start()
        if not self.ready.wait(READY_TIMEOUT_S) or self.process.poll() is not None:
            self.stop()
            pytest.fail(f"the cluster did not start:\n{self.output}")
        self.children = descendants(self.process.pid)

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.append(line)
            if line.startswith("voxcall cluster ready"):
                self.ready.set()
        self.ready.set()

    @property
    def output(self) -> str:
        return "".join(self.lines)

    @property
    def url(self) -> str:
        return f"ws://127.0.0.1:{self.port}/v1/realtime"

    async def health(self, replica: int) -> httpx.Response:
        """``/healthz`` of replica 1 or 2, asked directly (not through the balancer)."""
        async with httpx.AsyncClient() as http:
            return await http.get(f"http://127.0.0.1:{self.port + replica}/healthz")

    def stop(self) -> int:
        """Ctrl-C; the exit status (killed, and the test failed, if it does not exit in time)."""
        self.process.send_signal(signal.SIGINT)
        try:
            return self.process.wait(30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            pytest.fail(f"the cluster did not stop within 30 s:\n{self.output}")


async def open_session(cluster: Cluster) -> tuple[Any, str]:
    """A session opened through the balancer, and the name of the replica serving it."""
    ws = await websockets.connect(cluster.url)
    assert json.loads(await ws.recv())["type"] == "session.created"
    return ws, ws.response.headers["X-Voxcall-Replica"]


async def ask(ws: Any) -> None:
    """Start a response on ``ws``; return once it has started."""
    await ws.send(json.dumps({"type": "conversation.item.create", "item": {
        "type": "message", "role": "user", "content": [{"type": "input_text", "text": "tell me"}]}}))
    await ws.send(json.dumps({"type": "response.create"}))
    while json.loads(await ws.recv())["type"] != "response.created":
        pass


async def answer_of(ws: Any) -> str:
    """The text of the response running on ``ws``, once it is done."""
    while (event := json.loads(await ws.recv()))["type"] != "response.done":
        pass
    assert event["response"]["status"] == "completed"
    return str(event["response"]["output"][0]["content"][0]["text"])


async def until_closed(ws: Any) -> tuple[list[str], int | None]:
    """The event types ``ws`` gets until the server closes it, and the close code."""
    seen: list[str] = []
    try:
        while True:
            seen.append(json.loads(await ws.recv())["type"])
    except websockets.exceptions.ConnectionClosed as closed:
        return seen, closed.rcvd.code if closed.rcvd else None


def haproxy() -> str:
    return require_program("haproxy", path=f"{os.environ.get('PATH', '')}:/usr/sbin:/usr/local/sbin")


async def engine_requests(cluster: Cluster) -> int:
    """The completion requests the shared engine has served (its ``/metrics``)."""
    async with httpx.AsyncClient() as http:
        text = (await http.get(f"http://127.0.0.1:{cluster.port + 3}/metrics")).text
    return int(float(next(line.split()[-1] for line in text.splitlines()
                          if line.startswith("llamacpp:tokens_predicted_total"))))


async def test_replicas_share_one_prebuilt_engine(tmp_path: Path) -> None:
    require_smollm2()
    cluster = Cluster(tmp_path, haproxy(), llm="llama-server")
    try:
        assert "llama.cpp serving" in cluster.output  # the engine is the wheel's server, started by the cluster
        sessions = [await open_session(cluster) for _ in range(2)]
        assert sorted(name for _, name in sessions) == ["replica1", "replica2"]
        before = await engine_requests(cluster)
        for ws, _ in sessions:
            await ask(ws)
            while (event := json.loads(await ws.recv()))["type"] != "response.done":
                pass
            details = event["response"].get("status_details") or {}
            assert event["response"]["output"], event
            assert event["response"]["status"] == "completed" or details.get("reason") == "max_output_tokens", event
            await ws.close()
        assert await engine_requests(cluster) > before  # both replicas' replies came from the one engine
    finally:
        status = cluster.stop()
    assert status == 0, cluster.output
    assert not [pid for pid in cluster.children if process_alive(pid)], cluster.output


async def test_a_drained_replica_hands_its_clients_back_to_the_balancer(tmp_path: Path) -> None:
    cluster = Cluster(tmp_path, haproxy())
    try:
        pids = {replica: (await cluster.health(replica)).json()["pid"] for replica in (1, 2)}
        assert len(set(pids.values())) == 2 and set(pids.values()) <= set(cluster.children)
        sessions = [await open_session(cluster) for _ in range(4)]
        assert Counter(name for _, name in sessions) == {"replica1": 2, "replica2": 2}  # least connections
        assert [(await cluster.health(replica)).json()["sessions"] for replica in (1, 2)] == [2, 2]
        for ws, _ in sessions:
            await ask(ws)

        os.kill(pids[1], signal.SIGTERM)
        for _ in range(200):
            if (await cluster.health(1)).status_code == 503:
                break
            await asyncio.sleep(0.02)
        assert (await cluster.health(1)).json()["draining"] is True
        newcomers = [await open_session(cluster) for _ in range(2)]
        assert [name for _, name in newcomers] == ["replica2", "replica2"]

        for ws, name in sessions:
            if name == "replica1":
                seen, code = await until_closed(ws)
                assert "response.done" in seen and code == 1012
            else:
                assert await answer_of(ws) == ANSWER
                await ask(ws)  # untouched: it goes on
                assert await answer_of(ws) == ANSWER
        for ws, _ in newcomers:
            await ask(ws)
            assert await answer_of(ws) == ANSWER
        for ws, _ in [*sessions, *newcomers]:
            await ws.close()
        deadline = time.monotonic() + 30
        while process_alive(pids[1]) and time.monotonic() < deadline:
            await asyncio.sleep(0.1)
        assert not process_alive(pids[1]), "the drained replica should have exited"
        assert "replica1 (pid" in cluster.output and process_alive(pids[2])
    finally:
        status = cluster.stop()
    assert status == 0, cluster.output
    assert not [pid for pid in cluster.children if process_alive(pid)], cluster.output
