"""The server over real sockets: the official SDK's realtime client, auth, subprotocols, health, disconnects."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncGenerator
from typing import Any

import httpx2 as httpx
import pytest
import websockets

from tests.core.hearing.test_heard_audio import CountingSTT, fake_voice, tone
from tests.servers import SCRIPT, WEATHER_TOOL, Server, ServerFactory
from voxcall.config import ServerSettings
from voxcall.llm import Done, LLMEvent, LLMRequest, ScriptedBackend, TextDelta, Usage
from voxcall.realtime.server_events import check_server_event


async def sdk_tool_loop(server: Any, turns: int) -> list[str]:
    """Drive ``turns`` tool round trips the way a voice client does; return each follow-up's text."""
    answers: list[str] = []
    async with server.client().realtime.connect(model="voxcall-test") as conn:
        await conn.session.update(session={"type": "realtime", "tools": [WEATHER_TOOL],
                                           "output_modalities": ["text"]})
        for n in range(turns):
            await conn.conversation.item.create(item={"type": "message", "role": "user",
                                                      "content": [{"type": "input_text", "text": f"weather {n}?"}]})
            await conn.response.create()
            text = ""
            async for ev in conn:
                if ev.type == "error":
                    raise AssertionError(ev.error.message)
                if ev.type == "response.function_call_arguments.done":
                    assert json.loads(ev.arguments) == {"city": "Paris"}
                    await conn.conversation.item.create(item={"type": "function_call_output", "call_id": ev.call_id,
                                                              "output": f"sunny {n}"})
                elif ev.type == "response.output_text.delta":
                    text += ev.delta
                elif ev.type == "response.done":
                    assert ev.response.status == "completed"
                    if ev.response.output and ev.response.output[-1].type == "function_call":
                        text = ""
                        await conn.response.create(response={"metadata": {"turn": str(n)}})
                    else:
                        answers.append(text)
                        break
    return answers


@pytest.mark.parametrize("prefetch", [True, False])
async def test_official_sdk_tool_loop(make_server: ServerFactory, prefetch: bool) -> None:
    server = await make_server(session={"prefetch": prefetch})
    answers = await sdk_tool_loop(server, 3)
    assert answers == [f"get_weather says sunny {n}." for n in range(3)]
    async with httpx.AsyncClient() as http:
        stats = (await http.get(f"http://127.0.0.1:{server.port}/healthz")).json()["speculation"]
    assert (stats["claimed"] == 3) is prefetch
    assert stats["started"] == (3 if prefetch else 0)


async def test_every_frame_of_a_full_session_validates(make_server: ServerFactory) -> None:
    server = await make_server()
    frames: list[dict[str, Any]] = []
    async with websockets.connect(f"ws://127.0.0.1:{server.port}/v1/realtime?model=m",
                                  additional_headers={"Authorization": "Bearer x"}) as ws:
        async def send(**ev: Any) -> None:
            await ws.send(json.dumps(ev))

        async def until(kind: str) -> dict[str, Any]:
            while True:
                frame = json.loads(await ws.recv())
                frames.append(frame)
                if frame["type"] == kind:
                    return frame

        await until("session.created")
        await send(type="session.update", session={"type": "realtime", "tools": [WEATHER_TOOL]})
        await until("session.updated")
        await send(type="conversation.item.create",
                   item={"type": "message", "role": "user", "content": [{"type": "input_text", "text": "weather"}]})
        await send(type="response.create")
        call = await until("response.function_call_arguments.done")
        await until("response.done")
        await send(type="conversation.item.create",
                   item={"type": "function_call_output", "call_id": call["call_id"], "output": "cloudy"})
        await send(type="response.create")
        await until("response.done")
        await send(type="conversation.item.retrieve", item_id=call["item_id"])
        await until("conversation.item.retrieved")
        await send(type="response.create", response={"instructions": "x"})
        await send(type="response.cancel")
        await until("response.done")
        await send(type="oops")
        await until("error")
    assert frames[0]["type"] == "session.created" and frames[0]["session"]["model"] == "m"
    for frame in frames:
        check_server_event(frame)
    assert len({f["event_id"] for f in frames}) == len(frames)


async def test_api_keys_are_required_when_configured(make_server: ServerFactory, monkeypatch: Any) -> None:
    monkeypatch.setenv("VOXCALL_API_KEYS", "k1,k2")
    server = await make_server()
    url = f"ws://127.0.0.1:{server.port}/v1/realtime"
    for headers in ({}, {"Authorization": "Bearer wrong"}):
        with pytest.raises(websockets.exceptions.InvalidStatus) as refused:
            async with websockets.connect(url, additional_headers=headers):
                pass
        assert refused.value.response.status_code == 403
    async with websockets.connect(url, additional_headers={"Authorization": "Bearer k2"}) as ws:
        assert json.loads(await ws.recv())["type"] == "session.created"
    async with websockets.connect(url, subprotocols=[websockets.Subprotocol("realtime"),
                                                     websockets.Subprotocol("openai-insecure-api-key.k1")]) as ws:
        assert ws.subprotocol == "realtime"
        assert json.loads(await ws.recv())["type"] == "session.created"
    async with server.client(api_key="k1").realtime.connect(model="m") as conn:
        assert (await conn.recv()).type == "session.created"


async def test_oversized_frame_is_an_error_not_a_disconnect(make_server: ServerFactory) -> None:
    server = await make_server(session={"max_frame_bytes": 2000})
    async with websockets.connect(f"ws://127.0.0.1:{server.port}/v1/realtime") as ws:
        await ws.recv()
        await ws.send(json.dumps({"type": "session.update", "session": {"instructions": "x" * 5000}}))
        assert json.loads(await ws.recv())["error"]["code"] == "frame_too_large"
        await ws.send("{not json")
        assert json.loads(await ws.recv())["error"]["code"] == "invalid_json"


async def test_disconnect_mid_response_leaks_no_task(make_server: ServerFactory) -> None:
    server = await make_server(backend=ScriptedBackend(SCRIPT, token_delay=0.05))
    async with websockets.connect(f"ws://127.0.0.1:{server.port}/v1/realtime") as ws:
        await ws.recv()
        await ws.send(json.dumps({"type": "conversation.item.create", "item": {
            "type": "message", "role": "user", "content": [{"type": "input_text", "text": "long story"}]}}))
        await ws.send(json.dumps({"type": "response.create"}))
        while json.loads(await ws.recv())["type"] != "response.output_text.delta":
            pass
    for _ in range(100):
        await asyncio.sleep(0.02)
        if not any(t.get_name().startswith("voxcall-") for t in asyncio.all_tasks()):
            break
    assert not [t.get_name() for t in asyncio.all_tasks() if t.get_name().startswith("voxcall-")]
    async with httpx.AsyncClient() as http:
        assert (await http.get(f"http://127.0.0.1:{server.port}/healthz")).json()["sessions"] == 0


async def test_many_sessions_share_one_backend(make_server: ServerFactory) -> None:
    server = await make_server()
    results = await asyncio.gather(*(sdk_tool_loop(server, 1) for _ in range(8)))
    assert all(r == ["get_weather says sunny 0."] for r in results)


def sample(text: str, name: str, **labels: str) -> float:
    """The value of one sample in a Prometheus text page (0 when absent)."""
    from prometheus_client.parser import text_string_to_metric_families

    for family in text_string_to_metric_families(text):
        for s in family.samples:
            if s.name == name and all(s.labels.get(k) == v for k, v in labels.items()):
                return float(s.value)
    return 0.0


async def test_metrics_count_sessions_responses_tools_and_speculation(make_server: ServerFactory) -> None:
    server = await make_server()
    await sdk_tool_loop(server, 2)
    async with httpx.AsyncClient() as http:
        page = await http.get(f"http://127.0.0.1:{server.port}/metrics")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/plain")
    text = page.text
    assert sample(text, "voxcall_sessions_total") == 1 and sample(text, "voxcall_sessions_active") == 0
    assert sample(text, "voxcall_responses_total", status="completed") == 4  # two calls, two claimed answers
    assert sample(text, "voxcall_tool_calls_total", outcome="client") == 2
    assert sample(text, "voxcall_speculation_total", kind="follow_up", event="claimed") == 2
    assert sample(text, "voxcall_llm_first_token_seconds_count") == 4
    assert sample(text, "voxcall_tokens_total", direction="out") > 0


async def test_metrics_count_the_event_loops_tasks(make_server: ServerFactory) -> None:
    server = await make_server()

    async def tasks() -> float:
        async with httpx.AsyncClient() as http:
            return sample((await http.get(f"http://127.0.0.1:{server.port}/metrics")).text, "voxcall_asyncio_tasks")

    idle = await tasks()
    async with server.client().realtime.connect(model="m") as first, server.client().realtime.connect(model="m") as two:
        assert (await first.recv()).type == (await two.recv()).type == "session.created"
        busy = await tasks()
    assert idle >= 1 and busy >= idle + 2  # each session runs its outbox writer, at least


async def test_metrics_need_a_key_when_keys_are_configured(make_server: ServerFactory, monkeypatch: Any) -> None:
    monkeypatch.setenv("VOXCALL_API_KEYS", "k1")
    server = await make_server()
    async with httpx.AsyncClient() as http:
        url = f"http://127.0.0.1:{server.port}/metrics"
        assert (await http.get(url)).status_code == 401
        assert (await http.get(url, headers={"Authorization": "Bearer nope"})).status_code == 401
        assert (await http.get(url, headers={"Authorization": "Bearer k1"})).status_code == 200


class SlowModel:
    """A backend that says a filler at once ("Let me see.", as a local model not ready yet does) and its own words
    :data:`READ_S` later."""

    READ_S = 0.3
    name = "slow"

    async def stream(self, request: LLMRequest) -> AsyncGenerator[LLMEvent, None]:
        del request
        yield TextDelta("Let me see. ", filler=True)
        await asyncio.sleep(self.READ_S)
        yield TextDelta("Paris.")
        yield Usage(10, 2)
        yield Done("stop")

    async def aclose(self) -> None:
        return None


async def test_a_filler_is_not_the_models_first_token(make_server: ServerFactory) -> None:
    """The response says the filler, but its timing (and the metrics, the traces) count the model's first words."""
    server = await make_server(SlowModel())
    async with server.client().realtime.connect(model="voxcall-test") as conn:
        await conn.conversation.item.create(item={"type": "message", "role": "user",
                                                  "content": [{"type": "input_text", "text": "capital?"}]})
        await conn.response.create()
        text = ""
        async for ev in conn:
            if ev.type == "response.output_text.delta":
                text += ev.delta
            elif ev.type == "voxcall.response.timing":
                timing: Any = ev
                break
    assert text == "Let me see. Paris."
    assert timing.timings_ms["llm_first_token"] >= SlowModel.READ_S * 1000


async def test_every_response_is_followed_by_its_timing(make_server: ServerFactory) -> None:
    server = await make_server()
    async with server.client().realtime.connect(model="voxcall-test") as conn:
        await conn.conversation.item.create(item={"type": "message", "role": "user",
                                                  "content": [{"type": "input_text", "text": "hello"}]})
        await conn.response.create()
        done_id = None
        async for ev in conn:
            if ev.type == "response.done":
                done_id = ev.response.id
            elif ev.type == "voxcall.response.timing":
                timing: Any = ev
                break
    assert timing.response_id == done_id
    assert set(timing.timings_ms) == {"llm_first_token"}  # a text turn: no transcript, no audio
    assert timing.tools == []


async def test_browser_pages_of_other_sites_cannot_connect(make_server: ServerFactory) -> None:
    server = await make_server(allowed_origins=["https://app.example"])
    url = f"ws://127.0.0.1:{server.port}/v1/realtime"
    with pytest.raises(websockets.exceptions.InvalidStatus) as refused:
        async with websockets.connect(url, origin=websockets.Origin("https://evil.example")):
            pass
    assert refused.value.response.status_code == 403
    for origin in (f"http://127.0.0.1:{server.port}", "https://app.example"):  # its own page, an allowed one
        async with websockets.connect(url, origin=websockets.Origin(origin)) as ws:
            assert json.loads(await ws.recv())["type"] == "session.created"
    async with websockets.connect(url) as ws:  # no Origin: an SDK or a server, not a browser
        assert json.loads(await ws.recv())["type"] == "session.created"


class SlowSTT(CountingSTT):
    """Takes 50 ms a second of audio to hear it (tiny.en on a busy small CPU), in the worker thread."""

    def transcribe(self, pcm: Any) -> str:
        time.sleep(len(pcm) / 16_000 * 0.05)
        return super().transcribe(pcm)


async def test_an_audio_flood_leaves_every_other_session_answered() -> None:
    """One client streams speech far faster than real time (1 MB appends, a long silence setting, no responses): its
    turns are capped (each said), and while the server works through the flood another session's pings and
    ``/healthz`` are answered at once. (The flooder's own pings wait behind the audio it sent before them, as TCP
    orders them: that is the client's backpressure.)"""
    stt = SlowSTT()
    async with Server(ServerSettings(), ScriptedBackend(SCRIPT), voice=fake_voice(stt)) as server:
        url = f"ws://127.0.0.1:{server.port}/v1/realtime"
        async with websockets.connect(url, max_size=None) as flooder, websockets.connect(url) as other:
            await flooder.send(json.dumps({"type": "session.update", "session": {"type": "realtime", "audio": {
                "input": {"turn_detection": {"type": "server_vad", "silence_duration_ms": 10_000,
                                             "create_response": False}}}}}))
            frame = json.dumps({"type": "input_audio_buffer.append", "audio": tone(15_800)})
            capped: list[dict[str, Any]] = []

            async def flood() -> None:
                for _ in range(12):  # three minutes of speech: six capped turns
                    await flooder.send(frame)
                async for message in flooder:
                    ev = json.loads(message)
                    if ev["type"] == "voxcall.input_audio_buffer.turn_capped":
                        capped.append(ev)
                        if len(capped) == 6:
                            return

            flooding = asyncio.create_task(flood())
            others, health = [], []
            async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{server.port}") as http:
                deadline = time.perf_counter() + 90
                while not flooding.done() and time.perf_counter() < deadline:
                    started = time.perf_counter()
                    await asyncio.wait_for(await other.ping(), 5)
                    others.append(time.perf_counter() - started)
                    started = time.perf_counter()
                    assert (await http.get("/healthz")).status_code == 200
                    health.append(time.perf_counter() - started)
                    await asyncio.sleep(0.05)
            await asyncio.wait_for(flooding, 1)
        assert len(others) > 10 and max(others) < 1.0 and max(health) < 1.0, (len(others), max(others), max(health))
        assert [ev["max_turn_ms"] for ev in capped] == [30_000] * 6
        assert max(stt.heard) <= 30_000 * 16 + 512  # no transcription grew with the flood
