"""Protocol plumbing: ids, events, errors, and beta names for beta clients."""

from __future__ import annotations

from voxcall.core.errors import SessionError
from voxcall.core.ids import new_id
from voxcall.realtime.beta import to_beta
from voxcall.realtime.connection import error_event
from voxcall.realtime.server_events import check_server_event
from voxcall.serving.frames import event


def test_ids_are_prefixed_and_fresh() -> None:
    ids = {new_id("item") for _ in range(100)}
    assert len(ids) == 100 and all(i.startswith("item_") and len(i) == 25 for i in ids)


def test_error_event_names_the_client_event_and_is_valid() -> None:
    err = error_event(SessionError("bad", code="invalid_value", param="session.x"), "evt_1")
    check_server_event(err)
    assert err["error"] == {"type": "invalid_request_error", "code": "invalid_value", "message": "bad",
                            "param": "session.x", "event_id": "evt_1"}


def test_to_beta_renames_events_and_assistant_parts() -> None:
    done = event("response.done", response={"output": [{"type": "message", "content": [
        {"type": "output_audio", "transcript": "hi"}, {"type": "input_text", "text": "x"}]}]})
    beta = to_beta(done)
    assert beta is not None
    assert [p["type"] for p in beta["response"]["output"][0]["content"]] == ["audio", "input_text"]
    assert done["response"]["output"][0]["content"][0]["type"] == "output_audio"  # the GA event is left alone
    delta = to_beta(event("response.output_audio_transcript.delta", delta="a"))
    assert delta is not None and delta["type"] == "response.audio_transcript.delta"
    assert to_beta(event("conversation.item.done", item={})) is None
