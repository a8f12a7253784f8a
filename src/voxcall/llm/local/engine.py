"""``Engine``: what runs the local model for a :class:`~voxcall.llm.local.backend.LocalBackend`.

An engine evaluates prompts and samples tokens; it decides nothing. It drives the reply's
:func:`~voxcall.llm.local.driver.reply_steps` (which does), answering each of its steps, and pushes what the reply
says into a :class:`Sink`, then a :class:`Finished` (or the error). One engine implements it,
:class:`~voxcall.llm.local.server_engine.ServerEngine`, over two transports: llama.cpp's server in this process
(:class:`~voxcall.llm.local.embedded.EmbeddedServer`, on a private socket) and one elsewhere (over TCP).
"""

from __future__ import annotations

import asyncio
import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from voxcall.llm.local.plan import Plan
    from voxcall.llm.local.vocabulary import Vocabulary


@dataclass(frozen=True, slots=True)
class Finished:
    """An engine's last word on a reply: why generation stopped and the token counts."""

    reason: str  # "stop", "length" or "cancelled"
    input_tokens: int
    cached_tokens: int
    output_tokens: int


Item = str | Finished | BaseException
"""What a sink carries: a piece of the reply's text, its end, or the error that ended it."""


@dataclass(slots=True, eq=False)
class Sink:
    """The engine's side of one stream: pushes items onto the stream's asyncio queue (from any thread), and says
    when to stop (``cancel``: the stream ended, or the backend closed)."""

    loop: asyncio.AbstractEventLoop
    queue: asyncio.Queue[Item]
    cancel: threading.Event = field(default_factory=threading.Event)

    def put(self, item: Item) -> None:
        try:
            self.loop.call_soon_threadsafe(self.queue.put_nowait, item)
        except RuntimeError:  # the event loop is gone: nobody is listening any more
            self.cancel.set()


class Engine(Protocol):
    """Runs a local model: the vocabulary that plans are made with, generation, warming and closing."""

    vocabulary: Vocabulary
    """The model's tokenizer, chat template and token masks, read from its GGUF file."""
    n_ctx: int
    """The tokens of context one reply has (a prompt and its reply together)."""

    def start(self, plan: Plan, sink: Sink) -> asyncio.Future[None]:
        """Generate the reply ``plan`` describes into ``sink``; the future is cancelled when the stream ends, and
        generation also stops when ``sink.cancel`` is set."""
        ...

    async def warm(self, tokens: list[int]) -> None:
        """Evaluate ``tokens`` ahead of a prompt that begins with them; give way to any reply that starts."""
        ...

    def pending_s(self, prompt: list[int]) -> float | None:
        """About how many seconds the model will read before it answers after ``prompt`` (None: no idea yet)."""
        ...

    async def aclose(self) -> None:
        """Stop every generation and free the model (or the connection)."""
        ...
