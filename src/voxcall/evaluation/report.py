"""The report of a run, two ways: a JSON file for CI and dashboards, and tables for a person at a terminal.

Each scenario gets a table, a row per turn: what the user did, what the server heard, the answer, the calls, the
latencies (end of speech, or the request, to the first audio; each tool result to the audio after it) and how many
checks held; under it, every check that failed with its reason. A last line sums it up.
"""

from __future__ import annotations

import json
from pathlib import Path

from rich.console import Group, JustifyMethod
from rich.table import Table
from rich.text import Text

from voxcall.evaluation.record import ScenarioRecord, TurnRecord
from voxcall.evaluation.runner import Report

CELL_CHARS = 48
"""The widest text cell (user, heard, answer); longer text is cut with an ellipsis (the JSON keeps all)."""


def write_json(report: Report, path: Path) -> None:
    """Write ``report`` to ``path`` as indented JSON (UTF-8)."""
    path.write_text(json.dumps(report.to_json(), indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def render(report: Report) -> Group:
    """The tables of ``report`` and its summary line, for :meth:`rich.console.Console.print`."""
    parts: list[Table | Text] = []
    for scenario in report.scenarios:
        parts.append(_table(scenario))
        parts.extend(_failures(scenario))
    parts.append(summary(report))
    return Group(*parts)


def summary(report: Report) -> Text:
    """One line: scenarios and checks that passed, and the time it took."""
    checks = [check for s in report.scenarios for turn in s.turns for check in turn.checks]
    held = sum(check.passed for check in checks)
    passed = sum(scenario.passed for scenario in report.scenarios)
    style = "bold green" if report.passed else "bold red"
    return Text.assemble((f"{'PASSED' if report.passed else 'FAILED'}: ", style),
                         f"{passed} of {len(report.scenarios)} scenarios passed, {held} of {len(checks)} checks held "
                         f"({report.protocol.value} at {report.url}, {report.seconds:.1f} s)")


def _table(scenario: ScenarioRecord) -> Table:
    mark = ("✓", "green") if scenario.passed else ("✗", "red")
    title = Text.assemble((f"{mark[0]} ", mark[1]), (scenario.name, "bold"), f"  {scenario.seconds:.1f} s")
    table = Table(title=title, title_justify="left", expand=False, show_lines=False)
    columns: tuple[tuple[str, JustifyMethod], ...] = (
        ("#", "right"), ("user", "left"), ("heard", "left"), ("answer", "left"), ("calls", "left"),
        ("first audio", "right"), ("tool → audio", "right"), ("checks", "right"))
    for header, justify in columns:
        table.add_column(header, justify=justify, overflow="fold")
    for turn in scenario.turns:
        table.add_row(str(turn.number), _cut(turn.turn.describe()), _cut(turn.heard), _answer(turn),
                      _calls(turn), _latency(turn), _tool_latency(turn), _checks(turn))
    return table


def _failures(scenario: ScenarioRecord) -> list[Text]:
    lines = []
    if scenario.error is not None:
        lines.append(Text.assemble(("  ✗ ", "red"), ("scenario: ", "bold"), scenario.error))
    for turn, check in scenario.failed_checks:
        if check.expectation == "ran" and scenario.error is not None:
            continue  # said once, above
        lines.append(Text.assemble(("  ✗ ", "red"), (f"turn {turn.number} · {check.expectation}: ", "bold"),
                                   check.detail))
    for turn in scenario.turns:
        lines += [Text.assemble(("  · ", "dim"), (f"turn {turn.number}: {note}", "dim")) for note in turn.notes]
    return lines


def _answer(turn: TurnRecord) -> Text:
    text = Text(_cut(turn.answer))
    if turn.cut_at_ms is not None:
        text.append(f"\n✂ cut after {turn.cut_at_ms} ms", "yellow")
    return text


def _calls(turn: TurnRecord) -> Text:
    text = Text()
    for number, call in enumerate(turn.calls):
        if number:
            text.append("\n")
        text.append(_cut(call.describe()), "red" if call.error else "")
        text.append(f" {call.side}", "dim")
    return text


def _latency(turn: TurnRecord) -> str:
    if turn.first_audio_ms is not None:
        return f"{turn.first_audio_ms} ms"
    if turn.first_text_ms is not None:
        return f"text {turn.first_text_ms} ms"
    return "—"


def _tool_latency(turn: TurnRecord) -> str:
    figures = [f"{call.to_audio_ms} ms" for call in turn.calls if call.to_audio_ms is not None]
    return "\n".join(figures) or "—"


def _checks(turn: TurnRecord) -> Text:
    if not turn.checks:
        return Text("—", "dim")
    held = sum(check.passed for check in turn.checks)
    return Text(f"{'✓' if held == len(turn.checks) else '✗'} {held}/{len(turn.checks)}",
                "green" if held == len(turn.checks) else "red")


def _cut(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= CELL_CHARS else text[: CELL_CHARS - 1] + "…"
