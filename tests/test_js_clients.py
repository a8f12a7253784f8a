"""Third-party clients in JavaScript: the OpenAI Agents SDK (``@openai/agents-realtime``) against a real server.

``tests/js`` holds the Node tests (``node --test``), their ``package.json`` and lockfile, the scripted backend's
script and the server's settings; this test installs the packages from the lockfile when they are missing or stale
(``npm ci``), starts ``voxcall serve`` (scripted backend, the packaged speech models, an MCP server), writes the
question the audio test speaks (piper, PCM16 24 kHz) and runs them. Without ``node`` and ``npm`` it skips, except
under CI, where it fails.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import numpy as np

from tests.requirements import require_node_packages
from tests.serve import serve
from voxcall.audio.codec import resample
from voxcall.client.wavfile import write_wav

JS_DIR = Path(__file__).with_name("js")
NODE_TIMEOUT_S = 600
"""Seconds the Node tests may take, all together."""
RATE = 24000


def write_question(path: Path, text: str) -> Path:
    """``text`` spoken by piper in its steady voice (the same samples every run) as a PCM16 24 kHz WAV file: a
    quarter second before it, a second and a half after (so the turn detector ends the turn)."""
    from voxcall.speech import get_piper

    piper = get_piper()
    speech = resample(np.concatenate([np.asarray(chunk, np.int16) for chunk in piper.synthesize(text, steady=True)]),
                      piper.sample_rate, RATE)
    write_wav(path, np.concatenate([np.zeros(RATE // 4, np.int16), speech, np.zeros(RATE * 3 // 2, np.int16)]), RATE)
    return path


def test_the_agents_sdk_talks_to_voxcall(speech_models: None, tmp_path: Path) -> None:
    node = require_node_packages(JS_DIR)
    question = write_question(tmp_path / "question.wav", "What is 12 times 8?")
    with serve("--llm", "scripted", "--speech", "--script", str(JS_DIR / "script.yaml"),
               "--config", str(JS_DIR / "voxcall.yaml")) as server:
        done = subprocess.run([node, "--test", "--test-reporter=tap", str(JS_DIR)], capture_output=True, text=True,
                              timeout=NODE_TIMEOUT_S,
                              env={**os.environ, "VOXCALL_URL": server.url, "VOXCALL_QUESTION_WAV": str(question)})
    report = f"{done.stdout}\n{done.stderr}\n--- voxcall serve ---\n{server.output}"
    declared = sum(len(re.findall(r"^test\(", test.read_text(), re.MULTILINE)) for test in JS_DIR.glob("*.test.mjs"))
    assert done.returncode == 0, report
    assert re.search(rf"^# pass {declared}$", done.stdout, re.MULTILINE) and declared >= 6, report
