"""``voxcall chat``: one typed turn against an in-process pipeline, for trying models, prompts and tool formats.

No server and no socket: a :class:`~voxcall.core.session.Session` runs in this process (the same code a server
runs per connection), reached through :class:`~voxcall.client.transport.InProcessTransport`, and the tool round
trips are driven by the same :class:`~voxcall.client.session.ClientSession` as ``voxcall talk``. The tools (by default a
:class:`~voxcall.tools.ToolRegistry` with the built-in calculator) are run by the client side of the conversation.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from voxcall.client.display import ConsoleReporter
from voxcall.client.session import ANSWER_TIMEOUT, ClientSession
from voxcall.client.tools import ClientTools
from voxcall.client.transport import InProcessTransport
from voxcall.config import SessionOptions
from voxcall.llm import LLMBackend
from voxcall.tools import ToolRegistry
from voxcall.tools.builtin import register_builtins

CHAT_TOOLS = ("calculator",)
"""The built-in tools ``voxcall chat`` offers."""


@dataclass(frozen=True)
class ChatStats:
    """What one chat turn cost: wall time, responses (a tool round trip makes two) and tokens."""

    seconds: float
    responses: int
    input_tokens: int
    cached_tokens: int
    output_tokens: int

    def __str__(self) -> str:
        return (f"{self.seconds:.2f} s · {self.responses} response{'s' if self.responses != 1 else ''} · "
                f"{self.input_tokens} prompt tokens ({self.cached_tokens} cached) · {self.output_tokens} output")


def builtin_tools() -> ClientTools:
    """The :data:`CHAT_TOOLS`, run by a fresh registry."""
    registry = ToolRegistry()
    register_builtins(registry, CHAT_TOOLS)
    return ClientTools(registry)


async def chat(backend: LLMBackend, prompt: str, options: SessionOptions, tools: ClientTools,
               reporter: ConsoleReporter, *, timeout: float = ANSWER_TIMEOUT) -> ChatStats:
    """Ask ``prompt`` in a fresh in-process session answering with ``backend`` and offering ``tools``; print the
    turn with ``reporter``.

    Raises :class:`~voxcall.client.transport.ClientError` when the turn fails or takes longer than ``timeout``.
    """
    started = time.perf_counter()
    transport = await InProcessTransport.open(backend, options)
    async with ClientSession(transport, reporter=reporter, tools=tools) as session:
        await session.update(tools=tools.definitions, output_modalities=["text"])
        reporter.user_transcript(prompt)
        await session.say(prompt)
        await session.wait_idle(timeout)
    return _stats(time.perf_counter() - started, session.responses)


def _stats(seconds: float, responses: list[dict[str, Any]]) -> ChatStats:
    usages = [response.get("usage") or {} for response in responses]
    return ChatStats(seconds=seconds, responses=len(responses),
                     input_tokens=sum(u.get("input_tokens", 0) for u in usages),
                     cached_tokens=sum((u.get("input_token_details") or {}).get("cached_tokens", 0) for u in usages),
                     output_tokens=sum(u.get("output_tokens", 0) for u in usages))
