"""Warming the prompt: what a tool set the server has not seen costs a first turn, with and without a warm.

For each of five tool sets (three or four tools, schemas unlike each other, none seen before by the process) a
``LlamaCppBackend`` with the packaged SmolLM2-135M is asked one spoken request, as a session's first turn:

- cold: the request with nothing of its prompt in the context (system prompt, tool stubs and demonstrations are
  evaluated, then the user's words);
- warm: the time :meth:`~voxcall.llm.local.llamacpp.LlamaCppBackend.warm` takes on the request without the user's words
  (what a session can do between ``session.update`` and the end of the user's speech);
- warmed: the same request after that warm, with only the user's words left to evaluate.

Between the cold run and the warm the context is given another conversation, so that the warm starts cold too.
First token is the time to the first event of the reply (a text delta or the start of a call). Prints each set,
then the medians, and the prompt token counts.

    python benchmarks/bench_warm.py [--model PATH]

A run takes a minute or two on two idle cores.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import time
from collections.abc import Awaitable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from voxcall.config import DEFAULT_INSTRUCTIONS
from voxcall.llm import LLMRequest, Message, TextDelta, ToolCallStart, Usage, warm
from voxcall.llm.local.llamacpp import LlamaCppBackend
from voxcall.tools import Tool

os.environ.setdefault("HF_HUB_OFFLINE", "1")

MAX_OUTPUT_TOKENS = 12  # only the first token is timed; the rest are for the token counts


def _schema(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": required}


TOOL_SETS: list[tuple[list[Tool], str]] = [
    ([Tool("book_flight", "Book a flight between two airports.",
           _schema({"origin": {"type": "string", "examples": ["LHR"]},
                    "destination": {"type": "string", "examples": ["JFK"]},
                    "date": {"type": "string", "format": "date", "examples": ["2025-05-01"]},
                    "passengers": {"type": "integer", "minimum": 1, "maximum": 9}},
                   ["origin", "destination", "date"])),
      Tool("convert_currency", "Convert an amount of money between currencies.",
           _schema({"amount": {"type": "number", "examples": [100]},
                    "source": {"type": "string", "enum": ["EUR", "USD", "GBP", "JPY"]},
                    "target": {"type": "string", "enum": ["EUR", "USD", "GBP", "JPY"]}},
                   ["amount", "source", "target"])),
      Tool("visa_rules", "Look up the visa rules for travelling to a country.",
           _schema({"country": {"type": "string", "examples": ["Japan"]},
                    "nationality": {"type": "string", "examples": ["French"]}}, ["country"]))],
     "Book a flight from Paris to Rome on the third of June."),
    ([Tool("set_thermostat", "Set the target temperature of a room.",
           _schema({"room": {"type": "string", "enum": ["living room", "bedroom", "office"]},
                    "celsius": {"type": "number", "minimum": 10, "maximum": 30}}, ["room", "celsius"])),
      Tool("lock_door", "Lock or unlock a door of the house.",
           _schema({"door": {"type": "string", "enum": ["front", "back", "garage"]},
                    "locked": {"type": "boolean"}}, ["door", "locked"])),
      Tool("start_vacuum", "Start the robot vacuum.",
           _schema({"rooms": {"type": "array", "items": {"type": "string"}, "examples": [["kitchen", "hall"]]},
                    "mode": {"type": "string", "enum": ["quiet", "normal", "turbo"]}}, ["rooms"])),
      Tool("water_plants", "Water a garden zone for some seconds.",
           _schema({"zone": {"type": "integer", "minimum": 1, "maximum": 6},
                    "seconds": {"type": "integer", "default": 60}}, ["zone"]))],
     "Set the bedroom to twenty one degrees."),
    ([Tool("find_recipe", "Find recipes that use some ingredients.",
           _schema({"ingredients": {"type": "array", "items": {"type": "string"}, "examples": [["eggs", "leeks"]]},
                    "max_minutes": {"type": "integer", "examples": [30]},
                    "vegetarian": {"type": "boolean"}}, ["ingredients"])),
      Tool("convert_units", "Convert a cooking quantity to another unit.",
           _schema({"value": {"type": "number", "examples": [2]},
                    "unit": {"type": "string", "enum": ["cup", "gram", "ounce", "tablespoon"]},
                    "to": {"type": "string", "enum": ["cup", "gram", "ounce", "tablespoon"]}},
                   ["value", "unit", "to"])),
      Tool("add_to_list", "Add an item to the shopping list.",
           _schema({"item": {"type": "string", "examples": ["milk"]},
                    "quantity": {"type": "integer", "minimum": 1}}, ["item"]))],
     "Find me a recipe with rice and mushrooms."),
    ([Tool("log_workout", "Record a workout in the training diary.",
           _schema({"activity": {"type": "string", "enum": ["run", "swim", "cycle", "yoga"]},
                    "minutes": {"type": "integer", "examples": [45]},
                    "distance_km": {"type": "number"}}, ["activity", "minutes"])),
      Tool("record_dose", "Record a medication dose just taken.",
           _schema({"medicine": {"type": "string", "examples": ["ibuprofen"]},
                    "milligrams": {"type": "number", "examples": [200]}}, ["medicine", "milligrams"])),
      Tool("book_doctor", "Book an appointment with a doctor.",
           _schema({"specialty": {"type": "string", "enum": ["general", "dentist", "eyes", "skin"]},
                    "urgent": {"type": "boolean", "default": False}}, ["specialty"]))],
     "I just ran for forty minutes, log it."),
    ([Tool("schedule_meeting", "Put a meeting in the calendar.",
           _schema({"title": {"type": "string", "examples": ["Budget review"]},
                    "attendees": {"type": "array", "items": {"type": "string", "format": "email"},
                                  "examples": [["ana@example.com"]]},
                    "start": {"type": "string", "format": "date-time", "examples": ["2025-05-01T10:00"]},
                    "minutes": {"type": "integer", "default": 30}}, ["title", "start"])),
      Tool("send_email", "Send an email.",
           _schema({"to": {"type": "string", "examples": ["bob@example.com"]},
                    "subject": {"type": "string", "examples": ["Hello"]},
                    "body": {"type": "string"}}, ["to", "subject"])),
      Tool("search_files", "Search the shared drive for documents.",
           _schema({"query": {"type": "string", "examples": ["quarterly report"]},
                    "kind": {"type": "string", "enum": ["pdf", "sheet", "slides", "text"]}}, ["query"])),
      Tool("translate", "Translate a text into another language.",
           _schema({"text": {"type": "string", "examples": ["good morning"]},
                    "language": {"type": "string", "enum": ["French", "German", "Spanish"]}},
                   ["text", "language"]))],
     "Translate thank you very much into German."),
]
"""The tool sets, each with the request a user makes of it."""


@dataclass
class Figures:
    """One tool set's times (seconds) and token counts."""

    cold_first: float
    warm_duration: float
    warmed_first: float
    prefix_tokens: int
    cold_usage: Usage
    warmed_usage: Usage


async def first_token(backend: LlamaCppBackend, request: LLMRequest) -> tuple[float, Usage]:
    """Seconds to the reply's first event, and the request's Usage."""
    started = time.perf_counter()
    first: float | None = None
    usage = Usage(0, 0)
    async for event in backend.stream(request):
        if first is None and isinstance(event, TextDelta | ToolCallStart):
            first = time.perf_counter() - started
        if isinstance(event, Usage):
            usage = event
    return (first if first is not None else time.perf_counter() - started), usage


async def timed(work: Awaitable[None]) -> float:
    started = time.perf_counter()
    await work
    return time.perf_counter() - started


async def measure(backend: LlamaCppBackend, tools: list[Tool], words: str) -> Figures:
    """The cold run, the warm and the warmed run of one tool set's request."""
    before = LLMRequest(items=[], instructions=DEFAULT_INSTRUCTIONS, tools=tools, voice=True,
                        max_output_tokens=MAX_OUTPUT_TOKENS)
    request = LLMRequest(items=[Message("user", words)], instructions=DEFAULT_INSTRUCTIONS, tools=tools,
                         voice=True, max_output_tokens=MAX_OUTPUT_TOKENS)
    cold_first, cold_usage = await first_token(backend, request)
    await first_token(backend, LLMRequest(items=[Message("user", "Hello!")], max_output_tokens=2))  # evict
    warm_duration = await timed(warm(backend, before))
    warmed_first, warmed_usage = await first_token(backend, request)
    return Figures(cold_first, warm_duration, warmed_first, len(backend.planner.prefix(before)), cold_usage,
                   warmed_usage)


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:7.0f} ms"


async def run(model: Path | None) -> None:
    backend = LlamaCppBackend(model)
    try:
        await first_token(backend, LLMRequest(items=[Message("user", "Hi!")], max_output_tokens=2))  # load pages
        results: list[Figures] = []
        print("set  cold first token   warm      warmed first token   prompt/prefix/cached(warmed) tokens")
        for number, (tools, words) in enumerate(TOOL_SETS, 1):
            f = await measure(backend, tools, words)
            results.append(f)
            print(f"{number:>3}  {_ms(f.cold_first)}  {_ms(f.warm_duration)}  {_ms(f.warmed_first)}        "
                  f"{f.cold_usage.input_tokens}/{f.prefix_tokens}/{f.warmed_usage.cached_input_tokens}")
        print("\nmedian over", len(results), "tool sets:")
        print(f"  first token, cold tools prompt:  {_ms(statistics.median(f.cold_first for f in results))}")
        print(f"  warm (prefix evaluated ahead):    {_ms(statistics.median(f.warm_duration for f in results))}")
        print(f"  first token after the warm:       {_ms(statistics.median(f.warmed_first for f in results))}")
        left = statistics.median(f.warmed_usage.input_tokens - f.warmed_usage.cached_input_tokens for f in results)
        print(f"  prompt tokens: {statistics.median(f.cold_usage.input_tokens for f in results):.0f}, "
              f"of which warmed ahead: {statistics.median(f.prefix_tokens for f in results):.0f}, "
              f"left for the request: {left:.0f}")
    finally:
        await backend.aclose()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--model", type=Path, help="a GGUF file (default: the packaged SmolLM2-135M)")
    asyncio.run(run(parser.parse_args().model))


if __name__ == "__main__":
    main()
