"""The protocol's JSON messages as a device sends them (firmware, py-xiaozhi, xiaozhi-sdk, the browser page), and
what cannot be read."""

from __future__ import annotations

import json

import pytest

from voxcall.xiaozhi.messages import (
    Abort,
    AudioParams,
    Hello,
    Ignored,
    Listen,
    Mcp,
    MessageError,
    Ping,
    read_message,
    server_hello,
)

FIRMWARE_HELLO = {"type": "hello", "version": 1, "features": {"mcp": True, "aec": True, "glyph_push": True},
                  "text_font": {"bundle": "noto-v1"}, "transport": "websocket",
                  "audio_params": {"format": "opus", "sample_rate": 16000, "channels": 1, "frame_duration": 60}}


def test_the_hellos_clients_send() -> None:
    assert read_message(json.dumps(FIRMWARE_HELLO)) == Hello(1, True, True, AudioParams(16000, 60))
    py_xiaozhi = {**FIRMWARE_HELLO, "features": {"mcp": True}, "audio_params": {
        "format": "opus", "sample_rate": 16000, "channels": 1, "frame_duration": 20}}
    assert read_message(json.dumps(py_xiaozhi)) == Hello(1, True, False, AudioParams(16000, 20))
    assert read_message('{"type": "hello"}') == Hello(1, False, False, AudioParams())  # the browser page's
    assert read_message(json.dumps({**FIRMWARE_HELLO, "version": 3})).version == 3


def test_listen_abort_mcp_and_the_rest() -> None:
    assert read_message('{"session_id": "", "type": "listen", "state": "start", "mode": "realtime"}') == \
        Listen("start", "realtime")
    assert read_message('{"type": "listen", "state": "start"}') == Listen("start", "auto")
    assert read_message('{"type": "listen", "state": "stop"}') == Listen("stop")
    detect = '{"type": "listen", "state": "detect", "text": "你好小智"}'
    assert read_message(detect) == Listen("detect", text="你好小智")
    assert read_message('{"type": "abort", "reason": "wake_word_detected"}') == Abort("wake_word_detected")
    assert read_message('{"type": "abort"}') == Abort()
    assert read_message('{"type": "mcp", "payload": {"jsonrpc": "2.0", "id": 1, "result": {}}}') == \
        Mcp({"jsonrpc": "2.0", "id": 1, "result": {}})
    assert read_message('{"type": "ping"}') == Ping()
    assert read_message('{"type": "iot", "descriptors": []}') == Ignored("iot")


@pytest.mark.parametrize(("frame", "reason"), [
    ("not json", "not valid JSON"),
    ("[1, 2]", "JSON object"),
    ('{"state": "start"}', "string 'type'"),
    ('{"type": "listen", "state": "start", "mode": "push"}', "listen.mode"),
    ('{"type": "listen", "state": "pause"}', "listen.state"),
    ('{"type": "listen", "state": "detect", "text": 5}', "listen.text"),
    ('{"type": "hello", "audio_params": {"format": "pcm"}}', "Opus"),
    ('{"type": "hello", "audio_params": {"sample_rate": "16000"}}', "positive integers"),
    ('{"type": "hello", "version": 0}', "version"),
    ('{"type": "ping", "x": NaN}', "NaN"),
])
def test_a_message_that_cannot_be_read_says_why(frame: str, reason: str) -> None:
    with pytest.raises(MessageError, match=reason):
        read_message(frame)


def test_the_servers_hello_says_what_it_sends() -> None:
    hello = server_hello("sess_1", 24000)
    assert hello == {"type": "hello", "transport": "websocket", "session_id": "sess_1",
                     "audio_params": {"format": "opus", "sample_rate": 24000, "channels": 1, "frame_duration": 60}}
