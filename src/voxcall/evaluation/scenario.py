"""Scenarios for ``voxcall eval``: scripted conversations and what each turn must show, read from YAML.

A file holds defaults and a list of scenarios::

    voice: joe                       # the voice of "say" turns (a voxcall voice: joe, espeak:es …); default joe
    scenarios:
      - name: calculator
        session:                     # sent in session.update (Realtime) or session.start (GPT-Live)
          instructions: "Answer briefly."
          tools: [...]               # client tools, as Realtime function tool dicts
          turn_detection: null       # omitted: the server's; null: push-to-talk (the runner commits and asks)
          output: audio              # or text
        tool_results:                # how the client answers its tools' calls, by tool name
          get_local_time: {output: "10:42"}             # a fixed result (a string, or anything as JSON)
          book_table: {error: "the booking service is down"}   # a failing tool
          slow_lookup: {output: "done", delay_ms: 4000} # a late result: the conversation goes on meanwhile
        turns:
          - say: "What is twelve times eight?"          # speech in a voxcall voice (voice:, language: to choose)
            expect:
              calls: [{name: calculator, arguments: {op: mul, a: 12, b: 8}}]
              says: ["96"]
              max_first_audio_ms: 3000
          - text: "thanks"                              # a typed turn
          - wav: question.wav                           # a recording (relative to this file)
          - silence_ms: 2000                            # the caller says nothing
          - say: "Stop. What time is it?"
            barge_in_ms: 800                            # spoken over the previous answer, 800 ms into its audio

Expectations (all optional, per turn): ``calls`` (each must match a distinct call: same name, and the arguments
given equal, numbers by value; ``in_order: true`` wants them in that order), ``absent`` (tool names, or calls with
arguments, that must not be made), ``says`` / ``not_says`` (words or phrases of the answer, whole words, any case),
``heard`` (words the server must have heard the user say), ``responds`` (whether the turn gets an answer at all),
``interrupted`` (whether the turn's answer was cut short, by a barge-in), ``max_first_audio_ms`` (end of the user's
speech, or the request, to the first answer audio) and ``max_tool_to_audio_ms`` (each tool result to the first audio
of the answer that follows it).
"""

from __future__ import annotations

import enum
import json
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

DEFAULT_VOICE = "joe"
"""The voice of ``say`` turns unless the file or the turn names another: voxcall's packaged Piper voice."""

TURN_TIMEOUT_S = 30.0
"""Seconds a turn may take, from its start to a complete answer (tool round trips included)."""


class ScenarioError(ValueError):
    """A scenario file that cannot be read or is not valid; the message names the file and the problem."""


class Protocol(enum.Enum):
    """The protocol a server speaks at the URL evaluated."""

    REALTIME = "realtime"
    LIVE = "live"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ToolResult(_Strict):
    """How the client answers a call of one of its tools: a result (``output``) or a failure (``error``), at once
    or ``delay_ms`` later (the conversation goes on meanwhile, across the user's next turn)."""

    output: Any = None
    error: str | None = None
    delay_ms: int = Field(default=0, ge=0)

    @model_validator(mode="after")
    def _one_answer(self) -> ToolResult:
        if (self.output is None) == (self.error is None):
            raise ValueError("give a tool result either an 'output' or an 'error'")
        return self

    @property
    def text(self) -> str:
        """The ``function_call_output`` text: a string output as is, anything else as JSON, an error as
        ``error: …`` (how voxcall's own tools report failures)."""
        if self.error is not None:
            return f"error: {self.error}"
        return self.output if isinstance(self.output, str) else json.dumps(self.output, ensure_ascii=False)


class ExpectedCall(_Strict):
    """A tool call an expectation names: the tool, and the arguments that must be among the call's."""

    name: str
    arguments: dict[str, Any] | None = None

    def describe(self) -> str:
        """``name(a=1, b="x")``, as the report shows it."""
        if self.arguments is None:
            return f"{self.name}(…)"
        shown = ", ".join(f"{key}={json.dumps(value, ensure_ascii=False)}" for key, value in self.arguments.items())
        return f"{self.name}({shown})"


class Expect(_Strict):
    """What one turn must show; see the module docstring."""

    calls: tuple[ExpectedCall, ...] = ()
    in_order: bool = False
    absent: tuple[ExpectedCall | str, ...] = ()
    says: tuple[str, ...] = ()
    not_says: tuple[str, ...] = ()
    heard: tuple[str, ...] = ()
    responds: bool | None = None
    interrupted: bool | None = None
    max_first_audio_ms: int | None = Field(default=None, gt=0)
    max_tool_to_audio_ms: int | None = Field(default=None, gt=0)

    @property
    def absent_calls(self) -> tuple[ExpectedCall, ...]:
        """``absent``, each as a call (a bare name: any call of that tool)."""
        return tuple(ExpectedCall(name=item) if isinstance(item, str) else item for item in self.absent)


class TurnKind(enum.Enum):
    """What the user does in a turn."""

    TEXT = "text"
    SAY = "say"
    WAV = "wav"
    SILENCE = "silence"


class Turn(_Strict):
    """One turn of the user: exactly one of ``text``, ``say``, ``wav``, ``silence_ms``; ``voice`` or ``language``
    choose the voice of ``say``; ``barge_in_ms`` starts it over the previous answer, that far into its audio."""

    text: str | None = None
    say: str | None = None
    wav: Path | None = None
    silence_ms: int | None = Field(default=None, gt=0)
    voice: str | None = None
    language: str | None = None
    barge_in_ms: int | None = Field(default=None, ge=0)
    expect: Expect = Expect()

    @model_validator(mode="after")
    def _one_action(self) -> Turn:
        given = [name for name in ("text", "say", "wav", "silence_ms") if getattr(self, name) is not None]
        if len(given) != 1:
            raise ValueError("a turn has exactly one of 'text', 'say', 'wav', 'silence_ms'"
                             + (f" (this one has {', '.join(given)})" if given else ""))
        if (self.voice is not None or self.language is not None) and self.say is None:
            raise ValueError("'voice' and 'language' choose the voice of a 'say' turn")
        if self.barge_in_ms is not None and self.kind not in (TurnKind.SAY, TurnKind.WAV):
            raise ValueError("'barge_in_ms' applies to spoken turns ('say' or 'wav')")
        return self

    @property
    def kind(self) -> TurnKind:
        """What the user does."""
        if self.text is not None:
            return TurnKind.TEXT
        if self.say is not None:
            return TurnKind.SAY
        return TurnKind.WAV if self.wav is not None else TurnKind.SILENCE

    @property
    def spoken(self) -> bool:
        """Whether the turn is audio the server must hear (its time is measured from the end of the speech)."""
        return self.kind in (TurnKind.SAY, TurnKind.WAV)

    def describe(self) -> str:
        """What the user does, in a few words."""
        if self.kind is TurnKind.SILENCE:
            return f"(silent for {self.silence_ms} ms)"
        if self.kind is TurnKind.WAV:
            return f"[{self.wav}]"
        return f"{'🗣 ' if self.kind is TurnKind.SAY else ''}{self.say or self.text}"


class SessionSpec(_Strict):
    """The session a scenario asks for; ``turn_detection`` omitted keeps the server's own."""

    instructions: str | None = None
    tools: tuple[dict[str, Any], ...] = ()
    turn_detection: dict[str, Any] | None = None
    output: Literal["audio", "text"] = "audio"
    voice: str | None = None

    @property
    def keeps_turn_detection(self) -> bool:
        """Whether the scenario leaves turn detection as the server has it."""
        return "turn_detection" not in self.model_fields_set

    @property
    def tool_names(self) -> frozenset[str]:
        """The names of the client tools offered."""
        return frozenset(str(tool.get("name")) for tool in self.tools)


class Scenario(_Strict):
    """One conversation: its session, how client tools answer, and its turns."""

    name: str
    description: str | None = None
    session: SessionSpec = SessionSpec()
    tool_results: dict[str, ToolResult] = {}
    turns: tuple[Turn, ...] = Field(min_length=1)
    timeout_s: float = Field(default=TURN_TIMEOUT_S, gt=0)

    @model_validator(mode="after")
    def _results_for_tools(self) -> Scenario:
        unknown = set(self.tool_results) - self.session.tool_names - {"delegate"}
        if unknown:
            raise ValueError(f"tool_results names tools the session does not offer: {', '.join(sorted(unknown))}")
        return self


class ScenarioFile(_Strict):
    """A file of scenarios; ``folder`` (set when loaded) is where relative ``wav`` paths are found."""

    voice: str = DEFAULT_VOICE
    model: str | None = None
    scenarios: tuple[Scenario, ...] = Field(min_length=1)
    folder: Path = Path(".")

    def only(self, names: list[str] | None) -> ScenarioFile:
        """These scenarios, or only those named (a :class:`ScenarioError` for a name the file does not have)."""
        if not names:
            return self
        unknown = set(names) - {scenario.name for scenario in self.scenarios}
        if unknown:
            raise ScenarioError(f"no scenario named {', '.join(sorted(unknown))}; the file has "
                                f"{', '.join(scenario.name for scenario in self.scenarios)}")
        return self.model_copy(update={"scenarios": tuple(s for s in self.scenarios if s.name in names)})

    def check_protocol(self, protocol: Protocol) -> None:
        """Refuse, naming the scenario and turn, what ``protocol`` cannot do (GPT-Live has no user text, no
        client tools, no responses to cut)."""
        if protocol is not Protocol.LIVE:
            return
        for scenario in self.scenarios:
            if scenario.session.tools:
                raise ScenarioError(f"scenario {scenario.name!r}: GPT-Live has no client tools (the voice delegates "
                                    "tasks: answer them with tool_results.delegate)")
            for number, turn in enumerate(scenario.turns, 1):
                if turn.kind is TurnKind.TEXT:
                    raise ScenarioError(f"scenario {scenario.name!r}, turn {number}: GPT-Live has no user text "
                                        "event; use 'say' or 'wav'")
                if turn.expect.interrupted is not None:
                    raise ScenarioError(f"scenario {scenario.name!r}, turn {number}: GPT-Live has no responses to "
                                        "cancel, so 'interrupted' cannot be checked")

    def wav_path(self, turn: Turn) -> Path:
        """The file of a ``wav`` turn."""
        assert turn.wav is not None
        return turn.wav if turn.wav.is_absolute() else self.folder / turn.wav


def load_scenarios(path: Path) -> ScenarioFile:
    """The scenarios of the YAML file ``path``; a :class:`ScenarioError` saying what is wrong and where."""
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ScenarioError(f"cannot read {path}: {exc.strerror or exc}") from None
    except yaml.YAMLError as exc:
        raise ScenarioError(f"{path} is not valid YAML: {exc}") from None
    if not isinstance(data, dict):
        raise ScenarioError(f"{path}: expected a mapping with a 'scenarios' list")
    try:
        loaded = ScenarioFile.model_validate({**data, "folder": path.resolve().parent})
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(str(p) for p in error['loc']) or 'file'}: {error['msg']}"
                             for error in exc.errors())
        raise ScenarioError(f"{path}: {problems}") from None
    names = [scenario.name for scenario in loaded.scenarios]
    if len(set(names)) != len(names):
        raise ScenarioError(f"{path}: two scenarios share a name; each needs its own")
    for scenario in loaded.scenarios:
        for turn in scenario.turns:
            if turn.wav is not None and not loaded.wav_path(turn).is_file():
                raise ScenarioError(f"{path}: scenario {scenario.name!r}: no WAV file {loaded.wav_path(turn)}")
    return loaded
