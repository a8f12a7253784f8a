"""Text from a provider or a tool that is not Unicode (a lone UTF-16 surrogate, which JSON's ``\\ud800`` escape
spells) is repaired where it enters a response, so the socket and every later request still carry the conversation;
the WebSocket's own encoding is a second guard."""

from __future__ import annotations

import dataclasses
import json

from tests.harness import ControlledBackend, Harness, Turn
from voxcall.core.ids import unicode_text
from voxcall.core.tools.toolbox import Toolbox
from voxcall.serving.frames import event, json_text
from voxcall.tools import ToolRegistry

LONE = "\ud800"


def as_utf8(ev: dict[str, object]) -> bytes:
    return json.dumps(ev, ensure_ascii=False).encode("utf-8")  # what the socket does; fails on a lone surrogate


def test_unicode_text_replaces_lone_surrogates_only() -> None:
    assert unicode_text(f"a{LONE}b\udfff") == "a\ufffdb\ufffd"
    assert unicode_text("héllo 😀") == "héllo 😀"  # real pairs are kept
    assert unicode_text("plain") == "plain"


def test_wire_text_escapes_what_utf8_cannot_carry() -> None:
    ev = event("response.output_text.delta", delta=f"x{LONE}")
    wire = json_text(ev)
    wire.encode("utf-8")  # does not raise
    assert json.loads(wire)["delta"] == f"x{LONE}"
    assert "é" in json_text(event("x", delta="é"))  # valid text stays unescaped


async def test_provider_text_and_tool_output_with_a_lone_surrogate_keep_the_session_working() -> None:
    registry = ToolRegistry()

    @registry.tool
    def broken() -> str:
        """Answer with text that is not Unicode."""
        return f"half a pair {LONE} here"

    backend = ControlledBackend(Turn(f"Odd{LONE}", [("broken", {})]), Turn("Then fine."), Turn("Still here."))
    async with Harness(backend, toolbox=Toolbox(registry), prefetch=False) as h:
        for question in ("first", "second"):
            await h.send(type="conversation.item.create", item={
                "type": "message", "role": "user", "content": [{"type": "input_text", "text": question}]})
            await h.send(type="response.create")
            await h.wait("response.done", count=1 if question == "first" else 2)
        for ev in h.events:
            as_utf8(ev)
        done = h.of("response.done")
        assert [d["response"]["status"] for d in done] == ["completed", "completed"]
        first = done[0]["response"]["output"]
        assert first[0]["content"][0]["text"].startswith("Odd\ufffd")
        assert first[1]["output"] == "half a pair \ufffd here"
        for request in backend.requests:  # every later request could be sent
            for item in request.items:
                json.dumps(dataclasses.asdict(item), ensure_ascii=False, default=str).encode("utf-8")
