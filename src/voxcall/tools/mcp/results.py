"""Turning what an MCP server answers into a :class:`~voxcall.tools.ToolResult` the model can read.

A ``CallToolResult`` is never given to the model as ``str(result)``. Its text items are joined with newlines;
``structured_content`` becomes compact JSON when there is no text; images, audio and resources are summarised
by type and size (``[image: image/png, 12 KB]``) because base64 data means nothing to a language model and
would flood its context. ``is_error`` becomes an error result. Protocol failures (an exception instead of a
result) become one short sentence for the model, while the detail goes to the log.
"""

from __future__ import annotations

import json
from typing import Any

from mcp.shared.exceptions import MCPError
from mcp.types import (
    CONNECTION_CLOSED,
    INVALID_PARAMS,
    METHOD_NOT_FOUND,
    REQUEST_TIMEOUT,
    AudioContent,
    BlobResourceContents,
    CallToolResult,
    ContentBlock,
    EmbeddedResource,
    ImageContent,
    ResourceLink,
    TextContent,
)

from voxcall.tools.calls import ToolResult

__all__ = ["MAX_OUTPUT_CHARS", "describe_exception", "failure_text", "normalize_result"]

MAX_OUTPUT_CHARS = 20_000
"""Longest text given to the model for one result; longer output is cut and the cut is said."""

_PROTOCOL_ERRORS = {
    INVALID_PARAMS: "the server rejected the arguments",
    METHOD_NOT_FOUND: "the server does not support this call",
    REQUEST_TIMEOUT: "the server did not answer in time",
    CONNECTION_CLOSED: "the connection to the server closed during the call",
}


def normalize_result(result: CallToolResult) -> ToolResult:
    """The model's view of a tool result; ``data`` keeps the ``CallToolResult`` itself."""
    parts = [_describe(block) for block in result.content]
    has_text = any(isinstance(block, TextContent) for block in result.content)
    if not has_text and result.structured_content is not None:
        parts.insert(0, json.dumps(result.structured_content, ensure_ascii=False, separators=(",", ":")))
    output = "\n".join(parts)
    if not output:
        output = "the tool failed without saying why" if result.is_error else "ok"
    return ToolResult(_truncate(output), is_error=result.is_error, data=result)


def failure_text(exc: BaseException) -> str:
    """A short, safe sentence for the model about a call that raised ``exc`` instead of returning a result."""
    if isinstance(exc, MCPError):
        return _PROTOCOL_ERRORS.get(exc.code, f"the server reported a protocol error (code {exc.code})")
    return f"the call failed ({type(_leaf(exc)).__name__})"


def describe_exception(exc: BaseException) -> str:
    """``Type: message`` of the first real error inside ``exc`` (task groups wrap errors in groups), for logs."""
    leaf = _leaf(exc)
    text = str(leaf)
    return f"{type(leaf).__name__}: {text}" if text else type(leaf).__name__


def _leaf(exc: BaseException) -> BaseException:
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def _describe(block: ContentBlock) -> str:
    """One content item as text: text as it is, anything else as a one-line summary."""
    if isinstance(block, TextContent):
        return block.text
    if isinstance(block, ImageContent | AudioContent):
        return f"[{block.type}: {block.mime_type}, {_size(_base64_bytes(block.data))}]"
    if isinstance(block, EmbeddedResource):
        resource = block.resource
        size = _base64_bytes(resource.blob) if isinstance(resource, BlobResourceContents) else len(
            resource.text.encode())
        return f"[resource: {_join(resource.uri, resource.mime_type, _size(size))}]"
    if isinstance(block, ResourceLink):
        return f"[resource link: {_join(block.name, block.uri, block.mime_type)}]"
    return f"[{getattr(block, 'type', 'content')}]"


def _join(*fields: Any) -> str:
    return ", ".join(str(field) for field in fields if field)


def _base64_bytes(data: str) -> int:
    """The decoded size of base64 text, without decoding it."""
    return max(0, len(data) * 3 // 4 - data[-2:].count("="))


def _size(n: int) -> str:
    if n < 1024:
        return f"{n} B"
    if n < 1024 * 1024:
        return f"{round(n / 1024)} KB"
    return f"{n / (1024 * 1024):.1f} MB"


def _truncate(text: str) -> str:
    if len(text) <= MAX_OUTPUT_CHARS:
        return text
    return f"{text[:MAX_OUTPUT_CHARS]}\n[… {len(text) - MAX_OUTPUT_CHARS} more characters cut]"
