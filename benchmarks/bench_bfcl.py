"""Tool calling with the in-process local model on requests in the style of the Berkeley Function Calling
Leaderboard, and on everyday requests with 1 to 50 tools declared.

Reads the public BFCL data (Apache-2.0) shipped in the ``bfcl-eval`` package: the live categories ``live_simple``
(one function), ``live_multiple`` (pick one of several), ``live_parallel`` with ``live_parallel_multiple``
(several calls in one reply) and ``live_irrelevance`` (no function fits: any call is a false call). The package
is not a dependency: install it with ``pip install --no-deps bfcl-eval``, or unpack its wheel and give
``--data`` (its ``bfcl_eval/data`` folder). Without either the benchmark says so and exits.

Each category is split once and for all: every fifth request (index % 5 == 4, in file order) is **held out**,
never looked at while tuning; ``--held-out`` runs that slice instead of the development one. A reply is correct
when its calls match the ground truth as BFCL's checker does (the name; each argument one of the accepted values,
strings compared without case, spaces or punctuation, an object key by key, each key's value one of its accepted
ones; an argument, or an object's key, left out only where "" is accepted; parallel calls in any order). Per
category it prints correct calls, wrong calls (a call, not the right one), no calls,
false calls (irrelevance), replies with several calls, syntax leaks in the words, and the median and 90th
percentile of the time to the first event, with the machine's load average at the start and the end. A reply may
run to the local path's default length (``ReplyOptions.max_output_tokens``, 256 tokens, as in a session that sets
no limit): the 48 tokens of ``bench_local_tools``' spoken answers cut a parallel request's calls, or one call's many
arguments, before they were written (as they did for every BFCL figure before this was changed).

``--tools K[,K...]`` runs the everyday set of ``bench_local_tools`` instead, each request with its expected tool
and K-1 others declared (the other everyday tools first, then BFCL functions), plain requests with the first K:
correct, false calls, leaks and first-event time per K.

    python benchmarks/bench_bfcl.py [--n 30] [--held-out] [--data DIR] [--categories simple,multiple,...]
                                    [--tools 1,3,7] [--warm] [--text] [-v] [backend options of bench_local_tools]

``--reach`` runs no model: per category it counts the requests whose right calls the call grammar admits at
all (a plain string argument one of the grammar's spans of the user's words, a place named in the form its
description shows (``Said.places``), a number one the user said, or a length of time said, in the argument's unit:
``voxcall.llm.local.said.spans`` and ``Said.numbers_for``), and how many it would admit without those rules. The
first figure is the ceiling of the embedded path on that slice, whatever the model; the gap between them is what
copying costs. (The grammar's choice rules are not counted: they
pass a choice the user named, leave out an optional one the user did not name, and keep a choice word out of a
plain string.)

``--warm`` evaluates each request's tools prompt before timing it, as a session does when ``session.update``
declares the tools (the default times a request that brings tools the server has not seen). Each request is a
fresh tool set, hence a fresh prompt: a category of 30 takes one to three minutes on two cores.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import json
import os
import re
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench_local_tools import MAX_OUTPUT_TOKENS, Outcome, ask, leaks, matches
from everyday_set import PLAIN_REQUESTS, TOOL_REQUESTS
from everyday_tools import TOOLS
from local_variant import Backend, add_backend_options, describe, make_backend, model_name
from voxcall.config import DEFAULT_INSTRUCTIONS
from voxcall.llm import LLMError
from voxcall.llm.local.said import Said, copied_string, spans
from voxcall.tools import Tool
from voxcall.tools.calls import ToolCall

CATEGORIES = {
    "simple": ("live_simple",),
    "multiple": ("live_multiple",),
    "parallel": ("live_parallel", "live_parallel_multiple"),
    "irrelevance": ("live_irrelevance",),
}
HELD_OUT_EVERY = 5  # index % 5 == 4 is held out
TARGET_CORRECT = 0.30
_BFCL_TYPES = {"dict": "object", "float": "number", "tuple": "array", "any": None}
_NOISE = re.compile(r"[\s,./\-_*^'\"!?;:()]")  # what BFCL's checker ignores in strings (and a little more)


@dataclass(frozen=True)
class Case:
    """One BFCL request: the user's words, the functions offered, and the calls accepted (none: irrelevance)."""

    id: str
    prompt: str
    instructions: str
    tools: list[Tool]
    truth: list[dict[str, dict[str, list[Any]]]]


def data_folder(given: str | None) -> Path | None:
    """``--data``, else the installed ``bfcl_eval`` package's data folder (found without importing it)."""
    if given:
        return Path(given)
    spec = importlib.util.find_spec("bfcl_eval")
    folders = list(spec.submodule_search_locations or []) if spec else []
    return next((Path(f) / "data" for f in folders if (Path(f) / "data").is_dir()), None)


def _schema(node: Any) -> Any:
    """A BFCL parameter schema as JSON Schema (``dict`` -> ``object``, ``float`` -> ``number``, ...)."""
    if isinstance(node, list):
        return [_schema(n) for n in node]
    if not isinstance(node, dict):
        return node
    out = {k: ({p: _schema(v) for p, v in v.items()} if k == "properties" and isinstance(v, dict) else _schema(v))
           for k, v in node.items() if k != "type"}
    if isinstance(node.get("type"), str):
        kind = _BFCL_TYPES.get(node["type"], node["type"])
        if kind is not None:
            out["type"] = kind
    return out


def _tool(function: dict[str, Any]) -> Tool:
    return Tool(function["name"], function.get("description", ""), _schema(function.get("parameters") or {}))


def _read(folder: Path, name: str, *, answers: bool) -> list[dict[str, Any]]:
    path = folder / ("possible_answer" if answers else "") / f"BFCL_v4_{name}.json"
    if answers and not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def load(folder: Path, category: str, *, held_out: bool, n: int, skip: int = 0) -> list[Case]:
    """The first ``n`` single-turn requests of ``category``'s development (or held-out) slice after its first
    ``skip``."""
    cases: list[Case] = []
    for name in CATEGORIES[category]:
        truths = {a["id"]: a["ground_truth"] for a in _read(folder, name, answers=True)}
        for index, entry in enumerate(_read(folder, name, answers=False)):
            if (index % HELD_OUT_EVERY == HELD_OUT_EVERY - 1) != held_out or len(entry["question"]) != 1:
                continue
            turn = entry["question"][0]
            users = [m["content"] for m in turn if m["role"] == "user"]
            if len(users) != 1:
                continue
            system = "\n".join(m["content"] for m in turn if m["role"] == "system")
            cases.append(Case(entry["id"], users[0], system, [_tool(f) for f in entry["function"]],
                              truths.get(entry["id"], [])))
    return cases[skip:skip + n]


def _norm(value: Any) -> Any:
    if isinstance(value, str):
        return _NOISE.sub("", value).casefold()
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, list | tuple):
        return [_norm(v) for v in value]
    if isinstance(value, dict):
        return {k: _norm(v) for k, v in value.items()}
    return value


def _accepted(value: Any, accepted: Any) -> bool:
    """Whether ``value`` is the accepted value ``accepted``, as BFCL's checker compares them: an object against a
    truth object of accepted values per key (each key said one of them, a key left out only where "" is
    accepted: ``dict_checker``), a list of objects object by object (``list_dict_checker``), anything else
    normalized (:func:`_norm`)."""
    if isinstance(value, dict) and isinstance(accepted, dict) and all(isinstance(v, list) for v in accepted.values()):
        return (all(key in accepted and _norm(item) in [_norm(a) for a in accepted[key]] for key, item in value.items())
                and all(key in value or "" in values for key, values in accepted.items()))
    if (isinstance(value, list) and isinstance(accepted, list) and accepted and len(value) == len(accepted)
            and all(isinstance(a, dict) for a in accepted)):
        return all(_accepted(item, a) for item, a in zip(value, accepted, strict=True))
    return bool(_norm(value) == _norm(accepted))


def call_matches(call: ToolCall, truth: dict[str, dict[str, list[Any]]]) -> bool:
    """One call against one ground-truth entry ``{name: {param: [accepted values]}}``."""
    (name, params), = truth.items()
    if call.name != name or any(arg not in params for arg in call.arguments):
        return False
    for param, accepted in params.items():
        if param not in call.arguments:
            if "" not in accepted:
                return False
        elif not any(_accepted(call.arguments[param], a) for a in accepted if a != "" or accepted == [""]):
            return False
    return True


def correct(calls: list[ToolCall], truth: list[dict[str, dict[str, list[Any]]]]) -> bool:
    """Every expected call made once, in any order, and nothing else."""
    if len(calls) != len(truth):
        return False
    left = list(truth)
    for call in calls:
        hit = next((t for t in left if call_matches(call, t)), None)
        if hit is None:
            return False
        left.remove(hit)
    return True


@dataclass
class Tally:
    """What one category (or tool count) produced."""

    label: str
    total: int = 0
    correct: int = 0
    wrong: int = 0
    silent: int = 0
    false_calls: int = 0
    several: int = 0  # replies with more than one call
    plain: int = 0
    leaks: int = 0
    errors: int = 0

    def __post_init__(self) -> None:
        self.times: list[float] = []

    def line(self) -> str:
        median = f"{statistics.median(self.times) * 1e3:.0f} ms" if self.times else "-"
        calls = (f"correct {self.correct}/{self.total} = {self.correct / self.total:.0%}, wrong {self.wrong}, "
                 f"no call {self.silent}" if self.total else "")
        false = (f"false calls {self.false_calls}/{self.plain} = {self.false_calls / self.plain:.0%}"
                 if self.plain else "")
        p90 = f"{statistics.quantiles(self.times, n=10)[-1] * 1e3:.0f} ms" if len(self.times) > 1 else "-"
        rest = (f"several calls {self.several}, leaks {self.leaks}, errors {self.errors}, "
                f"first event median {median}, p90 {p90}")
        return f"{self.label:>12}: " + "; ".join(p for p in (calls, false, rest) if p)


async def _ask(backend: Backend, prompt: str, tools: list[Tool], args: argparse.Namespace,
               instructions: str = "", max_output_tokens: int | None = MAX_OUTPUT_TOKENS) -> Outcome | None:
    try:
        return await ask(backend, prompt, voice=not args.text, tools=tools, instructions=instructions,
                         warm=args.warm, max_output_tokens=max_output_tokens)
    except LLMError as exc:  # a tool set that does not fit the context, a schema the grammar cannot express
        if args.verbose:
            print(f"ERROR {prompt!r}: {exc}")
        return None


def _record(tally: Tally, outcome: Outcome | None, tools: list[Tool], ok: bool | None) -> None:
    """Count one reply: ``ok`` None for a request that needs no tool."""
    if outcome is None:
        tally.errors += 1
        return
    tally.times.append(outcome.ttft)
    tally.leaks += bool(leaks(outcome.text, tools))
    called = bool(outcome.calls or outcome.rejected)
    tally.several += len(outcome.calls) + len(outcome.rejected) > 1
    if ok is None:
        tally.plain += 1
        tally.false_calls += called
    else:
        tally.total += 1
        tally.correct += ok
        tally.wrong += called and not ok
        tally.silent += not called


async def run_bfcl(backend: Backend, folder: Path, args: argparse.Namespace) -> list[Tally]:
    tallies = []
    for category in args.categories.split(","):
        tally = Tally(category)
        for case in load(folder, category, held_out=args.held_out, n=args.n, skip=args.skip):
            # the server's default length: a parallel request's calls outgrow the everyday set's spoken sentence
            outcome = await _ask(backend, case.prompt, case.tools, args, case.instructions, max_output_tokens=None)
            ok = correct(outcome.calls, case.truth) if case.truth and outcome else None if not case.truth else False
            _record(tally, outcome, case.tools, ok)
            if args.verbose and outcome is not None:
                calls = "; ".join(f"{c.name}({c.arguments_json})" for c in outcome.calls)
                print(f"{category} {'ok ' if ok else '-- '}{case.id} {case.prompt[:70]!r} -> "
                      f"{calls or repr(outcome.text[:60])} | want {json.dumps(case.truth)[:120]}")
        tallies.append(tally)
        print(tally.line(), flush=True)
    return tallies


def spread(requests: list[Any], n: int) -> list[Any]:
    """``n`` of ``requests`` taken at even steps (all when ``n`` is 0): the everyday set is grouped by tool."""
    return requests[::max(1, len(requests) // n)][:n] if n else requests


def distractors(folder: Path | None) -> list[Tool]:
    """BFCL functions (unique names, file order) to declare beside the everyday tools."""
    if folder is None:
        return []
    seen = {t.name for t in TOOLS}
    found: list[Tool] = []
    for entry in _read(folder, "live_simple", answers=False) + _read(folder, "live_multiple", answers=False):
        for function in entry["function"]:
            if function["name"] not in seen and "." not in function["name"]:
                seen.add(function["name"])
                found.append(_tool(function))
    return found


async def run_tool_counts(backend: Backend, folder: Path | None, args: argparse.Namespace) -> list[Tally]:
    pool = distractors(folder)
    tallies = []
    for count in (int(k) for k in args.tools.split(",")):
        tally = Tally(f"{count} tools")
        requests = spread(TOOL_REQUESTS, args.n)
        for prompt, expected in requests:
            target = next(t for t in TOOLS if t.name == expected[0])
            others = [t for t in [*TOOLS, *pool] if t is not target][:count - 1]
            tools = [*others[:len(others) // 2], target, *others[len(others) // 2:]]
            outcome = await _ask(backend, prompt, tools, args, _instructions(args))
            _record(tally, outcome, tools, bool(outcome and outcome.calls and matches(outcome.calls[0], expected)))
            if args.verbose and outcome is not None:
                print(f"{count} tools {prompt!r} -> {[(c.name, c.arguments) for c in outcome.calls]} "
                      f"{outcome.text[:50]!r}")
        for n, prompt in enumerate(spread(PLAIN_REQUESTS, args.n)):
            tools = [*TOOLS, *pool][n % len(TOOLS):][:count]
            _record(tally, await _ask(backend, prompt, tools, args, _instructions(args)), tools, None)
        tallies.append(tally)
        print(tally.line(), flush=True)
    return tallies


def admitted(value: Any, schema: Any, said: str, *, copied: bool, name: str = "") -> bool:
    """Whether the call grammar admits ``value`` for the argument ``name`` of ``schema`` (``copied``: with the rules
    that a plain string is a span of ``said`` and a number one said there, a length of time said in the unit the
    argument counts in; BFCL's checker compares strings loosely)."""
    if not isinstance(schema, dict):
        return True
    if "enum" in schema:
        return _norm(value) in [_norm(v) for v in schema["enum"]]
    kind = schema.get("type")
    if kind == "array" and isinstance(value, list):
        return all(admitted(item, schema.get("items"), said, copied=copied, name=name) for item in value)
    if not copied:
        return True
    if kind == "string" and isinstance(value, str) and (places := Said(said).places(schema)):
        return _norm(value) in {_norm(place) for place in places}  # a place named, in the form the tool shows
    if kind == "string" and isinstance(value, str) and copied_string(schema):
        return _norm(value) in {_norm(span) for span in spans(said)}
    said_numbers = Said(said).numbers_for(name, schema) if kind in ("number", "integer") else []
    if said_numbers and isinstance(value, int | float) and not isinstance(value, bool):
        return float(value) in [float(n) for n in said_numbers if kind == "number" or isinstance(n, int)]
    return True


def reachable(case: Case, *, copied: bool) -> bool:
    """Whether the grammar admits every call of ``case``'s ground truth: each argument one of its accepted values,
    or left out where that is accepted and the argument is optional."""
    tools = {tool.name: tool for tool in case.tools}
    for truth in case.truth:
        (name, params), = truth.items()
        schema = tools[name].parameters if name in tools else {}
        required = set(schema.get("required", []))
        for param, accepted in params.items():
            if "" in accepted and param not in required:
                continue
            argument = schema.get("properties", {}).get(param, {})
            if not any(admitted(a, argument, case.prompt, copied=copied, name=param) for a in accepted if a != ""):
                return False
    return True


def run_reach(folder: Path, args: argparse.Namespace) -> None:
    """The grammar's ceiling per category (no model)."""
    for category in args.categories.split(","):
        cases = [c for c in load(folder, category, held_out=args.held_out, n=args.n, skip=args.skip) if c.truth]
        if not cases:
            continue
        copied = sum(reachable(c, copied=True) for c in cases)
        free = sum(reachable(c, copied=False) for c in cases)
        print(f"{category:>12}: the grammar admits the right calls in {copied}/{len(cases)} = "
              f"{copied / len(cases):.0%}; without the span, place and number rules {free}/{len(cases)} = "
              f"{free / len(cases):.0%}", flush=True)
        if args.verbose:
            for case in cases:
                if not reachable(case, copied=True):
                    print(f"    not admitted: {case.prompt[:80]!r} want {json.dumps(case.truth)[:120]}")


def _instructions(args: argparse.Namespace) -> str:
    return DEFAULT_INSTRUCTIONS if args.instructions else ""


async def run(args: argparse.Namespace) -> None:
    folder = data_folder(args.data)
    if folder is None and not args.tools:
        sys.exit("bench_bfcl: no BFCL data: pip install --no-deps bfcl-eval, or unpack its wheel and give --data "
                 "DIR (the bfcl_eval/data folder)")
    if args.reach:
        assert folder is not None
        run_reach(folder, args)
        return
    started = time.perf_counter()
    backend = make_backend(args)
    try:
        print(f"model: {model_name(backend)}; {'held-out' if args.held_out else 'development'} slice; "
              f"{'warmed' if args.warm else 'unseen'} tool sets; variant: {describe(args)}; "
              f"load average {_load()}", flush=True)
        if args.tools:
            tallies = await run_tool_counts(backend, folder, args)
        else:
            assert folder is not None
            tallies = await run_bfcl(backend, folder, args)
    finally:
        await backend.aclose()
    calls = [t for t in tallies if t.total and t.label != "irrelevance"]
    if calls and not args.tools:
        right, total = sum(t.correct for t in calls), sum(t.total for t in calls)
        print(f"{'overall':>12}: correct {right}/{total} = {right / total:.0%} (target >= {TARGET_CORRECT:.0%}) "
              f"{'PASS' if right / total >= TARGET_CORRECT else 'MISS'}")
    print(f"run time: {time.perf_counter() - started:.0f} s; load average {_load()}")


def _load() -> str:
    """The machine's 1- and 5-minute load averages: first-event times mean little without them."""
    one, five, _ = os.getloadavg()
    return f"{one:.1f}/{five:.1f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--data", default=None, help="the bfcl_eval/data folder (default: the installed package's)")
    parser.add_argument("--n", type=int, default=30, help="requests per category (0 with --tools: all)")
    parser.add_argument("--skip", type=int, default=0, help="requests per category to skip before the first run")
    parser.add_argument("--held-out", action="store_true", help="the held-out slice (report only; never tune on it)")
    parser.add_argument("--categories", default=",".join(CATEGORIES), help="comma-separated categories")
    parser.add_argument("--tools", default="", help="everyday set with these tool counts, e.g. 1,3,7 or 5,20,50")
    parser.add_argument("--warm", action="store_true", help="evaluate each tool set before timing its request")
    parser.add_argument("--reach", action="store_true", help="no model: how often the grammar admits the right call")
    parser.add_argument("-v", "--verbose", action="store_true", help="print every request and reply")
    add_backend_options(parser)
    asyncio.run(run(parser.parse_args()))


if __name__ == "__main__":
    main()
