"""The client side of one GPT-Live conversation (``/v1/live/sessions``): start it, stream audio, follow the voice.

GPT-Live has no turns on the wire: no commit, no response ids, no ``.done`` events. The server decides when the user's
turn ends and answers; :class:`LiveConversation` knows that an answer is over when the voice has been quiet for
:data:`QUIET_S` after it spoke, with no delegated task waiting for its answer. What the server heard arrives as
``session.input_transcript.delta`` fragments: they are shown as one user line when the voice begins to answer.

A task the voice delegates to the application (``session.delegation.created``) is shown like a tool call and
answered at once with a ``session.commentary.append`` saying that this client runs no tasks, so that the voice
tells the user instead of waiting for the delegation's timeout.
"""

from __future__ import annotations

import asyncio
import itertools
import json
from collections.abc import Callable
from types import TracebackType
from typing import Any, Self

import numpy as np
import numpy.typing as npt

from voxcall.audio.codec import decode_audio, encode_audio
from voxcall.client.session import AUDIO_FORMAT, REPLY_TIMEOUT_S, AudioSink, Reporter
from voxcall.client.transport import ClientError, Transport
from voxcall.serving.frames import Message

MODEL = "gpt-live-1"
"""The ``session.model`` the client asks for (voxcall reports it back; the voice is the server's LLM)."""

QUIET_S = 3.0
"""Seconds of silence from the voice after which its answer counts as over."""

ANSWER_TO_TASKS = ("voxcall talk runs no tasks for the voice, so this one cannot be done here; tell the user so, "
                   "briefly.")
"""The commentary that answers every delegated task."""

ASK = "Answer what the user just asked."
"""The commentary that has the voice answer a typed question (GPT-Live has no user text event)."""


class LiveConversation:
    """One GPT-Live session over a :class:`~voxcall.client.transport.Transport`; create it inside the event loop
    and use it as an async context manager (which closes the transport).

    ``strict`` (headless use) makes a server ``error`` fail :meth:`wait_answered`; otherwise (live use) errors are
    only reported. ``on_user_speech`` is called for each fragment of the user's transcript (a microphone client
    stops its local playback then: the server has stopped the voice already).
    """

    def __init__(self, transport: Transport, *, reporter: Reporter, on_audio: AudioSink | None = None,
                 on_user_speech: Callable[[], object] | None = None, strict: bool = True,
                 quiet_s: float = QUIET_S) -> None:
        self.transport = transport
        self.reporter = reporter
        self.strict = strict
        self.session: dict[str, Any] = {}
        """The session resource of ``session.started``."""
        self.heard = ""
        """Everything the server heard the user say, joined."""
        self.failure: str | None = None
        self.ended = asyncio.Event()
        self._on_audio = on_audio
        self._on_user_speech = on_user_speech
        self._quiet_s = quiet_s
        self._ids = (f"client_evt_{n}" for n in itertools.count(1))
        self._started: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._activity = asyncio.Event()  # set by each event of the conversation
        self._heard_line = ""  # the user's words not shown yet
        self._spoke = False  # the voice has said something since the last task was answered
        self._speaking = False  # an assistant line is open
        self._reader: asyncio.Task[None] | None = None
        self._closing = False

    async def __aenter__(self) -> Self:
        self._reader = asyncio.create_task(self._read(), name="voxcall-live-client-reader")
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> None:
        await self.close()

    async def close(self) -> None:
        """Stop reading and close the transport."""
        self._closing = True
        if self._reader is not None:
            self._reader.cancel()
            await asyncio.gather(self._reader, return_exceptions=True)
        await self.transport.close()

    # -- what the client does -----------------------------------------------------------------------------------

    async def start(self, *, instructions: str | None = None, question: str | None = None) -> None:
        """``session.start`` (PCM16 at 24 kHz both ways; ``question`` as the startup input, a user message) and
        wait for ``session.started``. Raises :class:`ClientError` with the server's message when it refuses."""
        session: dict[str, Any] = {"model": MODEL, "audio": {"format": AUDIO_FORMAT.to_wire()}}
        if instructions is not None:
            session["instructions"] = instructions
        if question is not None:
            session["input"] = [{"type": "message", "role": "user",
                                 "content": [{"type": "input_text", "text": question}]}]
        await self.send({"type": "session.start", "session": session})
        try:
            async with asyncio.timeout(REPLY_TIMEOUT_S):
                await asyncio.shield(self._started)
        except TimeoutError:
            raise ClientError(f"the server sent no session.started within {REPLY_TIMEOUT_S:g} s; is the URL a "
                              "GPT-Live endpoint (ws://HOST:PORT/v1/live/sessions)?") from None

    async def ask(self) -> None:
        """Have the voice answer the startup question: a ``session.commentary.append`` with no delegation."""
        self._spoke = False
        await self.send({"type": "session.commentary.append", "content": ASK, "delegation_id": None})

    async def append(self, pcm: npt.NDArray[np.int16]) -> None:
        """Send 24 kHz samples as ``session.input_audio.append``."""
        await self.send({"type": "session.input_audio.append", "audio": encode_audio(pcm, AUDIO_FORMAT)})

    async def send(self, event: Message) -> None:
        """Send one client event (with an ``event_id``, so that an error names it)."""
        await self.transport.send({"event_id": next(self._ids), **event})

    async def wait_answered(self, timeout: float) -> None:
        """Wait until the voice has answered: it spoke, then was quiet for ``quiet_s`` with no task waiting.

        Raises :class:`ClientError` on timeout, when the connection ended, or (``strict``) after an error.
        """
        try:
            async with asyncio.timeout(timeout):
                while not self.ended.is_set() and not (self.strict and self.failure is not None):
                    self._activity.clear()
                    try:
                        await asyncio.wait_for(self._activity.wait(), self._quiet_s if self._spoke else None)
                    except TimeoutError:
                        break  # the voice spoke, then was quiet
        except TimeoutError:
            raise ClientError(f"no complete answer within {timeout:g} s") from None
        self._end_line()
        if self.failure is not None:
            raise ClientError(self.failure)

    async def wait_heard(self, timeout: float) -> bool:
        """Whether the server hears the user (a transcript fragment, or the voice answering) within ``timeout``."""
        try:
            async with asyncio.timeout(timeout):
                while not (self.heard or self._spoke or self.ended.is_set()):
                    self._activity.clear()
                    await self._activity.wait()
        except TimeoutError:
            return False
        return bool(self.heard or self._spoke)

    # -- reading ------------------------------------------------------------------------------------------------

    async def _read(self) -> None:
        try:
            async for ev in self.transport.events():
                await self._handle(ev)
                self._activity.set()
        except ClientError as exc:
            self._fail(str(exc))
        except Exception as exc:  # a server event of an unexpected shape: say so rather than hang
            self._fail(f"cannot follow the server's events ({type(exc).__name__}: {exc})")
        finally:
            if not self._closing and self.failure is None:
                self._fail("the server closed the connection")
            if not self._started.done():
                self._started.set_exception(ClientError(self.failure or "the connection ended"))
            self.ended.set()
            self._activity.set()

    async def _handle(self, ev: Message) -> None:
        kind = ev.get("type")
        if kind == "session.started":
            self.session = ev.get("session") or {}
            if not self._started.done():
                self._started.set_result(None)
        elif kind == "session.input_transcript.delta":
            self._end_line()
            self.heard += ev["delta"]
            self._heard_line += ev["delta"]
            if self._on_user_speech is not None:
                self._on_user_speech()
        elif kind == "session.output_transcript.delta":
            self._show_heard()
            self._spoke = self._speaking = True
            self.reporter.assistant_delta(ev["delta"])
        elif kind == "session.output_audio.delta":
            self._spoke = True
            if self._on_audio is not None:
                self._on_audio("live", decode_audio(ev["delta"], AUDIO_FORMAT))
        elif kind == "session.delegation.created":
            await self._answer_task(ev["delegation"]["id"])
        elif kind == "error":
            error = ev.get("error") or {}
            message = str(error.get("message") or error)
            self.reporter.error(message)
            if self.strict:
                self._fail(message)
            if not self._started.done():  # a refused session.start: the server closes the connection
                self._started.set_exception(ClientError(message))
        elif kind == "session.closed":
            self._closing = True  # the server ends the session (close requested, or expired): no failure

    async def _answer_task(self, delegation_id: str) -> None:
        self._show_heard()
        self._speaking = False
        self.reporter.tool_call("delegate", json.dumps({"delegation_id": delegation_id}))
        self.reporter.tool_output("delegate", ANSWER_TO_TASKS)
        self._spoke = False  # the answer to the task is still to come
        await self.send({"type": "session.commentary.append", "content": ANSWER_TO_TASKS,
                         "delegation_id": delegation_id})

    def _show_heard(self) -> None:
        if self._heard_line:
            self.reporter.user_transcript(self._heard_line.strip())
            self._heard_line = ""

    def _end_line(self) -> None:
        if self._speaking:
            self.reporter.assistant_done()
            self._speaking = False

    def _fail(self, message: str) -> None:
        if self.failure is None:
            self.failure = message
