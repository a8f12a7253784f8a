"""One scenario over the Realtime protocol, played as a caller would: speech in real time, answers heard on a
speaker, client tools answered, barge-ins where the scenario puts them.

Each response belongs to a turn, its *owner*: the runner notes an owner whenever it asks for a response
(``response.create``) or the server commits a spoken turn it will answer (server VAD), and ``response.created``
takes the oldest owner noted; a response nobody asked for belongs to the turn in progress. The response's text,
audio, calls and status go to its owner, so an answer that comes late (a tool result delayed across the user's next
turn) is still checked against the turn that called the tool.

A turn ends when the conversation is *idle*: the user is not speaking, no response is asked for or running, no tool
answer is being sent, and the speaker has played everything. A delayed tool result does not keep the conversation
busy: it is sent when its delay is over, followed by a ``response.create`` as soon as nobody speaks.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Callable
from typing import Any

from voxcall.audio.codec import decode_audio, encode_audio
from voxcall.client.talk import TAIL_MARGIN_MS
from voxcall.evaluation.audio import FORMAT, PCM, Microphone, Speaker
from voxcall.evaluation.channel import Channel
from voxcall.evaluation.connect import EvalError, Event, Link
from voxcall.evaluation.record import CallRecord, ResponseRecord, TurnRecord
from voxcall.evaluation.scenario import Scenario, ToolResult, TurnKind

WIRE_FORMAT = FORMAT.to_wire()
_TEXT_DELTAS = frozenset({"response.output_text.delta", "response.output_audio_transcript.delta"})


class RealtimeRun:
    """Plays ``scenario`` over ``link``, filling ``records`` (one per turn)."""

    def __init__(self, link: Link, scenario: Scenario, records: list[TurnRecord]) -> None:
        self.channel, self.scenario, self.records = Channel(link), scenario, records
        self.current = 0  # the turn in progress (index into records)
        self.speaker = Speaker()
        self.mic = Microphone(self._append, live=True)
        self.vad: dict[str, Any] | None = None
        self._owners: deque[int] = deque()  # turns waiting for the responses they asked for, oldest first
        self._responses: dict[str, tuple[int, ResponseRecord]] = {}
        self._active: str | None = None
        self._speaking = False
        self._speech_starts = 0
        self._transcribing: set[str] = set()
        self._transcribes = False
        self._heard_items: dict[str, int] = {}  # committed user audio items → the turn that said them
        self._mcp_done: dict[str, float] = {}
        self._audio_items: dict[str, tuple[float, float | None]] = {}  # item → (added, first audio)
        self._chains: dict[str, asyncio.Task[None]] = {}  # per response: its client calls' outputs, in order

    # -- the run ------------------------------------------------------------------------------------------------

    async def open(self) -> None:
        """Read the greeting, send the scenario's session and start the microphone (silence under server VAD) when
        the scenario speaks."""
        created = self.channel.expect("session.created")
        self.channel.read(self._handle)
        await self.channel.reply(created, "session.created", self.scenario.timeout_s)
        spec = self.scenario.session
        audio_in: dict[str, Any] = {"format": WIRE_FORMAT}
        if not spec.keeps_turn_detection:
            audio_in["turn_detection"] = spec.turn_detection
        session: dict[str, Any] = {"type": "realtime", "output_modalities": [spec.output],
                                   "audio": {"input": audio_in, "output": {"format": WIRE_FORMAT}},
                                   "tools": list(spec.tools)}
        if spec.instructions is not None:
            session["instructions"] = spec.instructions
        if spec.voice is not None:
            session["audio"]["output"]["voice"] = spec.voice
        updated = await self._update(session, refused="the server refused the scenario's session")
        audio = (updated.get("session") or {}).get("audio") or {}
        self.vad = (audio.get("input") or {}).get("turn_detection")
        self._transcribes = bool((audio.get("input") or {}).get("transcription"))
        self.mic.live = self.vad is not None
        if any(turn.spoken for turn in self.scenario.turns):  # a typed conversation needs no microphone
            self.mic.start()

    async def play(self, number: int, pcm: PCM | None) -> None:
        """Play turn ``number`` (its audio, when spoken, made beforehand) and wait until it is answered."""
        record = self.records[number]
        turn = record.turn
        timeout = self.scenario.timeout_s
        if turn.barge_in_ms is not None:
            await self._until_heard(number - 1, turn.barge_in_ms, record)
        else:
            try:
                await self._until(self._settled, timeout)
            except TimeoutError:
                raise EvalError(f"the answer before turn {number + 1} did not end ({self._waiting_for()})") from None
        self.current, record.ran = number, True
        if turn.kind is TurnKind.TEXT:
            await self.channel.send({"type": "conversation.item.create", "item": {
                "type": "message", "role": "user", "content": [{"type": "input_text", "text": turn.text}]}})
            await self._respond(number, record)
        elif turn.kind is TurnKind.SILENCE:
            assert turn.silence_ms is not None
            await asyncio.sleep(turn.silence_ms / 1000)
        else:
            assert pcm is not None
            await self._speak(number, record, pcm)
        try:
            await self._until(self._idle, timeout)
        except TimeoutError:
            record.problem(f"no complete answer within {timeout:g} s ({self._waiting_for()})")
            raise

    async def finish(self) -> None:
        """Wait for the delayed tool results and what answers them, and for the server to have said everything,
        then fill in the tool → audio figures."""
        await self.channel.wait_late(self.scenario.timeout_s)
        await self._until(self._settled, self.scenario.timeout_s)
        # a server answers a session.update after everything before it: what it sent after the last response.done
        # (voxcall's voxcall.response.timing) is read by then
        await self._update({"type": "realtime"}, refused="the server refused an empty session.update")
        for record in self.records:
            for call in record.calls:
                call.to_audio_ms = self._to_audio(call)

    async def close(self) -> None:
        await self.mic.stop()
        await self.channel.close()

    # -- sending ------------------------------------------------------------------------------------------------

    async def _append(self, pcm: PCM) -> None:
        await self.channel.send({"type": "input_audio_buffer.append", "audio": encode_audio(pcm, FORMAT)})

    async def _update(self, session: dict[str, Any], *, refused: str) -> Event:
        event_id = self.channel.event_id()
        reply = self.channel.expect(event_id)
        await self.channel.link.send({"type": "session.update", "event_id": event_id, "session": session})
        answer = await self.channel.reply(reply, "session.updated", self.scenario.timeout_s)
        if answer.get("type") == "error":
            raise EvalError(f"{refused}: {(answer.get('error') or {}).get('message', 'unknown error')}")
        return answer

    async def _respond(self, owner: int, record: TurnRecord | None = None) -> None:
        """Ask for a response for turn ``owner`` (``record``: timed from this request)."""
        self._owners.append(owner)
        if record is not None:
            record.origin = time.monotonic()
        await self.channel.send({"type": "response.create"})

    async def _speak(self, number: int, record: TurnRecord, pcm: PCM) -> None:
        before = self._speech_starts
        if self.vad is None:  # push-to-talk: the caller holds the button, speaks, releases
            self._barge_in()
            if self._active is not None:
                await self.channel.send({"type": "response.cancel"})
            await self.channel.send({"type": "input_audio_buffer.clear"})
            record.origin = await self.mic.say(pcm)
            await self.channel.send({"type": "input_audio_buffer.commit"})
            await self._respond(number)
            return
        record.origin = await self.mic.say(pcm)
        await asyncio.sleep((int(self.vad.get("silence_duration_ms") or 500) + TAIL_MARGIN_MS) / 1000)
        await self._update({"type": "realtime"}, refused="the server refused an empty session.update")
        if self._speech_starts == before:
            record.problem("the server heard no speech (no input_audio_buffer.speech_started)")

    def _barge_in(self) -> None:
        """The caller speaks: the speaker stops, and the item playing is truncated to what was heard (a Realtime
        client truncates the assistant's message itself); the turn it answers was cut short."""
        now = time.monotonic()
        playing = self.speaker.playing(now)
        if playing is None:
            return
        item_id, heard_ms, owner = playing
        self.records[owner].cut_at_ms = self.speaker.heard_ms(owner, now)
        self.speaker.stop(now)
        self.channel.later(self.channel.send({"type": "conversation.item.truncate", "item_id": item_id,
                                              "content_index": 0, "audio_end_ms": heard_ms}), busy=True)

    # -- waiting ------------------------------------------------------------------------------------------------

    def _idle(self) -> bool:
        return not (self._speaking or self._owners or self._active or self.channel.busy
                    or (self._transcribes and self._transcribing))

    def _settled(self) -> bool:
        return self._idle() and time.monotonic() >= self.speaker.quiet_at()

    def _waiting_for(self) -> str:
        if self._speaking:
            return "the server still hears the user speaking"
        if self._owners:
            return "a response was asked for and none came"
        if self._active:
            return f"the response {self._active} never ended"
        return "tool answers still being sent" if self.channel.busy else "transcriptions never came"

    async def _until(self, ready: Callable[[], bool], timeout: float) -> None:
        """Wait until ``ready()``, also when the speaker falls quiet (TimeoutError after ``timeout``)."""
        await self.channel.until(ready, timeout, wake=lambda: self.speaker.quiet_at() - time.monotonic())

    async def _until_heard(self, owner: int, ms: int, record: TurnRecord) -> None:
        """Wait until ``ms`` of the answer to turn ``owner`` has been heard (or it ended shorter)."""

        def ready() -> bool:
            now = time.monotonic()
            if self.speaker.heard_ms(owner, now) >= ms:
                return True
            answered = not (self._owners or self._active) and self._responses_of(owner)
            return bool(answered) and self.speaker.queued_ms(owner) < ms

        def wake() -> float | None:  # with the audio there, the speaker gets to ``ms`` on its own
            heard = self.speaker.heard_ms(owner, time.monotonic())
            return (ms - heard) / 1000 if self.speaker.queued_ms(owner) >= ms else None

        try:
            await self.channel.until(ready, self.scenario.timeout_s, wake)
        except TimeoutError:
            record.notes.append(f"the answer to turn {owner + 1} never reached {ms} ms of audio")
            return
        if self.speaker.heard_ms(owner, time.monotonic()) < ms:
            record.notes.append(f"the answer to turn {owner + 1} ended after {self.speaker.queued_ms(owner)} ms of "
                                f"audio, before the barge-in at {ms} ms")

    def _responses_of(self, owner: int) -> list[ResponseRecord]:
        return [response for turn, response in self._responses.values() if turn == owner]

    # -- reading ------------------------------------------------------------------------------------------------

    def _handle(self, event: Event) -> None:
        kind, now = event.get("type"), time.monotonic()
        record = self.records[self.current]
        if kind in ("session.created", "session.updated", "error") and self._reply(event):
            return
        if kind == "input_audio_buffer.speech_started":
            self._speaking = True
            self._speech_starts += 1
            self._barge_in()
        elif kind == "input_audio_buffer.speech_stopped":
            self._speaking = False
        elif kind == "input_audio_buffer.committed":
            self._heard_items[event["item_id"]] = self.current
            if self.vad is not None and self.vad.get("create_response", True):
                self._owners.append(self.current)
            self._transcribing.add(event["item_id"])
        elif kind == "conversation.item.input_audio_transcription.completed":
            self._transcribed(event["item_id"], event.get("transcript") or "")
        elif kind == "conversation.item.input_audio_transcription.failed":
            self._transcribed(event["item_id"], "")
            record.problem("the server could not transcribe the speech")
        elif kind == "response.created":
            owner = self._owners.popleft() if self._owners else self.current
            response = ResponseRecord(event["response"]["id"])
            self._responses[response.response_id] = (owner, response)
            self.records[owner].responses.append(response)
            self._active = response.response_id
        elif kind == "response.output_item.added" and (event.get("item") or {}).get("type") == "message":
            self._audio_items.setdefault(event["item"]["id"], (now, None))
        elif kind == "response.output_audio.delta":
            self._audio(event, now)
        elif kind in _TEXT_DELTAS:
            owner_record = self._owner_record(event)
            owner_record.first_text = owner_record.first_text or now
            owner_record.say(event.get("item_id", ""), event.get("delta") or "")
        elif kind in ("response.mcp_call.completed", "response.mcp_call.failed"):
            self._mcp_done[event["item_id"]] = now
        elif kind == "response.output_item.done":
            self._item_done(event, now)
        elif kind == "response.done":
            self._response_done(event["response"])
        elif kind == "voxcall.response.timing":
            known = self._responses.get(event.get("response_id", ""))
            if known is not None:
                known[1].server_timing = {key: event.get(key) for key in ("timings_ms", "tools")}
        elif kind == "error":
            message = (event.get("error") or {}).get("message", "unknown error")
            record.problem(f"server error: {message}")

    def _reply(self, event: Event) -> bool:
        """Resolve the wait ``event`` answers: the greeting, a ``session.update`` (answered in order: the oldest
        one waiting), or an ``error`` naming the client event it answers. False: nobody waits for it."""
        kind = event.get("type")
        key: str | None
        if kind == "session.created":
            key = kind
        elif kind == "error":
            key = (event.get("error") or {}).get("event_id")
        else:
            key = next((k for k in self.channel.replies if k != "session.created"), None)
        return self.channel.answer(key, event)

    def _transcribed(self, item_id: str, transcript: str) -> None:
        self._transcribes = True  # it does transcribe: wait for the transcripts of the turns it hears
        self._transcribing.discard(item_id)
        owner = self._heard_items.get(item_id, self.current)
        record = self.records[owner]
        record.heard = f"{record.heard} {transcript}".strip()

    def _owner_of(self, event: Event) -> int:
        """The turn the response of ``event`` belongs to (the turn in progress when it names none known)."""
        known = self._responses.get(event.get("response_id", ""))
        return known[0] if known is not None else self.current

    def _owner_record(self, event: Event) -> TurnRecord:
        return self.records[self._owner_of(event)]

    def _audio(self, event: Event, now: float) -> None:
        owner = self._owner_of(event)
        record = self.records[owner]
        record.first_audio = record.first_audio or now
        item_id = event.get("item_id", "")
        added, first = self._audio_items.get(item_id, (now, None))
        self._audio_items[item_id] = (added, first or now)
        samples = len(decode_audio(event.get("delta") or "", FORMAT))
        self.speaker.play(item_id, owner, samples, now)

    def _item_done(self, event: Event, now: float) -> None:
        item = event.get("item") or {}
        record = self._owner_record(event)
        if item.get("type") == "mcp_call":
            error = item.get("error")
            record.calls.append(CallRecord(item.get("id", ""), item.get("name", ""), item.get("arguments") or "",
                                           "server", output=item.get("output"),
                                           error=None if error is None else str(error),
                                           result_at=self._mcp_done.get(item.get("id", ""), now)))
        elif item.get("type") == "function_call":
            call = CallRecord(item.get("call_id", ""), item.get("name", ""), item.get("arguments") or "", "client")
            record.calls.append(call)
            self._answer(self._owner_of(event), event.get("response_id", ""), call,
                         self.scenario.tool_results.get(call.name))

    def _response_done(self, response: dict[str, Any]) -> None:
        owner, record = self._responses.get(response.get("id", ""), (self.current, None))
        if record is None:
            return
        details = response.get("status_details") or {}
        record.status = response.get("status") or "completed"
        record.reason = details.get("reason") or (details.get("error") or {}).get("message")
        if record.status == "failed":
            self.records[owner].problem(f"the response failed: {record.reason or 'unknown error'}")
        if self._active == record.response_id:
            self._active = None
        chain = self._chains.pop(record.response_id, None)
        if chain is not None:
            self.channel.later(self._follow_up(chain, owner, ask=record.status == "completed"), busy=True)

    # -- client tools -------------------------------------------------------------------------------------------

    def _answer(self, owner: int, response_id: str, call: CallRecord, result: ToolResult | None) -> None:
        """Send the call's output as the scenario says: in call order, or ``delay_ms`` later on its own (then
        asking for the answer to it for turn ``owner``)."""
        if result is None:
            result = ToolResult(error=f"the scenario gives no result for {call.name}")
        if result.delay_ms:
            self.channel.later(self._late_answer(call, result, owner), busy=False)
            return
        previous = self._chains.get(response_id)
        self._chains[response_id] = self.channel.later(self._send_output(previous, call, result), busy=True)

    async def _send_output(self, previous: asyncio.Task[None] | None, call: CallRecord, result: ToolResult) -> None:
        if previous is not None:
            await previous
        await self.channel.send({"type": "conversation.item.create", "item": {
            "type": "function_call_output", "call_id": call.call_id, "output": result.text}})
        call.output, call.error, call.result_at = result.output, result.error, time.monotonic()

    async def _follow_up(self, outputs: asyncio.Task[None], owner: int, *, ask: bool) -> None:
        """Once a response's outputs are sent, ask for the follow-up (not when it was cut short, nor when the user
        has already moved on: that turn's answer sees the outputs)."""
        await outputs
        if ask and not (self._speaking or self._active or self._owners):
            await self._respond(owner)

    async def _late_answer(self, call: CallRecord, result: ToolResult, owner: int) -> None:
        await asyncio.sleep(result.delay_ms / 1000)
        await self._send_output(None, call, result)
        try:
            await self.channel.until(lambda: not (self._speaking or self._active or self._owners),
                                     self.scenario.timeout_s)
        except TimeoutError:
            raise EvalError(f"the delayed result of {call.name} found no moment to be answered") from None
        await self._respond(owner)

    def _to_audio(self, call: CallRecord) -> int | None:
        """From the call's result to the first audio of an answer item added after it."""
        if call.result_at is None:
            return None
        after = [first for added, first in self._audio_items.values() if first is not None and added >= call.result_at]
        return round((min(after) - call.result_at) * 1000) if after else None

