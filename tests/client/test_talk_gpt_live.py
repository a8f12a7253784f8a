"""``voxcall talk --live`` end to end against a real ``voxcall serve`` over GPT-Live (``/v1/live/sessions``).

With speech (the packaged models): a WAV question and a typed one answered in audio. Without speech, a scripted voice
that delegates a task: the client shows the delegation and answers it, and the voice says that answer.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pytest
import yaml
from typer.testing import CliRunner, Result

from tests.client.conftest import ServeProcess
from tests.serve import serve
from voxcall import cli
from voxcall.client import talk_gpt_live
from voxcall.client.gpt_live import ANSWER_TO_TASKS
from voxcall.client.wavfile import read_wav, write_wav

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

DELEGATING = {"rules": [
    {"match": "weather", "reply": "Let me check.", "calls": [{"name": "delegate", "arguments": {"task": "weather"}}]},
    {"after": "delegate", "match": "runs no tasks", "reply": "Sorry, I cannot look that up from here."},
], "default": "I did not catch that."}


def talk(port: int, *args: str) -> Result:
    return CliRunner().invoke(cli.app, ["talk", "--live", "--url", f"ws://127.0.0.1:{port}/v1/live/sessions", *args],
                              env={"COLUMNS": "200"})


@pytest.fixture(scope="module")
def delegating(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeProcess]:
    """``voxcall serve --no-speech`` whose scripted voice delegates any question about the weather."""
    script = tmp_path_factory.mktemp("script") / "delegating.yaml"
    script.write_text(yaml.safe_dump(DELEGATING), encoding="utf-8")
    with serve("--llm", "scripted", "--no-speech", "--script", str(script)) as served:
        yield served


def test_a_wav_question_gets_a_spoken_answer_with_both_transcripts(
        server: ServeProcess, say: Callable[[str], Path], hear: Callable[[Path], str], tmp_path: Path) -> None:
    out = tmp_path / "answer.wav"
    result = talk(server.port, "--wav", str(say("Hello there.")), "--out", str(out))
    assert result.exit_code == 0, result.output + server.output
    lines = [line for line in result.stdout.splitlines() if not line.startswith("streaming ")]
    assert lines[0].lower().startswith("you › hello") and lines[1:] == [
        "assistant › Hello! How can I help you today?"], result.stdout
    assert len(read_wav(out, 24000)) > 24000 // 2
    assert "help" in hear(out)


def test_a_typed_question_is_the_startup_input_and_is_answered_in_audio(server: ServeProcess, tmp_path: Path) -> None:
    out = tmp_path / "answer.wav"
    result = talk(server.port, "--text", "hi", "--out", str(out))
    assert result.exit_code == 0, result.output + server.output
    assert result.stdout.splitlines() == ["you › hi", "assistant › Hello! How can I help you today?"]
    assert len(read_wav(out, 24000)) > 24000 // 2


def test_a_delegated_task_is_shown_answered_and_the_voice_says_so(delegating: ServeProcess) -> None:
    result = talk(delegating.port, "--text", "what is the weather")
    assert result.exit_code == 0, result.output + delegating.output
    lines = result.stdout.splitlines()
    assert lines[0] == "you › what is the weather", result.stdout
    assert any(line.startswith('  → delegate({"delegation_id": "deleg_') for line in lines), result.stdout
    assert f"  ← delegate: {ANSWER_TO_TASKS}" in lines, result.stdout
    said = "".join(line for line in lines if line.startswith("assistant › "))  # the voice's words, in order
    assert said.startswith("assistant › Let me check.") and said.endswith("Sorry, I cannot look that up from here.")


def test_a_wav_of_silence_is_reported(server: ServeProcess, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # GPT-Live has no way to ask whether the server has read all the audio, so the client waits HEARD_WITHIN_S (20 s)
    # for a sign of speech; silence never gives one, so a shorter wait tests the same and spares 17 s
    monkeypatch.setattr(talk_gpt_live, "HEARD_WITHIN_S", 3.0)
    silence = tmp_path / "silence.wav"
    write_wav(silence, np.zeros(16000, np.int16), 16000)
    result = talk(server.port, "--wav", str(silence), "--fast")
    assert result.exit_code == cli.EXIT_CLIENT_ERROR, result.output
    assert f"the server heard no speech in {silence}" in result.stderr


def test_the_realtime_endpoint_is_a_clear_error(delegating: ServeProcess) -> None:
    result = CliRunner().invoke(cli.app, ["talk", "--live", "--url", delegating.url, "--text", "hi"],
                                env={"COLUMNS": "200"})
    assert result.exit_code == cli.EXIT_CLIENT_ERROR, result.output
    assert "error:" in result.stderr and "session.start" in result.stderr and "Traceback" not in result.output


def test_no_client_tools_under_gpt_live(tool_module: Path) -> None:
    result = CliRunner().invoke(cli.app, ["talk", "--live", "--text", "hi", "--tool-module", str(tool_module)],
                                env={"COLUMNS": "200"})
    assert result.exit_code == cli.EXIT_CONFIG_ERROR
    assert "--tool-module applies to Realtime" in result.stderr
