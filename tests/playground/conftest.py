"""Fixtures for the playground tests: real ``voxcall serve`` processes, a piper-spoken question, and headless
Chromium driven by Playwright with that question as its fake microphone.

Chromium is Debian's ``chromium`` package (Playwright cannot download its own browsers here: it is launched with
``executable_path``). Without it or the ``playwright`` package the browser tests skip, or fail under CI.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.requirements import require_module, require_program
from tests.serve import ServeProcess, serve
from voxcall.client.wavfile import write_wav
from voxcall.llm.scripted import DEFAULT_SCRIPT_DATA

QUESTION = "What is twelve times eight?"
SERVER_TOOLS = "tools:\n  builtin: [calculator]\n"
"""The server runs the calculator itself: the spoken question's tool call is a server tool call."""
STORY = {"match": "story", "reply": "Once upon a time, a small server learned to listen. Every day it heard "
                                    "questions, worked out the answers with its tools, and said them aloud, one "
                                    "short phrase after another, until somebody spoke over it."}
"""A reply long enough (about ten seconds of speech) to be spoken over."""
TEST_KEY = "playground-test-key"
READY_MS = 30_000
TURN_MS = 60_000  # generous: a busy 2-core machine may take seconds per stage


@pytest.fixture(scope="module")
def server(speech_models: None, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeProcess]:
    """``voxcall serve --llm scripted --speech``: the demo script (plus :data:`STORY`), the built-in calculator as
    a server tool, and the client key :data:`TEST_KEY` required."""
    folder = tmp_path_factory.mktemp("serve")
    config, script = folder / "voxcall.yaml", folder / "script.json"
    config.write_text(SERVER_TOOLS, encoding="utf-8")
    script.write_text(json.dumps({**DEFAULT_SCRIPT_DATA, "rules": [STORY, *DEFAULT_SCRIPT_DATA["rules"]]}))
    with serve("--llm", "scripted", "--speech", "--config", str(config), "--script", str(script),
               env={"VOXCALL_API_KEYS": TEST_KEY}) as served:
        yield served


@pytest.fixture(scope="module")
def question_wav(speech_models: None, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """:data:`QUESTION` spoken by piper, after a quarter second of silence: a 16-bit PCM WAV, as Chromium's fake
    microphone reads it (played once: the browser is told ``%noloop``; silence follows)."""
    return write_question(tmp_path_factory.mktemp("voice") / "question.wav", lead_s=0.25)


def write_question(path: Path, *, lead_s: float) -> Path:
    """:data:`QUESTION` spoken by piper after ``lead_s`` seconds of silence, as a 16-bit PCM WAV at ``path``."""
    from voxcall.speech import get_piper

    piper = get_piper()
    pcm = np.concatenate([np.asarray(chunk, np.int16) for chunk in piper.synthesize(QUESTION)])
    write_wav(path, np.concatenate([np.zeros(int(piper.sample_rate * lead_s), np.int16), pcm]), piper.sample_rate)
    return path


@pytest.fixture(scope="session")
def chromium() -> str:
    """The path of Debian's Chromium, with Playwright installed to drive it; checked before any server starts."""
    require_module("playwright.sync_api")
    return require_program("chromium")


@pytest.fixture(scope="module")
def browser(chromium: str, question_wav: Path) -> Iterator[Any]:
    """Headless Chromium whose microphone says the question (permission granted without asking)."""
    sync_api = require_module("playwright.sync_api")
    with sync_api.sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=chromium, args=[
            "--use-fake-ui-for-media-stream", "--use-fake-device-for-media-stream",
            f"--use-file-for-fake-audio-capture={question_wav}%noloop", "--autoplay-policy=no-user-gesture-required"])
        try:
            yield launched
        finally:
            launched.close()


OpenPage = Callable[..., Any]


@pytest.fixture
def open_page(browser: Any) -> Iterator[OpenPage]:
    """Opens the playground of a server in a fresh browser context and connects it with an API key (by default
    :data:`TEST_KEY`); the test fails if the page throws an uncaught error."""
    contexts: list[Any] = []
    errors: list[str] = []

    def open_playground(server: ServeProcess, key: str = TEST_KEY, *, ready: bool = True,
                        protocol: str = "realtime") -> Any:
        context = browser.new_context(viewport={"width": 1400, "height": 900})
        contexts.append(context)
        page = context.new_page()
        page.on("pageerror", lambda error: errors.append(str(error)))
        page.goto(server.http_url)
        if key:
            page.fill("#api-key", key)
        page.select_option("#protocol", protocol)
        page.click("#connect")
        if ready:
            page.wait_for_selector("#connection[data-state=ready]", timeout=READY_MS)
        return page

    yield open_playground
    for context in contexts:
        context.close()
    assert not errors, f"the page threw: {errors}"
