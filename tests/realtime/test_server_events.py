"""Server events on the wire: beta names for a beta client, and the SDK's models checked where an event is built."""

from __future__ import annotations

from typing import Any

import pytest

from tests.harness import ControlledBackend, host_for
from voxcall.realtime.connection import RealtimeConnection
from voxcall.realtime.server_events import ENV_VAR, InvalidServerEvent, check_server_event, validation_enabled
from voxcall.serving.frames import event


class Socket:
    """Records what the connection writes."""

    def __init__(self) -> None:
        self.sent: list[dict[str, Any]] = []

    async def send(self, ev: dict[str, Any]) -> None:
        self.sent.append(ev)


async def test_a_beta_client_gets_beta_names_and_no_item_done() -> None:
    socket = Socket()
    connection = RealtimeConnection(host_for(ControlledBackend()), socket.send, beta=True)
    connection.hosted.outbox.start()  # the writer, without the session (and its session.created)
    item = {"id": "item_1", "object": "realtime.item", "type": "message", "status": "completed", "role": "assistant",
            "content": [{"type": "output_text", "text": "hi"}]}
    await connection.send(event("conversation.item.added", previous_item_id=None, item=item))
    await connection.send(event("conversation.item.done", previous_item_id=None, item=item))
    await connection.hosted.outbox.close(flush=True)
    await connection.close()
    assert [e["type"] for e in socket.sent] == ["conversation.item.created"]
    assert socket.sent[0]["item"]["content"][0]["type"] == "text"


async def test_validation_rejects_a_misspelt_event_where_it_is_built() -> None:
    connection = RealtimeConnection(host_for(ControlledBackend()), Socket().send, validate=True)
    with pytest.raises(InvalidServerEvent, match="audio_start_ms"):
        await connection.send(event("input_audio_buffer.speech_started", audio_start=5, item_id="item_1"))
    await connection.send(event("input_audio_buffer.speech_started", audio_start_ms=5, item_id="item_1"))
    await connection.send(event("voxcall.tool_call.rejected", anything="goes"))  # extensions have no SDK model
    await connection.close()


async def test_validation_is_off_unless_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENV_VAR, raising=False)
    assert not validation_enabled()
    unchecked = RealtimeConnection(host_for(ControlledBackend()), Socket().send)
    await unchecked.send(event("input_audio_buffer.speech_started", audio_start=5))  # not checked
    monkeypatch.setenv(ENV_VAR, "1")
    assert validation_enabled()
    checked = RealtimeConnection(host_for(ControlledBackend()), Socket().send)
    with pytest.raises(InvalidServerEvent):
        await checked.send(event("input_audio_buffer.speech_started", audio_start=5))
    await unchecked.close()
    await checked.close()


def test_unknown_server_event_types_are_rejected() -> None:
    with pytest.raises(InvalidServerEvent, match="not a server event type"):
        check_server_event(event("response.text.delta", delta="beta name"))
