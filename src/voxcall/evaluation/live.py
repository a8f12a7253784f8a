"""One scenario over GPT-Live (``/v1/live/sessions``): the caller streams audio, the voice answers when it decides.

GPT-Live has no responses, no ids and no ``.done`` events: what the voice says after a turn began belongs to that
turn, and an answer is over once the voice has been quiet for :data:`~voxcall.client.gpt_live.QUIET_S` after it
spoke, with no delegated task waiting for its answer. A task the voice delegates to the client
(``session.delegation.created``) is recorded as a call of ``delegate`` (its task text as ``task`` when the server
says it, as voxcall does) and answered with a ``session.commentary.append`` carrying the scenario's
``tool_results.delegate`` (at once, or ``delay_ms`` later). When the caller speaks over the voice, the speaker
stops: the server stops the voice itself (there is no truncate in GPT-Live).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from typing import Any

from voxcall.audio.codec import decode_audio, encode_audio
from voxcall.client.gpt_live import MODEL, QUIET_S
from voxcall.evaluation.audio import FORMAT, PCM, Microphone, Speaker
from voxcall.evaluation.connect import EvalError, Event, Link
from voxcall.evaluation.record import CallRecord, TurnRecord
from voxcall.evaluation.scenario import Scenario, ToolResult, TurnKind


class LiveRun:
    """Plays ``scenario`` over the GPT-Live ``link``, filling ``records`` (one per turn)."""

    def __init__(self, link: Link, scenario: Scenario, records: list[TurnRecord], *, quiet_s: float = QUIET_S) -> None:
        self.link, self.scenario, self.records = link, scenario, records
        self.quiet_s = quiet_s
        self.current = 0
        self.speaker = Speaker()
        self.mic = Microphone(self._append, live=True)
        self._last_output = 0.0
        self._started: asyncio.Future[Event] | None = None
        self._waiting: list[CallRecord] = []  # results sent, no audio since
        self._busy: set[asyncio.Task[None]] = set()
        self._late: set[asyncio.Task[None]] = set()
        self._changed = asyncio.Event()
        self._failure: str | None = None
        self._reader: asyncio.Task[None] | None = None
        self._next_id = 0

    async def open(self) -> None:
        """``session.start`` with the scenario's session (client delegation), then the microphone."""
        self._reader = asyncio.create_task(self._read(), name="eval-live-reader")
        spec = self.scenario.session
        session: dict[str, Any] = {"model": MODEL, "audio": {"format": FORMAT.to_wire()},
                                   "delegation": {"type": "client"}}
        if spec.instructions is not None:
            session["instructions"] = spec.instructions
        if spec.voice is not None:
            session["audio"]["output"] = {"voice": spec.voice}
        self._started = asyncio.get_running_loop().create_future()
        await self.send({"type": "session.start", "session": session})
        try:
            started = await asyncio.wait_for(asyncio.shield(self._started), self.scenario.timeout_s)
        except TimeoutError:
            raise EvalError(f"the server sent no session.started within {self.scenario.timeout_s:g} s") from None
        if started.get("type") == "error":
            raise EvalError(f"the server refused the session: {(started.get('error') or {}).get('message')}")
        self.mic.start()

    async def play(self, number: int, pcm: PCM | None) -> None:
        """Play turn ``number`` and wait until the voice has answered it."""
        record = self.records[number]
        turn = record.turn
        if turn.barge_in_ms is not None:
            await self._until(lambda: self.speaker.heard_ms(number - 1, time.monotonic()) >= turn.barge_in_ms
                              or self._quiet(), self.scenario.timeout_s)
        else:
            await self._until(lambda: self._quiet() and time.monotonic() >= self.speaker.quiet_at(),
                              self.scenario.timeout_s)
        self.current, record.ran = number, True
        if turn.kind is TurnKind.SILENCE:
            assert turn.silence_ms is not None
            await asyncio.sleep(turn.silence_ms / 1000)
            record.origin = None
        else:
            assert pcm is not None
            record.origin = await self.mic.say(pcm)
        try:
            await self._until(lambda: self._answered(record), self.scenario.timeout_s)
        except TimeoutError:
            record.problem(f"no complete answer within {self.scenario.timeout_s:g} s")
            raise

    async def finish(self) -> None:
        late = [task for task in self._late if not task.done()]
        if late:
            await asyncio.wait_for(asyncio.gather(*late), self.scenario.timeout_s)
        await self._until(self._quiet, self.scenario.timeout_s)

    async def close(self) -> None:
        await self.mic.stop()
        tasks = [t for t in (self._reader, *self._busy, *self._late) if t is not None]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await self.link.close()

    async def send(self, event: Event) -> None:
        self._next_id += 1
        await self.link.send({"event_id": f"eval_{self._next_id}", **event})

    async def _append(self, pcm: PCM) -> None:
        await self.send({"type": "session.input_audio.append", "audio": encode_audio(pcm, FORMAT)})

    # -- waiting ------------------------------------------------------------------------------------------------

    def _quiet(self) -> bool:
        """The voice has said nothing for ``quiet_s`` and no task waits for its answer."""
        return not self._busy and time.monotonic() - self._last_output >= self.quiet_s

    def _answered(self, record: TurnRecord) -> bool:
        spoke = record.first_audio is not None or record.first_text is not None
        return self._quiet() and (spoke or record.turn.kind is TurnKind.SILENCE)

    async def _until(self, ready: Any, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while not ready():
            if self._failure is not None:
                raise EvalError(self._failure)
            now = time.monotonic()
            if now >= deadline:
                raise TimeoutError
            self._changed.clear()
            wake = [deadline - now, max(0.01, self._last_output + self.quiet_s - now)]
            if self.speaker.quiet_at() > now:
                wake.append(self.speaker.quiet_at() - now)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._changed.wait(), min(wake))

    # -- reading ------------------------------------------------------------------------------------------------

    async def _read(self) -> None:
        try:
            async for event in self.link.events():
                await self._handle(event)
                self._changed.set()
            self._failure = self._failure or "the server closed the connection"
        except Exception as exc:
            self._failure = f"cannot follow the server's events ({type(exc).__name__}: {exc})"
        if self._started is not None and not self._started.done():
            self._started.set_exception(EvalError(self._failure or "the connection ended"))
        self._changed.set()

    async def _handle(self, event: Event) -> None:
        kind, now = event.get("type"), time.monotonic()
        record = self.records[self.current]
        if kind == "session.started" or (kind == "error" and self._started and not self._started.done()):
            if self._started is not None and not self._started.done():
                self._started.set_result(event)
        elif kind == "session.input_transcript.delta":
            record.heard += event.get("delta") or ""
            self.speaker.stop(now)  # the caller speaks: the speaker stops (the server stops the voice)
        elif kind == "session.output_transcript.delta":
            self._last_output = now
            record.first_text = record.first_text or now
            record.say("voice", event.get("delta") or "")
        elif kind == "session.output_audio.delta":
            self._last_output = now
            record.first_audio = record.first_audio or now
            samples = len(decode_audio(event.get("delta") or "", FORMAT))
            self.speaker.play(f"answer-{self.current}", self.current, samples, now)
            for call in self._waiting:
                call.to_audio_ms = round((now - (call.result_at or now)) * 1000)
            self._waiting.clear()
        elif kind == "session.delegation.created":
            self._delegated(event.get("delegation") or {}, record)
        elif kind == "error":
            record.problem(f"server error: {(event.get('error') or {}).get('message', 'unknown error')}")
        elif kind == "session.closed":
            self._failure = "the server closed the session"

    def _delegated(self, delegation: dict[str, Any], record: TurnRecord) -> None:
        task = delegation.get("voxcall_task")
        call = CallRecord(str(delegation.get("id", "")), "delegate",
                          json.dumps({"task": task} if task is not None else {}), "delegate")
        record.calls.append(call)
        result = self.scenario.tool_results.get("delegate") or ToolResult(
            error="the scenario gives no result for delegate")
        tasks = self._late if result.delay_ms else self._busy
        task_ = asyncio.create_task(self._answer(call, result))
        tasks.add(task_)

        def done(finished: asyncio.Task[None]) -> None:
            tasks.discard(finished)
            if not finished.cancelled() and (exc := finished.exception()) is not None:
                self._failure = self._failure or f"answering a delegation failed: {exc}"
            self._changed.set()

        task_.add_done_callback(done)

    async def _answer(self, call: CallRecord, result: ToolResult) -> None:
        await asyncio.sleep(result.delay_ms / 1000)
        await self.send({"type": "session.commentary.append", "content": result.text, "delegation_id": call.call_id})
        call.output, call.error, call.result_at = result.output, result.error, time.monotonic()
        self._waiting.append(call)
