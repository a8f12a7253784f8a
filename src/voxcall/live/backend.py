"""The Responses delegation's backend: voxcall's own LLM and tools, run for the tasks the voice delegates.

It is a second core session, text only and never heard, with the delegation's ``responses`` settings: its
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
import itertools
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from voxcall.core.protocol import Event, new_id
from voxcall.core.session import Session
from voxcall.live.config import LiveError
from voxcall.live.delegation import Announce
from voxcall.serving.shared import Shared

EmitLive = Callable[[Event], Awaitable[None]]

DEFAULT_INSTRUCTIONS = ("You are the back office of a voice assistant. Do the task you are given with your tools, "
                        "then answer in one or two plain sentences the assistant can read out.")

_PASSED = frozenset({"response.output_text.delta", "response.output_text.done", "response.content_part.added",
                     "response.content_part.done", "response.function_call_arguments.delta",
                     "response.function_call_arguments.done", "response.mcp_call_arguments.delta",
                     "response.mcp_call_arguments.done", "response.mcp_call.in_progress",
                     "response.mcp_call.completed", "response.mcp_call.failed"})
_ENDED = {"completed": "response.completed", "incomplete": "response.incomplete", "cancelled": "response.incomplete",
          "failed": "response.failed"}


@dataclass
class _Task:
    delegation_id: str
    text: str
    announce: Announce
    answer: asyncio.Future[str]
    announced: bool = False
    client_event_id: str | None = None
    texts: list[str] = field(default_factory=list)


class Backend:
    """One Live session's Responses backend."""

    def __init__(self, shared: Shared, emit: EmitLive, responses: Mapping[str, Any]) -> None:
        options = shared.settings.session.model_copy(update={"prefetch": False})
        self._model = str(responses.get("model"))
        self._emit = emit
        self._core = Session(shared.delegates.get(self._model, shared.backend), self._from_core, options=options,
                             tools=shared.settings.tools, model=self._model, slots=shared.slots,
                             toolbox=shared.toolbox, metrics=shared.metrics)
        self._responses = dict(responses)
        self._lock = asyncio.Lock()
        self._task: _Task | None = None
        self._sequence = itertools.count()

    async def start(self) -> None:
        await self._core.start()
        await self.configure(self._responses)

    async def configure(self, responses: Mapping[str, Any]) -> None:
        """Apply the delegation's ``responses`` settings (again, after a ``session.update``, which may not change
        the backend model)."""
        if responses.get("model") != self._model:
            raise LiveError("the Responses backend's model cannot change after startup", code="immutable_parameter",
                            param="session.delegation.responses.model")
        self._responses = dict(responses)
        session: dict[str, Any] = {"type": "realtime", "output_modalities": ["text"],
                                   "instructions": responses.get("instructions") or DEFAULT_INSTRUCTIONS,
                                   "tools": list(responses.get("tools") or []),
                                   "tool_choice": responses.get("tool_choice") or "auto"}
        if responses.get("max_output_tokens") is not None:
            session["max_output_tokens"] = responses["max_output_tokens"]
        await self._core.submit({"type": "session.update", "event_id": new_id("event"), "session": session})

    async def run(self, delegation_id: str, text: str, announce: Announce) -> str:
        """Run one task to its answer (tasks wait for the one before)."""
        async with self._lock:
            task = self._task = _Task(delegation_id, text, announce, asyncio.get_running_loop().create_future())
            try:
                await self._core.submit({"type": "conversation.item.create", "event_id": new_id("event"), "item": {
                    "type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}})
                await self._core.submit({"type": "response.create", "event_id": new_id("event")})
                return await task.answer
            finally:
                self._task = None

    async def item_create(self, item: Any, client_event_id: str | None) -> None:
        """``response.item.create``: an item (a function's output) for the running task's conversation."""
        task = self._require("response.item.create")
        task.client_event_id = client_event_id
        await self._core.submit({"type": "conversation.item.create", "event_id": client_event_id or new_id("event"),
                                 "item": item})

    async def response_create(self, client_event_id: str | None) -> None:
        """``response.create``: continue the running task (after the outputs of its function calls)."""
        task = self._require("response.create")
        task.client_event_id = client_event_id
        await self._core.submit({"type": "response.create", "event_id": client_event_id or new_id("event")})

    async def close(self) -> None:
        if self._task is not None and not self._task.answer.done():
            self._task.answer.cancel()
        await self._core.close()

    def _require(self, command: str) -> _Task:
        if self._task is None:
            raise LiveError(f"{command} continues a delegated task, and none is running",
                            code="no_active_delegation")
        return self._task

    async def _from_core(self, ev: Event) -> None:
        """One event of the backend's core session, as the client sees it (or not at all)."""
        task = self._task
        kind = ev["type"]
        if kind == "error":  # a task's, in its stream; one in applying the settings, as the session's own error
            error = ev["error"]
            if task is not None:
                await self._nested(task, {"type": "error", "code": error.get("code"), "message": error["message"],
                                          "param": error.get("param")})
            else:
                await self._emit({"type": "error", "event_id": new_id("event"), "error": {
                    "type": error.get("type") or "invalid_request_error", "code": error.get("code") or "invalid_value",
                    "message": f"the Responses backend refused its settings: {error['message']}",
                    "param": "session.delegation.responses"}})
            return
        if task is None:
            return
        if kind == "response.created":
            if not task.announced:
                task.announced = True
                await task.announce(task.delegation_id, "responses", ev["response"]["id"], task.text)
            await self._nested(task, {"type": kind, "response": self._snapshot(ev["response"], "in_progress")})
        elif kind in ("response.output_item.added", "response.output_item.done"):
            await self._nested(task, {"type": kind, "output_index": ev.get("output_index", 0),
                                      "item": _item(ev["item"])})
        elif kind in _PASSED:
            await self._nested(task, {k: v for k, v in ev.items() if k not in ("event_id", "response_id")})
        elif kind == "response.done":
            await self._ended(task, ev["response"])

    async def _ended(self, task: _Task, response: dict[str, Any]) -> None:
        status = response.get("status", "completed")
        await self._nested(task, {"type": _ENDED.get(status, "response.completed"),
                                  "response": self._snapshot(response, status)})
        output = response.get("output") or []
        if status == "completed" and any(item.get("type") == "function_call" for item in output):
            return  # the application runs its functions, then sends response.create
        texts = [part.get("text", "") for item in output if item.get("type") == "message"
                 for part in item.get("content") or [] if part.get("type") in ("output_text", "text")]
        answer = " ".join(text for text in texts if text).strip()
        if status != "completed" or not answer:
            reason = (response.get("status_details") or {}).get("error", {}).get("message") or status
            answer = f"The back office could not finish the task ({reason})."
        if not task.answer.done():
            task.answer.set_result(answer)

    def _snapshot(self, response: dict[str, Any], status: str) -> dict[str, Any]:
        """A lifecycle snapshot: the response without its output (the granular events carry it)."""
        snapshot = {"id": response["id"], "object": "response", "status": status, "model": self._model,
                    "output": []}
        if response.get("usage") is not None:
            snapshot["usage"] = response["usage"]
        return snapshot

    async def _nested(self, task: _Task, nested: dict[str, Any]) -> None:
        nested["sequence_number"] = next(self._sequence)
        frame: Event = {"type": "response.event", "event_id": new_id("event"), "event": nested,
                        "delegation_id": task.delegation_id}
        if task.client_event_id is not None:
            frame["client_event_id"] = task.client_event_id
        await self._emit(frame)


def _item(item: dict[str, Any]) -> dict[str, Any]:
    """A Realtime item as a Responses output item (the same fields, without the ``object`` tag)."""
    return {k: v for k, v in item.items() if k != "object"}
