"""Protocol fuzz: nothing a client sends breaks a session (hypothesis; frames from :mod:`.fuzz_events`).

Each example opens a real :class:`~voxcall.core.session.Session` in-process (scripted backend with client and
server tools; half the examples with a stand-in voice, so audio turns and spoken answers run too), sends it 20-30
frames (schema events, beta spellings, mutants, garbage and plain actions mixed), then checks that:

- the session lives: after the frames, a settings update, a user message and a ``response.create`` are answered,
  the response completing;
- every ``error`` event was caused by the frame being handled and names its ``event_id`` (None when the frame
  had no string one, or could not be read), and none is a ``server_error`` (a handler that crashed);
- every server event validates against the SDK's models and encodes as the socket would (strict JSON, UTF-8);
- every response the client saw created ended with exactly one ``response.done``, none failed by a crash;
- nothing was logged at error level, and no asyncio task is left once the session is closed.

``derandomize=True``: every run tries the same examples (seeded from the test's source), so CI is reproducible
and a failure reproduces locally; set ``VOXCALL_FUZZ_EXAMPLES`` for a longer exploratory run. 120 examples x
20-30 frames is at least 2,400 frames a run (about 3,000, in some 20 s on a busy 2-core machine); the hand-picked
frames of :data:`~.fuzz_events.NASTY` are sent in every run besides, with and without a voice (``@example``).
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
from typing import Any

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from tests.core.hearing.test_heard_audio import fake_voice
from tests.harness import Harness
from tests.realtime.fuzz_events import NASTY, Frame, Known, frames, resolve
from voxcall.core.conversation.items import ApprovalRequestItem, CallItem
from voxcall.core.tools.toolbox import ServerTool, Toolbox
from voxcall.llm import ScriptedBackend
from voxcall.realtime.server_events import InvalidServerEvent, check_server_event
from voxcall.tools import ToolRegistry

EXAMPLES = int(os.environ.get("VOXCALL_FUZZ_EXAMPLES", "120"))
FRAMES = (20, 30)  # frames per example, at least and at most
UNREAD = frozenset({"invalid_json", "frame_too_large"})
"""Errors about frames the server could not read (not JSON, nested deeper than the parser goes, over the size
limit): they cannot name the frame's ``event_id``."""
SCRIPT = {
    "rules": [
        {"match": "weather", "reply": "Let me check.", "calls": [{"name": "get_weather", "arguments": {"city": "P"}}]},
        {"match": "both", "reply": "Both.", "calls": [{"name": "get_weather", "arguments": {"city": "A"}},
                                                      {"name": "add", "arguments": {"a": 1, "b": 2}}]},
        {"match": "add", "reply": "Adding.", "calls": [{"name": "add", "arguments": {"a": 2, "b": 3}}]},
        {"match": "approve", "calls": [{"name": "guarded", "arguments": {"text": "hi"}}]},
        {"match": "break", "reply": "Something is", "error": "simulated failure"},
        {"match": "long", "reply": " ".join(["word"] * 60)},
    ],
    "after_tool": "{name} says {output}.",
    "default": "I do not know that one.",
}


def toolbox() -> Toolbox:
    """A server tool, and one that needs the client's approval."""
    registry = ToolRegistry(default_timeout=5)

    @registry.tool
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    @registry.tool
    def guarded(text: str) -> str:
        """Echo, once approved."""
        return text

    return Toolbox(registry, details={"guarded": ServerTool("house", "guarded", needs_approval=True)})


class Problems(logging.Handler):
    """Collects what the fuzz test finds wrong: broken invariants, and records logged at error level."""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.found: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.found.append(f"logged at {record.levelname}: {record.getMessage()} {record.exc_text or ''}".strip())

    def add(self, problem: str) -> None:
        self.found.append(problem)


class Wire(Harness):
    """A harness that checks each server event as the socket would send it, and which frame caused each error."""

    def __init__(self, problems: Problems, **options: Any) -> None:
        super().__init__(ScriptedBackend(SCRIPT), **options)
        self.problems = problems
        self.current: Frame | None = None  # the frame being handled
        self.ended: dict[str, int] = {}  # response id -> response.done events seen
        self._queue = self.connection.hosted.outbox.put
        self.connection.hosted.outbox.put = self._put  # type: ignore[method-assign]

    async def _put(self, ev: dict[str, Any]) -> None:
        if ev.get("type") == "error":
            self._check_error(ev["error"])
        await self._queue(ev)

    def _check_error(self, error: dict[str, Any]) -> None:
        if self.current is None:
            self.problems.add(f"an error no client frame caused: {error}")
        elif error["event_id"] != (None if error["code"] in UNREAD else self.current.event_id):
            self.problems.add(f"error names event {error['event_id']!r}, the frame was {self.current.event_id!r}: "
                              f"{error}")
        if error["code"] == "server_error":
            self.problems.add(f"a handler crashed on frame {str(self.current.data)[:200]!r}" if self.current
                              else "a handler crashed")

    async def _record(self, ev: dict[str, Any]) -> None:
        try:
            check_server_event(ev)
            json.dumps(ev, ensure_ascii=False, allow_nan=False).encode()  # as app.send writes it, strict JSON
        except (InvalidServerEvent, ValueError) as exc:
            self.problems.add(f"{ev.get('type')} cannot go out: {exc}")
        if ev["type"] == "response.done":
            response = ev["response"]
            self.ended[response["id"]] = self.ended.get(response["id"], 0) + 1
            if (response["status_details"] or {}).get("error", {}).get("code") == "server_error":
                self.problems.add(f"a response crashed: {response['status_details']}")
        async with self._changed:
            self.events.append(ev)
            self._changed.notify_all()

    def known(self) -> Known:
        items = self.session.conversation.items
        calls = [i.call_id for i in items if isinstance(i, CallItem)]
        approvals = [i.id for i in items if isinstance(i, ApprovalRequestItem)]
        created = self.of("response.created")
        return Known(item=items[-1].id if items else None, first_item=items[0].id if items else None,
                     call=calls[-1] if calls else None, response=created[-1]["response"]["id"] if created else None,
                     approval=approvals[-1] if approvals else None)

    async def frame(self, frame: Frame) -> None:
        self.current = frame
        try:
            await self.connection.handle_frame(frame.data)
        finally:
            self.current = None
        await self.settle()

    async def send(self, **ev: Any) -> None:
        await self.frame(Frame(json.dumps(ev), ev.get("event_id")))

    async def after(self, start: int, kind: str, timeout: float = 10.0) -> dict[str, Any]:
        """The first event of type ``kind`` recorded at or after position ``start``."""
        async def seen() -> dict[str, Any]:
            async with self._changed:
                await self._changed.wait_for(lambda: any(e["type"] == kind for e in self.events[start:]))
                return next(e for e in self.events[start:] if e["type"] == kind)
        return await asyncio.wait_for(seen(), timeout)


async def still_answers(h: Wire) -> None:
    """A plain exchange after the fuzzing: the session takes new settings, a message and a response."""
    if h.session.responses.visible is not None:
        await h.send(type="response.cancel", event_id="alive_cancel")
    start = len(h.events)
    await h.send(type="session.update", event_id="alive_update", session={
        "type": "realtime", "instructions": "Be brief.", "output_modalities": ["text"], "tools": [],
        "tool_choice": "auto", "max_output_tokens": "inf", "audio": {"input": {"turn_detection": None}}})
    assert (await h.after(start, "session.updated"))["session"]["instructions"] == "Be brief."
    await h.session.audio.transcribed()  # a turn the fuzzing ended may still be answered: let it be
    while h.session.responses.visible is not None:
        await h.send(type="response.cancel", event_id="alive_cancel")
    start = len(h.events)
    await h.say("hello")
    await h.send(type="response.create", event_id="alive_create")
    created = await h.after(start, "response.created")
    done = await h.after(start, "response.done")
    assert done["response"]["id"] == created["response"]["id"]
    assert done["response"]["status"] == "completed", done["response"]
    assert done["response"]["output"][-1]["content"][0]["text"] == "I do not know that one."


async def fuzz(batch: list[Any], speaks: bool) -> list[str]:
    """Send ``batch`` to a fresh session and return the problems found."""
    problems = Problems()
    logger = logging.getLogger("voxcall")
    logger.addHandler(problems)
    try:
        h = Wire(problems, voice=fake_voice() if speaks else None, toolbox=toolbox(), max_frame_bytes=1_048_576)
        async with h:
            for serial, raw in enumerate(batch):
                await h.frame(resolve(raw, h.known(), serial))
            await still_answers(h)
            for created in h.of("response.created"):
                count = h.ended.get(created["response"]["id"], 0)
                if count != 1:
                    problems.add(f"response {created['response']['id']} ended with {count} response.done")
        left = [t.get_name() for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        if left:
            problems.add(f"tasks left after close: {left}")
    finally:
        logger.removeHandler(problems)
    return problems.found


@settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None, print_blob=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.large_base_example,
                                 HealthCheck.function_scoped_fixture])
@given(batch=st.lists(frames, min_size=FRAMES[0], max_size=FRAMES[1]), speaks=st.booleans())
@example(batch=list(NASTY), speaks=False)
@example(batch=list(NASTY), speaks=True)
def test_no_client_frame_breaks_a_session(batch: list[Any], speaks: bool) -> None:
    problems = asyncio.run(fuzz(batch, speaks))
    assert not problems, "\n".join(problems)
