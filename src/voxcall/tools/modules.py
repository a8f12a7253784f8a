"""Python tool modules: operator-written files or packages whose tools every session may use.

A module offers tools in any of three ways, all picked up by :func:`load_tool_module`:

- functions decorated with :func:`tool` (``from voxcall.tools import tool``);
- a :class:`~voxcall.tools.registry.ToolRegistry` instance at module level;
- the simple contract shared with ``voxcall talk``: ``TOOLS`` (Realtime tool dicts) and
  ``async def execute_tool(name, arguments)``.

Modules come only from the operator's configuration, never from a session.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from types import ModuleType
from typing import Any, TypeVar, overload

from voxcall.tools.registry import ToolRegistry
from voxcall.tools.schema import Tool

F = TypeVar("F", bound=Callable[..., Any])
_MARK = "__voxcall_tool__"


@overload
def tool(fn: F, /) -> F: ...


@overload
def tool(*, name: str | None = None, description: str | None = None, timeout: float | None = None,
         rate_limit: tuple[int, float] | None = None, cache_ttl: float = 0.0,
         returns: bool = True, cancellable: bool | None = None, repeats: bool = False) -> Callable[[F], F]: ...


def tool(fn: F | None = None, /, *, name: str | None = None, description: str | None = None,
         timeout: float | None = None, rate_limit: tuple[int, float] | None = None, cache_ttl: float = 0.0,
         returns: bool = True, cancellable: bool | None = None, repeats: bool = False) -> F | Callable[[F], F]:
    """Mark a function in a tool module as a tool; the options are those of :meth:`ToolRegistry.register`
    (``cache_ttl=60``: a result may be reused for a minute; ``returns=False``: the tool only acts;
    ``cancellable=False``: a barge-in lets it finish; ``repeats=True``: the same arguments run again)."""
    def mark(func: F) -> F:
        setattr(func, _MARK, {"name": name, "description": description, "timeout": timeout,
                              "rate_limit": rate_limit, "cache_ttl": cache_ttl, "returns": returns,
                              "cancellable": cancellable, "repeats": repeats})
        return func

    return mark if fn is None else mark(fn)


def import_tool_module(spec: str) -> ModuleType:
    """Import ``spec``: a ``.py`` file path, or a dotted module name. Raises ``ValueError`` with the reason."""
    if not (spec.endswith(".py") or "/" in spec):
        return _run_module(spec, lambda: importlib.import_module(spec))
    path = Path(spec).expanduser().resolve()
    if not path.is_file():
        raise ValueError(f"tool module {spec}: no such file")
    name = f"voxcall_tools_{path.stem}"
    module_spec = importlib.util.spec_from_file_location(name, path)
    if module_spec is None or module_spec.loader is None:
        raise ValueError(f"tool module {spec}: cannot be loaded")
    loader = module_spec.loader
    module = importlib.util.module_from_spec(module_spec)
    sys.modules[name] = module

    def execute() -> ModuleType:
        loader.exec_module(module)
        return module

    return _run_module(spec, execute)


def _run_module(spec: str, load: Callable[[], ModuleType]) -> ModuleType:
    """Run a module's code; any error it raises (a ``ValueError`` too) is reported naming the module."""
    try:
        return load()
    except Exception as exc:
        raise ValueError(f"tool module {spec}: import failed ({type(exc).__name__}: {exc})") from exc


def load_tool_module(spec: str, registry: ToolRegistry) -> list[Tool]:
    """Import ``spec`` and register its tools into ``registry``; return them. ``ValueError`` when it has none."""
    module = import_tool_module(spec)
    before = {t.name for t in registry.tools}
    for value in vars(module).values():
        if callable(value) and hasattr(value, _MARK):
            registry.register(value, **getattr(value, _MARK))
        elif isinstance(value, ToolRegistry) and value is not registry:
            registry.include(value)
    tools_list = getattr(module, "TOOLS", None)
    execute = getattr(module, "execute_tool", None)
    if tools_list is not None:
        if not inspect.iscoroutinefunction(execute):
            raise ValueError(f"tool module {spec}: TOOLS needs an 'async def execute_tool(name, arguments)'")
        for data in tools_list:
            definition = Tool.from_openai(data)
            registry.add(definition, _contract_handler(execute, definition.name))
    added = [t for t in registry.tools if t.name not in before]
    if not added:
        raise ValueError(f"tool module {spec}: defines no tools (use @voxcall.tools.tool, a ToolRegistry, or "
                         "TOOLS + execute_tool)")
    return added


def _contract_handler(execute: Callable[[str, dict[str, Any]], Awaitable[Any]], name: str) -> Callable[..., Any]:
    async def handler(**arguments: Any) -> Any:
        return await execute(name, arguments)

    return handler
