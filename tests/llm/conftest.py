"""Fixtures for the LLM backend tests: tools to offer (the fake OpenAI-compatible ``server`` is tests/conftest.py's)."""

from __future__ import annotations

import os

import pytest

from voxcall.tools import Tool

os.environ["HF_HUB_OFFLINE"] = "1"  # nothing in these tests may reach a model hub


@pytest.fixture
def weather_tool() -> Tool:
    return Tool(name="get_weather", description="Current weather for a city.",
                parameters={"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]})


@pytest.fixture
def calculator_tool() -> Tool:
    return Tool(name="calculator", description="Calculate a op b.",
                parameters={"type": "object",
                            "properties": {"op": {"type": "string", "enum": ["add", "sub", "mul", "div"]},
                                           "a": {"type": "number"}, "b": {"type": "number"}},
                            "required": ["op", "a", "b"]})
