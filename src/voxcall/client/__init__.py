"""Clients of the realtime protocol: ``voxcall talk`` (over a WebSocket) and ``voxcall chat`` (in process).

:class:`ClientSession` drives one conversation over any :class:`Transport`: it sends turns, follows the server's
events, runs client tools and knows when the conversation is idle. The command-line modes live in
:mod:`voxcall.client.talk` and :mod:`voxcall.client.chat`.
"""

from __future__ import annotations

from voxcall.client.display import ConsoleReporter
from voxcall.client.session import ClientSession, Reporter
from voxcall.client.tools import ClientTools, ToolModuleError, load_tool_module
from voxcall.client.transport import ClientError, InProcessTransport, Transport, WebSocketTransport

__all__ = [
    "ClientError",
    "ClientSession",
    "ClientTools",
    "ConsoleReporter",
    "InProcessTransport",
    "Reporter",
    "ToolModuleError",
    "Transport",
    "WebSocketTransport",
    "load_tool_module",
]
