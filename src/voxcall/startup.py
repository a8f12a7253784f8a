"""The startup display of ``voxcall serve``: models loading one by one, notes about choices made for the user,
and a one-line summary of what loaded in how long.

:class:`Startup` is what :mod:`voxcall.server` reports to; without a console it only times, so tests and
embedders get the same steps without a display.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from rich.console import Console
from rich.progress import Progress, SpinnerColumn, TaskID, TextColumn
from rich.text import Text


@dataclass
class Step:
    """One thing loaded, and how long it took."""

    name: str
    seconds: float = 0.0


class Startup:
    """Shows the models loading one by one (a rich progress display on ``console``), times them and sums them up.

    Use it as a context manager around the loading: the display runs inside it. Notes (a model that is missing,
    a fallback) are printed as they are made, and kept in :attr:`notes`. Without a console it only times.
    """

    def __init__(self, console: Console | None = None) -> None:
        self.console = console
        self.steps: list[Step] = []
        self.notes: list[str] = []
        self._progress = (Progress(SpinnerColumn(finished_text="[green]✓"), TextColumn("{task.description}"),
                                   TextColumn("[dim]{task.elapsed:.1f} s"), console=console)
                          if console is not None else None)

    def __enter__(self) -> Startup:
        if self._progress is not None:
            self._progress.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        if self._progress is not None:
            self._progress.stop()

    @contextmanager
    def step(self, name: str) -> Iterator[Step]:
        """Time loading ``name``; the step may be renamed inside (once the loaded model tells its name)."""
        step = Step(name)
        task = self._progress.add_task(f"loading {name}", total=1) if self._progress is not None else None
        started = time.perf_counter()
        try:
            yield step
        except BaseException:
            self._end(task, f"[red]✗ {step.name}", done=False)
            raise
        step.seconds = time.perf_counter() - started
        self.steps.append(step)
        self._end(task, step.name, done=True)

    def _end(self, task: TaskID | None, description: str, *, done: bool) -> None:
        if self._progress is not None and task is not None:
            self._progress.stop_task(task)
            self._progress.update(task, description=description, completed=1 if done else 0)

    def note(self, message: str) -> None:
        """Tell the user about a choice made for them."""
        self.notes.append(message)
        if self.console is not None:
            self.console.print(Text.assemble(("note: ", "bold yellow"), message), soft_wrap=True)

    def summary(self) -> str:
        """``loaded in 2.4 s: Silero VAD 0.0 s · Whisper tiny.en 1.0 s · …``."""
        total = sum(step.seconds for step in self.steps)
        return f"loaded in {total:.1f} s: " + " · ".join(f"{step.name} {step.seconds:.1f} s" for step in self.steps)
