"""Python tool modules: the three ways a module offers tools, and clear errors for broken ones."""

from __future__ import annotations

from pathlib import Path

import pytest

from voxcall.tools import ToolRegistry
from voxcall.tools.modules import load_tool_module

DECORATED = '''
from voxcall.tools import tool

@tool
def shout(text: str) -> str:
    """Say it louder."""
    return text.upper()

@tool(name="whisper_it", timeout=2.0)
async def quiet(text: str) -> str:
    """Say it softly."""
    return text.lower()

def helper() -> None:
    """Not a tool."""
'''
WITH_REGISTRY = '''
from voxcall.tools import ToolRegistry
tools = ToolRegistry()

@tools.tool
def double(n: int) -> int:
    """Double a number."""
    return 2 * n
'''
CONTRACT = '''
TOOLS = [{"type": "function", "name": "lamp", "description": "Switch the lamp.",
          "parameters": {"type": "object", "properties": {"on": {"type": "boolean"}}, "required": ["on"]}}]

async def execute_tool(name, arguments):
    return {"tool": name, "lamp": "on" if arguments["on"] else "off"}
'''


def write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


async def test_decorated_functions(tmp_path: Path) -> None:
    registry = ToolRegistry()
    tools = load_tool_module(write(tmp_path, "deco.py", DECORATED), registry)
    assert sorted(t.name for t in tools) == ["shout", "whisper_it"]
    assert (await registry.call("shout", {"text": "hi"})).output == "HI"
    assert (await registry.call("whisper_it", {"text": "HI"})).output == "hi"


async def test_module_registry_and_contract(tmp_path: Path) -> None:
    registry = ToolRegistry()
    load_tool_module(write(tmp_path, "reg.py", WITH_REGISTRY), registry)
    load_tool_module(write(tmp_path, "contract.py", CONTRACT), registry)
    assert (await registry.call("double", {"n": 21})).output == "42"
    assert (await registry.call("lamp", {"on": True})).output == '{"tool":"lamp","lamp":"on"}'
    assert (await registry.call("lamp", {"on": "yes"})).is_error  # validated before the module sees it


def test_dotted_module_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(tmp_path, "my_house_tools.py", CONTRACT)
    monkeypatch.syspath_prepend(str(tmp_path))
    registry = ToolRegistry()
    assert [t.name for t in load_tool_module("my_house_tools", registry)] == ["lamp"]
    with pytest.raises(ValueError, match="defines no tools"):
        load_tool_module("json", ToolRegistry())


@pytest.mark.parametrize(("text", "message"), [
    ("x = 1\n", "defines no tools"),
    ("raise RuntimeError('boom')\n", "import failed (RuntimeError: boom)"),
    ("raise ValueError('bad')\n", "import failed (ValueError: bad)"),
    ("TOOLS = []\n", "execute_tool"),
])
def test_broken_modules_give_clear_errors(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        load_tool_module(write(tmp_path, "broken.py", text), ToolRegistry())
    with pytest.raises(ValueError, match="no such file"):
        load_tool_module(str(tmp_path / "missing.py"), ToolRegistry())


def test_duplicate_names_are_an_error(tmp_path: Path) -> None:
    registry = ToolRegistry()
    load_tool_module(write(tmp_path, "a.py", WITH_REGISTRY), registry)
    with pytest.raises(ValueError, match="already registered"):
        load_tool_module(write(tmp_path, "b.py", WITH_REGISTRY), registry)
