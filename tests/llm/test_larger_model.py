"""The catalog's larger model (Qwen2.5-Coder-0.5B) through the session code, as ``voxcall chat`` runs it.

These pin the behaviour that made it worth shipping (greedy decoding, so each run is the same): calls in voxcall's
``<code>`` syntax under the grammar whatever its chat template declares, English and Chinese requests mapped to
the right tool and values. Its quality in numbers is ``benchmarks/bench_local_tools.py``'s.
"""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from tests.requirements import require_catalog_model
from voxcall import cli
from voxcall.llm import LLMRequest, Message, ToolCall, create_backend
from voxcall.llm.local import LocalBackend
from voxcall.tools import Tool
from voxcall.tools.codecalls.formats import detect_format

MODEL = "qwen2.5-coder-0.5b"

HOME_MODULE = '''
import json
from pathlib import Path

TOOLS = [
    {"type": "function", "name": "set_volume", "description": "Set the speaker volume, from 0 (silent) to 100.",
     "parameters": {"type": "object", "required": ["level"],
                    "properties": {"level": {"type": "integer", "minimum": 0, "maximum": 100}}}},
    {"type": "function", "name": "set_timer", "description": "Start a countdown timer.",
     "parameters": {"type": "object", "required": ["minutes"],
                    "properties": {"minutes": {"type": "number", "description": "How long the timer runs."}}}},
]


async def execute_tool(name, arguments):
    with Path(__file__).with_name("ran.jsonl").open("a") as ran:
        ran.write(json.dumps({"name": name, "arguments": arguments}) + "\\n")
    return "done"
'''


@pytest.fixture(scope="module")
def larger_model() -> Path:
    return require_catalog_model(MODEL)


@pytest.fixture(autouse=True)
def isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No VOXCALL_* settings from the shell and no ./voxcall.yaml."""
    for name in list(os.environ):
        if name.startswith("VOXCALL_"):
            monkeypatch.delenv(name)
    monkeypatch.chdir(tmp_path)


def chat(*args: str) -> Result:
    return CliRunner().invoke(cli.app, ["chat", *args, "--model", MODEL], env={"COLUMNS": "200"})


@pytest.mark.usefixtures("larger_model")
async def test_it_writes_code_calls_though_its_template_declares_hermes() -> None:
    backend = create_backend("llamacpp", model=MODEL)
    try:
        assert isinstance(backend, LocalBackend)
        assert detect_format(backend.planner.vocabulary.template.source) is not None  # Hermes <tool_call>
        assert backend.tool_format is None  # the catalog's measured choice: <code> calls
    finally:
        await backend.aclose()


@pytest.mark.usefixtures("larger_model")
def test_english_arithmetic_calls_the_calculator() -> None:
    result = chat("What is 12 times 8?")
    assert result.exit_code == 0, result.output
    assert '→ calculator({"op":"mul","a":12,"b":8})' in result.stdout
    assert "← calculator: 96" in result.stdout


@pytest.mark.usefixtures("larger_model")
@pytest.mark.parametrize(("request_text", "call"), [
    ("把音量调到百分之三十。", {"name": "set_volume", "arguments": {"level": 30}}),
    ("设一个五分钟的计时器。", {"name": "set_timer", "arguments": {"minutes": 5}}),
])
def test_chinese_requests_call_the_right_tool(tmp_path: Path, request_text: str, call: dict[str, object]) -> None:
    module = tmp_path / "home_tools.py"
    module.write_text(HOME_MODULE, encoding="utf-8")
    result = chat(request_text, "--tool-module", str(module))
    assert result.exit_code == 0, result.output
    ran = [json.loads(line) for line in (tmp_path / "ran.jsonl").read_text(encoding="utf-8").splitlines()]
    assert ran[:1] == [call]


HOME_TOOLS = [
    Tool("play_music", "Play music: a song, an artist or a genre.",
         {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]}),
    Tool("set_lights", "Turn the lights in a room on or off.",
         {"type": "object", "properties": {"room": {"type": "string"}, "on": {"type": "boolean"}},
          "required": ["room", "on"]}),
]


@pytest.mark.usefixtures("larger_model")
@pytest.mark.parametrize(("request_text", "call"), [
    ("What does a light year measure?", None),  # a tool's word in another sense (a call 0.00013, the 7 tools)
    ("Can you explain what a light bulb does?", None),
    ("Can I hear some country music?", ("play_music", {"query": "country"})),  # the least sure right call: 0.038
    ("Switch the lounge lights on.", ("set_lights", {"room": "lounge", "on": True})),  # it wrote on=False
])
async def test_an_evident_request_is_a_call_unless_the_model_gives_one_all_but_no_chance(
        request_text: str, call: tuple[str, dict[str, object]] | None) -> None:
    backend = create_backend("llamacpp", model=MODEL)
    request = LLMRequest(items=[Message("user", request_text)], tools=HOME_TOOLS, voice=True, max_output_tokens=24)
    try:
        async with asyncio.timeout(120):  # a cold tools prompt on a busy 2-core machine: seconds, not minutes
            events = [event async for event in backend.stream(request)]
    finally:
        await backend.aclose()
    calls = [(event.name, event.arguments) for event in events if isinstance(event, ToolCall)]
    assert calls == ([call] if call else []), calls
