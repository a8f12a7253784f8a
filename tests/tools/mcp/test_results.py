"""Aliases for MCP tool names, and how MCP results and failures become text for the model."""

from __future__ import annotations

import base64

import pytest
from mcp.shared.exceptions import MCPError
from mcp.types import (
    CONNECTION_CLOSED,
    INVALID_PARAMS,
    AudioContent,
    BlobResourceContents,
    CallToolResult,
    EmbeddedResource,
    ImageContent,
    ResourceLink,
    TextContent,
    TextResourceContents,
)

from voxcall.tools.mcp import internal_id, normalize_result, tool_alias
from voxcall.tools.mcp.results import MAX_OUTPUT_CHARS, describe_exception, failure_text
from voxcall.tools.names import TOOL_NAME_PATTERN


def test_alias_and_internal_id() -> None:
    assert internal_id("time", "get_current_time") == "mcp:time:get_current_time"
    assert tool_alias("time", "get_current_time") == "time__get_current_time"
    assert tool_alias("my.server", "read file/v2") == "my_server__read_file_v2"


@pytest.mark.parametrize(("server", "tool"), [("s" * 40, "t" * 40), ("a", "ü" * 100), ("x", "y" * 62)])
def test_alias_always_matches_the_model_rule(server: str, tool: str) -> None:
    assert TOOL_NAME_PATTERN.match(tool_alias(server, tool))


def test_long_aliases_stay_distinct() -> None:
    one, two = tool_alias("server", "t" * 70 + "1"), tool_alias("server", "t" * 70 + "2")
    assert len(one) == len(two) == 64 and one != two


def _png(size: int) -> str:
    return base64.b64encode(b"\0" * size).decode()


def test_text_items_are_joined() -> None:
    result = normalize_result(CallToolResult(content=[TextContent(text="one"), TextContent(text="two")],
                                             structured_content={"ignored": True}))
    assert (result.output, result.is_error) == ("one\ntwo", False)
    assert isinstance(result.data, CallToolResult)


def test_structured_content_when_there_is_no_text() -> None:
    result = normalize_result(CallToolResult(content=[], structured_content={"temp": 21.5, "city": "Zürich"}))
    assert result.output == '{"temp":21.5,"city":"Zürich"}'


def test_error_result() -> None:
    result = normalize_result(CallToolResult(content=[TextContent(text="no such city")], is_error=True))
    assert (result.output, result.is_error) == ("no such city", True)
    assert normalize_result(CallToolResult(content=[], is_error=True)).output == "the tool failed without saying why"
    assert normalize_result(CallToolResult(content=[])).output == "ok"


def test_binary_content_is_summarised_never_dumped() -> None:
    image = ImageContent(data=_png(12 * 1024), mime_type="image/png")
    audio = AudioContent(data=_png(100), mime_type="audio/wav")
    blob = EmbeddedResource(resource=BlobResourceContents(uri="file:///a.bin", blob=_png(3 * 1024 * 1024),
                                                          mime_type="application/octet-stream"))
    text = EmbeddedResource(resource=TextResourceContents(uri="file:///notes.txt", text="hello",
                                                          mime_type="text/plain"))
    link = ResourceLink(name="report", uri="https://example.com/r.pdf", mime_type="application/pdf")
    result = normalize_result(CallToolResult(content=[TextContent(text="here:"), image, audio, blob, text, link]))
    assert result.output.splitlines() == [
        "here:",
        "[image: image/png, 12 KB]",
        "[audio: audio/wav, 100 B]",
        "[resource: file:///a.bin, application/octet-stream, 3.0 MB]",
        "[resource: file:///notes.txt, text/plain, 5 B]",
        "[resource link: report, https://example.com/r.pdf, application/pdf]",
    ]


def test_long_output_is_cut_and_says_so() -> None:
    output = normalize_result(CallToolResult(content=[TextContent(text="x" * (MAX_OUTPUT_CHARS + 10))])).output
    assert output.startswith("x" * MAX_OUTPUT_CHARS) and output.endswith("[… 10 more characters cut]")


def test_failures_become_short_safe_text() -> None:
    assert failure_text(MCPError(INVALID_PARAMS, "secret detail")) == "the server rejected the arguments"
    assert "closed" in failure_text(MCPError(CONNECTION_CLOSED, "Connection closed"))
    assert failure_text(MCPError(-1, "secret")) == "the server reported a protocol error (code -1)"
    assert failure_text(ExceptionGroup("g", [OSError("secret path")])) == "the call failed (OSError)"
    assert describe_exception(ExceptionGroup("g", [OSError("no such file")])) == "OSError: no such file"
