"""The Responses delegation's backend: voxcall's own LLM and tools, run for the tasks the voice delegates.

It is a second hosted session, text only and never heard, with the delegation's ``responses`` settings: its
instructions, its ``tools`` (``function`` tools the application runs, ``mcp`` servers the core starts when the
operator allows session MCP servers) and ``tool_choice``, plus the server's own tools and MCP servers, which run in
process. One conversation serves every task of the Live session, one task at a time, so a later task can build on
an earlier one.

A task is a user message and a ``response.create``. Every event of the backend's responses goes to the client as a
``response.event`` frame with the task's ``delegation_id``, renamed where the Realtime and Responses streams
differ (``response.done`` becomes ``response.completed``, ``.incomplete`` or ``.failed``; lifecycle snapshots carry
no output, as OpenAI's do). A response that ends with a call of a client function waits for the application:
``response.item.create`` with the ``function_call_output`` and ``response.create`` continue it. A response that ends
without one ends the task: its text is the answer the voice speaks.
"""

from __future__ import annotations

import asyncio
import dataclasses
import itertools
import json
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

from voxcall.core.commands import AddItem, Respond, UpdateSettings
from voxcall.core.conversation.items import CallOutputItem, Item, MessageItem, Role
from voxcall.core.errors import SessionError
from voxcall.core.events import (
    ArgumentsDelta,
    ArgumentsDone,
    ContentPartAdded,
    ContentPartDone,
    Event,
    OutputItemAdded,
    OutputItemDone,
    OutputTextDelta,
    OutputTextDone,
    ResponseCreated,
    ResponseDone,
    ResponseState,
    ServerCallProgress,
)
from voxcall.core.ids import new_id
from voxcall.core.settings import parse_max_tokens, parse_tool_choice, parse_tools
from voxcall.live.config import LiveError
from voxcall.live.delegation import Announce
from voxcall.serving.frames import Message, event
from voxcall.serving.host import SessionHost
from voxcall.serving.shared import Shared

EmitLive = Callable[[Message], Awaitable[None]]
Step = Callable[[], Awaitable[None]]

BACK_OFFICE_INSTRUCTIONS = ("You are the back office of a voice assistant. Do the task you are given with your tools, "
                        "then answer in one or two plain sentences the assistant can read out.")

_ENDED = {"completed": "response.completed", "incomplete": "response.incomplete", "cancelled": "response.incomplete",
          "failed": "response.failed"}
_SETTINGS = "session.delegation.responses"


@dataclass
class _Task:
    delegation_id: str
    text: str
    announce: Announce
    answer: asyncio.Future[str]
    announced: bool = False
    client_event_id: str | None = None


class Backend:
    """One Live session's Responses backend."""

    def __init__(self, host: SessionHost, emit: EmitLive, responses: Mapping[str, Any]) -> None:
        shared = host.shared
        options = shared.settings.session.model_copy(update={"prefetch": False})
        self._max_tools = options.max_tools
        self._model = str(responses.get("model"))
        named = shared.delegates.get(self._model)
        settings = shared.settings
        own = (settings.model, settings.llm, shared.backend.name)
        self.answered_by = self._model if named is not None or self._model in own else (
            settings.model or settings.llm or shared.backend.name)
        """The model that answers: the one the delegation names, or the server's own when it names none of the
        server's backends (unless ``live.strict_models``)."""
        self._emit = emit
        self.hosted = host.open(self, protocol="live", model=self.answered_by, backend=named or shared.backend,
                                 options=options)
        self.session = self.hosted.session
        self._responses = dict(responses)
        self._lock = asyncio.Lock()
        self._task: _Task | None = None
        self._typed: list[Item] = []  # messages for the next task the client starts (the text flow)
        self._sequence = itertools.count()

    async def start(self) -> None:
        await self.hosted.start()
        await self.configure(self._responses)

    async def configure(self, responses: Mapping[str, Any]) -> None:
        """Apply the delegation's ``responses`` settings (again, after a ``session.update``, which may not change
        the backend model); settings the backend cannot take are reported to the client."""
        if responses.get("model") != self._model:
            raise LiveError("the Responses backend's model cannot change after startup", code="immutable_parameter",
                            param=f"{_SETTINGS}.model")
        self._responses = dict(responses)
        try:
            tools, servers = parse_tools(list(responses.get("tools") or []), where=f"{_SETTINGS}.tools",
                                         limit=self._max_tools)
            settings = dataclasses.replace(
                self.session.settings, output_modalities=("text",), tools=tools, mcp_servers=servers,
                instructions=responses.get("instructions") or BACK_OFFICE_INSTRUCTIONS,
                tool_choice=parse_tool_choice(responses.get("tool_choice") or "auto", tools,
                                              where=f"{_SETTINGS}.tool_choice"))
            if responses.get("max_output_tokens") is not None:
                settings = dataclasses.replace(settings, max_output_tokens=parse_max_tokens(
                    responses["max_output_tokens"], where=f"{_SETTINGS}.max_output_tokens"))
            await self.session.apply(UpdateSettings(settings))
        except SessionError as err:
            await self._emit(event("error", error={
                "type": err.kind, "code": err.code or "invalid_value",
                "message": f"the Responses backend refused its settings: {err.message}", "param": _SETTINGS}))

    @property
    def typed(self) -> bool:
        """Whether the client has given messages for a task of its own (``response.item.create`` with no task
        running), which its ``response.create`` starts."""
        return bool(self._typed) and self._task is None

    def take_typed(self) -> list[Item]:
        typed, self._typed = self._typed, []
        return typed

    async def run(self, delegation_id: str, text: str, announce: Announce, items: list[Item] | None = None) -> str:
        """Run one task to its answer (tasks wait for the one before): ``text`` as the user's message, or the
        client's own ``items`` (the text flow; ``text`` then names the task)."""
        async with self._lock:
            task = self._task = _Task(delegation_id, text, announce, asyncio.get_running_loop().create_future())
            try:
                for item in items or [MessageItem.of_text("user", text)]:
                    await self._command(task, AddItem(item))
                await self._command(task, Respond())
                return await task.answer
            finally:
                self._task = None

    async def item_create(self, item: Any, client_event_id: str | None) -> None:
        """``response.item.create``: an item (a function's output) for the running task's conversation; with no task
        running, a message for the task the client's next ``response.create`` starts (the protocol's text flow)."""
        converted = _backend_item(item)
        if self._task is None and isinstance(converted, MessageItem):
            self._typed.append(converted)
            return
        task = self._require("response.item.create")
        task.client_event_id = client_event_id
        await self._command(task, AddItem(converted))

    async def response_create(self, client_event_id: str | None) -> None:
        """``response.create``: continue the running task (after the outputs of its function calls)."""
        task = self._require("response.create")
        task.client_event_id = client_event_id
        await self._command(task, Respond())

    async def close(self) -> None:
        if self._task is not None and not self._task.answer.done():
            self._task.answer.cancel()
        await self.hosted.close()

    def _require(self, command: str) -> _Task:
        if self._task is None:
            raise LiveError(f"{command} continues a delegated task, and none is running (a task of your own starts "
                            "with a message: response.item.create, then response.create)", code="no_active_delegation")
        return self._task

    async def _command(self, task: _Task, command: AddItem | Respond) -> None:
        """Give the backend a task's command; a refusal goes into the task's stream."""
        try:
            await self.session.apply(command)
        except SessionError as err:
            await self._nested(task, {"type": "error", "code": err.code, "message": err.message, "param": err.param})

    # -- the backend's events (the host's codec) ----------------------------------------------------------------

    def encode(self, ev: Event) -> Step | None:
        """What the client sees of one of the backend's events: a step that sends it (or nothing)."""
        task = self._task
        if task is None:
            return None
        nested = _nested_event(ev)
        if isinstance(ev, ResponseCreated):
            return lambda: self._created(task, ev.response)
        if isinstance(ev, ResponseDone):
            return lambda: self._ended(task, ev.response)
        if nested is not None:
            return lambda: self._nested(task, nested)
        return None

    async def write(self, message: Step) -> None:
        await message()

    async def refused(self, error: SessionError) -> None:
        return None  # the backend is given no command but its own, which report their refusals

    async def _created(self, task: _Task, response: ResponseState) -> None:
        if not task.announced:
            task.announced = True
            await task.announce(task.delegation_id, "responses", response.id, task.text)
        await self._nested(task, {"type": "response.created", "response": self._snapshot(response, "in_progress")})

    async def _ended(self, task: _Task, response: ResponseState) -> None:
        status = response.status
        await self._nested(task, {"type": _ENDED.get(status, "response.completed"),
                                  "response": self._snapshot(response, status)})
        if status == "completed" and any(item.type == "function_call" for item in response.output):
            return  # the application runs its functions, then sends response.create
        answer = " ".join(item.text for item in response.output if isinstance(item, MessageItem) and item.text).strip()
        if status != "completed" or not answer:
            reason = (response.status_details or {}).get("error", {}).get("message") or status
            answer = f"The back office could not finish the task ({reason})."
        if not task.answer.done():
            task.answer.set_result(answer)

    def _snapshot(self, response: ResponseState, status: str) -> dict[str, Any]:
        """A lifecycle snapshot: the response without its output (the granular events carry it)."""
        snapshot: dict[str, Any] = {"id": response.id, "object": "response", "status": status,
                                    "model": self.answered_by, "output": []}
        usage = response.usage
        if usage is not None:
            snapshot["usage"] = {"total_tokens": usage.input_tokens + usage.output_tokens,
                                 "input_tokens": usage.input_tokens, "output_tokens": usage.output_tokens,
                                 "input_token_details": {"cached_tokens": usage.cached_tokens,
                                                         "text_tokens": usage.input_tokens},
                                 "output_token_details": {"text_tokens": usage.output_tokens}}
        return snapshot

    async def _nested(self, task: _Task, nested: dict[str, Any]) -> None:
        nested["sequence_number"] = next(self._sequence)
        frame: Message = {"type": "response.event", "event_id": new_id("event"), "event": nested,
                          "delegation_id": task.delegation_id}
        if task.client_event_id is not None:
            frame["client_event_id"] = task.client_event_id
        await self._emit(frame)


def _nested_event(ev: Event) -> dict[str, Any] | None:
    """A backend event as the Responses stream names it (None: one the stream does not carry)."""
    if isinstance(ev, OutputItemAdded | OutputItemDone):
        kind = "response.output_item.added" if isinstance(ev, OutputItemAdded) else "response.output_item.done"
        return {"type": kind, "output_index": ev.output_index,
                "item": {k: v for k, v in ev.item.to_wire().items() if k != "object"}}
    if isinstance(ev, ServerCallProgress):
        return {"type": f"response.mcp_call.{ev.progress}", "item_id": ev.item_id, "output_index": ev.output_index}
    if isinstance(ev, ArgumentsDelta | ArgumentsDone):
        server, done = ev.server, isinstance(ev, ArgumentsDone)
        kind = f"response.{'mcp_call' if server else 'function_call'}_arguments.{'done' if done else 'delta'}"
        out: dict[str, Any] = {"type": kind, "item_id": ev.item_id, "output_index": ev.output_index}
        if not server:
            out["call_id"] = ev.call_id
        if isinstance(ev, ArgumentsDone):
            out.update({"arguments": ev.arguments} if server else {"name": ev.name, "arguments": ev.arguments})
        else:
            out.update({"delta": ev.delta, "obfuscation": ""} if server else {"delta": ev.delta})
        return out
    if isinstance(ev, OutputTextDelta | OutputTextDone | ContentPartAdded | ContentPartDone):
        place = {"item_id": ev.item_id, "output_index": ev.output_index, "content_index": ev.content_index}
        if isinstance(ev, OutputTextDelta):
            return {"type": "response.output_text.delta", **place, "delta": ev.delta}
        if isinstance(ev, OutputTextDone):
            return {"type": "response.output_text.done", **place, "text": ev.text}
        kind = "response.content_part.added" if isinstance(ev, ContentPartAdded) else "response.content_part.done"
        return {"type": kind, **place, "part": {"type": "text", "text": ev.text}}
    return None


def _backend_item(item: Any) -> Item:
    """A ``response.item.create`` item (a Responses input item) as a conversation item: a function call's output,
    or a message of text."""
    kind = item.get("type", "message") if isinstance(item, dict) else None
    if kind == "function_call_output" and isinstance(item.get("call_id"), str) and item["call_id"]:
        output = item.get("output")
        text = output if isinstance(output, str) else json.dumps(output)
        return CallOutputItem(new_id("item"), item["call_id"], text)
    if kind == "message" and item.get("role") in ("user", "system", "developer", "assistant"):
        content = item.get("content")
        text = content if isinstance(content, str) else " ".join(
            str(part.get("text") or "") for part in content or [] if isinstance(part, dict))
        role: Role = "system" if item["role"] == "developer" else item["role"]
        return MessageItem.of_text(role, text)
    raise LiveError("response.item.create takes a function_call_output (with its call_id) or a text message",
                    param="item")


def backend_models(shared: Shared) -> frozenset[str] | None:
    """The names a Responses delegation's ``model`` may take: under ``live.strict_models`` the server's LLM backend,
    by any of its names, and the named backends of ``live.backends``; otherwise None (any name: an unknown one is
    served by the server's own backend)."""
    settings = shared.settings
    if not settings.live.strict_models:
        return None
    return frozenset(name for name in (settings.model, settings.llm, shared.backend.name) if name) | set(
        shared.delegates)
