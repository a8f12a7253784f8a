"""The seven tools of the everyday request sets (:mod:`everyday_set`, its later batches :mod:`everyday_later`, and
:mod:`everyday_held_out`): calculator, play/stop music, volume, timer, weather, lights; and how a request's expected
call is written (:data:`Expected`: the tool's name and the argument sets accepted).
"""

from __future__ import annotations

from typing import Any

from voxcall.tools import Tool
from voxcall.tools.builtin.calculator import calculator


def _schema(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": required}


TOOLS = [
    Tool.from_function(calculator),
    Tool("play_music", "Play music: a song, an artist or a genre.",
         _schema({"query": {"type": "string", "description": "What to play.", "examples": ["jazz"]}}, ["query"])),
    Tool("stop_music", "Stop the music that is playing."),
    Tool("set_volume", "Set the speaker volume, from 0 (silent) to 100 (loudest).",
         _schema({"level": {"type": "integer", "minimum": 0, "maximum": 100, "examples": [40]}}, ["level"])),
    Tool("set_timer", "Start a countdown timer.",
         _schema({"minutes": {"type": "number", "description": "How long the timer runs.", "examples": [10]}},
                 ["minutes"])),
    Tool("get_weather", "Get the weather forecast for a city.",
         _schema({"city": {"type": "string", "examples": ["Paris"]}}, ["city"])),
    Tool("set_lights", "Turn the lights in a room on or off.",
         _schema({"room": {"type": "string", "examples": ["kitchen"]}, "on": {"type": "boolean"}},
                 ["room", "on"])),
]

Expected = tuple[str, list[dict[str, Any]]]  # tool name, accepted argument sets (the key arguments only)


def _calc(op: str, a: float, b: float) -> Expected:
    forms = [{"op": op, "a": a, "b": b}]
    if op in ("add", "mul"):
        forms.append({"op": op, "a": b, "b": a})
    return "calculator", forms


def _one(name: str, **arguments: Any) -> Expected:
    return name, [arguments]
