"""Tool calling with a local model: how often it calls the right tool with the right values, in English and Chinese.

Sends everyday voice requests, one per fresh conversation, to a ``LlamaCppBackend`` offering seven tools
(calculator, play/stop music, volume, timer, weather, lights): requests that need a tool, each with the call
expected (name and key arguments; strings compared case-insensitively, numbers by value, any of a few accepted
forms), and requests that need none. Prints:

- correct-call rate: the reply's first call has the expected name and arguments (target >= 90 %);
- false-call rate: requests needing no tool that got a call or an attempt at one (target <= 5 %);
- Chinese: the seeds' Chinese requests called right, and false calls on Chinese chat;
- tool-syntax leaks: ``<code``, ``</code>``, a fence, or ``tool_name(`` in the spoken text (target 0);
- prompt tokens the tools cost (stubs, rules and demonstrations: a request's input with tools minus without);
- follow-ups: after a call and its output, whether the reply relays the output or calls a tool again;
- time to first event (a text delta, or a complete call), cold (nothing cached) and warm (the shared prefix
  cached; target median <= 300 ms), the warm ones also split by kind of reply.

    python benchmarks/bench_local_tools.py [--limit N] [--model NAME|PATH] [--models A,B] [--call-threshold P|none]
                                           [--no-demos] [--follow-up-demo] [--no-grammar] [--text] [-v]
                                           [--unrelated model|on|off] [more: local_variant.py]

``--models smollm2-135m,qwen2.5-coder-0.5b`` runs every request with each model in turn and ends with their figures
side by side. ``--limit N`` keeps the first N requests of each kind (no Chinese ones), for quick iterations. A
full run takes 2-4 minutes a model on 2 cores.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import time
from dataclasses import dataclass, field, replace
from typing import Any

from local_variant import Backend, add_backend_options, describe, make_backend, model_name, replace_model
from voxcall.config import DEFAULT_INSTRUCTIONS
from voxcall.llm import (
    ChatItem,
    Done,
    FunctionCallItem,
    FunctionOutputItem,
    LLMRequest,
    Message,
    RejectedCall,
    TextDelta,
    ToolCall,
    ToolCallStart,
    Usage,
)
from voxcall.tools import Tool
from voxcall.tools.builtin.calculator import calculator

os.environ.setdefault("HF_HUB_OFFLINE", "1")

TARGET_CORRECT = 0.90
TARGET_FALSE = 0.05
TARGET_WARM_TTFT_S = 0.300
MAX_OUTPUT_TOKENS = 48  # a spoken answer is a sentence or two; a call is shorter


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


TOOL_REQUESTS: list[tuple[str, Expected]] = [
    ("What's 12 times 8?", _calc("mul", 12, 8)),
    ("Add 15 and 27.", _calc("add", 15, 27)),
    ("What is 100 divided by 4?", _calc("div", 100, 4)),
    ("Subtract 9 from 30.", _calc("sub", 30, 9)),
    ("How much is 7 plus 5?", _calc("add", 7, 5)),
    ("Multiply 6 by 9.", _calc("mul", 6, 9)),
    ("What's 81 divided by 9?", _calc("div", 81, 9)),
    ("Calculate 250 minus 75.", _calc("sub", 250, 75)),
    ("What is 3.5 times 2?", _calc("mul", 3.5, 2)),
    ("Can you add 1200 and 345?", _calc("add", 1200, 345)),
    ("Play some jazz.", ("play_music", [{"query": "jazz"}, {"query": "some jazz"}, {"query": "jazz music"}])),
    ("Play Bohemian Rhapsody.", _one("play_music", query="Bohemian Rhapsody")),
    ("Put on some classical music.", ("play_music", [{"query": "classical"}, {"query": "classical music"}])),
    ("I want to hear the Beatles.", ("play_music", [{"query": "the Beatles"}, {"query": "Beatles"}])),
    ("Play rock music.", ("play_music", [{"query": "rock"}, {"query": "rock music"}])),
    ("Play something by Taylor Swift.", ("play_music", [{"query": "Taylor Swift"}])),
    ("Can you play Imagine by John Lennon?", ("play_music", [{"query": "Imagine"}, {"query": "Imagine by John Lennon"},
                                                            {"query": "Imagine John Lennon"}])),
    ("Play some reggae.", ("play_music", [{"query": "reggae"}, {"query": "reggae music"}])),
    ("Play the song Yesterday.", ("play_music", [{"query": "Yesterday"}])),
    ("Stop the music.", _one("stop_music")),
    ("Stop playing.", _one("stop_music")),
    ("Turn the music off.", _one("stop_music")),
    ("Please stop the song.", _one("stop_music")),
    ("Enough music, stop it.", _one("stop_music")),
    ("Music off, please.", _one("stop_music")),
    ("Set the volume to 50.", _one("set_volume", level=50)),
    ("Volume 30, please.", _one("set_volume", level=30)),
    ("Turn the volume up to 80.", _one("set_volume", level=80)),
    ("Set the volume to 10.", _one("set_volume", level=10)),
    ("Make it louder, volume 90.", _one("set_volume", level=90)),
    ("Change the volume to 25.", _one("set_volume", level=25)),
    ("Lower the volume to 20.", _one("set_volume", level=20)),
    ("Mute the speaker, volume zero.", _one("set_volume", level=0)),
    ("Set a timer for 5 minutes.", _one("set_timer", minutes=5)),
    ("Start a 10 minute timer.", _one("set_timer", minutes=10)),
    ("Timer for 20 minutes, please.", _one("set_timer", minutes=20)),
    ("Set a timer for 3 minutes.", _one("set_timer", minutes=3)),
    ("Remind me in 15 minutes with a timer.", _one("set_timer", minutes=15)),
    ("Can you time 45 minutes for me?", _one("set_timer", minutes=45)),
    ("Set a timer for one minute.", _one("set_timer", minutes=1)),
    ("Start a timer for 30 minutes.", _one("set_timer", minutes=30)),
    ("What's the weather in London?", _one("get_weather", city="London")),
    ("How is the weather in Tokyo?", _one("get_weather", city="Tokyo")),
    ("Will it rain in Berlin today?", _one("get_weather", city="Berlin")),
    ("Weather forecast for New York.", _one("get_weather", city="New York")),
    ("Is it cold in Moscow?", _one("get_weather", city="Moscow")),
    ("What's the temperature in Madrid?", _one("get_weather", city="Madrid")),
    ("Tell me the weather in Sydney.", _one("get_weather", city="Sydney")),
    ("How hot is it in Cairo?", _one("get_weather", city="Cairo")),
    ("Get the weather for Rome.", _one("get_weather", city="Rome")),
    ("Is it sunny in Lisbon?", _one("get_weather", city="Lisbon")),
    ("Turn on the kitchen lights.", _one("set_lights", room="kitchen", on=True)),
    ("Turn off the lights in the bedroom.", _one("set_lights", room="bedroom", on=False)),
    ("Switch on the living room lights.", _one("set_lights", room="living room", on=True)),
    ("Lights off in the bathroom.", _one("set_lights", room="bathroom", on=False)),
    ("Turn the office lights on.", _one("set_lights", room="office", on=True)),
    ("Switch off the garage lights.", _one("set_lights", room="garage", on=False)),
    ("Can you turn on the lights in the hallway?", _one("set_lights", room="hallway", on=True)),
    ("Kitchen lights off, please.", _one("set_lights", room="kitchen", on=False)),
    ("Turn on the bedroom lights.", _one("set_lights", room="bedroom", on=True)),
    ("Turn off the living room lights.", _one("set_lights", room="living room", on=False)),
]

ZH_TOOL_REQUESTS: list[tuple[str, Expected]] = [
    # the seeds' Chinese requests (calculator, weather, timer, music, volume) and a few more of the same tools
    ("12乘以8等于多少？", _calc("mul", 12, 8)),
    ("一百除以四是多少？", _calc("div", 100, 4)),
    ("北京的天气怎么样？", _one("get_weather", city="北京")),
    ("设一个五分钟的计时器。", _one("set_timer", minutes=5)),
    ("播放一些爵士乐。", ("play_music", [{"query": "爵士乐"}, {"query": "爵士"}])),
    ("把音量调到百分之三十。", _one("set_volume", level=30)),
    ("打开厨房的灯。", _one("set_lights", room="厨房", on=True)),
    ("停止播放音乐。", _one("stop_music")),
]

ZH_PLAIN_REQUESTS: list[str] = ["你好，你今天怎么样？", "给我讲个笑话。", "谢谢你！", "中国的首都是哪里？"]

PLAIN_REQUESTS: list[str] = [
    "Tell me a joke.",
    "How are you today?",
    "What's your name?",
    "Thank you very much!",
    "Good morning!",
    "What is the capital of Italy?",
    "Who wrote Romeo and Juliet?",
    "What does photosynthesis mean?",
    "Say something nice.",
    "How do I boil an egg?",
    "What is a synonym for happy?",
    "Tell me a fun fact.",
    "What's the opposite of hot?",
    "How many legs does a spider have?",
    "What color is the sky?",
    "Who painted the Mona Lisa?",
    "Can you recommend a good book?",
    "What language do they speak in Brazil?",
    "Goodbye!",
    "What is the largest ocean?",
    "Why do cats purr?",
    "Give me a tip for sleeping better.",
    "What is your favourite colour?",
    "Explain what a noun is.",
]


FOLLOW_UPS: list[tuple[str, str, dict[str, Any], str, tuple[str, ...]]] = [
    # request, the call made, its arguments, the tool's output, words of which a relaying reply has one
    ("What's the weather in London?", "get_weather", {"city": "London"}, "Rainy, 12 degrees", ("rain", "12")),
    ("Set a timer for 5 minutes.", "set_timer", {"minutes": 5}, "Timer set for 5 minutes", ("5", "five")),
    ("Play some jazz.", "play_music", {"query": "jazz"}, "Now playing Take Five by Dave Brubeck",
     ("take five", "brubeck")),
    ("Turn on the kitchen lights.", "set_lights", {"room": "kitchen", "on": True}, "Kitchen lights are on",
     ("on", "light")),
    ("Set the volume to 50.", "set_volume", {"level": 50}, "Volume set to 50", ("50", "fifty")),
    ("What's 12 times 8?", "calculator", {"op": "mul", "a": 12, "b": 8}, "96", ("96",)),
    ("How is the weather in Tokyo?", "get_weather", {"city": "Tokyo"}, "Sunny, 25 degrees", ("sun", "25")),
    ("Stop the music.", "stop_music", {}, "Music stopped", ("stop",)),
]


@dataclass
class Outcome:
    """What one request produced."""

    text: str = ""
    calls: list[ToolCall] = field(default_factory=list)
    rejected: list[RejectedCall] = field(default_factory=list)
    ttft: float = 0.0
    usage: Usage | None = None


async def ask(backend: Backend, prompt: str, *, voice: bool, tool_choice: str = "auto",
              history: list[ChatItem] | None = None, tools: list[Tool] | None = None, instructions: str = "",
              warm: bool = False) -> Outcome:
    """One request in a fresh conversation (``history`` then ``prompt``, or ``history`` alone when ``prompt`` is
    empty) offering ``tools`` (default :data:`TOOLS`); times the first event of the reply. ``warm``: the
    conversation before the prompt is evaluated first, untimed, as a session does when its tools are declared."""
    items = [*(history or []), *([Message(role="user", text=prompt)] if prompt else [])]
    request = LLMRequest(items=items, tools=TOOLS if tools is None else tools, tool_choice=tool_choice,
                         voice=voice, instructions=instructions, max_output_tokens=MAX_OUTPUT_TOKENS)
    if warm:
        await backend.warm(replace(request, items=history or []))
    outcome = Outcome()
    start = time.perf_counter()
    async for event in backend.stream(request):
        if not outcome.ttft and isinstance(event, TextDelta | ToolCallStart | RejectedCall):
            outcome.ttft = time.perf_counter() - start
        if isinstance(event, TextDelta):
            outcome.text += event.text
        elif isinstance(event, ToolCall):
            outcome.calls.append(event)
        elif isinstance(event, RejectedCall):
            outcome.rejected.append(event)
        elif isinstance(event, Usage):
            outcome.usage = event
        elif isinstance(event, Done) and not outcome.ttft:
            outcome.ttft = time.perf_counter() - start
    return outcome


def _same(expected: Any, actual: Any) -> bool:
    if isinstance(expected, str):
        return isinstance(actual, str) and expected.strip().casefold() == actual.strip(" .").casefold()
    if isinstance(expected, bool) or isinstance(actual, bool):
        return expected is actual
    if isinstance(expected, int | float):
        return isinstance(actual, int | float) and float(expected) == float(actual)
    return bool(expected == actual)


def matches(call: ToolCall, expected: Expected) -> bool:
    """The call has the expected name and, in one of the accepted forms, every key argument."""
    name, forms = expected
    return call.name == name and any(all(_same(v, call.arguments.get(k)) for k, v in form.items())
                                     for form in forms)


def leaks(text: str, tools: list[Tool]) -> list[str]:
    """Tool syntax found in spoken text."""
    marks = ["<code", "</code>", "```", *(f"{tool.code_name}(" for tool in tools)]
    return [mark for mark in marks if mark in text]


def _fmt(outcome: Outcome) -> str:
    calls = "; ".join(f"{c.name}({c.arguments_json})" for c in outcome.calls)
    rejected = "; ".join(f"REJECTED {r.source!r}: {r.reason}" for r in outcome.rejected)
    return " | ".join(part for part in (repr(outcome.text[:80]) if outcome.text else "", calls, rejected) if part)


async def run(args: argparse.Namespace) -> dict[str, str]:
    """Every request to the backend ``args`` describe; prints the figures and returns them (for a side by side)."""
    started = time.perf_counter()
    load = time.perf_counter()
    backend = make_backend(args)
    load = time.perf_counter() - load
    tool_requests = TOOL_REQUESTS[:args.limit] if args.limit else TOOL_REQUESTS
    plain_requests = PLAIN_REQUESTS[:args.limit] if args.limit else PLAIN_REQUESTS
    voice = not args.text
    instructions = DEFAULT_INSTRUCTIONS if args.instructions else ""
    try:
        cold = await ask(backend, tool_requests[0][0], voice=voice, instructions=instructions)
        without_tools = await ask(backend, tool_requests[0][0], voice=voice, tool_choice="none",
                                  instructions=instructions)
        assert cold.usage is not None and without_tools.usage is not None
        tools_tokens = cold.usage.input_tokens - without_tools.usage.input_tokens
        warm_calls: list[float] = []
        warm_text: list[float] = []
        correct = 0
        leaked: list[tuple[str, list[str]]] = []
        for prompt, expected in tool_requests:
            outcome = await ask(backend, prompt, voice=voice, instructions=instructions)
            (warm_calls if outcome.calls or outcome.rejected else warm_text).append(outcome.ttft)
            ok = bool(outcome.calls) and matches(outcome.calls[0], expected)
            correct += ok
            if found := leaks(outcome.text, TOOLS):
                leaked.append((prompt, found))
            if args.verbose:
                print(f"{'ok ' if ok else 'BAD'} {prompt!r} -> {_fmt(outcome)}")
        false_calls = 0
        for prompt in plain_requests:
            outcome = await ask(backend, prompt, voice=voice, instructions=instructions)
            (warm_calls if outcome.calls or outcome.rejected else warm_text).append(outcome.ttft)
            called = bool(outcome.calls or outcome.rejected)
            false_calls += called
            if found := leaks(outcome.text, TOOLS):
                leaked.append((prompt, found))
            if args.verbose:
                print(f"{'CALL' if called else 'ok  '} {prompt!r} -> {_fmt(outcome)}")
        zh_correct = zh_false = 0
        for prompt, expected in ZH_TOOL_REQUESTS if not args.limit else ():
            outcome = await ask(backend, prompt, voice=voice, instructions=instructions)
            ok = bool(outcome.calls) and matches(outcome.calls[0], expected)
            zh_correct += ok
            if args.verbose:
                print(f"{'ok ' if ok else 'BAD'} {prompt!r} -> {_fmt(outcome)}")
        for prompt in ZH_PLAIN_REQUESTS if not args.limit else ():
            outcome = await ask(backend, prompt, voice=voice, instructions=instructions)
            called = bool(outcome.calls or outcome.rejected)
            zh_false += called
            if args.verbose:
                print(f"{'CALL' if called else 'ok  '} {prompt!r} -> {_fmt(outcome)}")
        repeated = relayed = 0
        for prompt, name, arguments, output, words in FOLLOW_UPS:
            history: list[ChatItem] = [Message(role="user", text=prompt),
                                       FunctionCallItem(call_id="c1", name=name, arguments=json.dumps(arguments)),
                                       FunctionOutputItem(call_id="c1", output=output)]
            outcome = await ask(backend, "", voice=voice, history=history, instructions=instructions)
            repeated += bool(outcome.calls or outcome.rejected)
            relayed += any(word in outcome.text.casefold() for word in words)
            if found := leaks(outcome.text, TOOLS):
                leaked.append((f"{prompt} (follow-up)", found))
            if args.verbose:
                print(f"follow-up {prompt!r} + {output!r} -> {_fmt(outcome)}")
    finally:
        await backend.aclose()

    correct_rate = correct / len(tool_requests)
    false_rate = false_calls / len(plain_requests)
    warm = warm_calls + warm_text
    median_warm = statistics.median(warm)
    print(f"model: {model_name(backend)} (loaded in {load:.2f} s); {'voice' if voice else 'text'} prompts; "
          f"variant: {describe(args)}")
    print(f"correct calls: {correct}/{len(tool_requests)} = {correct_rate:.0%} "
          f"(target >= {TARGET_CORRECT:.0%}) {_verdict(correct_rate >= TARGET_CORRECT)}")
    print(f"false calls:   {false_calls}/{len(plain_requests)} = {false_rate:.0%} "
          f"(target <= {TARGET_FALSE:.0%}) {_verdict(false_rate <= TARGET_FALSE)}")
    print(f"syntax leaks:  {len(leaked)} (target 0) {_verdict(not leaked)}"
          + "".join(f"\n    {prompt!r}: {found}" for prompt, found in leaked))
    print(f"tools prompt:  {tools_tokens} tokens (stubs, rules, demonstrations); "
          f"whole prompt {cold.usage.input_tokens} tokens")
    print(f"follow-ups:    {relayed}/{len(FOLLOW_UPS)} relay the tool's output; {repeated} call a tool again")
    print(f"first event:   cold {cold.ttft * 1e3:.0f} ms; warm median {median_warm * 1e3:.0f} ms "
          f"(target <= {TARGET_WARM_TTFT_S * 1e3:.0f} ms) {_verdict(median_warm <= TARGET_WARM_TTFT_S)}; "
          f"calls {_spread(warm_calls)}, words {_spread(warm_text)}")
    if not args.limit:
        print(f"Chinese:       {zh_correct}/{len(ZH_TOOL_REQUESTS)} right calls, {zh_false}/{len(ZH_PLAIN_REQUESTS)} "
              "false calls on chat")
    print(f"run time:      {time.perf_counter() - started:.0f} s for {len(warm) + len(FOLLOW_UPS) + 2} requests")
    return {"correct": f"{correct}/{len(tool_requests)} = {correct_rate:.0%}",
            "false calls": f"{false_calls}/{len(plain_requests)} = {false_rate:.0%}",
            "leaks": str(len(leaked)), "follow-ups relayed": f"{relayed}/{len(FOLLOW_UPS)}",
            "Chinese right / false": f"{zh_correct}/{len(ZH_TOOL_REQUESTS)} / {zh_false}/{len(ZH_PLAIN_REQUESTS)}"
                                     if not args.limit else "not run (--limit)",
            "warm first event p50": f"{median_warm * 1e3:.0f} ms",
            "calls p50 / p90": _spread(warm_calls).removesuffix(")").split(" (")[0],
            "words p50 / p90": _spread(warm_text).removesuffix(")").split(" (")[0],
            "prompt tokens": str(cold.usage.input_tokens)}


def _spread(times: list[float]) -> str:
    """Median and 90th percentile, in milliseconds."""
    if not times:
        return "none"
    ordered = sorted(times)
    return (f"median {statistics.median(ordered) * 1e3:.0f} ms, p90 {ordered[int(0.9 * (len(ordered) - 1))] * 1e3:.0f}"
            f" ms (n={len(ordered)})")


def _verdict(ok: bool) -> str:
    return "PASS" if ok else "MISS"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--limit", type=int, default=0, help="first N requests of each kind (0: all)")
    parser.add_argument("-v", "--verbose", action="store_true", help="print every request and reply")
    parser.add_argument("--models", metavar="A,B", help="run every request with each of these models (catalog "
                        "names or GGUF files), one after the other, then print their figures side by side")
    add_backend_options(parser)
    args = parser.parse_args()
    if not args.models:
        asyncio.run(run(args))
        return
    figures: dict[str, dict[str, str]] = {}
    for model in args.models.split(","):
        print(f"=== {model}", flush=True)
        figures[model] = asyncio.run(run(replace_model(args, model)))
    print(f"\n=== side by side (load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs)")
    names = list(figures)
    print(f"{'':24}" + "".join(f"{name:>32}" for name in names))
    for key in figures[names[0]]:
        print(f"{key:24}" + "".join(f"{figures[name][key]:>32}" for name in names))


if __name__ == "__main__":
    main()
