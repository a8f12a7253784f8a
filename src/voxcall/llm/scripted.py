"""``ScriptedBackend``: deterministic replies from a script, for tests, demos and a server without a model.

A script is a dict, or a YAML or JSON file holding one::

    greeting: "Hello! Ask me anything."     # the reply while the conversation has no user message (optional)
    rules:                                  # tried in order on the last user message; the first match wins
      - match: "weather"                    # a case-insensitive substring …
        reply: "Let me check."
        calls:                              # tool calls made after the reply text (optional)
          - name: get_weather
            arguments: {city: Paris}
      - match: "/what is (?P<a>\\d+) times (?P<b>\\d+)/"   # … or a /regex/, also case-insensitive
                                            # (spoken numbers match as digits: "twelve times eight")
        requires_tool: calculator           # the rule applies only when this tool is offered (optional)
        reply: "Let me work that out."
        calls:
          - name: calculator
            arguments: {op: mul, a: "{a}", b: "{b}"}
      - match: "break"
        reply: "Something is"
        error: "simulated failure"          # after the reply text the stream fails with LLMError (no calls)
        delay: 0.5                          # seconds to wait before this reply starts (optional)
      - after: calculator                   # answers the output of a tool (``match``, if given, applies to it):
        reply: "Now some music."            # chains tool calls within one turn
        calls: [{name: music_play, arguments: {name: jazz}}]
    after_tool: "{name} says {output}."     # the reply when the conversation ends with tool output
    default: "Sorry, I only know a few phrases."   # the reply when no rule matches

An argument written exactly ``"{group}"`` takes the text of that named regex group, as a number when it reads
as one. ``after_tool`` may use ``{name}`` (the tool) and ``{output}``; with several trailing outputs it is
applied to each and the replies are joined. Calls are made whether or not their tool is offered (the layer
above decides what to do with an unknown tool), except under ``tool_choice="none"``, which suppresses them.

The stream looks like a real model's: text in word-sized tokens, each call as start, argument fragments and
the parsed call, then :class:`Usage` (rough token counts) and :class:`Done`.
"""

from __future__ import annotations

import asyncio
import json
import re
import string
from collections.abc import AsyncGenerator, Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from voxcall.llm.base import (
    Done,
    FunctionCallItem,
    FunctionOutputItem,
    LLMError,
    LLMEvent,
    LLMRequest,
    Message,
    Usage,
)
from voxcall.llm.calls import CallLimit, announce_call
from voxcall.llm.local.lexicon import number_runs
from voxcall.tools.calls import ToolCall
from voxcall.tools.codecalls.events import TextDelta

Sleep = Callable[[float], Awaitable[None]]

_PLACEHOLDER = re.compile(r"\{(\w+)\}")
_TOKEN = re.compile(r"\s*\S+|\s+")  # a word with the spaces before it; joined, the tokens give the text back
_COUNTED = re.compile(r"\w+|[^\w\s]")  # words and punctuation: close enough to a tokenizer for usage figures
_NUM = r"-?\d+(?:\.\d+)?"
_NUMBER = re.compile(_NUM)
_AFTER_TOOL_FIELDS = frozenset({"name", "output"})
_CALL_FRAGMENTS = 3


@dataclass(frozen=True)
class ScriptCall:
    """A tool call a rule makes; string arguments of the form ``"{group}"`` are filled from the match."""

    name: str
    arguments: dict[str, Any] = field(default_factory=dict)

    def resolve(self, groups: Mapping[str, str | None]) -> ToolCall:
        """The call with its placeholders filled from ``groups``."""
        return ToolCall(name=self.name, arguments={k: _fill(v, groups) for k, v in self.arguments.items()})


@dataclass(frozen=True)
class ScriptRule:
    """One rule: when ``pattern`` matches the last user message, reply with ``reply`` and make ``calls``."""

    pattern: re.Pattern[str]
    reply: str = ""
    calls: tuple[ScriptCall, ...] = ()
    error: str | None = None
    delay: float = 0.0
    requires_tool: str | None = None
    after: str | None = None  # the rule answers the output of this tool (``match`` then applies to the output)


@dataclass(frozen=True)
class ScriptReply:
    """What the script answers to one request."""

    text: str
    calls: tuple[ToolCall, ...] = ()
    error: str | None = None
    delay: float = 0.0


@dataclass(frozen=True)
class Script:
    """A parsed script; see the module docstring for the format."""

    rules: tuple[ScriptRule, ...] = ()
    greeting: str | None = None
    after_tool: str = "{name} returned {output}."
    default: str = "Sorry, I don't know how to answer that."

    @classmethod
    def load(cls, path: str | Path) -> Script:
        """Read a script from a ``.json`` file, or from YAML for any other suffix."""
        text = Path(path).read_text(encoding="utf-8")
        data = json.loads(text) if Path(path).suffix.lower() == ".json" else yaml.safe_load(text)
        return cls.from_dict(data)

    @classmethod
    def from_dict(cls, data: Any) -> Script:
        """Build a script from its dict form; raises ``ValueError`` naming the first problem found."""
        if not isinstance(data, Mapping):
            raise ValueError("a script must be a mapping")
        _reject_unknown_keys("script", data, {"greeting", "rules", "after_tool", "default"})
        rules = data.get("rules") or []
        if not isinstance(rules, list):
            raise ValueError("script 'rules' must be a list")
        after_tool = _string(data, "after_tool", "script", cls.after_tool)
        unknown = _template_fields(after_tool) - _AFTER_TOOL_FIELDS
        if unknown:
            raise ValueError(f"script 'after_tool' may use {{name}} and {{output}}, not {sorted(unknown)}")
        return cls(rules=tuple(_rule(rule, number) for number, rule in enumerate(rules, 1)),
                   greeting=_optional_string(data, "greeting", "script"), after_tool=after_tool,
                   default=_string(data, "default", "script", cls.default))

    def reply_for(self, request: LLMRequest) -> ScriptReply:
        """The reply to ``request``: after tool output, to the last user message, or the greeting."""
        outputs = _trailing_outputs(request)
        if outputs:
            names = {item.call_id: item.name for item in request.items if isinstance(item, FunctionCallItem)}
            last = outputs[-1]
            for rule in self.rules:  # a rule for this tool's output chains the next call
                if rule.after == names.get(last.call_id) and (match := rule.pattern.search(last.output)):
                    calls = tuple(call.resolve(match.groupdict()) for call in rule.calls)
                    return ScriptReply(rule.reply, calls, rule.error, rule.delay)
            texts = [self.after_tool.format(name=names.get(o.call_id, "the tool"), output=o.output)
                     for o in outputs]
            return ScriptReply(" ".join(texts))
        user_text = next((item.text for item in reversed(request.items)
                          if isinstance(item, Message) and item.role == "user"), None)
        if user_text is None:
            return ScriptReply(self.greeting if self.greeting is not None else self.default)
        offered = {tool.name for tool in request.tools}
        for rule in self.rules:
            if rule.after is not None or (rule.requires_tool is not None and rule.requires_tool not in offered):
                continue
            match = rule.pattern.search(user_text) or rule.pattern.search(digits_for_words(user_text))
            if match is not None:
                calls = tuple(call.resolve(match.groupdict()) for call in rule.calls)
                return ScriptReply(rule.reply, calls, rule.error, rule.delay)
        return ScriptReply(self.default)


class ScriptedBackend:
    """Replies from a :class:`Script`, with optional time to first token and per-token delay.

    ``script`` is a :class:`Script`, its dict form, or the path of a YAML/JSON file; None uses
    :data:`DEFAULT_SCRIPT`. ``sleep`` is injectable so tests can watch the delays without waiting.
    """

    name = "scripted"

    def __init__(
        self,
        script: Script | Mapping[str, Any] | str | Path | None = None,
        *,
        ttft: float = 0.0,
        token_delay: float = 0.0,
        sleep: Sleep = asyncio.sleep,
    ) -> None:
        if script is None:
            script = DEFAULT_SCRIPT
        elif isinstance(script, str | Path):
            script = Script.load(script)
        elif not isinstance(script, Script):
            script = Script.from_dict(script)
        self.script = script
        self.ttft = ttft
        self.token_delay = token_delay
        self._sleep = sleep

    async def stream(self, request: LLMRequest) -> AsyncGenerator[LLMEvent, None]:
        """Stream the scripted reply to ``request``."""
        reply = self.script.reply_for(request)
        await self._pause(self.ttft + reply.delay)
        tokens = _TOKEN.findall(reply.text)
        for number, token in enumerate(tokens):
            if number:
                await self._pause(self.token_delay)
            yield TextDelta(token)
        if reply.error is not None:
            raise LLMError(reply.error, code="scripted_error")
        calls = reply.calls if request.tool_choice != "none" else ()
        limit = CallLimit(request.parallel_tool_calls)
        for call in calls:
            await self._pause(self.token_delay)
            checked = limit.check(call)
            for event in announce_call(checked, _CALL_FRAGMENTS) if isinstance(checked, ToolCall) else [checked]:
                yield event
        written = reply.text + "".join(call.name + call.arguments_json for call in calls)
        yield Usage(_count_tokens(_request_text(request)), _count_tokens(written))
        yield Done("tool_calls" if calls else "stop")

    async def aclose(self) -> None:
        """Nothing to release."""

    async def _pause(self, seconds: float) -> None:
        if seconds > 0:
            await self._sleep(seconds)


def _rule(data: Any, number: int) -> ScriptRule:
    where = f"rule {number}"
    if not isinstance(data, Mapping):
        raise ValueError(f"{where} must be a mapping")
    _reject_unknown_keys(where, data, {"match", "reply", "calls", "error", "delay", "requires_tool", "after"})
    after = _optional_string(data, "after", where)
    match = data.get("match", "" if after is not None else None)
    if not isinstance(match, str) or (not match and after is None):
        raise ValueError(f"{where} needs a non-empty string 'match' (or an 'after' tool name)")
    pattern = _pattern(match, where)
    calls = data.get("calls") or []
    if not isinstance(calls, list):
        raise ValueError(f"{where}: 'calls' must be a list")
    parsed_calls = tuple(_call(call, f"{where}, call {i}", pattern) for i, call in enumerate(calls, 1))
    delay = data.get("delay", 0.0)
    if isinstance(delay, bool) or not isinstance(delay, int | float) or delay < 0:
        raise ValueError(f"{where}: 'delay' must be a number of seconds, not negative")
    return ScriptRule(pattern=pattern, reply=_string(data, "reply", where, ""), calls=parsed_calls,
                      error=_optional_string(data, "error", where), delay=float(delay),
                      requires_tool=_optional_string(data, "requires_tool", where), after=after)


def _pattern(match: str, where: str) -> re.Pattern[str]:
    """``/regex/`` compiled as it is, anything else as a literal substring; both case-insensitive."""
    is_regex = len(match) >= 2 and match.startswith("/") and match.endswith("/")
    try:
        return re.compile(match[1:-1] if is_regex else re.escape(match), re.IGNORECASE)
    except re.error as exc:
        raise ValueError(f"{where}: invalid regex: {exc}") from exc


def _call(data: Any, where: str, pattern: re.Pattern[str]) -> ScriptCall:
    if not isinstance(data, Mapping):
        raise ValueError(f"{where} must be a mapping")
    _reject_unknown_keys(where, data, {"name", "arguments"})
    name = data.get("name")
    arguments = data.get("arguments") or {}
    if not isinstance(name, str) or not name:
        raise ValueError(f"{where} needs a non-empty string 'name'")
    if not isinstance(arguments, Mapping):
        raise ValueError(f"{where}: 'arguments' must be a mapping")
    for value in arguments.values():
        placeholder = _PLACEHOLDER.fullmatch(value) if isinstance(value, str) else None
        if placeholder is not None and placeholder.group(1) not in pattern.groupindex:
            raise ValueError(f"{where}: {value!r} names no group of the rule's regex")
    return ScriptCall(name=name, arguments=dict(arguments))


def _fill(value: Any, groups: Mapping[str, str | None]) -> Any:
    """A ``"{group}"`` argument replaced by the group's text (a number when it reads as one)."""
    placeholder = _PLACEHOLDER.fullmatch(value) if isinstance(value, str) else None
    if placeholder is None:
        return value
    text = groups.get(placeholder.group(1)) or ""
    if _NUMBER.fullmatch(text):
        return float(text) if "." in text else int(text)
    return text


def _string(data: Mapping[str, Any], key: str, where: str, default: str) -> str:
    value = data.get(key, default)
    if not isinstance(value, str):
        raise ValueError(f"{where}: {key!r} must be a string")
    return value


def _optional_string(data: Mapping[str, Any], key: str, where: str) -> str | None:
    value = data.get(key)
    if value is not None and not isinstance(value, str):
        raise ValueError(f"{where}: {key!r} must be a string")
    return value


def _reject_unknown_keys(where: str, data: Mapping[str, Any], known: set[str]) -> None:
    unknown = set(data) - known
    if unknown:
        raise ValueError(f"{where}: unknown keys {sorted(unknown)}; expected some of {sorted(known)}")


def _template_fields(template: str) -> set[str]:
    try:
        return {name for _, name, _, _ in string.Formatter().parse(template) if name is not None}
    except ValueError as exc:
        raise ValueError(f"invalid template {template!r}: {exc}") from exc


def _trailing_outputs(request: LLMRequest) -> list[FunctionOutputItem]:
    """The function outputs at the end of the conversation, in order (empty when it ends otherwise)."""
    outputs: list[FunctionOutputItem] = []
    for item in reversed(request.items):
        if not isinstance(item, FunctionOutputItem):
            break
        outputs.append(item)
    return outputs[::-1]


def digits_for_words(text: str) -> str:
    """``text`` with spoken numbers written as digits (``twelve times eight`` → ``12 times 8``, ``two hundred
    fifty`` → ``250``; in any language of the lexicon, :func:`~voxcall.llm.local.lexicon.number_runs`), so a
    script's rules match a question however speech-to-text spelt its numbers. Words that say no one number
    ("eight nine") stay as they are."""
    out, end = [], 0
    for start, stop, values in number_runs(text):
        if len(values) == 1:
            out.append(text[end:start] + str(values[0]))
            end = stop
    return "".join(out) + text[end:]


def _request_text(request: LLMRequest) -> str:
    parts = [request.instructions]
    for item in request.items:
        if isinstance(item, Message):
            parts.append(item.text)
        elif isinstance(item, FunctionCallItem):
            parts.append(item.name + item.arguments)
        else:
            parts.append(item.output)
    return "\n".join(parts)


def _count_tokens(text: str) -> int:
    return len(_COUNTED.findall(text))


def _arithmetic_rule(operator: str, op: str) -> dict[str, Any]:
    return {"match": f"/(?P<a>{_NUM})\\s*(?:{operator})\\s*(?P<b>{_NUM})/", "requires_tool": "calculator",
            "reply": "Let me work that out.",
            "calls": [{"name": "calculator", "arguments": {"op": op, "a": "{a}", "b": "{b}"}}]}


_OPERATORS = {"mul": r"times|multiplied by|x|\*|×", "div": r"divided by|over|/|÷",
              "add": r"plus|\+", "sub": r"minus|-"}

DEFAULT_SCRIPT_DATA: dict[str, Any] = {
    "greeting": "Hi! I'm the voxcall demo assistant. I can do sums with my calculator: "
                "try asking what is 12 times 8.",
    "rules": [
        *(_arithmetic_rule(operator, op) for op, operator in _OPERATORS.items()),
        # the playground's own client tools (voxcall/playground/client-tools.js), when a page offers them
        {"match": r"/\bwhat time\b|\bthe time\b/", "requires_tool": "get_local_time",
         "reply": "Let me look at your clock.", "calls": [{"name": "get_local_time"}]},
        # the built-in clock, when the server offers it (examples/demo.yaml, what `make serve` runs)
        {"match": r"/\bwhat time\b|\bthe time\b/", "requires_tool": "current_time",
         "reply": "Let me check the clock.", "calls": [{"name": "current_time"}]},
        {"match": r"/\b(?:make|paint|turn|colou?r) the page (?:to )?(?P<color>[a-z]+)/",
         "requires_tool": "set_page_color", "reply": "Sure.",
         "calls": [{"name": "set_page_color", "arguments": {"color": "{color}"}}]},
        {"match": f"/{_NUM}\\s*(?:{'|'.join(_OPERATORS.values())})\\s*{_NUM}/",
         "reply": "I'd use my calculator for that, but it isn't switched on right now."},
        {"match": r"/\b(help|what can you do)\b/",
         "reply": "I'm a scripted demo, so I know only a few things. Ask me some arithmetic, like what is "
                  "12 times 8, and I'll use the calculator."},
        {"match": r"/\b(thanks|thank you)\b/", "reply": "You're welcome!"},
        {"match": r"/\b(bye|goodbye)\b/", "reply": "Goodbye! Talk to you soon."},
        {"match": r"/\b(hello|hi|hey)\b/", "reply": "Hello! How can I help you today?"},
    ],
    "after_tool": "The answer is {output}.",
    "default": "I'm a scripted demo assistant, so I only understand a few things. "
               "Try asking: what is 12 times 8?",
}
"""The built-in script (dict form): greets, does arithmetic with ``calculator`` when offered, tells the time and
colours the page with the playground's client tools when offered (else the time with the built-in clock,
``current_time``, when the server offers it), small talk."""

DEFAULT_SCRIPT = Script.from_dict(DEFAULT_SCRIPT_DATA)
"""The built-in script, parsed; what :class:`ScriptedBackend` uses when given none."""
