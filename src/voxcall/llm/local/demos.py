"""Demonstration turns for a local model, generated from the tool schemas: a request and the call that answers it.

Tiny models follow examples far better than rules, so the conversation a local model sees opens with one short
exchange per tool (a user request built from the tool's description and example values, the assistant's
``<code>`` call with those values) and, when the model may choose, a few exchanges that need no tool. Nothing here
is written for a particular tool: the values come from the schema (``examples``, ``enum``, ``default``, type).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from voxcall.llm.base import Message
from voxcall.llm.code_format import RESULT_FORMAT
from voxcall.tools.codecalls.prompt import example_arguments, format_code_call
from voxcall.tools.schema import Tool
from voxcall.tools.validation import ArgumentError, validate_arguments

PLAIN_DEMOS: tuple[tuple[str, str], tuple[str, str], tuple[str, str]] = (
    ("Hello, how are you?", "I'm doing well, thanks. How can I help?"),
    ("What is the capital of France?", "The capital of France is Paris."),
    ("Thanks, that's all.", "You're welcome. Have a nice day!"),
)
"""Exchanges that need no tool (a greeting, a question, a thank-you), shown when the model may answer in words:
they teach it that not every request is a call (tool-agnostic, so the same for every session)."""

_MARKUP = re.compile(r"[`*]+")  # code and emphasis marks, which nobody says


def demo_messages(tools: Sequence[Tool], *, with_plain: bool, with_follow_up: bool = False) -> list[Message]:
    """The demonstration turns for ``tools``: per tool a request and its call and, ``with_plain``, the exchanges
    that need no tool around them; ``with_follow_up`` (with ``with_plain``) ends them with the last call's result
    and a reply that relays it.

    For a tiny model the order weighs more than the content: after a last demonstration that is a call,
    SmolLM2-135M called a tool on almost every request; after one in words, on almost none. A greeting first,
    the calls split by a question, and a thank-you last balanced it; but it then answers every tool result with
    "You're welcome". Ending with a relayed result makes it relay results, at the cost of fewer correct first
    calls (``benchmarks/bench_local_tools.py`` measures both).
    """
    calls = [turn for tool in tools for turn in _call_demo(tool)]
    if not with_plain:
        return calls
    greeting, question, thanks = ([Message(role="user", text=request), Message(role="assistant", text=answer)]
                                  for request, answer in PLAIN_DEMOS)
    middle = 2 * (len(calls) // 4)  # the first half of the tools, in whole exchanges
    if not with_follow_up or not calls:
        return [*greeting, *calls[:middle], *question, *calls[middle:], *thanks]
    last = next(tool for tool in reversed(tools) if _call_demo(tool))
    follow_up = [Message(role="user", text=RESULT_FORMAT.format(name=last.name, output="done")),
                 Message(role="assistant", text="Done.")]
    return [*greeting, *calls[:middle], *thanks, *question, *calls[middle:], *follow_up]


def demo_request(tool: Tool, arguments: dict[str, Any]) -> str:
    """A user request for ``tool`` with ``arguments``: its description's first sentence, then the values.

    ``Get the weather for a city`` with ``{"city": "Paris"}`` becomes ``Get the weather for a city: Paris.``
    """
    summary = _MARKUP.sub("", tool.description.strip().split("\n")[0]).split(". ")[0].rstrip(" .")
    summary = summary or tool.code_name.replace("_", " ").capitalize()
    values = ", ".join(_spoken(v) for v in arguments.values())
    return f"{summary}: {values}." if values else f"{summary}."


def _call_demo(tool: Tool) -> list[Message]:
    """The request and the call for ``tool``; none when the schema yields no valid example (a demonstration of
    a call that would be refused would teach the wrong thing)."""
    arguments = example_arguments(tool)
    try:
        validate_arguments(tool, arguments)
    except ArgumentError:
        return []
    return [Message(role="user", text=demo_request(tool, arguments)),
            Message(role="assistant", text=format_code_call(tool, arguments))]


def _spoken(value: Any) -> str:
    """A value as a user would say it: strings bare, lists joined, everything else as JSON would write it."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, list):
        return " and ".join(_spoken(v) for v in value)
    return str(value)
