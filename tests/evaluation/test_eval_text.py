"""``voxcall eval`` against a real ``voxcall serve --llm scripted --no-speech``: typed turns, client tools answered
at once, failing and late across the next turn, a server tool; and what a wrong URL or file gives (no speech models
needed)."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from tests.serve import ServeProcess, serve
from voxcall import cli
from voxcall.evaluation.runner import EvalOptions

ROOT = Path(__file__).resolve().parents[2]
SCENARIOS = Path(__file__).resolve().parent / "scenarios"
DEMO_CONFIG = ROOT / "examples" / "demo.yaml"


def run_eval(*args: str) -> Result:
    return CliRunner().invoke(cli.app, ["eval", *args], env={"COLUMNS": "200"})


@pytest.fixture(scope="module")
def text_server() -> Iterator[ServeProcess]:
    with serve("--config", str(DEMO_CONFIG), "--llm", "scripted", "--no-speech", cwd=ROOT) as server:
        yield server


def test_client_tools_fixed_failing_and_late_and_a_server_tool(text_server: ServeProcess, tmp_path: Path) -> None:
    report_path = tmp_path / "report.json"
    result = run_eval(str(SCENARIOS / "text.yaml"), "--url", text_server.url, "--report", str(report_path))
    assert result.exit_code == 0, result.output + text_server.output
    assert "PASSED: 2 of 2 scenarios passed, 9 of 9 checks held" in result.stdout
    report = json.loads(report_path.read_text(encoding="utf-8"))
    tools, server = report["scenarios"]
    clock, colour, thanks = tools["turns"]
    assert clock["calls"] == [{"call_id": clock["calls"][0]["call_id"], "name": "get_local_time", "arguments": {},
                               "side": "client", "output": None, "error": "the clock is broken",
                               "to_audio_ms": None}]
    assert clock["answer"] == "Let me look at your clock. The answer is error: the clock is broken."
    # the late result came while the user talked on; its answer still belongs to the turn that called the tool
    assert colour["calls"][0]["output"] == {"done": True, "color": "lightblue"}
    assert colour["answer"].startswith("Sure.") and "lightblue" in colour["answer"]
    assert [r["status"] for r in colour["responses"]] == ["completed", "completed"]
    assert thanks["answer"] == "You're welcome!" and thanks["calls"] == []
    assert all(turn["latency_ms"]["first_audio"] is None and turn["latency_ms"]["first_text"] is not None
               for turn in tools["turns"])
    (calc,) = server["turns"]
    assert calc["calls"][0]["side"] == "server" and calc["calls"][0]["arguments"] == {"op": "mul", "a": 12, "b": 8}
    assert calc["calls"][0]["output"] == "96"
    assert calc["responses"][0]["server_timing"]["tools"][0]["name"] == "calculator"  # voxcall's own figures too


def test_a_scenario_that_must_fail_says_which_expectation_and_why(text_server: ServeProcess, tmp_path: Path) -> None:
    report_path = tmp_path / "report.json"
    result = run_eval(str(SCENARIOS / "failing.yaml"), "--url", text_server.url, "--report", str(report_path))
    assert result.exit_code == 1, result.output
    out = result.stdout
    assert "FAILED: 1 of 2 scenarios passed" in out
    assert ('✗ turn 1 · calls: expected calculator(op="add"); made calculator({"op":"mul","a":12,"b":8})' in out), out
    assert "✗ turn 1 · says '97': the answer does not say '97': \"Let me work that out. The answer is 96.\"" in out
    assert "✗ turn 1 · absent calculator: made calculator(" in out
    assert "✗ turn 1 · first audio ≤ 1 ms: " in out
    report = json.loads(report_path.read_text(encoding="utf-8"))
    assert report["summary"] == {"scenarios": 2, "scenarios_passed": 1, "checks": 5, "checks_failed": 4}
    failed = [(c["expectation"], c["passed"]) for c in report["scenarios"][0]["turns"][0]["checks"]]
    assert failed == [("calls", False), ("absent calculator", False), ("says '97'", False),
                      ("first audio ≤ 1 ms", False)]
    assert report["scenarios"][1]["passed"]


def test_a_server_that_is_not_there_fails_the_scenarios_and_says_so(tmp_path: Path) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # closed again: nothing listens there
    result = run_eval(str(SCENARIOS / "failing.yaml"), "--url", f"ws://127.0.0.1:{port}/v1/realtime")
    assert result.exit_code == 1
    assert f"✗ scenario: cannot connect to ws://127.0.0.1:{port}/v1" in result.stdout


def test_a_file_or_url_that_cannot_be_used_exits_2(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("scenarios: [{name: a, turns: [{text: hi, say: hello}]}]", encoding="utf-8")
    result = run_eval(str(bad), "--url", "ws://127.0.0.1:1/v1/realtime")
    assert result.exit_code == 2 and "a turn has exactly one of" in result.output
    result = run_eval(str(SCENARIOS / "text.yaml"), "--url", "http://127.0.0.1:1/v1/realtime")
    assert result.exit_code == 2 and "is not a WebSocket URL" in result.output
    result = run_eval(str(SCENARIOS / "text.yaml"), "--url", "ws://127.0.0.1:1/v1/live/sessions")
    assert result.exit_code == 2 and "GPT-Live has no client tools" in result.output
    result = run_eval(str(SCENARIOS / "text.yaml"), "--url", "ws://127.0.0.1:1/v1/realtime", "--parallel", "0")
    assert result.exit_code == 2 and "--parallel" in result.output


def test_options_refuse_fewer_than_one_scenario_at_a_time() -> None:
    """A library caller gets the same refusal as the command line: zero at a time would wait forever."""
    with pytest.raises(ValueError, match="parallel must be at least 1"):
        EvalOptions("ws://127.0.0.1:1/v1/realtime", parallel=0)
