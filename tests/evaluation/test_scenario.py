"""Scenario files: the shipped demo loads; every mistake is refused with a message that says what and where."""

from __future__ import annotations

from pathlib import Path

import pytest

from voxcall.evaluation.scenario import Protocol, ScenarioError, ToolResult, TurnKind, load_scenarios

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "examples" / "eval" / "demo.yaml"


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "scenarios.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_the_shipped_demo_loads_with_every_kind_of_turn_it_shows() -> None:
    demo = load_scenarios(DEMO)
    assert [s.name for s in demo.scenarios] == ["calculator", "clock", "client tools", "barge-in"]
    kinds = {turn.kind for scenario in demo.scenarios for turn in scenario.turns}
    assert kinds == {TurnKind.SAY, TurnKind.TEXT, TurnKind.SILENCE}
    barge = demo.scenarios[3].turns[1]
    assert barge.barge_in_ms == 1500 and barge.expect.calls[0].arguments == {"op": "add", "a": 2, "b": 2}
    tools = demo.scenarios[2]
    assert tools.session.tool_names == {"get_local_time", "set_page_color"}
    assert tools.tool_results["set_page_color"].delay_ms == 3000
    assert demo.scenarios[0].session.keeps_turn_detection


def test_tool_results_say_their_output_as_the_model_reads_it() -> None:
    assert ToolResult(output="10:42").text == "10:42"
    assert ToolResult(output={"temp": 21, "sky": "clear"}).text == '{"temp": 21, "sky": "clear"}'
    assert ToolResult(error="the service is down").text == "error: the service is down"
    with pytest.raises(ValueError, match="either an 'output' or an 'error'"):
        ToolResult(output="x", error="y")


@pytest.mark.parametrize(("text", "message"), [
    ("scenarios: [{name: a, turns: [{text: hi, say: hello}]}]",
     "scenarios.0.turns.0: Value error, a turn has exactly one of 'text', 'say', 'wav', 'silence_ms' (this one has "
     "text, say)"),
    ("scenarios: [{name: a, turns: []}]", "scenarios.0.turns: Tuple should have at least 1 item"),
    ("scenarios: [{name: a, turns: [{text: hi, expect: {sayz: [x]}}]}]",
     "scenarios.0.turns.0.expect.sayz: Extra inputs are not permitted"),
    ("scenarios: [{name: a, tool_results: {lookup: {output: x}}, turns: [{text: hi}]}]",
     "tool_results names tools the session does not offer: lookup"),
    ("scenarios: [{name: a, turns: [{text: hi, barge_in_ms: 100}]}]",
     "'barge_in_ms' applies to spoken turns"),
    ("scenarios: [{name: a, turns: [{text: hi}]}, {name: a, turns: [{text: ho}]}]", "two scenarios share a name"),
    ("scenarios: [{name: a, turns: [{wav: missing.wav}]}]", "no WAV file"),
    ("- just a list", "expected a mapping with a 'scenarios' list"),
    ("scenarios: [{name: a, turns: [{text: 'unclosed}]}]", "is not valid YAML"),
])
def test_mistakes_are_refused_with_what_and_where(tmp_path: Path, text: str, message: str) -> None:
    path = write(tmp_path, text)
    with pytest.raises(ScenarioError) as caught:
        load_scenarios(path)
    assert message in str(caught.value) and str(path) in str(caught.value)


def test_gpt_live_cannot_play_typed_turns_nor_client_tools(tmp_path: Path) -> None:
    typed = load_scenarios(write(tmp_path, "scenarios: [{name: ask, turns: [{text: hi}]}]"))
    typed.check_protocol(Protocol.REALTIME)
    with pytest.raises(ScenarioError, match="scenario 'ask', turn 1: GPT-Live has no user text event"):
        typed.check_protocol(Protocol.LIVE)
    tools = load_scenarios(write(tmp_path, "scenarios: [{name: t, session: {tools: [{type: function, name: f}]}, "
                                           "turns: [{say: hi}]}]"))
    with pytest.raises(ScenarioError, match="GPT-Live has no client tools"):
        tools.check_protocol(Protocol.LIVE)


def test_a_run_may_take_only_some_scenarios() -> None:
    demo = load_scenarios(DEMO)
    assert [s.name for s in demo.only(["barge-in", "clock"]).scenarios] == ["clock", "barge-in"]
    assert demo.only(None) is demo
    with pytest.raises(ScenarioError, match="no scenario named nope; the file has calculator, clock"):
        demo.only(["nope"])
