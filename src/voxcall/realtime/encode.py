"""The Realtime protocol's server events for a session's typed events: GA shapes, as the SDKs' models define them.

One small function per event type, looked up by the event's class; each builds the plain dict the socket gets (see
:mod:`voxcall.realtime.server_events` for why dicts and not the SDK's models). Audio is encoded here, in the format the
event carries.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from voxcall.audio.codec import encode_audio
from voxcall.core.events import (
    UNSAID,
    ArgumentsDelta,
    ArgumentsDone,
    AudioCleared,
    AudioCommitted,
    ContentPartAdded,
    ContentPartDone,
    Event,
    IdleTimedOut,
    ItemAdded,
    ItemDeleted,
    ItemDone,
    ItemRetrieved,
    ItemTruncated,
    OutputAudio,
    OutputAudioCleared,
    OutputAudioDone,
    OutputItemAdded,
    OutputItemDone,
    OutputTextDelta,
    OutputTextDone,
    OutputTranscriptDelta,
    OutputTranscriptDone,
    ResponseCreated,
    ResponseDone,
    ResponseState,
    ResponseTimed,
    ServerCallProgress,
    SettingsApplied,
    SpeechStarted,
    SpeechStopped,
    SpokenClause,
    ToolCallMoved,
    ToolCallRejected,
    TranscriptCompleted,
    TranscriptDelta,
    TranscriptFailed,
    TurnCapped,
)
from voxcall.core.ids import new_id
from voxcall.core.settings import SessionSettings
from voxcall.realtime.settings import settings_wire
from voxcall.serving.frames import Message, event

Wire = Message

_LEDGER_EVENTS = {"proposed": "voxcall.tool_call.proposed", "running": "voxcall.tool_call.started",
                  "done": "voxcall.tool_call.completed", "failed": "voxcall.tool_call.completed",
                  "timed_out": "voxcall.tool_call.completed", "cancelled": "voxcall.tool_call.cancelled"}
"""The event of each ledger move (``completed`` says how in its ``status``)."""


class RealtimeEncoder:
    """Turns a session's events into Realtime server events; ``session.updated`` names the session ``session_id``
    served as ``model``."""

    def __init__(self, session_id: str, model: str) -> None:
        self.session_id = session_id
        self.model = model

    def session(self, settings: SessionSettings) -> Wire:
        """The GA session object: the settings' fields with the session's id and model."""
        return {"type": "realtime", "object": "realtime.session", "id": self.session_id, "model": self.model,
                **settings_wire(settings)}

    def __call__(self, ev: Event) -> Wire | None:
        """The server event for ``ev`` (None: the protocol has none, such as a spoken clause)."""
        encode = _ENCODERS.get(type(ev))
        if encode is not None:  # the hot path: one lookup (streamed deltas are most of a session's events)
            return encode(ev)
        if isinstance(ev, SettingsApplied):
            return event("session.updated", session=self.session(ev.settings))
        if isinstance(ev, SpokenClause):
            return None
        raise TypeError(f"no Realtime server event for {type(ev).__name__}")


def response_object(state: ResponseState) -> Wire:
    """The GA ``RealtimeResponse`` object of ``state``."""
    usage = state.usage
    return {"object": "realtime.response", "id": state.id, "status": state.status,
            "status_details": None if state.status_details is None else dict(state.status_details),
            "output": [item.to_wire() for item in state.output], "conversation_id": state.conversation_id,
            "output_modalities": list(state.output_modalities),
            "max_output_tokens": "inf" if state.max_output_tokens is None else state.max_output_tokens,
            "metadata": None if state.metadata is None else dict(state.metadata),
            "usage": None if usage is None else {
                "total_tokens": usage.input_tokens + usage.output_tokens, "input_tokens": usage.input_tokens,
                "output_tokens": usage.output_tokens,
                "input_token_details": {"cached_tokens": usage.cached_tokens, "text_tokens": usage.input_tokens},
                "output_token_details": {"text_tokens": usage.output_tokens}}}


def _item_done(ev: ItemDone) -> Wire:
    if ev.previous_item_id is UNSAID:
        return event("conversation.item.done", item=ev.item.to_wire())
    return event("conversation.item.done", previous_item_id=ev.previous_item_id, item=ev.item.to_wire())


def _retrieved(ev: ItemRetrieved) -> Wire:
    item = ev.item.to_wire()
    if ev.tool_call is not None:
        item["voxcall_tool_call"] = ev.tool_call  # the ledger's state of the call, and its moves
    return event("conversation.item.retrieved", item=item)


def _part(spoken: bool, text: str) -> Wire:
    return {"type": "audio", "transcript": text} if spoken else {"type": "text", "text": text}


def _content(kind: str, ev: Any, **fields: Any) -> Wire:
    """An event about part ``content_index`` of an output message."""
    return {"type": kind, "event_id": new_id("event"), "response_id": ev.response_id, "item_id": ev.item_id,
            "output_index": ev.output_index, "content_index": ev.content_index, **fields}


def _delta(kind: str) -> Callable[[Any], Wire]:
    """The encoder of a streamed text delta of type ``kind`` (the most frequent events: built in one step)."""
    def encode(ev: Any) -> Wire:
        return {"type": kind, "event_id": new_id("event"), "response_id": ev.response_id, "item_id": ev.item_id,
                "output_index": ev.output_index, "content_index": ev.content_index, "delta": ev.delta}
    return encode


def _audio_delta(ev: OutputAudio) -> Wire:
    return {"type": "response.output_audio.delta", "event_id": new_id("event"), "response_id": ev.response_id,
            "item_id": ev.item_id, "output_index": ev.output_index, "content_index": ev.content_index,
            "delta": encode_audio(ev.pcm, ev.fmt)}


def _arguments_delta(ev: ArgumentsDelta) -> Wire:
    if ev.server:  # ``obfuscation`` (stream padding; voxcall pads nothing): the JS Agents SDK needs the field
        return event("response.mcp_call_arguments.delta", response_id=ev.response_id, item_id=ev.item_id,
                     output_index=ev.output_index, delta=ev.delta, obfuscation="")
    return event("response.function_call_arguments.delta", response_id=ev.response_id, item_id=ev.item_id,
                 output_index=ev.output_index, call_id=ev.call_id, delta=ev.delta)


def _arguments_done(ev: ArgumentsDone) -> Wire:
    if ev.server:
        return event("response.mcp_call_arguments.done", response_id=ev.response_id, item_id=ev.item_id,
                     output_index=ev.output_index, arguments=ev.arguments)
    return event("response.function_call_arguments.done", response_id=ev.response_id, item_id=ev.item_id,
                 output_index=ev.output_index, call_id=ev.call_id, name=ev.name, arguments=ev.arguments)


def _ledger(ev: ToolCallMoved) -> Wire:
    """A ledger move, with the fields that move knows (see :class:`~voxcall.core.events.ToolCallMoved`)."""
    fields: Wire = {"tool": ev.tool}
    state = ev.state.value
    if state in ("proposed", "running"):
        fields["params"] = ev.params
        if state == "running" and ev.server:
            fields["round"] = ev.round
    elif state == "cancelled":
        fields["reason"] = ev.reason
    else:
        fields.update(result=ev.result, status=ev.status)
        if ev.server:
            fields.update(cached=ev.cached, round=ev.round, repeat_of=ev.repeat_of)
    return event(_LEDGER_EVENTS[state], response_id=ev.response_id, call_id=ev.call_id, item_id=ev.item_id,
                 state=state, **fields)


def _timed(ev: ResponseTimed) -> Wire:
    tools = []
    for tool in ev.tools:
        wire: Wire = {"call_id": tool.call_id, "name": tool.name}
        if tool.duration_ms is not None:
            wire["duration_ms"] = tool.duration_ms
            if tool.to_audio_ms is not None:
                wire["to_audio_ms"] = tool.to_audio_ms
        tools.append(wire)
    return event("voxcall.response.timing", response_id=ev.response_id, timings_ms=dict(ev.stages_ms), tools=tools)


_ENCODERS: dict[type[Any], Callable[[Any], Wire]] = {
    ItemAdded: lambda ev: event("conversation.item.added", previous_item_id=ev.previous_item_id,
                                item=ev.item.to_wire()),
    ItemDone: _item_done,
    ItemDeleted: lambda ev: event("conversation.item.deleted", item_id=ev.item_id),
    ItemRetrieved: _retrieved,
    ItemTruncated: lambda ev: event("conversation.item.truncated", item_id=ev.item_id,
                                    content_index=ev.content_index, audio_end_ms=ev.audio_end_ms),
    SpeechStarted: lambda ev: event("input_audio_buffer.speech_started", audio_start_ms=ev.audio_start_ms,
                                    item_id=ev.item_id),
    SpeechStopped: lambda ev: event("input_audio_buffer.speech_stopped", audio_end_ms=ev.audio_end_ms,
                                    item_id=ev.item_id),
    TurnCapped: lambda ev: event("voxcall.input_audio_buffer.turn_capped", item_id=ev.item_id,
                                 audio_end_ms=ev.audio_end_ms, max_turn_ms=ev.max_turn_ms),
    AudioCommitted: lambda ev: event("input_audio_buffer.committed", previous_item_id=ev.previous_item_id,
                                     item_id=ev.item_id),
    AudioCleared: lambda ev: event("input_audio_buffer.cleared"),
    IdleTimedOut: lambda ev: event("input_audio_buffer.timeout_triggered", audio_start_ms=ev.audio_start_ms,
                                   audio_end_ms=ev.audio_end_ms, item_id=ev.item_id),
    TranscriptDelta: lambda ev: event("conversation.item.input_audio_transcription.delta", item_id=ev.item_id,
                                      content_index=0, delta=ev.delta),
    TranscriptCompleted: lambda ev: event(
        "conversation.item.input_audio_transcription.completed", item_id=ev.item_id, content_index=0,
        transcript=ev.transcript, languages=[{"code": ev.language}], usage={"type": "duration", "seconds": ev.seconds}),
    TranscriptFailed: lambda ev: event(
        "conversation.item.input_audio_transcription.failed", item_id=ev.item_id, content_index=0,
        error={"type": "transcription_error", "code": ev.code, "message": "transcription failed"}),
    ResponseCreated: lambda ev: event("response.created", response=response_object(ev.response)),
    ResponseDone: lambda ev: event("response.done", response=response_object(ev.response)),
    OutputItemAdded: lambda ev: event("response.output_item.added", response_id=ev.response_id, item_id=ev.item.id,
                                      output_index=ev.output_index, item=ev.item.to_wire()),
    OutputItemDone: lambda ev: event("response.output_item.done", response_id=ev.response_id, item_id=ev.item.id,
                                     output_index=ev.output_index, item=ev.item.to_wire()),
    ContentPartAdded: lambda ev: _content("response.content_part.added", ev, part=_part(ev.spoken, ev.text)),
    ContentPartDone: lambda ev: _content("response.content_part.done", ev, part=_part(ev.spoken, ev.text)),
    OutputTextDelta: _delta("response.output_text.delta"),
    OutputTextDone: lambda ev: _content("response.output_text.done", ev, text=ev.text),
    OutputTranscriptDelta: _delta("response.output_audio_transcript.delta"),
    OutputTranscriptDone: lambda ev: _content("response.output_audio_transcript.done", ev, transcript=ev.transcript),
    OutputAudio: _audio_delta,
    OutputAudioDone: lambda ev: _content("response.output_audio.done", ev),
    OutputAudioCleared: lambda ev: event("output_audio_buffer.cleared", response_id=ev.response_id),
    ResponseTimed: _timed,
    ArgumentsDelta: _arguments_delta,
    ArgumentsDone: _arguments_done,
    ServerCallProgress: lambda ev: event(f"response.mcp_call.{ev.progress}", response_id=ev.response_id,
                                         item_id=ev.item_id, output_index=ev.output_index),
    ToolCallMoved: _ledger,
    ToolCallRejected: lambda ev: event("voxcall.tool_call.rejected", response_id=ev.response_id, name=ev.name,
                                       reason=ev.reason),
}
