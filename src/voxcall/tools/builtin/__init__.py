"""Built-in tools, each registered on a :class:`~voxcall.tools.registry.ToolRegistry` by name.

``BUILTINS`` maps a built-in's name to the function that registers it; :func:`register_builtins` registers a
chosen set (for example the names listed in the configuration).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from types import MappingProxyType

from voxcall.tools.builtin import calculator
from voxcall.tools.registry import ToolRegistry

__all__ = ["BUILTINS", "register_builtins"]

BUILTINS: Mapping[str, Callable[[ToolRegistry], None]] = MappingProxyType({
    "calculator": calculator.register,
})


def register_builtins(registry: ToolRegistry, names: Iterable[str]) -> None:
    """Register the built-ins called ``names`` on ``registry``.

    Raises ``ValueError`` listing the known built-ins when a name is unknown; nothing is registered then.
    """
    names = list(names)
    unknown = [name for name in names if name not in BUILTINS]
    if unknown:
        raise ValueError(f"unknown built-in tool{'s' if len(unknown) > 1 else ''}: {', '.join(unknown)} "
                         f"(known: {', '.join(BUILTINS)})")
    for name in names:
        BUILTINS[name](registry)
