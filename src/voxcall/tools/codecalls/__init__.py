"""The local-model tool path: tools rendered as Python signatures, calls parsed from ``<code>`` blocks."""

from voxcall.tools.calls import ToolCall
from voxcall.tools.codecalls.events import CodeCallEvent, CodeCallResult, RejectedCall, TextDelta
from voxcall.tools.codecalls.prompt import format_code_call, render_tools_prompt
from voxcall.tools.codecalls.stream import CodeCallStream, parse_code_calls

__all__ = ["CodeCallEvent", "CodeCallResult", "CodeCallStream", "RejectedCall", "TextDelta", "ToolCall",
           "format_code_call", "parse_code_calls", "render_tools_prompt"]
