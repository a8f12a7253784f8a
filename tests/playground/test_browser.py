"""The playground in a real browser: headless Chromium (Debian's package, driven by Playwright) against a real
``voxcall serve`` (the scripted demo, speech on), with a fake microphone that says a piper-spoken question.

What a newcomer does, checked on the page: a spoken question that the server answers with its calculator tool
(transcript, tool card, answer, audio played, timing timeline), the same question by push-to-talk (the space
bar held), a typed turn, the page's own client tools
(``get_local_time``, ``set_page_color``: run in the page, output sent back, answer heard), a barge-in (playback
stopped, ``conversation.item.truncate`` with what was played) and the API key, which every test sends as the
``openai-insecure-api-key.KEY`` subprotocol (the server requires one).
"""

from __future__ import annotations

import math
import re
import wave
from pathlib import Path
from typing import Any

from tests.playground.conftest import READY_MS, TURN_MS, OpenPage
from tests.requirements import require_module
from tests.serve import ServeProcess

expect = require_module("playwright.sync_api").expect

PLAYED = "window.voxcallPlayground.playedSamples"
TURN_EVENTS = ("input_audio_buffer.clear", "input_audio_buffer.commit", "response.create")


def sent_of(page: Any, kind: str) -> list[dict[str, Any]]:
    """The client events of type ``kind`` the page sent."""
    events: list[dict[str, Any]] = page.evaluate("(kind) => window.voxcallPlayground.sent.filter("
                                                 "(e) => e.type === kind)", kind)
    return events


def send_text(page: Any, text: str) -> None:
    page.fill("#text", text)
    page.press("#text", "Enter")


def test_a_spoken_question_shows_the_whole_turn(server: ServeProcess, open_page: OpenPage,
                                                tmp_path: Path) -> None:
    page = open_page(server)
    page.click("#mic")  # the fake microphone starts saying the question
    expect(page.locator("#mic")).to_have_attribute("aria-pressed", "true")
    user = page.locator("#transcript li.user .text")
    expect(user.first).to_have_text(re.compile(r"(12|twelve) times (8|eight)", re.I), timeout=TURN_MS)
    card = page.locator("#tool-calls .tool-card.server[data-name=calculator]")
    expect(card.locator(".status")).to_have_text("✓ completed", timeout=TURN_MS)
    expect(card.locator(".result")).to_have_text("96")
    expect(card.locator(".round")).to_have_text("1")
    expect(card.locator(".arguments")).to_contain_text('"op": "mul"')
    expect(card.locator(".duration")).to_contain_text("ms")
    answer = page.locator("#transcript li.assistant .text")
    expect(answer.last).to_have_text("The answer is 96.", timeout=TURN_MS)
    spoken = page.locator("#timeline li.timing", has_text="spoken turn")
    expect(spoken).to_have_count(1, timeout=TURN_MS)
    for stage in ("turn confirmed at", "transcript at", "first token at", "first audio at", "tool calculator: ran"):
        expect(spoken.locator(".bars li", has_text=stage)).to_have_count(1)
    page.wait_for_function(f"{PLAYED} > 0", timeout=TURN_MS)
    page.screenshot(path=str(tmp_path / "playground.png"))


def test_push_to_talk_with_the_space_bar(server: ServeProcess, open_page: OpenPage, question_wav: Path) -> None:
    page = open_page(server)
    page.select_option("#turn-detection", "none")
    page.click("#apply")  # session.update with turn_detection null; the focus stays on the button
    expect(page.locator("#ptt")).to_be_enabled(timeout=READY_MS)
    with wave.open(str(question_wav)) as wav:
        chunks = math.ceil((wav.getnframes() / wav.getframerate() + 0.5) / 0.05)  # the question in 50 ms chunks
    page.keyboard.down("Space")
    expect(page.locator("#ptt")).to_have_attribute("aria-pressed", "true")
    page.wait_for_function("(n) => window.voxcallPlayground.sent.filter("
                           "(e) => e.type === 'input_audio_buffer.append').length >= n", arg=chunks, timeout=TURN_MS)
    page.keyboard.up("Space")
    expect(page.locator("#ptt")).to_have_attribute("aria-pressed", "false")
    expect(page.locator("#transcript li.user .text")).to_have_text(re.compile(r"(12|twelve) times (8|eight)", re.I),
                                                                    timeout=TURN_MS)
    expect(page.locator("#transcript li.assistant .text").last).to_have_text("The answer is 96.", timeout=TURN_MS)
    turn = [e["type"] for e in page.evaluate("window.voxcallPlayground.sent") if e["type"] in TURN_EVENTS]
    assert turn == ["input_audio_buffer.clear", "input_audio_buffer.commit", "response.create"]


def test_a_typed_turn_is_answered_aloud(server: ServeProcess, open_page: OpenPage) -> None:
    page = open_page(server)
    send_text(page, "hello there")
    expect(page.locator("#transcript li.user .text")).to_have_text("hello there")
    expect(page.locator("#transcript li.assistant .text")).to_have_text("Hello! How can I help you today?",
                                                                         timeout=TURN_MS)
    expect(page.locator("#timeline li.timing", has_text="from response.create")).to_have_count(1, timeout=TURN_MS)
    page.wait_for_function(f"{PLAYED} > 0", timeout=TURN_MS)


def test_get_local_time_runs_in_the_page_and_its_output_goes_back(server: ServeProcess,
                                                                   open_page: OpenPage) -> None:
    page = open_page(server)
    send_text(page, "what time is it")
    card = page.locator("#tool-calls .tool-card.client[data-name=get_local_time]")
    expect(card.locator(".status")).to_have_text("✓ output sent", timeout=TURN_MS)
    result = card.locator(".result").text_content()
    assert result is not None and re.fullmatch(r"\d{1,2}:\d\d [AP]M \(.+\)", result)
    answer = page.locator("#transcript li.assistant .text", has_text="The answer is")
    expect(answer).to_have_text(f"The answer is {result}.", timeout=TURN_MS)
    outputs = sent_of(page, "conversation.item.create")
    assert [o["item"]["output"] for o in outputs if o["item"]["type"] == "function_call_output"] == [result]
    assert len(sent_of(page, "response.create")) == 2  # the question's, then the follow-up after the output


def test_set_page_color_colours_the_page(server: ServeProcess, open_page: OpenPage) -> None:
    page = open_page(server)
    send_text(page, "make the page lightgreen")
    card = page.locator("#tool-calls .tool-card.client[data-name=set_page_color]")
    expect(card.locator(".status")).to_have_text("✓ output sent", timeout=TURN_MS)
    expect(card.locator(".arguments")).to_contain_text('"color": "lightgreen"')
    assert page.evaluate("getComputedStyle(document.body).backgroundColor") == "rgb(144, 238, 144)"
    expect(page.locator("#transcript li.assistant .text", has_text="the page is now lightgreen")).to_have_count(
        1, timeout=TURN_MS)


def test_speaking_over_the_answer_stops_it_and_truncates_to_what_was_played(server: ServeProcess,
                                                                             open_page: OpenPage) -> None:
    page = open_page(server)
    send_text(page, "tell me a story")
    expect(page.locator("#log li[data-type='response.done']")).to_have_count(1, timeout=TURN_MS)  # all queued
    expect(page.locator("#activity")).to_have_text("◀ The assistant is speaking")
    page.click("#mic")  # and the user speaks over it
    page.wait_for_function("window.voxcallPlayground.bargeIns.length > 0", timeout=TURN_MS)
    barge_in = page.evaluate("window.voxcallPlayground.bargeIns[0]")
    item = page.locator("#transcript li.assistant").first
    assert barge_in["item_id"] == item.get_attribute("data-item-id")
    assert barge_in["audio_end_ms"] > 0 and barge_in["dropped_ms"] > 0  # cut while playing: the rest unheard
    truncate = sent_of(page, "conversation.item.truncate")[0]
    assert truncate == {**truncate, "item_id": barge_in["item_id"], "content_index": 0,
                        "audio_end_ms": barge_in["audio_end_ms"]}
    expect(item.locator(".note")).to_contain_text("(interrupted:", timeout=TURN_MS)  # conversation.item.truncated


def test_the_api_key_goes_as_a_subprotocol_and_is_required(server: ServeProcess, open_page: OpenPage) -> None:
    refused = open_page(server, "", ready=False)
    expect(refused.locator("#connection")).to_have_attribute("data-state", "closed", timeout=READY_MS)
    expect(refused.locator("#connection")).to_contain_text("could not connect")
    assert open_page(server).evaluate("window.voxcallPlayground.state") == "ready"  # with TEST_KEY


def test_a_spoken_question_over_gpt_live(server: ServeProcess, open_page: OpenPage) -> None:
    """The protocol switch: the same page over /v1/live/sessions, the fake microphone asking; the voice (which may
    call the server's tools under client delegation) answers in audio with both transcripts."""
    page = open_page(server, protocol="live")
    assert page.evaluate("window.voxcallPlayground.protocol") == "live"
    assert page.input_value("#url").endswith("/v1/live/sessions")
    assert page.evaluate("window.voxcallPlayground.session.id").startswith("live_")
    page.click("#mic")
    expect(page.locator("#transcript li.assistant .text").last).to_contain_text("The answer is 96.", timeout=TURN_MS)
    expect(page.locator("#transcript li.user .text").first).to_have_text(
        re.compile(r"(12|twelve) times (8|eight)", re.I))
    page.wait_for_function(f"{PLAYED} > 0", timeout=TURN_MS)
    kinds = {e["type"] for e in page.evaluate("window.voxcallPlayground.sent")}
    assert {"session.start", "session.input_audio.append"} <= kinds
    assert not kinds & {"session.update", "input_audio_buffer.append", "response.create"}
