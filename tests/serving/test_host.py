"""The session host (:mod:`voxcall.serving.host`): one place builds a session for any edge, feeds it in order, lets
a fast producer wait when its inbox is full, closes it when idle, and names the model it reports."""

from __future__ import annotations

import asyncio

from tests.harness import ControlledBackend, host_for
from voxcall.config import ServerSettings
from voxcall.core.commands import AddItem, Command, Respond
from voxcall.core.conversation.items import MessageItem
from voxcall.core.errors import SessionError
from voxcall.core.events import Event, ResponseDone
from voxcall.llm import ScriptedBackend
from voxcall.serving.host import IDLE_CLOSE_CODE, INBOX_LIMIT, SERVER_MODEL, SessionHost
from voxcall.serving.shared import Shared


class Codec:
    """An edge that records what it is given: the events as messages (their class names), and refusals."""

    def __init__(self) -> None:
        self.written: list[str] = []
        self.refusals: list[SessionError] = []

    def encode(self, ev: Event) -> str | None:
        return type(ev).__name__

    async def write(self, message: str) -> None:
        self.written.append(message)

    async def refused(self, error: SessionError) -> None:
        self.refusals.append(error)


async def test_commands_are_applied_in_order_and_a_refusal_goes_to_the_codec() -> None:
    codec = Codec()
    hosted = host_for(ControlledBackend()).open(codec, protocol="test")
    await hosted.start()
    feeding = asyncio.create_task(hosted.feed())
    hosted.submit(AddItem(MessageItem.of_text("user", "hi")))
    hosted.submit(Respond())
    hosted.submit(AddItem(MessageItem.of_text("user", "again"), previous_item_id="no_such_item"))
    while "ResponseDone" not in codec.written or not codec.refusals:
        await asyncio.sleep(0.01)
    assert codec.written.index("ItemAdded") < codec.written.index("ResponseCreated") < codec.written.index(
        "ResponseDone")
    assert codec.refusals[0].code == "item_not_found"
    await hosted.close()
    await asyncio.wait_for(feeding, 1)


async def test_a_producer_faster_than_its_session_waits_while_the_inbox_is_full() -> None:
    hosted = host_for(ControlledBackend()).open(Codec(), protocol="test")
    await hosted.start()
    for _ in range(INBOX_LIMIT):
        hosted.submit(Respond())  # callbacks never wait
    put = asyncio.create_task(hosted.put(Respond()))
    await asyncio.sleep(0.05)
    assert not put.done()  # the reader waits: the client reads no further ahead
    feeding = asyncio.create_task(hosted.feed())
    await asyncio.wait_for(put, 5)
    await hosted.close()
    await asyncio.wait_for(feeding, 5)


async def test_an_idle_session_is_closed_normally_naming_the_setting() -> None:
    closed: list[tuple[int, str]] = []

    async def close(code: int, reason: str) -> None:
        closed.append((code, reason))

    hosted = host_for(ControlledBackend(), idle_timeout=0.2).open(Codec(), protocol="test", close=close)
    await hosted.start()
    await hosted.apply(Respond())
    await hosted.session.responses.settled()
    while not closed:
        await asyncio.sleep(0.02)
    assert closed == [(IDLE_CLOSE_CODE, "idle for 0.2 s (session.idle_timeout)")]
    await hosted.close()


async def test_the_model_a_session_reports_is_the_clients_else_the_operators_else_the_servers() -> None:
    backend = ScriptedBackend({})
    assert SessionHost(Shared.of(ServerSettings(), backend)).model() == SERVER_MODEL
    assert SessionHost(Shared.of(ServerSettings(llm="scripted"), backend)).model() == "scripted"
    assert SessionHost(Shared.of(ServerSettings(model="m1"), backend)).model("asked") == "asked"


async def test_every_event_of_a_response_is_written_once_it_has_settled() -> None:
    codec = Codec()
    hosted = host_for(ControlledBackend()).open(codec, protocol="test")
    await hosted.start()
    commands: list[Command] = [AddItem(MessageItem.of_text("user", "hi")), Respond()]
    for command in commands:
        await hosted.apply(command)
    await hosted.session.responses.settled()
    await hosted.outbox.close(flush=True)
    assert ResponseDone.__name__ in codec.written and codec.written[-1] in ("ResponseDone", "ResponseTimed")
    await hosted.close()
