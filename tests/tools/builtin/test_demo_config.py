"""``examples/demo.yaml``, what ``make serve`` runs with: a newcomer's first questions (a sum, the time) call tools,
in a session and through a real ``voxcall serve`` asked by ``voxcall talk --text`` (no client tools)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from tests.harness import ControlledBackend, Harness, Turn
from tests.serve import serve
from voxcall import cli
from voxcall.config import ServerSettings
from voxcall.core.tools.toolbox import Toolbox
from voxcall.llm.scripted import ScriptedBackend

ROOT = Path(__file__).resolve().parents[3]
DEMO = ROOT / "examples" / "demo.yaml"


async def ask(h: Harness, text: str) -> dict[str, Any]:
    await h.say(text)
    await h.send(type="response.create")
    return await h.wait("response.done")


def outputs(h: Harness) -> dict[str, str]:
    """The output of each server call of the conversation (an ``mcp_call`` item), by tool name."""
    items = [item.to_wire() for item in h.session.conversation.items]
    return {item["name"]: item["output"] for item in items if item["type"] == "mcp_call"}


async def test_the_demo_offers_the_calculator_and_the_clock_and_runs_them() -> None:
    settings = ServerSettings.load(DEMO)
    assert settings.tools.builtin == ["calculator", "clock"] and not settings.tools.modules and not settings.mcp.servers
    toolbox = await Toolbox.from_settings(settings)
    backend = ControlledBackend(Turn("", [("calculator", {"op": "mul", "a": 12, "b": 8})]), Turn("It is 96."),
                                Turn("", [("current_time", {"timezone": "Europe/Paris"})]), Turn("Here it is."))
    async with Harness(backend, toolbox=toolbox) as h:
        await ask(h, "What is twelve times eight?")
        await ask(h, "What time is it in Paris?")
        ran = outputs(h)
    await toolbox.aclose()
    assert {tool.name for tool in backend.requests[0].tools} == {"calculator", "current_time"}
    assert ran["calculator"] == "96" and ran["current_time"].endswith("(Europe/Paris)")


async def test_the_demo_script_answers_a_sum_written_in_symbols_with_the_calculator() -> None:
    toolbox = await Toolbox.from_settings(ServerSettings.load(DEMO))
    async with Harness(ScriptedBackend(), toolbox=toolbox) as h:
        done = await ask(h, "What is 12*8?")
        ran = outputs(h)
    await toolbox.aclose()
    call, answer = done["response"]["output"][-2:]
    assert (call["type"], json.loads(call["arguments"])) == ("mcp_call", {"op": "mul", "a": 12, "b": 8})
    assert ran == {"calculator": "96"} and answer["content"][0]["text"] == "The answer is 96."


async def test_the_calculator_takes_numbers_never_expressions_to_evaluate() -> None:
    toolbox = await Toolbox.from_settings(ServerSettings.load(DEMO))
    for a in ("12*8", "__import__('os').system('true')", "1e999"):
        result = await toolbox.registry.call("calculator", {"op": "mul", "a": a, "b": 8})
        assert result.is_error and "invalid arguments" in result.output, (a, result.output)
    await toolbox.aclose()


def test_make_serve_answers_a_newcomers_sum_with_the_calculator() -> None:
    """``make serve``'s command (the demo script: what it answers with when no local model is installed)."""
    with serve("--config", str(DEMO.relative_to(ROOT)), "--llm", "scripted", "--no-speech", cwd=ROOT) as server:
        result = CliRunner().invoke(cli.app, ["talk", "--url", server.url, "--text", "What is twelve times eight?"],
                                    env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[-1] == "assistant › The answer is 96.", result.stdout
