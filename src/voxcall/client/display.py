"""The console view of a conversation: user transcripts, the assistant's words as they stream, tool calls.

::

    you › what is 12 times 8
    assistant › Let me work that out.
      → calculator({"op": "mul", "a": 12, "b": 8})
      ← calculator: 96.0
    assistant › The answer is 96.0.
"""

from __future__ import annotations

from rich.console import Console
from rich.text import Text

_MAX_SHOWN = 300  # characters of a tool's arguments or output shown


class ConsoleReporter:
    """A :class:`~voxcall.client.session.Reporter` that prints to a rich console (stdout by default)."""

    def __init__(self, console: Console | None = None) -> None:
        self.console = console or Console(highlight=False)
        self._open = False  # an assistant line is being written

    def user_transcript(self, text: str) -> None:
        self._line(Text.assemble(("you › ", "bold cyan"), text or "(nothing heard)"))

    def assistant_delta(self, text: str) -> None:
        if not self._open:
            self.console.print(Text("assistant › ", "bold green"), end="")
            self._open = True
        self.console.print(Text(text), end="", soft_wrap=True)

    def assistant_done(self) -> None:
        self._close()

    def tool_call(self, name: str, arguments: str) -> None:
        self._line(Text.assemble(("  → ", "bold magenta"), (name, "magenta"), f"({_clip(arguments)})"))

    def tool_output(self, name: str, output: str) -> None:
        self._line(Text.assemble(("  ← ", "bold magenta"), (name, "magenta"), f": {_clip(output)}"))

    def error(self, message: str) -> None:
        self._line(Text.assemble(("error: ", "bold red"), message))

    def note(self, message: str) -> None:
        """A line about the client itself (connecting, listening …), dimmed."""
        self._line(Text(message, "dim"))

    def _line(self, text: Text) -> None:
        self._close()
        self.console.print(text, soft_wrap=True)

    def _close(self) -> None:
        if self._open:
            self.console.print()
            self._open = False


def _clip(text: str) -> str:
    return text if len(text) <= _MAX_SHOWN else text[:_MAX_SHOWN - 1] + "…"
