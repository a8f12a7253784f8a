"""The Realtime server events of a session's typed events (:mod:`voxcall.realtime.encode`): every event the core emits
has its server event, or is one the protocol has none for; what is encoded is a valid GA server event."""

from __future__ import annotations

import typing

from voxcall.core.conversation.items import MessageItem
from voxcall.core.events import Event, ItemAdded, SpeechStarted, SpokenClause, TranscriptCompleted, TurnCapped
from voxcall.realtime.encode import _ENCODERS, RealtimeEncoder
from voxcall.realtime.server_events import check_server_event

NOT_SENT = {SpokenClause: "a clause's words and audio span: the edges that play audio pace their transcript by it"}
"""Events the Realtime protocol has no server event for, and why."""
BY_SESSION = {"SettingsApplied"}
"""Events the encoder answers with the session it serves (``session.updated``)."""


def test_every_event_the_core_emits_has_a_server_event_or_a_reason_for_none() -> None:
    events = set(typing.get_args(Event))
    encoded = set(_ENCODERS) | {kind for kind in events if kind.__name__ in BY_SESSION}
    assert events - encoded == set(NOT_SENT)
    assert encoded - events == set()  # no encoder for an event the core does not emit


def test_encoded_events_are_valid_ga_server_events() -> None:
    encode = RealtimeEncoder("sess_1", "m")
    item = MessageItem.of_text("user", "hi")
    for ev in (ItemAdded(item, None), SpeechStarted(120, "item_1"), TurnCapped(30_000, "item_1", 30_000),
               TranscriptCompleted("item_1", "hello", "en", 1.5)):
        wire = encode(ev)
        assert wire is not None
        check_server_event(wire)
    capped = encode(TurnCapped(30_000, "item_1", 30_000))
    assert capped is not None and capped.pop("event_id")
    assert capped == {"type": "voxcall.input_audio_buffer.turn_capped", "item_id": "item_1", "audio_end_ms": 30_000,
                      "max_turn_ms": 30_000}
