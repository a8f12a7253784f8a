"""The ``calculator`` built-in: exact arithmetic, so the model does not have to do sums in its head."""

from __future__ import annotations

import math
from typing import Literal

from voxcall.tools.registry import ToolError, ToolRegistry


async def calculator(op: Literal["add", "sub", "mul", "div"], a: float, b: float) -> float:
    """Calculate ``a op b`` for two numbers. Use it for any arithmetic instead of working it out yourself.

    Args:
        op: The operation: "add" (a + b), "sub" (a - b), "mul" (a * b) or "div" (a / b).
        a: The first number.
        b: The second number.

    Returns:
        The result of the operation.
    """
    if op == "add":
        result = a + b
    elif op == "sub":
        result = a - b
    elif op == "mul":
        result = a * b
    else:
        if b == 0:
            raise ToolError("division by zero")
        result = a / b
    if not math.isfinite(result):
        raise ToolError("the result is too large to represent")
    return result


def register(registry: ToolRegistry) -> None:
    """Register :func:`calculator` on ``registry`` (async: pure arithmetic needs no worker thread)."""
    registry.register(calculator)
