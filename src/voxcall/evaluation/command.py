"""``voxcall eval SCENARIOS.yaml --url ws://…``: run scripted conversations against a server and report.

Prints a table per scenario (and a progress bar on stderr while it runs), writes the JSON report with
``--report``, and exits with :data:`EXIT_PASSED` when every expectation held, :data:`EXIT_FAILED` when one did not
(or a scenario could not run), :data:`EXIT_USAGE` for a scenario file or URL that cannot be used, so that CI can
gate on it. Registered by :mod:`voxcall.cli`; everything else of the command lives here.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn
from rich.text import Text

EXIT_PASSED = 0
EXIT_FAILED = 1
EXIT_USAGE = 2


class _Bar:
    """The runner's progress on a rich bar: one step per turn."""

    def __init__(self, progress: Progress, total: int) -> None:
        self._progress = progress
        self._task = progress.add_task("starting", total=total)

    def scenario(self, name: str, turns: int) -> None:
        self._progress.update(self._task, description=name)

    def turn(self) -> None:
        self._progress.advance(self._task)


def evaluate(
    scenarios: Annotated[Path, typer.Argument(help="The scenarios: a YAML file (see examples/eval/demo.yaml).",
                                              exists=True, dir_okay=False, metavar="SCENARIOS.yaml")],
    url: Annotated[str, typer.Option(help="The server's endpoint: ws://HOST:PORT/v1/realtime (Realtime, "
                                          "?model=NAME allowed) or ws://HOST:PORT/v1/live/sessions (GPT-Live).")],
    api_key: Annotated[str | None, typer.Option(help="API key for the server (default: OPENAI_API_KEY).")] = None,
    model: Annotated[str | None, typer.Option(help="The Realtime model to ask for (default: the file's model:, "
                                                   "else gpt-realtime).")] = None,
    report: Annotated[Path | None, typer.Option(help="Write the full report here as JSON.", dir_okay=False)] = None,
    scenario: Annotated[list[str] | None, typer.Option(help="Run only the scenario of this name (repeatable).")] = None,
    parallel: Annotated[int, typer.Option(min=1, help="Scenarios run at once: a quicker run, whose latencies then "
                                                      "include the sessions' competition for the server.")] = 1,
) -> None:
    """Run scripted conversations (typed, spoken, recorded, silent, barge-ins, client tools) against a server that
    speaks the Realtime protocol or GPT-Live, check what each turn must show, and report pass/fail and latencies.

    Exit status: 0 when every expectation held, 1 when one did not (or a scenario could not run), 2 for a
    scenario file or URL that cannot be used.
    """
    from voxcall.evaluation.connect import EvalError
    from voxcall.evaluation.report import render, write_json
    from voxcall.evaluation.runner import EvalOptions, run_scenarios
    from voxcall.evaluation.scenario import ScenarioError, load_scenarios

    errors = Console(stderr=True)
    try:
        loaded = load_scenarios(scenarios).only(scenario)
    except ScenarioError as exc:
        errors.print(Text.assemble(("error: ", "bold red"), str(exc)), soft_wrap=True)
        raise typer.Exit(EXIT_USAGE) from None
    columns = (SpinnerColumn(), TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
               TextColumn("turns"), TimeElapsedColumn())
    with Progress(*columns, console=errors, transient=True) as progress:
        bar = _Bar(progress, sum(len(s.turns) for s in loaded.scenarios))
        try:
            result = asyncio.run(run_scenarios(loaded, EvalOptions(url, api_key, model, parallel), bar))
        except EvalError as exc:
            progress.stop()
            errors.print(Text.assemble(("error: ", "bold red"), str(exc)), soft_wrap=True)
            raise typer.Exit(EXIT_USAGE) from None
    Console().print(render(result))
    if report is not None:
        write_json(result, report)
    raise typer.Exit(EXIT_PASSED if result.passed else EXIT_FAILED)
