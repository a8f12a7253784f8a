"""``voxcall eval`` against a real ``voxcall serve --llm scripted`` that hears and speaks (the demo configuration):
the shipped demo scenarios all pass, push-to-talk and a WAV file are heard, and GPT-Live is evaluated too."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from tests.serve import ServeProcess, serve
from voxcall import cli
from voxcall.client.wavfile import write_wav
from voxcall.evaluation.audio import RATE, turn_audio
from voxcall.evaluation.scenario import Scenario, ScenarioFile, Turn

ROOT = Path(__file__).resolve().parents[2]
SCENARIOS = Path(__file__).resolve().parent / "scenarios"
DEMO = ROOT / "examples" / "eval" / "demo.yaml"
DEMO_CONFIG = ROOT / "examples" / "demo.yaml"

pytestmark = pytest.mark.usefixtures("speech_models")


def run_eval(*args: str) -> Result:
    return CliRunner().invoke(cli.app, ["eval", *args], env={"COLUMNS": "200"})


@pytest.fixture(scope="module")
def speaking_server(speech_models: None) -> Iterator[ServeProcess]:
    with serve("--config", str(DEMO_CONFIG), "--llm", "scripted", cwd=ROOT) as server:
        yield server


def test_the_shipped_demo_scenarios_pass_against_voxcall(speaking_server: ServeProcess, tmp_path: Path) -> None:
    report_path = tmp_path / "report.json"
    result = run_eval(str(DEMO), "--url", speaking_server.url, "--report", str(report_path), "--parallel", "4")
    assert result.exit_code == 0, result.output + speaking_server.output
    assert "PASSED: 4 of 4 scenarios passed" in result.stdout
    report = json.loads(report_path.read_text(encoding="utf-8"))
    assert report["passed"] and report["summary"]["checks_failed"] == 0 and report["protocol"] == "realtime"
    assert report["seconds"] < sum(s["seconds"] for s in report["scenarios"])  # four at once (--parallel 4)
    turns = {s["name"]: s["turns"] for s in report["scenarios"]}
    (sum_turn,) = turns["calculator"]
    assert sum_turn["heard"] == "What is 12 times 8?"
    assert [(c["name"], c["side"], c["output"]) for c in sum_turn["calls"]] == [("calculator", "server", "96")]
    assert sum_turn["latency_ms"]["first_audio"] > 0 and sum_turn["latency_ms"]["tool_to_audio"][0] > 0
    clock = turns["client tools"][0]
    assert clock["calls"][0]["side"] == "client" and clock["latency_ms"]["tool_to_audio"][0] > 0
    long_answer, barge_in = turns["barge-in"]
    assert long_answer["cut_at_ms"] >= 1500  # the caller spoke 1.5 s into it: the rest was never heard
    assert barge_in["cut_at_ms"] is None and barge_in["heard"] == "What is 2 plus 2?"


def test_push_to_talk_and_a_recording_are_heard(speaking_server: ServeProcess, tmp_path: Path) -> None:
    question = Turn(say="What is two plus two?")
    speech = turn_audio(ScenarioFile(scenarios=(Scenario(name="q", turns=(question,)),)), question)
    assert speech is not None
    write_wav(tmp_path / "question.wav", speech, RATE)
    (tmp_path / "recording.yaml").write_text(
        "scenarios: [{name: recording, turns: [{wav: question.wav, expect: {heard: [plus], says: ['4'], "
        "calls: [{name: calculator, arguments: {op: add, a: 2, b: 2}}]}}]}]", encoding="utf-8")
    for scenarios in (SCENARIOS / "spoken.yaml", tmp_path / "recording.yaml"):
        result = run_eval(str(scenarios), "--url", speaking_server.url)
        assert result.exit_code == 0, result.output + speaking_server.output


def test_gpt_live_is_evaluated_over_its_own_endpoint(speaking_server: ServeProcess, tmp_path: Path) -> None:
    report_path = tmp_path / "report.json"
    url = speaking_server.url.replace("/v1/realtime", "/v1/live/sessions")
    result = run_eval(str(SCENARIOS / "live.yaml"), "--url", url, "--report", str(report_path))
    assert result.exit_code == 0, result.output + speaking_server.output
    report = json.loads(report_path.read_text(encoding="utf-8"))
    (turn,) = report["scenarios"][0]["turns"]
    assert report["protocol"] == "live" and "96" in turn["answer"] and turn["latency_ms"]["first_audio"] > 0
