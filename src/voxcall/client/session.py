"""The client side of one Realtime conversation: send turns, follow the server's events, run client tools.

:class:`ClientSession` reads the server's events in one task and keeps just enough state to know when the
conversation is *idle*: nobody is speaking, no transcription or response is pending, and every tool round trip
is finished. A tool call runs as soon as its arguments are complete; the outputs are sent in call order, and when
the response is done one ``response.create`` asks for the follow-up. What happens is told to a :class:`Reporter`
as it happens; output audio goes to an optional sink.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Awaitable, Callable, Coroutine
from types import TracebackType
from typing import Any, Protocol, Self

import numpy as np
import numpy.typing as npt

from voxcall.audio.codec import decode_audio, encode_audio
from voxcall.audio.formats import PCM24K
from voxcall.client.tools import ClientTools
from voxcall.client.transport import ClientError, Transport
from voxcall.serving.frames import Message

AUDIO_FORMAT = PCM24K
"""The wire format the client sends and asks for: PCM16 mono at 24 kHz (the Realtime default)."""

REPLY_TIMEOUT_S = 15.0
"""How long the server may take to greet the client or answer a ``session.update``."""

AudioSink = Callable[[str, npt.NDArray[np.int16]], None]
"""Receives output audio: the assistant item's id and a chunk of 24 kHz samples."""



ANSWER_TIMEOUT = 120.0
"""Seconds a client waits for a complete answer unless told otherwise."""

class Reporter(Protocol):
    """Is told what happens in the conversation, as it happens (a console, a test's recorder …)."""

    def user_transcript(self, text: str) -> None:
        """What the server heard the user say."""

    def assistant_delta(self, text: str) -> None:
        """The next piece of the assistant's text or spoken transcript."""

    def assistant_done(self) -> None:
        """The assistant's message is complete."""

    def tool_call(self, name: str, arguments: str) -> None:
        """The model called a client tool (``arguments`` is JSON)."""

    def tool_output(self, name: str, output: str) -> None:
        """A tool's output is being sent back."""

    def error(self, message: str) -> None:
        """Something went wrong (a server error event, a failed response …)."""


class ClientSession:
    """One conversation over a :class:`Transport`; create it inside the event loop and use it as an async context
    manager.

    ``strict`` (headless use) makes every server error or failed response fail :meth:`wait_idle`; otherwise
    (live use) errors are only reported and the conversation goes on.
    """

    def __init__(self, transport: Transport, *, reporter: Reporter, tools: ClientTools | None = None,
                 on_audio: AudioSink | None = None,
                 on_speech_started: Callable[[], Awaitable[None]] | None = None, strict: bool = True) -> None:
        self.transport = transport
        self.reporter = reporter
        self.tools = tools
        self.strict = strict
        self.session: dict[str, Any] = {}
        """The session object the server last sent (``session.created`` / ``session.updated``)."""
        self.responses: list[dict[str, Any]] = []
        """Every response the server finished, as its ``response.done`` carried it."""
        self.turns_heard = 0
        self.failure: str | None = None
        self.ended = asyncio.Event()
        self._on_audio = on_audio
        self._on_speech_started = on_speech_started
        self._ids = (f"client_evt_{n}" for n in itertools.count(1))
        self._created: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._update: tuple[str, asyncio.Future[None]] | None = None
        self._speaking = False
        self._transcribing: set[str] = set()
        self._expect_response = False
        self._active: str | None = None
        self._outputs: asyncio.Task[None] | None = None  # the last link of this response's output chain
        self._tasks: set[asyncio.Task[None]] = set()
        self._idle = asyncio.Event()
        self._closing = False
        self._reader: asyncio.Task[None] | None = None

    # -- lifecycle ----------------------------------------------------------------------------------------------

    async def __aenter__(self) -> Self:
        self._reader = asyncio.create_task(self._read(), name="voxcall-client-reader")
        try:
            await self._reply(self._created, "session.created")
        except BaseException:
            await self.close()
            raise
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> None:
        await self.close()

    async def close(self) -> None:
        """Stop reading, cancel running tools and close the transport."""
        self._closing = True
        tasks = [task for task in (self._reader, *self._tasks) if task is not None]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await self.transport.close()

    # -- what the client does -----------------------------------------------------------------------------------

    async def update(self, **fields: Any) -> None:
        """Send ``session.update`` with ``fields`` and wait for ``session.updated``.

        Raises :class:`ClientError` with the server's message when it refuses them.
        """
        event_id = next(self._ids)
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._update = (event_id, done)
        await self.send({"type": "session.update", "event_id": event_id, "session": {"type": "realtime", **fields}})
        await self._reply(done, "session.updated")

    async def sync(self) -> None:
        """Wait until the server has handled every event sent so far.

        A ``session.update`` that changes nothing is answered in order, after everything before it: once it is
        back, the server has seen all the audio and reported every turn boundary in it.
        """
        await self.update()

    async def say(self, text: str) -> None:
        """A typed user turn: a user message, then ``response.create``."""
        self._expect_response = True
        self._refresh()
        await self.send({"type": "conversation.item.create", "item": {
            "type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}})
        await self.send({"type": "response.create"})

    async def append(self, pcm: npt.NDArray[np.int16]) -> None:
        """Send 24 kHz samples to the server's input audio buffer."""
        await self.send({"type": "input_audio_buffer.append", "audio": encode_audio(pcm, AUDIO_FORMAT)})

    async def send(self, event: Message) -> None:
        """Send one client event as is (``conversation.item.truncate`` …)."""
        await self.transport.send(event)

    async def wait_idle(self, timeout: float) -> None:
        """Wait until the conversation is idle (see the module docstring).

        Raises :class:`ClientError` on timeout, when the connection ended, or (``strict``) after an error.
        """
        try:
            async with asyncio.timeout(timeout):
                await self._idle.wait()
        except TimeoutError:
            raise ClientError(f"no complete answer within {timeout:g} s") from None
        if self.failure is not None:
            raise ClientError(self.failure)

    @property
    def turn_detection(self) -> dict[str, Any] | None:
        """The session's server VAD settings; None with push-to-talk."""
        detection: dict[str, Any] | None = self.session.get("audio", {}).get("input", {}).get("turn_detection")
        return detection

    # -- reading ------------------------------------------------------------------------------------------------

    async def _read(self) -> None:
        try:
            async for ev in self.transport.events():
                await self._handle(ev)
                self._refresh()
        except ClientError as exc:
            self._fail(str(exc), fatal=True)
        except Exception as exc:  # a server event of an unexpected shape: say so rather than hang
            self._fail(f"cannot follow the server's events ({type(exc).__name__}: {exc})", fatal=True)
        finally:
            if not self._closing:
                self._fail("the server closed the connection", fatal=True)
            for pending in (self._created, self._update[1] if self._update else None):
                if pending is not None and not pending.done():
                    pending.set_exception(ClientError(self.failure or "the connection ended"))
            self.ended.set()

    async def _handle(self, ev: Message) -> None:
        kind = ev.get("type")
        if kind in ("session.created", "session.updated"):
            self.session = ev.get("session") or {}
            self._resolve(kind)
        elif kind == "input_audio_buffer.speech_started":
            self._speaking = True
            self.turns_heard += 1
            if self._on_speech_started is not None:
                await self._on_speech_started()
        elif kind == "input_audio_buffer.speech_stopped":
            self._speaking = False
        elif kind == "input_audio_buffer.committed":
            self._transcribing.add(ev["item_id"])
        elif kind == "conversation.item.input_audio_transcription.completed":
            self._transcribed(ev["item_id"], ev.get("transcript") or "")
        elif kind == "conversation.item.input_audio_transcription.failed":
            self._transcribing.discard(ev["item_id"])
            self._fail("the server could not transcribe the speech")
        elif kind == "response.created":
            self._expect_response = False
            self._active = ev["response"]["id"]
        elif kind in ("response.output_audio_transcript.delta", "response.output_text.delta"):
            self.reporter.assistant_delta(ev["delta"])
        elif kind in ("response.output_audio_transcript.done", "response.output_text.done"):
            self.reporter.assistant_done()
        elif kind == "response.output_audio.delta" and self._on_audio is not None:
            self._on_audio(ev["item_id"], decode_audio(ev["delta"], AUDIO_FORMAT))
        elif kind == "response.function_call_arguments.done":
            self._start_call(ev["call_id"], ev["name"], ev.get("arguments") or "{}")
        elif kind == "response.done":
            self._response_done(ev["response"])
        elif kind == "error":
            self._server_error(ev.get("error") or {})

    def _transcribed(self, item_id: str, transcript: str) -> None:
        self._transcribing.discard(item_id)
        self.reporter.user_transcript(transcript)
        detection = self.turn_detection
        if transcript.strip() and detection is not None and detection.get("create_response", True):
            self._expect_response = True  # the server answers a turn it heard words in

    def _response_done(self, response: dict[str, Any]) -> None:
        self.responses.append(response)
        self._active = None
        self._expect_response = False
        status = response.get("status")
        if status == "failed":
            error = (response.get("status_details") or {}).get("error") or {}
            self._fail(f"the response failed: {error.get('message', 'unknown error')}")
        outputs, self._outputs = self._outputs, None
        if outputs is not None:
            self._track(self._follow_up(outputs, respond=status == "completed"))

    def _server_error(self, error: dict[str, Any]) -> None:
        message = str(error.get("message") or "unknown error")
        if self._update is not None and error.get("event_id") == self._update[0]:
            _, done = self._update
            self._update = None
            if not done.done():
                done.set_exception(ClientError(f"the server refused the session settings: {message}"))
            return
        self._fail(f"server error: {message}")

    def _resolve(self, kind: str) -> None:
        if kind == "session.created" and not self._created.done():
            self._created.set_result(None)
        elif kind == "session.updated" and self._update is not None:
            _, done = self._update
            self._update = None
            if not done.done():
                done.set_result(None)

    # -- client tools -------------------------------------------------------------------------------------------

    def _start_call(self, call_id: str, name: str, arguments: str) -> None:
        """Run the call now; its output is sent after the outputs of the calls before it."""
        self.reporter.tool_call(name, arguments)
        self._outputs = self._track(self._send_output(self._outputs, call_id, name, arguments))

    async def _send_output(self, previous: asyncio.Task[None] | None, call_id: str, name: str,
                           arguments: str) -> None:
        if self.tools is None:
            output = f"error: this client has no tool named {name!r}"
        else:
            output = await self.tools.run(name, arguments)
        if previous is not None:
            await previous
        self.reporter.tool_output(name, output)
        await self.send({"type": "conversation.item.create",
                          "item": {"type": "function_call_output", "call_id": call_id, "output": output}})

    async def _follow_up(self, outputs: asyncio.Task[None], *, respond: bool) -> None:
        """After a response with calls: once every output is sent, ask for the follow-up (unless the response
        was cut short, or the user has already moved on)."""
        await outputs
        if respond and not (self._speaking or self._active or self._expect_response or self._transcribing):
            self._expect_response = True
            await self.send({"type": "response.create"})

    def _track(self, work: Coroutine[Any, Any, None]) -> asyncio.Task[None]:
        task = asyncio.create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._task_done)
        self._refresh()
        return task

    def _task_done(self, task: asyncio.Task[None]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and (exc := task.exception()) is not None:
            self._fail(str(exc) if isinstance(exc, ClientError) else f"client tool handling failed: {exc!r}",
                       fatal=True)
        self._refresh()

    # -- state --------------------------------------------------------------------------------------------------

    def _refresh(self) -> None:
        """Recompute whether the conversation is idle (or has failed, which also ends a wait)."""
        busy = (self._speaking or self._transcribing or self._expect_response or self._active is not None
                or self._tasks)
        if busy and self.failure is None and not self.ended.is_set():
            self._idle.clear()
        else:
            self._idle.set()

    def _fail(self, message: str, *, fatal: bool | None = None) -> None:
        if self.failure is not None:
            return  # the first failure ends the conversation; what follows from it is noise
        self.reporter.error(message)
        if self.strict if fatal is None else fatal:
            self.failure = message
        self._refresh()

    async def _reply(self, future: asyncio.Future[None], what: str) -> None:
        try:
            async with asyncio.timeout(REPLY_TIMEOUT_S):
                await future
        except TimeoutError:
            raise ClientError(f"the server sent no {what} within {REPLY_TIMEOUT_S:g} s") from None
