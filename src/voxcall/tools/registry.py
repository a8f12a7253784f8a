"""``ToolRegistry``: the server-side tools of one agent, and the one place where they are run.

A registry is an ordinary instance (never a module global), so a test, a session or a CLI command can build
its own. It turns a model's call into a :class:`~voxcall.tools.calls.ToolResult` and never raises for anything
the model or the tool did wrong: unknown names, bad arguments, rate limits, timeouts and exceptions all become
error results whose text is safe to show the model. Only cancellation propagates, so a cancelled response
stops its tools.

A call goes through these steps:

1. look the tool up (an unknown name gets an error naming the closest known tool);
2. validate the arguments against the schema (:func:`~voxcall.tools.validation.validate_arguments`);
3. convert the JSON values into the handler's annotated Python types where JSON alone cannot express them
   (pydantic models, dataclasses, Enum members, tuples ...), with ``pydantic.TypeAdapter``
   (:mod:`voxcall.tools.arguments`);
4. answer from the :class:`~voxcall.tools.cache.ToolCache` when the tool's results may be reused and this call's
   is still there (the result is marked ``cached``; no rate limit is spent);
5. check the tool's rate limit (:class:`~voxcall.tools.ratelimit.RateLimiter`);
6. wait for a free slot under the registry's concurrency limit, then run the handler under its timeout
   (a sync handler in a thread of the registry's :class:`~voxcall.tools.threads.ToolThreads`, so it never blocks
   the event loop nor takes a thread the speech pipeline needs; a timed-out one's thread is abandoned there);
7. turn the returned value into text for the model (and store it in the cache when it may be reused).

Result text: ``None`` becomes ``"ok"`` (the model reads it as plain success); a ``str`` is kept as is;
anything else is converted with pydantic's JSON rules (models, dataclasses, Enums, dates, containers of them)
and written as compact JSON with non-ASCII characters kept, except that a value which converts to a string
(a ``str`` Enum, a date) is given without JSON quotes. A value that cannot be converted is given as
``str(value)``.
``ToolResult.data`` always keeps the raw value.
"""

from __future__ import annotations

import asyncio
import difflib
import inspect
import json
import logging
import math
from collections.abc import Callable, Collection
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar, overload

from pydantic import TypeAdapter
from pydantic_core import to_jsonable_python

from voxcall.config import ToolsSettings
from voxcall.tools.arguments import convert, handler_hints, keyword_parameters, parameter_renames, type_adapters
from voxcall.tools.cache import ToolCache
from voxcall.tools.calls import ToolCall, ToolResult
from voxcall.tools.context import ToolContext, context_parameter
from voxcall.tools.effects import ToolEffects
from voxcall.tools.ratelimit import RateLimiter
from voxcall.tools.schema import Tool
from voxcall.tools.threads import ToolThreads, ToolThreadsBusy
from voxcall.tools.validation import ArgumentError, validate_arguments

__all__ = ["ToolError", "ToolRegistry", "ToolTimeout"]

log = logging.getLogger(__name__)

F = TypeVar("F", bound=Callable[..., Any])

_DEFAULTS = ToolsSettings()


class ToolError(Exception):
    """An error a tool raises on purpose; its message is given to the model as the tool's (error) output.

    Any other exception is reported to the model only by its class name, since its message may hold secrets.
    """


class ToolTimeout(ToolError):
    """A tool's own way of saying it ran out of time (an MCP server's ``call_timeout``): a timed-out result."""


def _check_timeout(timeout: float | None) -> None:
    """Refuse a timeout that is not a positive number of seconds (``None``: no timeout)."""
    if timeout is not None and timeout <= 0:
        raise ValueError(f"timeout must be positive or None, got {timeout}")


# -- results -------------------------------------------------------------------------------------------------


def _output_text(value: Any) -> str:
    """The text given to the model for a tool's return value (see the module docstring for the rules)."""
    if value is None:
        return "ok"
    try:
        jsonable = to_jsonable_python(value)
        if isinstance(jsonable, str):
            return jsonable
        return json.dumps(jsonable, ensure_ascii=False, separators=(",", ":"))
    except (TypeError, ValueError):  # pydantic's serialisation error is a ValueError
        return str(value)


def _error(output: str) -> ToolResult:
    """An error result: ``output`` is written for the model."""
    return ToolResult(output, is_error=True)


# -- the registry --------------------------------------------------------------------------------------------


@dataclass(slots=True)
class _Entry:
    """A registered tool: its definition, its handler and how to call it.

    ``scope`` is the registering registry's own token in cache keys; an entry keeps it when another registry
    includes it, so every registry that includes a process tool shares its cached results.
    """

    tool: Tool
    handler: Callable[..., Any]
    timeout: float | None
    limiter: RateLimiter | None
    effects: ToolEffects
    scope: object
    is_async: bool = field(init=False)
    context_param: str | None = field(init=False)
    keywords: frozenset[str] | None = field(init=False)
    renames: dict[str, str] = field(init=False)
    adapters: dict[str, TypeAdapter[Any]] | None = field(default=None, init=False)

    def __post_init__(self) -> None:
        call = getattr(self.handler, "__call__", None)  # noqa: B004 - an object with an async __call__ is async
        self.is_async = inspect.iscoroutinefunction(self.handler) or inspect.iscoroutinefunction(call)
        self.keywords = keyword_parameters(self.handler)
        self.renames = parameter_renames(self.tool, self.keywords)
        self.context_param = context_parameter(handler_hints(self.handler))
        if self.context_param is not None and not self.effects.per_caller:
            self.effects = replace(self.effects, per_caller=True)  # ValueError if it declared a cache_ttl

    def prepare(self, arguments: Any) -> tuple[dict[str, Any], dict[str, Any]]:
        """Validate ``arguments``; return them (JSON) and the handler's keyword arguments. Raise
        :class:`ArgumentError`."""
        args, warnings = validate_arguments(self.tool, arguments)
        for warning in warnings:
            log.warning("tool %r: %s", self.tool.name, warning)
        if self.adapters is None:  # built on first use: TypeAdapters cost milliseconds each
            self.adapters = type_adapters(self.handler)
        kwargs: dict[str, Any] = {}
        for key, value in args.items():
            param = self.renames.get(key, key)
            if self.keywords is not None and param not in self.keywords:  # a schema that allows extras
                log.warning("tool %r: dropped argument %r its handler does not take", self.tool.name, key)
                continue
            kwargs[param] = convert(param, self.adapters[param], value) if param in self.adapters else value
        return args, kwargs

    async def invoke(self, kwargs: dict[str, Any], threads: ToolThreads) -> Any:
        """Run the handler: awaited when async, else in a thread of ``threads`` so the event loop stays free.

        A sync callable that returns an awaitable (a wrapper hiding an async function) has it awaited here.
        """
        if self.is_async:
            return await self.handler(**kwargs)
        value = await threads.run(self.handler, **kwargs)
        return await value if inspect.isawaitable(value) else value


class ToolRegistry:
    """The server-side tools of one agent: registration, lookup and safe, limited execution.

    ``default_timeout`` (seconds, ``None`` for none) applies to tools registered without their own; it limits
    the run itself, not the wait for a free slot. ``max_concurrency`` bounds how many tool calls run at once
    across the registry. A timed-out sync tool's thread cannot be killed: it runs on in ``threads`` (the tools'
    own daemon threads; a new pool when not given, pass the process's to share it), its result dropped.
    ``cache`` keeps the results of tools that may be reused (a new one when not given; pass the process's to
    share it).
    """

    def __init__(self, *, default_timeout: float | None = _DEFAULTS.timeout,
                 max_concurrency: int = _DEFAULTS.max_concurrency, cache: ToolCache | None = None,
                 threads: ToolThreads | None = None) -> None:
        _check_timeout(default_timeout)
        if max_concurrency < 1:
            raise ValueError(f"max_concurrency must be at least 1, got {max_concurrency}")
        self.default_timeout = default_timeout
        self.cache = cache if cache is not None else ToolCache()
        self.threads = threads if threads is not None else ToolThreads(_DEFAULTS.max_threads)
        self._slots = asyncio.Semaphore(max_concurrency)
        self._entries: dict[str, _Entry] = {}
        self._scope = object()

    # -- registration ----------------------------------------------------------------------------------------

    @overload
    def tool(self, fn: F, /) -> F: ...

    @overload
    def tool(
        self,
        fn: None = None,
        /,
        *,
        name: str | None = None,
        description: str | None = None,
        parameters: dict[str, Any] | None = None,
        timeout: float | None = None,
        rate_limit: tuple[int, float] | None = None,
        cache_ttl: float = 0.0,
        returns: bool = True,
        cancellable: bool | None = None,
        repeats: bool = False,
    ) -> Callable[[F], F]: ...

    def tool(
        self,
        fn: F | None = None,
        /,
        *,
        name: str | None = None,
        description: str | None = None,
        parameters: dict[str, Any] | None = None,
        timeout: float | None = None,
        rate_limit: tuple[int, float] | None = None,
        cache_ttl: float = 0.0,
        returns: bool = True,
        cancellable: bool | None = None,
        repeats: bool = False,
    ) -> F | Callable[[F], F]:
        """Decorator registering a function as a tool; the function is returned unchanged.

        Use it bare (``@registry.tool``) or with the options of :meth:`register`
        (``@registry.tool(name="add", timeout=5)``).
        """

        def decorate(func: F) -> F:
            self.register(func, name=name, description=description, parameters=parameters,
                          timeout=timeout, rate_limit=rate_limit, cache_ttl=cache_ttl, returns=returns,
                          cancellable=cancellable, repeats=repeats)
            return func

        return decorate if fn is None else decorate(fn)

    def register(
        self,
        fn: Callable[..., Any],
        *,
        name: str | None = None,
        description: str | None = None,
        parameters: dict[str, Any] | None = None,
        timeout: float | None = None,
        rate_limit: tuple[int, float] | None = None,
        cache_ttl: float = 0.0,
        returns: bool = True,
        cancellable: bool | None = None,
        repeats: bool = False,
    ) -> Tool:
        """Register a sync or async function as a tool and return its definition.

        The schema comes from :meth:`Tool.from_function` (type hints and docstring); ``name``, ``description``
        and ``parameters`` override its parts. ``timeout`` (seconds) defaults to the registry's;
        ``rate_limit=(calls, per_seconds)`` allows at most ``calls`` calls in any ``per_seconds`` window.
        ``cache_ttl`` (seconds) lets a result be reused for the same arguments (for a tool that only reads);
        ``returns=False`` says the tool only acts: it changes something and its result is nothing to report (see
        :class:`~voxcall.tools.effects.ToolEffects`); ``cancellable`` whether a run may be cut off with its
        response (default: unless it changes something); ``repeats=True`` lets the same arguments run again within
        one user turn. Raises ``ValueError`` when the name is taken or an option is invalid (a ``cache_ttl`` with
        ``returns=False``, or on a handler that takes a ``ToolContext``).
        """
        tool = Tool.from_function(fn, name=name, description=description)
        if parameters is not None:
            tool = Tool(name=tool.name, description=tool.description, parameters=parameters)
        effects = ToolEffects(changes=True if not returns else None, cache_ttl=cache_ttl, returns=returns,
                              cancellable=cancellable, repeats=repeats)
        return self.add(tool, fn, timeout=timeout, rate_limit=rate_limit, effects=effects)

    def add(
        self,
        tool: Tool,
        handler: Callable[..., Any],
        *,
        timeout: float | None = None,
        rate_limit: tuple[int, float] | None = None,
        effects: ToolEffects | None = None,
    ) -> Tool:
        """Register a tool whose schema comes from elsewhere (an MCP server, a config file) and return it.

        ``handler`` is a sync or async callable taking the validated arguments as keyword arguments.
        ``timeout`` and ``rate_limit`` are as in :meth:`register`; ``effects`` what the tool declares (by
        default nothing). Raises ``ValueError`` when the name is taken or the effects do not fit the handler.
        """
        if tool.name in self._entries:
            raise ValueError(f"a tool named {tool.name!r} is already registered")
        _check_timeout(timeout)
        limiter = RateLimiter(*rate_limit) if rate_limit is not None else None
        timeout = timeout if timeout is not None else self.default_timeout
        try:
            entry = _Entry(tool, handler, timeout, limiter, effects or ToolEffects(), self._scope)
        except ValueError as exc:
            raise ValueError(f"tool {tool.name!r}: {exc}") from None
        self._entries[tool.name] = entry
        return tool

    def configure(self, name: str, *, timeout: float | None = None, repeats: bool | None = None) -> None:
        """Override what tool ``name`` was registered with (the operator's ``tools.timeouts`` and
        ``tools.repeatable``); ``KeyError`` for an unknown name."""
        entry = self._entries[name]
        if timeout is not None:
            _check_timeout(timeout)
            entry.timeout = timeout
        if repeats is not None:
            entry.effects = replace(entry.effects, repeats=repeats)

    def include(self, other: ToolRegistry) -> None:
        """Take over every tool of ``other`` (a tool module's own registry), with its handler and limits."""
        for entry in other._entries.values():
            if entry.tool.name in self._entries:
                raise ValueError(f"a tool named {entry.tool.name!r} is already registered")
            self._entries[entry.tool.name] = entry

    def subset(self, names: Collection[str]) -> ToolRegistry:
        """A registry of just the tools called ``names`` (one agent's share of the process's tools): the same
        handlers and limits, and this registry's concurrency slots, cache and threads, so the process-wide limits
        still hold. ``ValueError`` names any that is not registered."""
        unknown = sorted(set(names) - set(self._entries))
        if unknown:
            raise ValueError(f"no server tool named {', '.join(map(repr, unknown))}; "
                             f"known: {', '.join(self._entries) or 'none'}")
        part = ToolRegistry(default_timeout=self.default_timeout, cache=self.cache, threads=self.threads)
        part._slots = self._slots
        part._entries = {name: entry for name, entry in self._entries.items() if name in names}
        return part

    # -- lookup ----------------------------------------------------------------------------------------------

    @property
    def tools(self) -> list[Tool]:
        """The registered tools, in registration order."""
        return [entry.tool for entry in self._entries.values()]

    def get(self, name: str) -> Tool | None:
        """The tool called ``name``, or ``None``."""
        entry = self._entries.get(name)
        return entry.tool if entry is not None else None

    def effects(self, name: str) -> ToolEffects | None:
        """What the tool called ``name`` declares about its effects, or ``None`` for an unknown name."""
        entry = self._entries.get(name)
        return entry.effects if entry is not None else None

    def timeout_of(self, name: str) -> float | None:
        """The seconds a call of the tool called ``name`` may take (None: no limit, or no such tool)."""
        entry = self._entries.get(name)
        return entry.timeout if entry is not None else None

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def __len__(self) -> int:
        return len(self._entries)

    # -- execution -------------------------------------------------------------------------------------------

    async def run(self, call: ToolCall, context: ToolContext | None = None) -> ToolResult:
        """Run a :class:`ToolCall` from an LLM backend; the same as ``call(call.name, call.arguments)``."""
        return await self.call(call.name, call.arguments, context=context)

    async def call(self, name: str, arguments: dict[str, Any] | None = None, *,
                   context: ToolContext | None = None) -> ToolResult:
        """Run tool ``name`` with ``arguments`` (a JSON object) and return its result.

        ``context`` reaches handlers that declare a :class:`~voxcall.tools.context.ToolContext` parameter.
        Never raises for a failed call: every failure is an error result written for the model. Cancelling the
        awaiting task cancels an async tool (a sync one finishes in its thread) and propagates.
        """
        entry = self._entries.get(name)
        if entry is None:
            return _error(self._unknown_tool_message(name))
        try:
            args, kwargs = entry.prepare(arguments if arguments is not None else {})
        except ArgumentError as exc:
            return _error(f"invalid arguments for tool {name!r}: {exc}")
        ttl = self.cache.ttl(name, entry.effects)
        if ttl and (hit := self.cache.get(entry.scope, name, args)) is not None:
            return hit
        if entry.limiter is not None and (wait := entry.limiter.acquire()) is not None:
            return _error(f"tool {name!r} is rate limited to {entry.limiter.calls} calls per "
                          f"{entry.limiter.per:g} s; retry in {math.ceil(wait * 10) / 10:.1f} s")
        if entry.context_param is not None:
            kwargs[entry.context_param] = context or ToolContext()
        result = await self._execute(entry, kwargs)
        if ttl:
            self.cache.put(entry.scope, name, args, result, ttl)
        return result

    async def _execute(self, entry: _Entry, kwargs: dict[str, Any]) -> ToolResult:
        """Run a prepared call under the concurrency limit and its timeout; map failures to safe results."""
        scope = asyncio.timeout(entry.timeout)
        try:
            async with self._slots, scope:  # the timeout starts once a slot is free
                value = await entry.invoke(kwargs, self.threads)
            return ToolResult(_output_text(value), data=value)
        except ToolThreadsBusy as exc:
            log.warning("tool %r not run: %s", entry.tool.name, exc)
            return _error(f"tool {entry.tool.name!r} could not run now: the server's tool threads are all busy")
        except Exception as exc:  # CancelledError is a BaseException and propagates
            return self._failure(entry, exc, timed_out=scope.expired())

    @staticmethod
    def _failure(entry: _Entry, exc: Exception, *, timed_out: bool) -> ToolResult:
        """The error result for a tool that raised: only a ``ToolError``'s own text reaches the model."""
        name = entry.tool.name
        if timed_out and isinstance(exc, TimeoutError):
            log.warning("tool %r timed out after %g s", name, entry.timeout)
            return ToolResult(f"tool {name!r} timed out after {entry.timeout:g} s", is_error=True, timed_out=True)
        if isinstance(exc, ToolTimeout):
            return ToolResult(str(exc), is_error=True, timed_out=True)
        if isinstance(exc, ToolError):
            log.info("tool %r reported an error: %s", name, exc)
            return _error(str(exc) or f"tool {name!r} failed")
        log.error("tool %r failed", name, exc_info=exc)
        return _error(f"tool {name!r} failed ({type(exc).__name__})")

    def _unknown_tool_message(self, name: str) -> str:
        """Name the closest known tool, or list them all when none is close."""
        close = difflib.get_close_matches(name, self._entries, n=1)
        if close:
            return f"unknown tool {name!r}; did you mean {close[0]!r}?"
        known = ", ".join(self._entries) or "none"
        return f"unknown tool {name!r}; known tools: {known}"
