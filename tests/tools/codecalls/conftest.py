"""Tools shared by the code-call tests: a weather lookup, a calculator and a tool with awkward names."""

from __future__ import annotations

import pytest

from voxcall.tools import Tool

WEATHER = Tool("get_weather", "Get the current weather.", {
    "type": "object",
    "properties": {"city": {"type": "string", "description": "City name."},
                   "unit": {"type": "string", "enum": ["c", "f"]}},
    "required": ["city"],
})
CALCULATOR = Tool("calculator", "Do arithmetic.", {
    "type": "object",
    "properties": {"op": {"type": "string", "enum": ["add", "sub", "mul", "div"]},
                   "a": {"type": "number"}, "b": {"type": "number"}},
    "required": ["op", "a", "b"],
})
SEND = Tool("send-mail", "Send a message.", {
    "type": "object",
    "properties": {"from": {"type": "string"}, "user-id": {"type": "integer"},
                   "tags": {"type": "array", "items": {"type": "string"}}, "meta": {"type": "object"}},
    "required": ["from"],
})
TIMER = Tool("set_timer", "Start a timer.", {
    "type": "object",
    "properties": {"label": {"type": "string", "default": "timer"}, "seconds": {"type": "integer"}},
    "required": ["seconds"],
})
ALL_TOOLS = [WEATHER, CALCULATOR, SEND, TIMER]


@pytest.fixture
def tools() -> list[Tool]:
    return ALL_TOOLS
