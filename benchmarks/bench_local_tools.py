"""Tool calling with a local model: how often it calls the right tool with the right values, in English and Chinese.

Sends everyday voice requests (``everyday_set.py``), one per fresh conversation, to a ``LlamaCppBackend`` offering
seven tools (calculator, play/stop music, volume, timer, weather, lights): requests that need a tool, each with the
call expected (name and key arguments; strings compared case-insensitively, numbers by value, any of a few accepted
forms), requests that need none, and requests that name a tool without the value its call needs. Prints:

- correct-call rate: the reply's first call has the expected name and arguments (target >= 90 %);
- false-call rate: requests needing no tool that got a call or an attempt at one (target <= 5 %);
- Chinese: the seeds' Chinese requests called right, and false calls on Chinese chat;
- no value said: requests naming a tool without its value ("What's the weather?", "Set a timer.") that got no
  call, how many of those replies ask (hold a question mark), and how often the user's answer to the reply
  ("Paris.") gets the call it completes;
- tool-syntax leaks: ``<code``, ``</code>``, a fence, or ``tool_name(`` in the spoken text (target 0);
- prompt tokens the tools cost (stubs, rules and demonstrations: a request's input with tools minus without);
- follow-ups: after a call and its output, whether the reply relays the output or calls a tool again;
- time to first event (a text delta, or a complete call), cold (nothing cached) and warm (the shared prefix
  cached; target median <= 300 ms), the warm ones also split by kind of reply.

    python benchmarks/bench_local_tools.py [--held-out] [--limit N] [--model NAME|PATH] [--models A,B]
                                           [--call-threshold P|none] [--no-demos] [--follow-up-demo] [--no-grammar]
                                           [--text] [-v] [--unrelated model|on|off] [--no-lift] [more: local_variant.py]

``--models smollm2-135m,qwen2.5-coder-0.5b`` runs every request with each model in turn and ends with their figures
side by side. ``--held-out`` measures the held-out split (``everyday_held_out.py``, not to be read while tuning
rules) instead of the development set, every figure the same: report it beside the development set's. ``--limit N``
keeps the first N requests of each kind (no Chinese ones), for quick iterations. A full run takes 2-4 minutes a model
on 2 cores.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import time
from dataclasses import dataclass, field, replace
from typing import Any, NamedTuple

from everyday_held_out import (
    HELD_OUT_ANSWERED,
    HELD_OUT_FOLLOW_UPS,
    HELD_OUT_PLAIN_REQUESTS,
    HELD_OUT_TOOL_REQUESTS,
    HELD_OUT_WITHOUT_VALUES,
    HELD_OUT_ZH_PLAIN_REQUESTS,
    HELD_OUT_ZH_TOOL_REQUESTS,
)
from everyday_set import (
    ANSWERED,
    FOLLOW_UPS,
    PLAIN_REQUESTS,
    TOOL_REQUESTS,
    WITHOUT_VALUES,
    ZH_PLAIN_REQUESTS,
    ZH_TOOL_REQUESTS,
)
from everyday_tools import TOOLS, Expected
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

os.environ.setdefault("HF_HUB_OFFLINE", "1")

TARGET_CORRECT = 0.90
TARGET_FALSE = 0.05
TARGET_WARM_TTFT_S = 0.300
MAX_OUTPUT_TOKENS = 48  # a spoken answer is a sentence or two; a call is shorter


class RequestSet(NamedTuple):
    """The lists one run measures: the development set or the held-out one."""

    tool: list[tuple[str, Expected]]
    plain: list[str]
    zh_tool: list[tuple[str, Expected]]
    zh_plain: list[str]
    without_values: list[tuple[str, str]]
    answered: list[tuple[str, str, Expected]]
    follow_ups: list[tuple[str, str, dict[str, Any], str, tuple[str, ...]]]


DEVELOPMENT = RequestSet(TOOL_REQUESTS, PLAIN_REQUESTS, ZH_TOOL_REQUESTS, ZH_PLAIN_REQUESTS, WITHOUT_VALUES,
                         ANSWERED, FOLLOW_UPS)
HELD_OUT = RequestSet(HELD_OUT_TOOL_REQUESTS, HELD_OUT_PLAIN_REQUESTS, HELD_OUT_ZH_TOOL_REQUESTS,
                      HELD_OUT_ZH_PLAIN_REQUESTS, HELD_OUT_WITHOUT_VALUES, HELD_OUT_ANSWERED, HELD_OUT_FOLLOW_UPS)


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
              warm: bool = False, max_output_tokens: int | None = MAX_OUTPUT_TOKENS) -> Outcome:
    """One request in a fresh conversation (``history`` then ``prompt``, or ``history`` alone when ``prompt`` is
    empty) offering ``tools`` (default :data:`TOOLS`); times the first event of the reply. ``warm``: the
    conversation before the prompt is evaluated first, untimed, as a session does when its tools are declared.
    ``max_output_tokens`` None: the server's default, as for a session that sets no limit."""
    items = [*(history or []), *([Message(role="user", text=prompt)] if prompt else [])]
    request = LLMRequest(items=items, tools=TOOLS if tools is None else tools, tool_choice=tool_choice,
                         voice=voice, instructions=instructions, max_output_tokens=max_output_tokens)
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
    chosen = HELD_OUT if args.held_out else DEVELOPMENT
    tool_requests = chosen.tool[:args.limit] if args.limit else chosen.tool
    plain_requests = chosen.plain[:args.limit] if args.limit else chosen.plain
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
        for prompt, expected in chosen.zh_tool if not args.limit else ():
            outcome = await ask(backend, prompt, voice=voice, instructions=instructions)
            ok = bool(outcome.calls) and matches(outcome.calls[0], expected)
            zh_correct += ok
            if args.verbose:
                print(f"{'ok ' if ok else 'BAD'} {prompt!r} -> {_fmt(outcome)}")
        for prompt in chosen.zh_plain if not args.limit else ():
            outcome = await ask(backend, prompt, voice=voice, instructions=instructions)
            called = bool(outcome.calls or outcome.rejected)
            zh_false += called
            if args.verbose:
                print(f"{'CALL' if called else 'ok  '} {prompt!r} -> {_fmt(outcome)}")
        uncalled = asked = 0
        for prompt, _ in chosen.without_values if not args.limit else ():
            outcome = await ask(backend, prompt, voice=voice, instructions=instructions)
            called = bool(outcome.calls or outcome.rejected)
            uncalled += not called
            asked += not called and ("?" in outcome.text or "？" in outcome.text)
            if found := leaks(outcome.text, TOOLS):
                leaked.append((prompt, found))
            if args.verbose:
                print(f"{'CALL' if called else 'ok  '} {prompt!r} -> {_fmt(outcome)}")
        completed = 0
        for prompt, answer, expected in chosen.answered if not args.limit else ():
            asked_back = await ask(backend, prompt, voice=voice, instructions=instructions)
            before: list[ChatItem] = [Message("user", prompt), Message("assistant", asked_back.text)]
            outcome = await ask(backend, answer, voice=voice, history=before, instructions=instructions)
            ok = bool(outcome.calls) and matches(outcome.calls[0], expected)
            completed += ok
            if args.verbose:
                print(f"{'ok ' if ok else 'BAD'} {prompt!r} -> {asked_back.text!r}, {answer!r} -> {_fmt(outcome)}")
        repeated = relayed = 0
        for prompt, name, arguments, output, words in chosen.follow_ups:
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
          f"variant: {describe(args)}{'; held-out set' if args.held_out else ''}")
    print(f"correct calls: {correct}/{len(tool_requests)} = {correct_rate:.0%} "
          f"(target >= {TARGET_CORRECT:.0%}) {_verdict(correct_rate >= TARGET_CORRECT)}")
    print(f"false calls:   {false_calls}/{len(plain_requests)} = {false_rate:.0%} "
          f"(target <= {TARGET_FALSE:.0%}) {_verdict(false_rate <= TARGET_FALSE)}")
    print(f"syntax leaks:  {len(leaked)} (target 0) {_verdict(not leaked)}"
          + "".join(f"\n    {prompt!r}: {found}" for prompt, found in leaked))
    print(f"tools prompt:  {tools_tokens} tokens (stubs, rules, demonstrations); "
          f"whole prompt {cold.usage.input_tokens} tokens")
    print(f"follow-ups:    {relayed}/{len(chosen.follow_ups)} relay the tool's output; {repeated} call a tool again")
    print(f"first event:   cold {cold.ttft * 1e3:.0f} ms; warm median {median_warm * 1e3:.0f} ms "
          f"(target <= {TARGET_WARM_TTFT_S * 1e3:.0f} ms) {_verdict(median_warm <= TARGET_WARM_TTFT_S)}; "
          f"calls {_spread(warm_calls)}, words {_spread(warm_text)}")
    if not args.limit:
        print(f"Chinese:       {zh_correct}/{len(chosen.zh_tool)} right calls, {zh_false}/{len(chosen.zh_plain)} "
              "false calls on chat")
        print(f"no value said: {uncalled}/{len(chosen.without_values)} without a call, {asked} of them asking (a "
              f"question mark); the answer completing the call {completed}/{len(chosen.answered)}")
    print(f"run time:      {time.perf_counter() - started:.0f} s for {len(warm) + len(chosen.follow_ups) + 2} "
          "requests")
    return {"correct": f"{correct}/{len(tool_requests)} = {correct_rate:.0%}",
            "false calls": f"{false_calls}/{len(plain_requests)} = {false_rate:.0%}",
            "leaks": str(len(leaked)), "follow-ups relayed": f"{relayed}/{len(chosen.follow_ups)}",
            "Chinese right / false": f"{zh_correct}/{len(chosen.zh_tool)} / {zh_false}/{len(chosen.zh_plain)}"
                                     if not args.limit else "not run (--limit)",
            "no value: uncalled / asked / answered": f"{uncalled}/{len(chosen.without_values)} / {asked} / "
                                                     f"{completed}/{len(chosen.answered)}"
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
    parser.add_argument("--held-out", action="store_true", help="the held-out split (everyday_held_out.py) instead "
                        "of the development set (everyday_set.py)")
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
