# examples/server_tools.py: tools that run inside voxcall (tools.modules in examples/voxcall.yaml)
from voxcall.tools import ToolContext, tool


@tool
def lights(room: str, on: bool) -> str:
    """Switch the lights of a room.

    Args:
        room: Which room, e.g. "kitchen".
        on: True for on, False for off.
    """
    return f"{room} lights {'on' if on else 'off'}"


@tool(timeout=5.0, rate_limit=(10, 60.0))
async def whisper_mode(ctx: ToolContext) -> str:      # a ToolContext parameter is injected, never shown to the model
    """Speak quietly from now on."""
    if ctx.voice is not None:
        ctx.voice.voice_gain = 0.3
    return "Speaking quietly."
