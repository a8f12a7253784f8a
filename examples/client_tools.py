"""Client-side tools for `voxcall talk --tool-module examples/client_tools.py`: they run on the user's machine.

The server's model sees TOOLS; when it calls one, `voxcall talk` runs execute_tool and sends the result back.
"""
from datetime import datetime

TOOLS = [
    {"type": "function", "name": "calculator", "description": "Do arithmetic.",
     "parameters": {"type": "object", "required": ["op", "a", "b"], "properties": {
         "op": {"type": "string", "enum": ["add", "sub", "mul", "div"]},
         "a": {"type": "number"}, "b": {"type": "number"}}}},
    {"type": "function", "name": "get_local_time", "description": "The time on the user's own clock.",
     "parameters": {"type": "object", "properties": {}}},
]


async def execute_tool(name: str, arguments: dict) -> object:
    if name == "calculator":
        a, b = arguments["a"], arguments["b"]
        return {"add": a + b, "sub": a - b, "mul": a * b, "div": a / b}[arguments["op"]]
    if name == "get_local_time":
        return datetime.now().astimezone().strftime("%H:%M on %A")
    raise ValueError(f"unknown tool {name}")
