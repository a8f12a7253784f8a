"""The device's MCP server as voxcall's client speaks to it: integer ids, the vision capability, every page of
``tools/list``, user-only tools left out, errors (``isError``, an ``error`` without a code) as tool errors, a device
that does not answer, and answers nothing awaits."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from voxcall.tools import ToolError
from voxcall.xiaozhi.device_mcp import DeviceError, DeviceMcp, DeviceTool


class FakeDevice:
    """Answers each request the client sends with ``answer(request)`` (None: no answer)."""

    def __init__(self, answer: Any) -> None:
        self.answer = answer
        self.requests: list[dict[str, Any]] = []
        self.client = DeviceMcp(self.send, vision_url="http://server/xiaozhi/vision/explain", vision_token="")

    async def send(self, payload: dict[str, Any]) -> None:
        self.requests.append(payload)
        if "id" in payload:
            reply = self.answer(payload)
            if reply is not None:
                asyncio.get_running_loop().call_soon(self.client.received, {"jsonrpc": "2.0", "id": payload["id"],
                                                                            **reply})


def tool(name: str, **extra: Any) -> dict[str, Any]:
    return {"name": name, "description": f"{name} does it", "inputSchema": {"type": "object", "properties": {}},
            **extra}


PAGES = {"": ([tool("self.get_device_status"), tool("self.audio_speaker.set_volume")], "self.light.set_rgb"),
         "self.light.set_rgb": ([tool("self.light.set_rgb"), tool("self.reboot", annotations={"audience": ["user"]})],
                                "")}


def firmware(request: dict[str, Any]) -> dict[str, Any] | None:
    """Answers as the firmware does: pages of tools, each ``nextCursor`` the name of the first tool left out."""
    if request["method"] == "initialize":
        return {"result": {"protocolVersion": "2024-11-05", "capabilities": {"tools": {}},
                           "serverInfo": {"name": "board", "version": "2.4.2"}}}
    if request["method"] == "tools/list":
        tools, cursor = PAGES[request["params"].get("cursor", "")]
        return {"result": {"tools": tools, **({"nextCursor": cursor} if cursor else {})}}
    return None


async def test_the_tools_of_every_page_are_listed_but_those_for_the_user_only() -> None:
    device = FakeDevice(firmware)
    tools = await device.client.discover()
    assert [t.name for t in tools] == ["self.get_device_status", "self.audio_speaker.set_volume",
                                       "self.light.set_rgb"]
    assert tools[0] == DeviceTool("self.get_device_status", "self.get_device_status does it",
                                  {"type": "object", "properties": {}})
    methods = [r["method"] for r in device.requests]
    assert methods == ["initialize", "notifications/initialized", "tools/list", "tools/list"]
    ids = [r["id"] for r in device.requests if "id" in r]
    assert all(type(i) is int for i in ids) and len(set(ids)) == len(ids), "integer ids, one per request"
    assert device.requests[0]["params"]["capabilities"]["vision"] == {
        "url": "http://server/xiaozhi/vision/explain", "token": ""}
    assert device.requests[3]["params"] == {"cursor": "self.light.set_rgb"}


@pytest.mark.parametrize(("reply", "expected"), [
    ({"result": {"content": [{"type": "text", "text": "true"}], "isError": False}}, "true"),
    ({"result": {"content": [{"type": "text", "text": "a"}, {"type": "image", "image": "{...}"}]}}, "a\n[image]"),
    ({"result": {"content": []}}, "ok"),
])
async def test_a_calls_text_is_its_text_parts(reply: dict[str, Any], expected: str) -> None:
    device = FakeDevice(lambda request: reply)
    assert await device.client.call("self.audio_speaker.set_volume", {"volume": 30}, 5) == expected
    assert device.requests[0]["params"] == {"name": "self.audio_speaker.set_volume", "arguments": {"volume": 30}}


@pytest.mark.parametrize(("reply", "message"), [
    ({"error": {"message": "Unknown tool: self.nope"}}, "Unknown tool: self.nope"),  # the firmware's: no code
    ({"error": {"code": -32603, "message": "boom"}}, "boom"),  # py-xiaozhi's
    ({"result": {"content": [{"type": "text", "text": "工具调用失败: disk full"}], "isError": True}}, "disk full"),
    ({"result": "what?"}, "no result"),
])
async def test_an_error_the_device_reports_is_a_tool_error_the_model_reads(reply: dict[str, Any], message: str) -> None:
    device = FakeDevice(lambda request: reply)
    with pytest.raises(ToolError, match=message):
        await device.client.call("self.nope", {}, 5)


async def test_a_device_that_does_not_answer_times_out_and_its_late_answer_is_dropped() -> None:
    device = FakeDevice(lambda request: None)
    with pytest.raises(TimeoutError):
        await device.client.call("self.slow", {}, 0.05)
    device.client.received({"jsonrpc": "2.0", "id": device.requests[0]["id"], "result": {"content": []}})
    device.client.received("not json-rpc")  # dropped too


async def test_discovery_fails_on_a_device_that_answers_no_list() -> None:
    device = FakeDevice(lambda request: {"result": {}})  # initialized, then a page without tools
    with pytest.raises(DeviceError, match="without a list"):
        await device.client.discover()


async def test_closing_fails_what_waits() -> None:
    device = FakeDevice(lambda request: None)
    waiting = asyncio.create_task(device.client.call("self.slow", {}, None))
    await asyncio.sleep(0)
    device.client.close()
    with pytest.raises(ToolError, match="disconnected"):
        await waiting
