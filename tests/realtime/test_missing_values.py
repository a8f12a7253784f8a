"""A request naming a client tool without the value its call needs, through the protocol with the real local model
(SmolLM2-135M alone; the official SDK as the client): the reply asks for the value and calls nothing, and the
user's answer makes the call (the words of both turns)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from openai.resources.realtime.realtime import AsyncRealtimeConnection

from tests.servers import Server
from voxcall.config import ServerSettings, SpeechSettings
from voxcall.llm import LOCAL_KIND, create_backend

WEATHER = {"type": "function", "name": "get_weather", "description": "Get the weather forecast for a city.",
           "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}


async def said(conn: AsyncRealtimeConnection, text: str) -> list[Any]:
    """The output of the response to the user's ``text``."""
    await conn.conversation.item.create(item={"type": "message", "role": "user",
                                              "content": [{"type": "input_text", "text": text}]})
    await conn.response.create()
    async for event in conn:
        if event.type == "response.done":
            assert event.response.status == "completed", event.response
            return list(event.response.output or [])
    raise AssertionError("the connection closed before the response was done")


async def test_a_value_left_out_is_asked_for_and_the_answer_makes_the_call(smollm2: Path) -> None:
    settings = ServerSettings(llm=LOCAL_KIND, speech=SpeechSettings(enabled=False))
    async with Server(settings, create_backend(LOCAL_KIND, model=str(smollm2))) as running, \
            running.client().realtime.connect(model="m") as conn:
        await conn.session.update(session={"type": "realtime", "output_modalities": ["text"], "tools": [WEATHER],
                                           "tool_choice": "auto"})
        asked = await said(conn, "What's the weather?")
        assert [item.type for item in asked] == ["message"]  # no get_weather(city='the')
        assert asked[0].content[0].text == "Could you tell me the city?"
        answered = await said(conn, "Paris.")
        calls = [item for item in answered if item.type == "function_call"]
        assert [call.name for call in calls] == ["get_weather"]
        assert "Paris" in json.loads(calls[0].arguments)["city"]
