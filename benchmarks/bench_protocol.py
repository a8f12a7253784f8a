"""Protocol edge cost: µs per event to parse client events with the SDK's models, and to validate or build server
events with them.

Client events: ``json.loads`` alone, then :func:`~voxcall.realtime.client_events.parse_client_event` on the
decoded event (beta mapping and strict validation). Server events: what production does, the core's typed event made
and encoded by :class:`~voxcall.realtime.encode.RealtimeEncoder` (for audio that includes base64-encoding the PCM,
shown alone in its own row); building the wire dict alone; validating it against the SDK's model
(:func:`~voxcall.realtime.server_events.check_server_event`, on in tests only); and, for comparison, building it from
the SDK's model with ``model_dump`` (the road not taken). Best of ``--repeat`` runs, since the machine is noisy.

    python benchmarks/bench_protocol.py [--events 5000] [--repeat 5]
"""

from __future__ import annotations

import argparse
import base64
import json
import time
from collections.abc import Callable
from functools import partial
from typing import Any

import numpy as np
from openai.types.realtime import ResponseAudioDeltaEvent, ResponseDoneEvent, ResponseTextDeltaEvent
from pydantic import BaseModel

from voxcall.audio.codec import encode_audio
from voxcall.audio.formats import PCM24K
from voxcall.core.conversation.items import CallItem, MessageItem
from voxcall.core.events import OutputAudio, OutputTextDelta, ResponseDone, ResponseState, TokenCounts
from voxcall.core.ids import new_id
from voxcall.realtime.client_events import parse_client_event
from voxcall.realtime.encode import RealtimeEncoder
from voxcall.realtime.server_events import check_server_event
from voxcall.serving.frames import event

AUDIO_20MS = base64.b64encode(bytes(960)).decode()  # 20 ms of 24 kHz PCM16
WEATHER = {"type": "function", "name": "get_weather", "description": "Weather for a city.",
           "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}
CLIENT_EVENTS: dict[str, dict[str, Any]] = {
    "input_audio_buffer.append (20 ms)": {"type": "input_audio_buffer.append", "audio": AUDIO_20MS},
    "conversation.item.create": {"type": "conversation.item.create", "item": {
        "type": "message", "role": "user", "content": [{"type": "input_text", "text": "What is the weather?"}]}},
    "function_call_output": {"type": "conversation.item.create", "item": {
        "type": "function_call_output", "call_id": "call_1", "output": '{"temp": 21}'}},
    "session.update (tools, vad)": {"type": "session.update", "session": {
        "type": "realtime", "instructions": "Be brief.", "tools": [WEATHER], "output_modalities": ["audio"],
        "audio": {"input": {"turn_detection": {"type": "server_vad", "silence_duration_ms": 400}}}}},
    "response.create (metadata)": {"type": "response.create", "response": {"metadata": {"k": "v"}}},
}
OUTPUT = [{"id": "item_1", "object": "realtime.item", "type": "message", "status": "completed", "role": "assistant",
           "content": [{"type": "output_audio", "transcript": "It is sunny in Paris."}]},
          {"id": "item_2", "object": "realtime.item", "type": "function_call", "status": "completed",
           "call_id": "call_1", "name": "get_weather", "arguments": '{"city":"Paris"}'}]


def audio_delta() -> dict[str, Any]:
    return event("response.output_audio.delta", response_id="resp_1", item_id="item_1", output_index=0,
                 content_index=0, delta=AUDIO_20MS)


def text_delta() -> dict[str, Any]:
    return event("response.output_text.delta", response_id="resp_1", item_id="item_1", output_index=0,
                 content_index=0, delta="sunny ")


def response_done() -> dict[str, Any]:
    return event("response.done", response={
        "id": "resp_1", "object": "realtime.response", "status": "completed", "status_details": None,
        "output": OUTPUT, "conversation_id": "conv_1", "output_modalities": ["audio"], "max_output_tokens": "inf",
        "metadata": None, "usage": {"total_tokens": 15, "input_tokens": 10, "output_tokens": 5}})


PCM_20MS = np.zeros(480, np.int16)  # 20 ms of 24 kHz PCM16
ENCODE = RealtimeEncoder("sess_1", "voxcall")


def typed_audio_delta() -> dict[str, Any] | None:
    return ENCODE(OutputAudio("resp_1", "item_1", 0, 0, PCM_20MS, PCM24K, 0, 20))


def typed_text_delta() -> dict[str, Any] | None:
    return ENCODE(OutputTextDelta("resp_1", "item_1", 0, 0, "sunny "))


DONE_STATE = ResponseState("resp_1", "completed", None, (
    MessageItem.of_text("assistant", "It is sunny in Paris."), CallItem("item_2", "call_1", "get_weather",
                                                                     '{"city":"Paris"}')),
    "conv_1", ("audio",), None, None, TokenCounts(10, 5))


def typed_response_done() -> dict[str, Any] | None:
    return ENCODE(ResponseDone(DONE_STATE))


TYPED: dict[str, Callable[[], dict[str, Any] | None]] = {
    "response.output_audio.delta (20 ms)": typed_audio_delta,
    "response.output_text.delta": typed_text_delta,
    "response.done (2 items)": typed_response_done,
}
"""The production path of each server event: the core's typed event, encoded for the Realtime wire."""

SERVER_EVENTS: dict[str, tuple[Callable[[], dict[str, Any]], Callable[[], BaseModel]]] = {
    "response.output_audio.delta (20 ms)": (audio_delta, lambda: ResponseAudioDeltaEvent(
        type="response.output_audio.delta", event_id=new_id("event"), response_id="resp_1", item_id="item_1",
        output_index=0, content_index=0, delta=AUDIO_20MS)),
    "response.output_text.delta": (text_delta, lambda: ResponseTextDeltaEvent(
        type="response.output_text.delta", event_id=new_id("event"), response_id="resp_1", item_id="item_1",
        output_index=0, content_index=0, delta="sunny ")),
    "response.done (2 items)": (response_done, lambda: ResponseDoneEvent.model_validate(response_done())),
}


def validated(build: Callable[[], dict[str, Any]]) -> None:
    """Build a server event as voxcall does and validate it, as tests do."""
    check_server_event(build())


def dumped(model: Callable[[], BaseModel]) -> dict[str, Any]:
    """Build a server event from the SDK's model and dump it to a dict for the socket."""
    return model().model_dump(exclude_none=True)


def per_event_us(work: Callable[[], object], events: int, repeat: int) -> float:
    """Best-of-``repeat`` µs per call of ``work``."""
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(events):
            work()
        best = min(best, time.perf_counter() - start)
    return best / events * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--events", type=int, default=5000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    n, r = args.events, args.repeat
    print(f"{'client event':40} {'json.loads':>11} {'parse (SDK)':>12}")
    for name, ev in CLIENT_EVENTS.items():
        frame = json.dumps(ev)
        parse_client_event(ev)  # fail loudly before timing anything
        print(f"{name:40} {per_event_us(partial(json.loads, frame), n, r):9.1f}µs "
              f"{per_event_us(partial(parse_client_event, ev), n, r):10.1f}µs")
    print(f"\n{'server event':40} {'typed→wire':>11} {'dict':>11} {'validate':>12} {'SDK model+dump':>15}")
    for name, (build, model) in SERVER_EVENTS.items():
        check_server_event(build())
        typed = TYPED[name]
        produced = typed()
        assert produced is not None
        check_server_event(produced)
        print(f"{name:40} {per_event_us(typed, n, r):9.1f}µs {per_event_us(build, n, r):9.1f}µs "
              f"{per_event_us(partial(validated, build), n, r):10.1f}µs "
              f"{per_event_us(partial(dumped, model), n, r):13.1f}µs")
    print(f"{'  of which base64 of 20 ms PCM':40} {per_event_us(partial(encode_audio, PCM_20MS, PCM24K), n, r):9.1f}µs")
    print("\nvalidate includes building the dict; production builds dicts and validates nothing "
          "(VOXCALL_VALIDATE_EVENTS unset).")


if __name__ == "__main__":
    main()
