"""Client tools: loaded from a tool module (by file or by name) and run through a registry."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from voxcall.client.chat import builtin_tools
from voxcall.client.tools import ToolModuleError, load_tool_module


async def test_a_module_file_is_loaded_and_run(tool_module: Path) -> None:
    tools = load_tool_module(str(tool_module))
    assert [tool["name"] for tool in tools.definitions] == ["calculator"]
    assert await tools.run("calculator", '{"op": "mul", "a": 12, "b": 8}') == "96"
    assert await tools.run("calculator", "not json") == "error: the arguments are not valid JSON: 'not json'"
    assert await tools.run("calculator", "[1]") == "error: the arguments must be a JSON object"
    assert "'x' is not one of" in await tools.run("calculator", '{"op": "x", "a": 1, "b": 0}')


async def test_a_module_is_loaded_by_name(tool_module: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(tool_module.parent))
    monkeypatch.delitem(sys.modules, tool_module.stem, raising=False)
    tools = load_tool_module(tool_module.stem)
    assert await tools.run("calculator", '{"op": "add", "a": 1, "b": 2}') == "3"


@pytest.mark.parametrize(("source", "message"), [
    ("TOOLS = []\ndef execute_tool(name, arguments): pass\n", "needs an 'async def execute_tool"),
    ("X = 1\n", "defines no tools"),
    ("raise RuntimeError('boom')\n", "(RuntimeError: boom)"),
])
def test_a_broken_module_is_a_clear_error(source: str, message: str, tmp_path: Path) -> None:
    path = tmp_path / "broken.py"
    path.write_text(source, encoding="utf-8")
    with pytest.raises(ToolModuleError) as caught:
        load_tool_module(str(path))
    assert str(caught.value).startswith(f"tool module {path}: ") and message in str(caught.value)


def test_a_missing_file_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ToolModuleError, match="no such file"):
        load_tool_module(str(tmp_path / "absent.py"))


async def test_the_chat_builtins_run_through_their_registry() -> None:
    tools = builtin_tools()
    assert [tool["name"] for tool in tools.definitions] == ["calculator"]
    assert await tools.run("calculator", '{"op": "mul", "a": 12, "b": 8}') == "96"
    assert "argument 'a'" in await tools.run("calculator", '{"op": "mul", "a": "x", "b": 8}')
