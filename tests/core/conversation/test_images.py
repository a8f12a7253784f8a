"""Images in user messages: sent as image parts to a model that sees (a real HTTP server behind the official client
checks the request), replaced by a note for one that does not, their data dropped from the conversation (parked
while a hidden follow-up runs), and bad or oversized images refused."""

from __future__ import annotations

import base64
from typing import Any

import pytest

from tests.harness import WEATHER, ControlledBackend, Harness, Turn
from tests.llm.fake_server import FakeServer, Reply, chat_sse, responses_sse
from tests.llm.test_openai_chat import text
from tests.llm.test_openai_responses import completed, text_delta
from voxcall.core.conversation.images import UNSEEN_IMAGE
from voxcall.llm import Message, OpenAIChatBackend, OpenAIResponsesBackend

PNG = "data:image/png;base64," + base64.b64encode(b"\x89PNG\r\n\x1a\n" + bytes(64)).decode()


def image_message(url: str = PNG, words: str = "What is this?") -> dict[str, Any]:
    return {"type": "message", "role": "user",
            "content": [{"type": "input_text", "text": words}, {"type": "input_image", "image_url": url}]}


async def ask_with_image(h: Harness, count: int = 1) -> dict[str, Any]:
    await h.send(type="conversation.item.create", item=image_message())
    await h.send(type="response.create")
    return await h.wait("response.done", count)


async def test_a_chat_model_that_sees_gets_image_url_parts(server: FakeServer) -> None:
    server.replies.append(Reply(chat_sse(text("A tiny picture.", "stop"))))
    backend = OpenAIChatBackend("m", base_url=server.base_url, max_retries=0, media=frozenset({"image"}))
    async with Harness(backend, prefetch=False) as h:
        done = await ask_with_image(h)
        assert done["response"]["status"] == "completed" and not h.of("error")
        item = h.session.conversation.items[0].to_wire()
        assert item["content"][1] == {"type": "input_image", "image_url": PNG, "detail": "auto"}  # kept
    user = server.requests[0].body["messages"][-1]
    assert user == {"role": "user", "content": [
        {"type": "text", "text": "What is this?"},
        {"type": "image_url", "image_url": {"url": PNG, "detail": "auto"}}]}


async def test_a_responses_model_that_sees_gets_input_image_parts(server: FakeServer) -> None:
    server.replies.append(Reply(responses_sse(text_delta("A tiny picture."), completed())))
    backend = OpenAIResponsesBackend("m", base_url=server.base_url, max_retries=0, media=frozenset({"image"}))
    async with Harness(backend, prefetch=False) as h:
        assert (await ask_with_image(h))["response"]["status"] == "completed"
    assert server.requests[0].body["input"][-1] == {"type": "message", "role": "user", "content": [
        {"type": "input_text", "text": "What is this?"},
        {"type": "input_image", "image_url": PNG, "detail": "auto"}]}


async def test_a_model_that_does_not_see_reads_a_note_and_the_image_leaves_the_conversation(
        server: FakeServer) -> None:
    server.replies.extend([Reply(chat_sse(text("I cannot see it.", "stop"))),
                           Reply(chat_sse(text("Still not.", "stop")))])
    backend = OpenAIChatBackend("m", base_url=server.base_url, max_retries=0)  # text only: the default
    async with Harness(backend, prefetch=False) as h:
        await ask_with_image(h)
        assert h.session.conversation.items[0].to_wire()["content"][1] == {
            "type": "input_image", "image_url": None, "detail": "auto"}
        await h.send(type="response.create")
        await h.wait("response.done", 2)
    for request in server.requests:  # the note stands in for the image, before and after its data was dropped
        assert request.body["messages"][-1 if request is server.requests[0] else -2] == {
            "role": "user", "content": f"What is this?\n{UNSEEN_IMAGE}"}


async def test_dropping_an_image_is_parked_during_a_hidden_follow_up() -> None:
    backend = ControlledBackend(Turn(calls=[("get_weather", {"city": "Paris"})]))
    async with Harness(backend) as h:
        await h.send(type="session.update", session={"type": "realtime", "tools": [WEATHER]})
        await h.send(type="response.create")
        call = (await h.wait("response.done"))["response"]["output"][0]
        await h.output(call["call_id"], "sunny")
        await h.send(type="conversation.item.create", item=image_message())  # a new follow-up sees the image
        assert h.session.responses.hidden is not None
        await h.settle()
        assert backend.requests[-1].items[-1] == Message("user", f"What is this?\n{UNSEEN_IMAGE}")
        image = h.session.conversation.items[-1]
        assert image.to_wire()["content"][1]["image_url"] == PNG  # parked: still held while hidden
        first = h.session.responses.hidden
        await h.send(type="session.update", session={"type": "realtime"})  # discarded (and a new one started)
        assert h.session.responses.hidden is not first and image.to_wire()["content"][1]["image_url"] == PNG
        await h.send(type="response.create")  # the claim runs the parked work
        await h.wait("response.done", 2)
        assert image.to_wire()["content"][1]["image_url"] is None
        assert len(h.of("response.created")) == 2  # claimed, not generated again


@pytest.mark.parametrize(("url", "code", "words"), [
    ("https://example.com/cat.png", "invalid_value", "does not fetch http(s) URLs"),
    ("data:text/plain;base64,aGVsbG8=", "invalid_value", "PNG, JPEG, WebP or GIF"),
    ("data:image/png;base64,not base64!", "invalid_value", "not valid base64"),
    ("data:image/png;base64," + "A" * 2000, "image_too_large", "session.max_image_bytes"),
])
async def test_bad_or_oversized_images_are_refused_naming_the_limit(url: str, code: str, words: str) -> None:
    async with Harness(ControlledBackend(), max_image_bytes=1024) as h:
        await h.send(type="conversation.item.create", event_id="evt_img", item=image_message(url))
        error = h.of("error")[0]
        assert error["error"]["code"] == code and words in error["error"]["message"]
        assert error["error"]["event_id"] == "evt_img" and error["error"]["param"] == "item.content[1].image_url"
        assert len(h.session.conversation) == 0


async def test_images_only_in_user_messages() -> None:
    async with Harness(ControlledBackend()) as h:
        await h.send(type="conversation.item.create", item={"type": "message", "role": "system", "content": [
            {"type": "input_image", "image_url": PNG}]})
        assert h.of("error")[0]["error"]["param"] == "item.content[0].type"
