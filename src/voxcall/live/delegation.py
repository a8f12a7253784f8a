"""Delegation: the voice hands a task to the application or to the Responses backend, and talks on meanwhile.

The voice (the core session's LLM) sees one server tool, :data:`TOOL_NAME`, whose argument is the task in words.
A call to it is a server tool call like any other, so the core's tool ledger gives it everything a slow tool
gets: the voice acknowledges it after the delegation's ``acknowledgement_delay_ms`` and the conversation goes on;
the result, when it lands, is answered by a response of its own, which speaks it; a barge-in does not cancel it
(delegated work outlives an interruption). The call:

1. gets a delegation id and is announced with ``session.delegation.created`` (target ``client`` or
   ``responses``; for ``responses`` once the backend's response exists, with its ``response_id``); the protocol
   sends no task text, so voxcall adds it in a field of its own, ``delegation.voxcall_task`` (the SDK keeps
   unknown fields; a client that does not know it ignores it);
2. ``client``: waits for the application's ``session.commentary.append`` with that ``delegation_id``, whose text
   is the result the voice speaks (a ``session.thinking.append`` with it is silent context meanwhile);
   ``responses``: the backend (:class:`~voxcall.live.backend.Backend`) runs the task with its own tools;
3. ends with that text, or, past ``live.delegation_timeout``, with a note that the task got no answer.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

from voxcall.core.ids import new_id
from voxcall.live.config import LiveConfig
from voxcall.tools import ToolRegistry

log = logging.getLogger(__name__)

TOOL_NAME = "delegate"

_DESCRIPTION = ("Hand a task you cannot do yourself to the {owner}: looking something up, acting in the world, "
                "anything that needs tools or data you do not have. Say the task in words, with every detail the "
                "user gave. The answer comes later; talk on meanwhile.")
_OWNERS = {"client": "application", "responses": "assistant's back office"}

Announce = Callable[[str, str, str | None, str], Awaitable[None]]
"""Sends ``session.delegation.created`` for (delegation id, target, response id, task)."""

RunTask = Callable[[str, str, Announce], Awaitable[str]]
"""Runs a ``responses`` task: (delegation id, task, announce) → the answer's text."""


class Delegations:
    """One session's delegated tasks."""

    def __init__(self, config: Callable[[], LiveConfig], announce: Announce, run_task: RunTask, *,
                 timeout: float) -> None:
        """``config`` is the session's current configuration (its delegation may change); ``announce`` sends
        ``session.delegation.created``; ``run_task`` is the Responses backend; ``timeout`` bounds each task."""
        self._config = config
        self._announce = announce
        self._run_task = run_task
        self._timeout = timeout
        self._open: dict[str, asyncio.Future[str]] = {}  # client tasks waiting for their commentary

    def registry(self) -> ToolRegistry:
        """A registry holding the voice's delegation tool (never cancelled with the response that called it)."""
        registry = ToolRegistry(default_timeout=None)
        owner = _OWNERS[self._config().delegation.kind]
        registry.register(self._delegate, name=TOOL_NAME, description=_DESCRIPTION.format(owner=owner),
                          parameters={"type": "object", "additionalProperties": False, "required": ["task"],
                                      "properties": {"task": {"type": "string",
                                                              "description": "The task, in words."}}},
                          cancellable=False, repeats=True)
        return registry

    def is_open(self, delegation_id: str) -> bool:
        """Whether ``delegation_id`` names a client task still waiting for its commentary."""
        return delegation_id in self._open

    def answer(self, delegation_id: str, text: str) -> None:
        """The application's commentary for an open client task: the task's result."""
        result = self._open.pop(delegation_id)
        if not result.done():
            result.set_result(text)

    def cancel_all(self) -> None:
        """The session ends: every open task ends unanswered."""
        for result in self._open.values():
            result.cancel()
        self._open.clear()

    async def _delegate(self, task: str) -> str:
        delegation_id = new_id("deleg")
        kind = self._config().delegation.kind
        try:
            async with asyncio.timeout(self._timeout):
                if kind == "responses":
                    answer = await self._run_task(delegation_id, task, self._announce)
                else:
                    answer = await self._client(delegation_id, task)
        except TimeoutError:
            log.info("delegation %s got no answer in %g s", delegation_id, self._timeout)
            return f"The task got no answer in time ({self._timeout:g} s). Tell the user it could not be done now."
        finally:
            self._open.pop(delegation_id, None)
        return answer

    async def _client(self, delegation_id: str, task: str) -> str:
        result: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        self._open[delegation_id] = result
        await self._announce(delegation_id, "client", None, task)
        text = await result
        return f"The application answered: {text}"
