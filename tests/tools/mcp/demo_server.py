"""A small MCP server for voxcall's tests, built with the official SDK's v2 ``MCPServer``.

Run it over stdio (``python demo_server.py``) or over streamable HTTP on loopback
(``python demo_server.py --http --port 8765``, endpoint ``http://127.0.0.1:8765/mcp``).
Each tool exercises one path of voxcall's MCP client: plain results, errors, timeouts, crashes,
non-text content, structured content, the child's environment, request headers, tool-list changes, and the
annotations that say whether a result may be reused (``lookup``, ``set_level``, ``ring``).
"""

from __future__ import annotations

import argparse
import os
import struct
import zlib

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.utilities.types import Image
from mcp.types import CallToolResult, TextContent, ToolAnnotations

server = MCPServer("voxcall-demo")
_grown = False  # whether grow() has added its tool
_runs = {"lookup": 0, "set_level": 0, "ring": 0}  # how often each annotated tool ran in this process


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool()
def echo(text: str) -> str:
    """Return the text unchanged."""
    return text


@server.tool()
async def slow(seconds: float) -> str:
    """Sleep for ``seconds``, then say so."""
    await anyio.sleep(seconds)
    return f"slept {seconds:g} s"


@server.tool()
def crash() -> str:
    """Exit the server process at once, as a crashing server would."""
    os._exit(3)


@server.tool()
def fail() -> CallToolResult:
    """Return an error result (the tool ran and reports failure)."""
    return CallToolResult(content=[TextContent(text="the demo tool failed on purpose")], is_error=True)


@server.tool()
def image() -> Image:
    """Return a 1x1 PNG image."""
    return Image(data=_png_1x1(), format="png")


@server.tool()
def structured() -> CallToolResult:
    """Return structured content and no text content."""
    return CallToolResult(content=[], structured_content={"temperature": 21.5, "unit": "C"})


@server.tool()
def getenv(name: str) -> str:
    """Return the value of an environment variable of this process, or ``<unset>``."""
    return os.environ.get(name, "<unset>")


@server.tool()
def pid() -> int:
    """Return this server's process id."""
    return os.getpid()


@server.tool()
def header(name: str, ctx: Context) -> str:
    """Return an HTTP request header of this call, or ``<none>`` (always ``<none>`` over stdio)."""
    headers = ctx.headers or {}
    return headers.get(name.lower()) or headers.get(name) or "<none>"


@server.tool()
async def grow(ctx: Context) -> str:
    """Add a tool named ``extra`` and tell the client that the tool list changed."""
    global _grown
    if not _grown:
        server.add_tool(_extra, name="extra", description="A tool added at run time.")
        _grown = True
    await ctx.notify_tools_changed()  # 2026-07-28 sessions: subscriptions/listen
    await ctx.session.send_tool_list_changed()  # earlier sessions: a plain notification
    return "added extra"


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def lookup(key: str, page: int = 1) -> str:
    """Read-only: look ``key`` up; the answer says how many times this tool has run."""
    _runs["lookup"] += 1
    return f"{key} p{page} (run {_runs['lookup']})"


@server.tool(annotations=ToolAnnotations(read_only_hint=False, idempotent_hint=True, destructive_hint=False))
def set_level(level: int) -> str:
    """Idempotent but not read-only: set a level; the answer counts the runs."""
    _runs["set_level"] += 1
    return f"level {level} (run {_runs['set_level']})"


@server.tool(meta={"voxcall/returns": False})
def ring() -> str:
    """Only acts: ring a bell."""
    _runs["ring"] += 1
    return "ok"


def _extra() -> str:
    return "extra!"


def _png_1x1() -> bytes:
    """A valid 1x1 transparent PNG, built here so the script needs no data files."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", 1, 1, 8, 6, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(b"\0\0\0\0\0")) + chunk(
        b"IEND", b""
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--http", action="store_true", help="serve streamable HTTP instead of stdio")
    parser.add_argument("--port", type=int, default=8765)
    args = parser.parse_args()
    if args.http:
        server.run("streamable-http", host="127.0.0.1", port=args.port)
    else:
        server.run()


if __name__ == "__main__":
    main()
