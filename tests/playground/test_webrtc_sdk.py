"""The JS Agents SDK's WebRTC transport, in headless Chromium, calls ``voxcall serve``: a page on its own origin
gets a client secret from "its backend" (this test), connects with it, and asks its question through the fake
microphone; the server's calculator answers, and the answer is heard on the call (its transcript on the data
channel, its audio on the track)."""

from __future__ import annotations

import functools
import http.server
import json
import re
import shutil
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2 as httpx
import pytest

from tests.playground.conftest import SERVER_TOOLS, TEST_KEY, TURN_MS, OpenPage, write_question
from tests.requirements import require_module, require_node_packages
from tests.serve import ServeProcess, serve

expect = require_module("playwright.sync_api").expect

JS_DIR = Path(__file__).parents[1] / "js"
BUNDLE = "node_modules/@openai/agents-realtime/dist/bundle/openai-realtime-agents.umd.js"


@pytest.fixture(scope="module")
def question_wav(speech_models: None, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The question as the playground's fake microphone says it, after two seconds of silence instead of a
    quarter: a call's microphone starts when the page asks for it, before the call is connected."""
    return write_question(tmp_path_factory.mktemp("voice") / "question.wav", lead_s=2.0)


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        """Requests are not logged."""


@pytest.fixture(scope="module")
def app_origin(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The page's origin: a static server on loopback (not voxcall's origin, so the SDK goes through CORS), named
    ``localhost`` so that the page is a secure context, where it may use the microphone."""
    require_node_packages(JS_DIR)  # the SDK's browser bundle
    folder = tmp_path_factory.mktemp("app")
    (folder / "index.html").write_text(PAGE, encoding="utf-8")
    shutil.copy(JS_DIR / BUNDLE, folder / "sdk.js")
    handler = functools.partial(QuietHandler, directory=str(folder))
    site = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=site.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://localhost:{site.server_address[1]}"
    finally:
        site.shutdown()

PAGE = """<!doctype html><html><body><script src="/sdk.js"></script><script>
window.events = [];
window.call = async (secret, url) => {
  const {RealtimeAgent, RealtimeSession, OpenAIRealtimeWebRTC} = window.OpenAIAgentsRealtime;
  const audio = document.createElement('audio');
  document.body.appendChild(audio);
  const agent = new RealtimeAgent({name: 'Assistant', instructions: 'Answer briefly.'});
  const session = new RealtimeSession(agent, {
    transport: new OpenAIRealtimeWebRTC({baseUrl: url, audioElement: audio}),
    config: {audio: {input: {turnDetection: {type: 'server_vad', silenceDurationMs: 500}}}}});
  session.on('transport_event', (ev) => window.events.push(ev));
  await session.connect({apiKey: secret});
  window.session = session;
  return session.transport.callId;
};
window.heard = () => {
  const audio = document.querySelector('audio');
  return audio && audio.srcObject ? audio.srcObject.getAudioTracks().length : 0;
};
</script></body></html>"""


@pytest.fixture(scope="module")
def app_server(speech_models: None, app_origin: str,
               tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeProcess]:
    """``voxcall serve --llm scripted --speech`` with the calculator, a client key, and the page's origin allowed."""
    config = tmp_path_factory.mktemp("serve") / "voxcall.yaml"
    config.write_text(SERVER_TOOLS, encoding="utf-8")
    with serve("--llm", "scripted", "--speech", "--config", str(config),
               env={"VOXCALL_API_KEYS": TEST_KEY, "VOXCALL_ALLOWED_ORIGINS": app_origin}) as served:
        yield served


def test_the_agents_sdk_calls_over_webrtc_with_a_client_secret(app_server: ServeProcess, app_origin: str,
                                                               browser: Any) -> None:
    api = f"http://127.0.0.1:{app_server.port}/v1/realtime"
    minted = httpx.post(f"{api}/client_secrets", headers={"Authorization": f"Bearer {TEST_KEY}"},
                        json={"session": {"type": "realtime", "instructions": "Answer briefly."}}, timeout=10)
    assert minted.status_code == 200, minted.text
    secret = minted.json()["value"]

    context = browser.new_context()
    errors: list[str] = []
    try:
        page = context.new_page()
        page.on("pageerror", lambda error: errors.append(str(error)))
        page.goto(f"{app_origin}/")
        call_id = page.evaluate("([secret, url]) => window.call(secret, url)", [secret, f"{api}/calls"])
        assert call_id.startswith("rtc_")
        page.wait_for_function(
            "() => window.events.some(e => e.type === 'response.done' && "
            "JSON.stringify(e).includes('96'))", timeout=TURN_MS)
        events = page.evaluate("() => window.events")
        kinds = [ev["type"] for ev in events]
        assert "session.created" in kinds and "session.updated" in kinds
        assert "voxcall.tool_call.started" in kinds, "the server's calculator ran"
        assert "output_audio_buffer.started" in kinds
        assert "response.output_audio.delta" not in kinds, "audio comes on the track"
        transcripts = "".join(ev.get("delta", "") for ev in events
                              if ev["type"] == "response.output_audio_transcript.delta")
        assert "96" in transcripts, json.dumps(kinds)
        assert page.evaluate("() => window.heard()") == 1, "the page plays the call's audio track"
        reused = httpx.post(f"{api}/calls", content=b"v=0", timeout=10, headers={
            "Authorization": f"Bearer {secret}", "Content-Type": "application/sdp"})
        assert reused.status_code in (400, 401)
    finally:
        context.close()
    assert not errors, f"the page threw: {errors}"


def test_the_playground_calls_over_webrtc(server: ServeProcess, open_page: OpenPage) -> None:
    """The playground's "Realtime over WebRTC": the microphone is the call's track from the start, the answer is
    played from the server's track, and the turn shows as over a WebSocket."""
    page = open_page(server, protocol="webrtc")
    assert page.evaluate("() => window.voxcallPlayground.protocol") == "webrtc"
    expect(page.locator("#mic")).to_have_attribute("aria-pressed", "true")
    user = page.locator("#transcript li.user .text")
    expect(user.first).to_have_text(re.compile(r"(12|twelve) times (8|eight)", re.I), timeout=TURN_MS)
    card = page.locator("#tool-calls .tool-card.server[data-name=calculator]")
    expect(card.locator(".result")).to_have_text("96", timeout=TURN_MS)
    expect(page.locator("#transcript li.assistant .text").last).to_have_text("The answer is 96.", timeout=TURN_MS)
    assert page.evaluate("() => document.getElementById('call-audio').srcObject.getAudioTracks().length") == 1
    sent = page.evaluate("() => window.voxcallPlayground.sent.map(e => e.type)")
    assert "input_audio_buffer.append" not in sent, "the microphone goes on the track"
