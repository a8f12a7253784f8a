"""xiaozhi devices end to end: the unmodified xiaozhi-sdk client (PyPI) talks to a real server with the real speech
models: typed and spoken turns, its own MCP tools called (quick, slow, and one that never answers), the user
stopping the device's speech (``abort``, and the voice in realtime mode), and a device that comes back."""

from __future__ import annotations

import asyncio
import json
import urllib.request
from typing import Any

import pytest

from tests.harness import Recorded, heard_only
from voxcall.llm import ScriptedBackend
from voxcall.speech.voice import Voice

from .conftest import LIGHT, SCRIPT, STORY, DeviceServer, device_settings, heard, spoken
from .sdk_device import RATE, SdkDevice

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


async def story_as_heard(backend: Recorded, answered: str) -> None:
    """Once the user's ``answered`` words are answered, the story the model reads is the part the device played."""
    async with asyncio.timeout(30):  # the answer's request reads the conversation
        while not any(answered in text.lower() for text in backend.user_said()):
            await asyncio.sleep(0.05)
    told = [text for text in backend.assistant_said() if text.startswith("Once")]
    assert len(told) == 1
    heard_only(told[0], STORY)


def tool(spec: dict[str, Any], func: Any, *, is_async: bool = False) -> dict[str, Any]:
    """A tool as xiaozhi-sdk serves it."""
    return {**spec, "tool_func": func, "is_async": is_async}


async def sessions(server: DeviceServer) -> int:
    """The sessions the server counts now (``/healthz``)."""

    def read() -> int:
        with urllib.request.urlopen(server.http + "/healthz", timeout=5) as reply:
            return int(json.load(reply)["sessions"])

    return await asyncio.to_thread(read)


async def test_a_typed_turn_is_answered_in_speech(device_server: DeviceServer, voice: Voice) -> None:
    device = await SdkDevice.connect(device_server.url)
    try:
        asked = len(device.received)
        await device.client.send_text("What is the weather?")
        sentences, audio = await device.reply(asked)
        assert device.of("stt", after=asked)[0].message["text"] == "What is the weather?"
        assert " ".join(sentences) == "It is sunny in Paris today."
        assert len(audio) > RATE // 2, "at least half a second of speech"
        assert "sunny" in heard(voice, audio)
        start = device.of("tts", "start", after=asked)[0]
        first_sentence = device.of("tts", "sentence_start", after=asked)[0]
        face = device.of("llm", after=asked)[0]
        assert start.samples == first_sentence.samples == face.samples, "no audio before its words"
        assert face.message["emotion"] == "neutral"
    finally:
        await device.close()


@pytest.mark.parametrize("frame_ms", [60, 20])
async def test_a_spoken_turn_is_heard_and_answered(device_server: DeviceServer, voice: Voice, frame_ms: int) -> None:
    """The firmware sends 60 ms packets, py-xiaozhi on x86 20 ms ones. (xiaozhi-sdk set to 20 ms cannot decode the
    60 ms packets it is sent: it pads each to its own frame length, a bug of its own; its JSON still comes.)"""
    device = await SdkDevice.connect(device_server.url, frame_ms=frame_ms)
    try:
        asked = len(device.received)
        await device.say(spoken(voice, "What is the weather in Paris?"), frame_ms=frame_ms)
        words = await device.wait_for("stt", after=asked)
        assert "weather" in words.message["text"].lower()
        sentences, audio = await device.reply(asked)
        assert "sunny" in " ".join(sentences).lower()
        if frame_ms == 60:
            assert "sunny" in heard(voice, audio)
    finally:
        await device.close()


async def test_in_manual_mode_the_turn_ends_when_the_user_lets_go(device_server: DeviceServer, voice: Voice) -> None:
    device = await SdkDevice.connect(device_server.url, mode="manual")
    try:
        await device.say(spoken(voice, "What is the weather in Paris?"), silence_s=2.0)
        await asyncio.sleep(0.5)
        assert not device.of("stt"), "no server turn detection in manual mode: the pause ends nothing"
        await device.client.websocket.send(json.dumps({"type": "listen", "state": "stop"}))
        words = await device.wait_for("stt")
        assert "weather" in words.message["text"].lower()
        sentences, _ = await device.reply(0)
        assert "sunny" in " ".join(sentences)
    finally:
        await device.close()


async def test_a_wake_word_opens_the_conversation_and_other_text_is_a_turn(device_server: DeviceServer) -> None:
    device = await SdkDevice.connect(device_server.url)
    try:
        await device.client.send_text("你好，小智！")
        await device.client.send_text("What is the weather?")
        sentences, _ = await device.reply(0)
        assert "sunny" in " ".join(sentences)
        assert [r.message["text"] for r in device.of("stt")] == ["What is the weather?"], "the wake word is no turn"
    finally:
        await device.close()


async def test_the_model_calls_the_devices_own_tool(device_server: DeviceServer, voice: Voice) -> None:
    calls: list[dict[str, Any]] = []
    # The result is read out as JSON, cut into clauses at its colon, so the value is a clause of its own after a
    # pause. Whisper tiny heard a lone "red" there 7 times in 8 ("read", or nothing, else); this phrase 20 in 20.
    light = tool(LIGHT, lambda arguments: (calls.append(arguments) or {"light": "red, full brightness"}, False))
    device = await SdkDevice.connect(device_server.url, tools=[light])
    try:
        asked = len(device.received)
        await device.client.send_text("Turn the light red.")
        sentences, audio = await device.reply(asked)  # "Sure.", the call, its result
        assert calls == [{"r": 255, "g": 0, "b": 0}], "the device's tool got the model's arguments"
        assert "red" in " ".join(sentences)
        assert "red" in heard(voice, audio)
    finally:
        await device.close()


async def test_a_slow_device_tool_is_acknowledged_kept_alive_and_its_result_spoken(device_server: DeviceServer) -> None:
    """The response acknowledges the call and ends; while the tool runs the device is sent its thinking face at
    least every ``keepalive_seconds`` (1 s here); the result is spoken when it lands."""

    async def water(arguments: dict[str, Any]) -> tuple[dict[str, Any], bool]:
        await asyncio.sleep(5)
        return {"watered_minutes": arguments["minutes"]}, False

    spec = {"name": "self.garden.water", "description": "Water the garden.",
            "inputSchema": {"type": "object", "properties": {"minutes": {"type": "integer"}}}}
    device = await SdkDevice.connect(device_server.url, tools=[tool(spec, water, is_async=True)])
    try:
        asked = len(device.received)
        await device.client.send_text("Water the garden, slow please.")
        acknowledged, _ = await device.reply(asked)
        assert acknowledged, "the slow call is acknowledged in words"
        ended = device.replied
        result, _ = await device.reply(ended)
        assert "watered_minutes" in " ".join(result)
        between = device.received[ended:device.received.index(device.of("tts", "start", after=ended)[0])]
        assert any(r.message == {"type": "llm", "emotion": "thinking", "text": "🤔"} for r in between)
    finally:
        await device.close()


async def test_a_device_that_never_answers_a_call_leaves_no_hung_turn(voice: Voice) -> None:
    """xiaozhi-sdk does not answer a call of a tool it does not have: the call's deadline ends it, and the model
    says so."""
    spec = {"name": "self.dead.tool", "description": "A tool that never answers.",
            "inputSchema": {"type": "object", "properties": {}}}
    async with DeviceServer(device_settings(tool_timeout=2.0), ScriptedBackend(SCRIPT), voice=voice) as server:
        await _a_dead_tool_times_out(server, spec)


async def _a_dead_tool_times_out(device_server: DeviceServer, spec: dict[str, Any]) -> None:
    device = await SdkDevice.connect(device_server.url, tools=[tool(spec, lambda arguments: ({}, False))])
    try:
        await asyncio.sleep(0.5)  # listed; now the device forgets it
        device.client.mcp_tool_dict.clear()
        await device.client.send_text("Use the dead tool.")
        said: list[str] = []
        async with asyncio.timeout(30):
            while not any("timed out" in sentence for sentence in said):
                sentences, _ = await device.reply(device.replied)
                said += sentences
        assert any("2 s" in sentence for sentence in said), said
        await device.client.send_text("What is the weather?")
        sentences, _ = await device.reply(device.replied)
        assert "sunny" in " ".join(sentences), "the session goes on"
    finally:
        await device.close()


async def test_abort_cuts_the_reply_to_what_the_device_played(voice: Voice) -> None:
    backend = Recorded(ScriptedBackend(SCRIPT))
    async with DeviceServer(device_settings(), backend, voice=voice) as server:  # type: ignore[arg-type]
        device = await SdkDevice.connect(server.url)
        try:
            asked = len(device.received)
            await device.client.send_text("Tell me a story.")
            start = await device.wait_for("tts", "start", after=asked)
            async with asyncio.timeout(30):
                while device.samples - start.samples < 2 * RATE:
                    await asyncio.sleep(0.05)
            await device.client.send_abort()
            stop = await device.wait_for("tts", "stop", after=asked, timeout=5)
            assert stop.samples - start.samples < 4 * RATE, "the speech stopped at the abort"
            await device.client.send_text("Hello?")
            await story_as_heard(backend, "hello?")
        finally:
            await device.close()


async def test_in_realtime_mode_the_users_voice_barges_in(voice: Voice) -> None:
    backend = Recorded(ScriptedBackend(SCRIPT))
    async with DeviceServer(device_settings(), backend, voice=voice) as server:  # type: ignore[arg-type]
        device = await SdkDevice.connect(server.url, mode="realtime")
        try:
            asked = len(device.received)
            await device.client.send_text("Tell me a story.")
            start = await device.wait_for("tts", "start", after=asked)
            async with asyncio.timeout(30):
                while device.samples - start.samples < RATE:
                    await asyncio.sleep(0.05)
            await device.say(spoken(voice, "Stop, that is enough."))
            await device.wait_for("tts", "stop", after=asked, timeout=10)
            await story_as_heard(backend, "enough")
        finally:
            await device.close()


async def test_a_device_reconnects_to_a_new_session(device_server: DeviceServer) -> None:
    for _ in range(2):
        device = await SdkDevice.connect(device_server.url)
        try:
            await device.client.send_text("What is the weather?")
            sentences, _ = await device.reply(0)
            assert "sunny" in " ".join(sentences)
            assert await sessions(device_server) == 1
        finally:
            await device.close()
        async with asyncio.timeout(10):  # the server ends the session once the device has gone
            while await sessions(device_server):
                await asyncio.sleep(0.05)


async def test_a_device_finds_the_server_through_its_ota_endpoint(device_server: DeviceServer) -> None:
    device = await SdkDevice.connect(ota_url=device_server.http + "/xiaozhi/ota/")
    try:
        assert device.client.url == device_server.url
        await device.client.send_text("What is the weather?")
        sentences, _ = await device.reply(0)
        assert "sunny" in " ".join(sentences)
    finally:
        await device.close()
