"""``voxcall talk`` end to end against a real ``voxcall serve`` (scripted backend, the packaged speech models)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner, Result

from tests.client.conftest import ServeProcess
from voxcall import cli
from voxcall.client.wavfile import read_wav, write_wav

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def talk(server: ServeProcess, *args: str) -> Result:
    return CliRunner().invoke(cli.app, ["talk", "--url", server.url, *args], env={"COLUMNS": "200"})


def test_wav_in_real_time_gets_a_spoken_answer(server: ServeProcess, say: Callable[[str], Path],
                                               hear: Callable[[Path], str], tmp_path: Path) -> None:
    out = tmp_path / "answer.wav"
    result = talk(server, "--wav", str(say("Hello there.")), "--out", str(out))
    assert result.exit_code == 0, result.output
    assert "you › hello" in result.stdout.lower()
    assert "assistant › Hello! How can I help you today?" in result.stdout
    answer = read_wav(out, 24000)
    assert len(answer) > 24000 // 2  # more than half a second of speech
    assert "help" in hear(out)


def test_wav_with_a_client_tool_runs_it_and_speaks_the_follow_up(
        server: ServeProcess, say: Callable[[str], Path], hear: Callable[[Path], str], tool_module: Path,
        tmp_path: Path) -> None:
    out = tmp_path / "answer.wav"
    result = talk(server, "--wav", str(say("What is 12 times 8?")), "--fast", "--out", str(out),
                  "--tool-module", str(tool_module))
    assert result.exit_code == 0, result.output
    assert "→ calculator" in result.stdout and "← calculator: 96" in result.stdout
    assert tool_module.with_name("ran.txt").read_text() == "calculator mul 12 8 = 96\n"
    assert "The answer is 96." in result.stdout
    said = hear(out)
    assert "work that out" in said and "96" in said


def test_text_turn_with_a_client_tool_answers_in_text(server: ServeProcess, tool_module: Path) -> None:
    result = talk(server, "--text", "what is 12 times 8", "--tool-module", str(tool_module))
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines == ["you › what is 12 times 8", "assistant › Let me work that out.",
                     '  → calculator({"op":"mul","a":12,"b":8})', "  ← calculator: 96",
                     "assistant › The answer is 96."]


def test_text_turn_spoken_to_a_file(server: ServeProcess, tmp_path: Path) -> None:
    out = tmp_path / "answer.wav"
    result = talk(server, "--text", "hi", "--out", str(out))
    assert result.exit_code == 0, result.output
    assert "assistant › Hello! How can I help you today?" in result.stdout
    assert len(read_wav(out, 24000)) > 24000 // 2


def test_wav_of_silence_is_reported(server: ServeProcess, tmp_path: Path) -> None:
    silence = tmp_path / "silence.wav"
    write_wav(silence, np.zeros(16000, np.int16), 16000)
    result = talk(server, "--wav", str(silence), "--fast")
    assert result.exit_code == cli.EXIT_CLIENT_ERROR
    assert f"the server heard no speech in {silence}" in result.stderr


def test_no_server_is_a_clear_error() -> None:
    result = CliRunner().invoke(cli.app, ["talk", "--url", "ws://127.0.0.1:9/v1/realtime", "--text", "hi"])
    assert result.exit_code == cli.EXIT_CLIENT_ERROR
    assert "cannot connect to ws://127.0.0.1:9/v1/realtime" in result.stderr and "Traceback" not in result.output


def test_live_mode_without_sounddevice_says_what_to_do(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "sounddevice", None)  # makes the import fail
    result = CliRunner().invoke(cli.app, ["talk"], env={"COLUMNS": "200"})
    assert result.exit_code == cli.EXIT_CLIENT_ERROR
    assert "pip install sounddevice" in result.stderr and "--wav" in result.stderr


@pytest.mark.parametrize(("args", "message"), [
    (["--wav", "IN", "--text", "hi"], "give one of them"),
    (["--text", "hi", "--fast"], "--fast applies to --wav"),
    (["--out", "x.wav"], "--out needs --wav or --text"),
    (["--text", "hi", "--tool-module", "no_such_module_here"], "tool module no_such_module_here: import failed"),
])
def test_bad_options_exit_2(args: list[str], message: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "IN").write_bytes(b"")
    result = CliRunner().invoke(cli.app, ["talk", *args], env={"COLUMNS": "200"})
    assert result.exit_code == cli.EXIT_CONFIG_ERROR, result.output
    assert message in result.stderr
