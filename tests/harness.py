"""Drive a Session without a socket: a recording outbox and a backend whose every step the test controls."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncGenerator
from typing import Any

from voxcall.config import ServerSettings, SessionOptions, ToolsSettings
from voxcall.core.conversation.conversation import Conversation
from voxcall.core.conversation.output_items import History
from voxcall.core.events import Emit, Event
from voxcall.core.responses.prefetch import SpeculationSlots
from voxcall.core.responses.response_inputs import ResponseInputs, SessionContext
from voxcall.core.settings import SessionSettings
from voxcall.core.tools.tool_ledger import ToolLedger
from voxcall.language import acknowledgement
from voxcall.llm import Done, LLMError, LLMEvent, LLMRequest, ToolCallArgumentsDelta, ToolCallStart, Usage
from voxcall.realtime.connection import RealtimeConnection
from voxcall.realtime.encode import RealtimeEncoder
from voxcall.realtime.server_events import check_server_event
from voxcall.serving.host import CloseConnection, SessionHost
from voxcall.serving.metrics import Metrics
from voxcall.serving.rate import Clock
from voxcall.serving.shared import ServerTools, Shared
from voxcall.tools import ToolCall
from voxcall.tools.codecalls import TextDelta

WEATHER = {"type": "function", "name": "get_weather", "description": "Weather for a city.",
           "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}


WIRE = RealtimeEncoder("sess_test", "voxcall")
"""The Realtime events a session's typed events become, for tests that drive a part of the core on its own."""


def wired(send: Any) -> Emit:
    """An emit that hands ``send`` each event as the Realtime server event a client would get."""
    async def emit(ev: Event) -> None:
        wire = WIRE(ev)
        if wire is not None:  # a spoken clause has no Realtime event
            await send(wire)
    return emit


class Turn:
    """What the controlled backend says for one request: text, then calls, optionally waiting or failing."""

    def __init__(self, text: str = "", calls: list[tuple[str, dict[str, Any]]] | None = None, *,
                 hold: bool = False, fail: str | None = None, usage: tuple[int, int] = (10, 5)) -> None:
        self.text = text
        self.calls = calls or []
        self.hold = hold
        self.fail = fail
        self.usage = usage
        self.release = asyncio.Event()
        self.started = asyncio.Event()
        self.closed = False


class ControlledBackend:
    """Answers each request with the next queued :class:`Turn` (or a default reply) and records everything."""

    name = "controlled"

    def __init__(self, *turns: Turn, default: str = "Done.") -> None:
        self.turns = list(turns)
        self.default = default
        self.requests: list[LLMRequest] = []
        self.served: list[Turn] = []

    def queue(self, *turns: Turn) -> None:
        self.turns.extend(turns)

    async def stream(self, request: LLMRequest) -> AsyncGenerator[LLMEvent, None]:
        turn = self.turns.pop(0) if self.turns else Turn(self.default)
        self.requests.append(request)
        self.served.append(turn)
        turn.started.set()
        try:
            for word in turn.text.split(" ") if turn.text else []:
                yield TextDelta(word + " ")
            if turn.hold:
                await turn.release.wait()
            if turn.fail:
                raise LLMError(turn.fail, code="backend_error")
            for name, args in turn.calls:
                call = ToolCall(name, args)
                yield ToolCallStart(call.call_id, name)
                yield ToolCallArgumentsDelta(call.call_id, call.arguments_json)
                yield call
            yield Usage(*turn.usage)
            yield Done("tool_calls" if turn.calls else "stop")
        finally:
            turn.closed = True

    async def aclose(self) -> None:
        return None


def host_for(backend: Any, *, slots: SpeculationSlots | None = None, voice: Any = None, toolbox: Any = None,
             **options: Any) -> SessionHost:
    """A session host for ``backend``: ``options`` are fields of the ``session:`` section, or of the ``tools:`` one
    (``allow_session_mcp``)."""
    tools = {k: options.pop(k) for k in list(options) if k in ToolsSettings.model_fields}
    settings = ServerSettings(session=SessionOptions(**options), tools=ToolsSettings(**tools))
    return SessionHost(Shared(settings, backend, slots or SpeculationSlots(4), Metrics(), voice, ServerTools(toolbox)))


def run_inputs(backend: Any, history: History, emit: Emit, *, settings: SessionSettings | None = None,
               request: LLMRequest | None = None, tts: Any = None) -> ResponseInputs:
    """What a response run on its own is given: a session context of its own (a ledger over a conversation of its
    own, English acknowledgements), the settings (text, unless given), a request of no items unless given."""
    ledger = ToolLedger(Conversation(), Metrics(), client_wait=60, on_landed=lambda entry: None)
    context = SessionContext(backend, ledger, llm_timeout=5, acknowledge=lambda: acknowledgement(None, "", 0),
                             gain=lambda: 1.0)
    return ResponseInputs(context, request or LLMRequest(items=[]), settings or SessionSettings(), history, emit,
                          tts=tts)


class Recorded:
    """A backend whose every request is kept: what the model is asked, the conversation as it stands then."""

    def __init__(self, backend: Any) -> None:
        self.backend = backend
        self.name = backend.name
        self.requests: list[LLMRequest] = []

    async def stream(self, request: LLMRequest) -> AsyncGenerator[LLMEvent, None]:
        self.requests.append(request)
        async for ev in self.backend.stream(request):
            yield ev

    async def aclose(self) -> None:
        await self.backend.aclose()

    def assistant_said(self, request: int = -1) -> list[str]:
        """The assistant's messages in the ``request``-th request, as the model reads them."""
        return self._said("assistant", request)

    def user_said(self, request: int = -1) -> list[str]:
        """The user's messages in the ``request``-th request (none before the first request)."""
        return self._said("user", request) if self.requests else []

    def _said(self, role: str, request: int) -> list[str]:
        return [item.text for item in self.requests[request].items if getattr(item, "role", None) == role]


def heard_only(said: str, full: str) -> None:
    """Assert that the assistant message ``said`` is what the user heard of ``full``: its first words, not all."""
    words, whole = said.split(), full.split()
    assert 0 < len(words) < len(whole) // 2, f"{len(words)} of {len(whole)} words kept: {said!r}"
    assert words == whole[:len(words)], said


class Harness:
    """A session spoken to in the Realtime protocol whose events are recorded; ``send`` feeds it client events as
    JSON frames."""

    def __init__(self, backend: Any, *, slots: SpeculationSlots | None = None, voice: Any = None,
                 toolbox: Any = None, beta: bool = False, clock: Clock = time.monotonic,
                 close_socket: CloseConnection | None = None, **options: Any) -> None:
        """``options`` are fields of the ``session:`` section, or of the ``tools:`` one (``allow_session_mcp``);
        ``clock`` is the connection's rate limits' clock; ``close_socket`` is how it would end its connection."""
        self.events: list[dict[str, Any]] = []
        self._changed = asyncio.Condition()
        self.host = host_for(backend, slots=slots, voice=voice, toolbox=toolbox, **options)
        self.connection = RealtimeConnection(self.host, self._record, beta=beta, clock=clock, close=close_socket)
        self.session = self.connection.session

    async def _record(self, ev: dict[str, Any]) -> None:
        check_server_event(ev)
        async with self._changed:
            self.events.append(ev)
            self._changed.notify_all()

    async def __aenter__(self) -> Harness:
        await self.connection.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.connection.close()

    async def send(self, **ev: Any) -> None:
        await self.frame(json.dumps(ev))

    async def frame(self, data: str | bytes) -> None:
        """Hand the connection one frame as a client sends it."""
        await self.connection.handle_frame(data)
        await self.settle()

    async def say(self, text: str) -> None:
        await self.send(type="conversation.item.create",
                        item={"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]})

    async def output(self, call_id: str, output: str) -> None:
        await self.send(type="conversation.item.create",
                        item={"type": "function_call_output", "call_id": call_id, "output": output})

    async def wait(self, kind: str, count: int = 1, timeout: float = 5.0) -> dict[str, Any]:
        """The ``count``-th event of type ``kind`` (waiting for it)."""
        async def reached() -> dict[str, Any]:
            async with self._changed:
                await self._changed.wait_for(lambda: len(self.of(kind)) >= count)
                return self.of(kind)[count - 1]
        return await asyncio.wait_for(reached(), timeout)

    async def settle(self) -> None:
        """Let queued events reach the recorder."""
        for _ in range(20):
            await asyncio.sleep(0)

    def of(self, kind: str) -> list[dict[str, Any]]:
        return [e for e in self.events if e["type"] == kind]

    def history(self) -> list[dict[str, Any]]:
        """The conversation as JSON (ids dropped), for comparing two sessions."""
        wire = [i.to_wire() for i in self.session.conversation.items]
        for item in wire:
            item.pop("id")
            if item.get("type") == "function_call":
                item.pop("call_id")
            if item.get("type") == "function_call_output":
                item.pop("call_id")
        return wire
