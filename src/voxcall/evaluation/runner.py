"""Running a file of scenarios against a server, each on a connection of its own: one after another, or a few at
a time (``parallel``: a quicker run whose latencies include the sessions' competition for the server).

For each scenario: the audio of its spoken turns is made first (synthesis takes time that must not count as the
caller's), then a connection is opened through the official SDK, the session set, the turns played in real time,
and every turn checked against its expectations. A turn that gets no complete answer in time ends its scenario
(what follows would be checked against a conversation gone astray); the other scenarios still run.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Protocol

from voxcall.client.wavfile import WavError
from voxcall.evaluation.audio import PCM, turn_audio
from voxcall.evaluation.connect import DEFAULT_MODEL, EvalError, Link, endpoint, open_link
from voxcall.evaluation.expectations import check_turn
from voxcall.evaluation.live import LiveRun
from voxcall.evaluation.realtime import RealtimeRun
from voxcall.evaluation.record import Check, ScenarioRecord, TurnRecord
from voxcall.evaluation.scenario import Protocol as Wire
from voxcall.evaluation.scenario import Scenario, ScenarioFile


class Progress(Protocol):
    """Is told how the run goes (a progress bar, a test's recorder)."""

    def scenario(self, name: str, turns: int) -> None:
        """A scenario of ``turns`` turns starts."""

    def turn(self) -> None:
        """A turn ended (or will not run)."""


class _Run(Protocol):
    async def open(self) -> None: ...
    async def play(self, number: int, pcm: PCM | None) -> None: ...
    async def finish(self) -> None: ...
    async def close(self) -> None: ...


@dataclass(frozen=True)
class EvalOptions:
    """Where to run the scenarios: the URL (its path says the protocol), a key, the Realtime model name, and how
    many scenarios run at once (1: one after another, so that each one's latencies are its own)."""

    url: str
    api_key: str | None = None
    model: str | None = None
    parallel: int = 1

    def __post_init__(self) -> None:
        if self.parallel < 1:
            raise ValueError(f"parallel must be at least 1, not {self.parallel}")


@dataclass
class Report:
    """Every scenario's run, and where and when."""

    url: str
    protocol: Wire
    started: str
    scenarios: list[ScenarioRecord] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def passed(self) -> bool:
        return all(scenario.passed for scenario in self.scenarios)

    def to_json(self) -> dict[str, Any]:
        checks = [check for s in self.scenarios for turn in s.turns for check in turn.checks]
        return {"url": self.url, "protocol": self.protocol.value, "started": self.started,
                "seconds": round(self.seconds, 2), "passed": self.passed,
                "summary": {"scenarios": len(self.scenarios),
                            "scenarios_passed": sum(s.passed for s in self.scenarios),
                            "checks": len(checks), "checks_failed": sum(not c.passed for c in checks)},
                "scenarios": [scenario.to_json() for scenario in self.scenarios]}


async def run_scenarios(scenarios: ScenarioFile, options: EvalOptions, progress: Progress) -> Report:
    """Run every scenario of ``scenarios`` against ``options.url``; an :class:`EvalError` for a URL that names no
    endpoint, or scenarios its protocol cannot play (the server is only reached per scenario)."""
    where = endpoint(options.url)
    try:
        scenarios.check_protocol(where.protocol)
    except ValueError as exc:
        raise EvalError(str(exc)) from None
    report = Report(options.url, where.protocol, datetime.now(UTC).isoformat(timespec="seconds"))
    started = time.monotonic()
    model = options.model or where.model or scenarios.model or DEFAULT_MODEL
    slots = asyncio.Semaphore(options.parallel)

    async def connect() -> Link:
        return await open_link(where, api_key=options.api_key, model=model)

    async def run(scenario: Scenario) -> ScenarioRecord:
        async with slots:
            progress.scenario(scenario.name, len(scenario.turns))
            return await run_scenario(scenarios, scenario, where.protocol, connect, progress)

    report.scenarios = list(await asyncio.gather(*(run(scenario) for scenario in scenarios.scenarios)))  # file order
    report.seconds = time.monotonic() - started
    return report


async def run_scenario(scenarios: ScenarioFile, scenario: Scenario, protocol: Wire,
                       connect: Callable[[], Any], progress: Progress) -> ScenarioRecord:
    """One scenario on a connection of its own (``connect()``); its record, checks included."""
    records = [TurnRecord(number + 1, turn) for number, turn in enumerate(scenario.turns)]
    result = ScenarioRecord(scenario.name, records)
    started = time.monotonic()
    played = 0
    try:
        audio = await _audio(scenarios, scenario)
        link: Link = await connect()
        run: _Run = LiveRun(link, scenario, records) if protocol is Wire.LIVE else RealtimeRun(link, scenario, records)
        try:
            await run.open()
            for number in range(len(records)):
                await run.play(number, audio[number])
                played += 1
                progress.turn()
            await run.finish()
        finally:
            await run.close()
    except TimeoutError:
        if played == len(records):
            result.error = f"delayed tool results were not answered within {scenario.timeout_s:g} s"
    except EvalError as exc:
        result.error = str(exc)
    for record in records:
        record.checks = check_turn(record) if record.ran else [
            Check("ran", False, "not run: " + (result.error or "an earlier turn got no complete answer"))]
    for _ in range(played, len(records)):
        progress.turn()
    result.seconds = time.monotonic() - started
    return result


async def _audio(scenarios: ScenarioFile, scenario: Scenario) -> list[PCM | None]:
    """The audio of each turn, made in a worker thread; an :class:`EvalError` for a voice or a file that fails."""
    from voxcall.speech import SpeechModelError

    try:
        return [await asyncio.to_thread(turn_audio, scenarios, turn) for turn in scenario.turns]
    except (SpeechModelError, WavError) as exc:
        raise EvalError(f"cannot make the audio of a turn: {exc}") from None
