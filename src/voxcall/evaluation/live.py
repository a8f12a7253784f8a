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
import functools
import json
import time
from collections.abc import Callable
from typing import Any

from voxcall.audio.codec import decode_audio, encode_audio
from voxcall.client.gpt_live import MODEL, QUIET_S
from voxcall.evaluation.audio import FORMAT, PCM, Microphone, Speaker
from voxcall.evaluation.channel import Channel
from voxcall.evaluation.connect import EvalError, Event, Link
from voxcall.evaluation.record import CallRecord, TurnRecord
from voxcall.evaluation.scenario import Scenario, ToolResult, TurnKind


class LiveRun:
    """Plays ``scenario`` over the GPT-Live ``link``, filling ``records`` (one per turn)."""

    def __init__(self, link: Link, scenario: Scenario, records: list[TurnRecord], *, quiet_s: float = QUIET_S) -> None:
        self.channel, self.scenario, self.records = Channel(link), scenario, records
        self.quiet_s = quiet_s
        self.current = 0
        self.speaker = Speaker()
        self.mic = Microphone(self._append, live=True)
        self._last_output = 0.0
        self._waiting: list[CallRecord] = []  # results sent, no audio since

    async def open(self) -> None:
        """``session.start`` with the scenario's session (client delegation), then the microphone."""
        started = self.channel.expect("session.started")
        self.channel.read(self._handle)
        spec = self.scenario.session
        session: dict[str, Any] = {"model": MODEL, "audio": {"format": FORMAT.to_wire()},
                                   "delegation": {"type": "client"}}
        if spec.instructions is not None:
            session["instructions"] = spec.instructions
        if spec.voice is not None:
            session["audio"]["output"] = {"voice": spec.voice}
        await self.channel.send({"type": "session.start", "session": session})
        reply = await self.channel.reply(started, "session.started", self.scenario.timeout_s)
        if reply.get("type") == "error":
            raise EvalError(f"the server refused the session: {(reply.get('error') or {}).get('message')}")
        self.mic.start()

    async def play(self, number: int, pcm: PCM | None) -> None:
        """Play turn ``number`` and wait until the voice has answered it."""
        record = self.records[number]
        turn = record.turn
        barge_in = turn.barge_in_ms
        ready = (functools.partial(self._heard, number - 1, barge_in) if barge_in is not None
                 else lambda: self._quiet() and time.monotonic() >= self.speaker.quiet_at())
        try:
            await self._until(ready, self.scenario.timeout_s)
        except TimeoutError:
            raise EvalError(f"the voice did not fall quiet before turn {number + 1}") from None
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
        await self.channel.wait_late(self.scenario.timeout_s)
        await self._until(self._quiet, self.scenario.timeout_s)

    async def close(self) -> None:
        await self.mic.stop()
        await self.channel.close()

    async def _append(self, pcm: PCM) -> None:
        await self.channel.send({"type": "session.input_audio.append", "audio": encode_audio(pcm, FORMAT)})

    # -- waiting ------------------------------------------------------------------------------------------------

    def _quiet(self) -> bool:
        """The voice has said nothing for ``quiet_s`` and no task waits for its answer."""
        return not self.channel.busy and time.monotonic() - self._last_output >= self.quiet_s

    def _heard(self, owner: int, ms: int) -> bool:
        """``ms`` of the answer to turn ``owner`` has been heard, or the voice fell quiet before."""
        return self.speaker.heard_ms(owner, time.monotonic()) >= ms or self._quiet()

    def _answered(self, record: TurnRecord) -> bool:
        spoke = record.first_audio is not None or record.first_text is not None
        return self._quiet() and (spoke or record.turn.kind is TurnKind.SILENCE)

    async def _until(self, ready: Callable[[], bool], timeout: float) -> None:
        """Wait until ``ready()``, also when the voice has been quiet long enough or the speaker falls quiet."""

        def wake() -> float:
            now = time.monotonic()
            times = [self._last_output + self.quiet_s - now, self.speaker.quiet_at() - now]
            return min(t for t in times if t > 0) if any(t > 0 for t in times) else self.quiet_s

        await self.channel.until(ready, timeout, wake)

    # -- reading ------------------------------------------------------------------------------------------------

    def _handle(self, event: Event) -> None:
        kind, now = event.get("type"), time.monotonic()
        record = self.records[self.current]
        if kind in ("session.started", "error") and self.channel.answer("session.started", event):
            return
        if kind == "session.input_transcript.delta":
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
            self.channel.fail("the server closed the session")

    def _delegated(self, delegation: dict[str, Any], record: TurnRecord) -> None:
        task = delegation.get("voxcall_task")
        call = CallRecord(str(delegation.get("id", "")), "delegate",
                          json.dumps({"task": task} if task is not None else {}), "delegate")
        record.calls.append(call)
        result = self.scenario.tool_results.get("delegate") or ToolResult(
            error="the scenario gives no result for delegate")
        self.channel.later(self._answer(call, result), busy=not result.delay_ms)

    async def _answer(self, call: CallRecord, result: ToolResult) -> None:
        await asyncio.sleep(result.delay_ms / 1000)
        await self.channel.send({"type": "session.commentary.append", "content": result.text,
                                 "delegation_id": call.call_id})
        call.output, call.error, call.result_at = result.output, result.error, time.monotonic()
        self._waiting.append(call)
