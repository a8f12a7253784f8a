"""Fixtures for the LLM backend tests: a fake OpenAI-compatible server and tools to offer."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator

import pytest

from tests.llm.fake_server import FakeServer
from voxcall.tools import Tool

os.environ["HF_HUB_OFFLINE"] = "1"  # nothing in these tests may reach a model hub


@pytest.fixture
async def server() -> AsyncIterator[FakeServer]:
    fake = FakeServer()
    await fake.start()
    yield fake
    await fake.stop()


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
