"""``ToolCache``: the results of tools that declare themselves safe to reuse, kept for a while.

A result is reused for the same tool and the same arguments (compared as canonical JSON: keys sorted, so
``{"a": 1, "b": 2}`` and ``{"b": 2, "a": 1}`` are one call) until its time to live runs out. The time to live
of a tool is, in order:

1. never, for a tool whose :class:`~voxcall.tools.effects.ToolEffects` say it changes something, only acts, or
   answers each caller differently (:attr:`ToolEffects.reusable`), whatever the configuration says;
2. the operator's override for that tool name (``tools.cache: {name: seconds}``; 0 switches caching off);
3. what the tool declares (``@tool(cache_ttl=…)``, or :data:`~voxcall.tools.effects.MCP_READ_ONLY_TTL` for an
   MCP tool annotated ``readOnlyHint: true``).

Error results are never stored. The cache is bounded in entries and bytes (least recently used entries go
first) and is shared by every session of a process; each registry that registers tools has its own ``scope``
in the keys, so the same alias from two sessions' own MCP servers never shares a result.
"""

from __future__ import annotations

import json
import logging
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from voxcall.tools.calls import ToolResult
from voxcall.tools.effects import ToolEffects

__all__ = ["MAX_BYTES", "MAX_ENTRIES", "ToolCache", "canonical_arguments"]

log = logging.getLogger(__name__)

MAX_ENTRIES = 1024
"""Results a cache holds at most."""
MAX_BYTES = 4 * 1024 * 1024
"""UTF-8 bytes of arguments and output text a cache holds at most; a larger result is not stored."""

Key = tuple[object, str, str]  # (scope, tool name, canonical arguments)


def canonical_arguments(arguments: Mapping[str, Any]) -> str:
    """The arguments as compact JSON with sorted keys: equal for equal arguments, whatever their order."""
    return json.dumps(arguments, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


@dataclass(slots=True)
class _Stored:
    result: ToolResult
    expires: float
    size: int


class ToolCache:
    """A bounded LRU store of tool results with a time to live each (see the module docstring)."""

    def __init__(self, ttls: Mapping[str, float] | None = None, *, max_entries: int = MAX_ENTRIES,
                 max_bytes: int = MAX_BYTES, clock: Callable[[], float] = time.monotonic) -> None:
        """``ttls``: the operator's overrides in seconds by tool name (0: never cache that tool); ``clock`` gives
        seconds (a test injects its own)."""
        if max_entries < 1 or max_bytes < 1:
            raise ValueError("a tool cache needs room for at least one entry and one byte")
        self.ttls = dict(ttls or {})
        for name, seconds in self.ttls.items():
            if seconds < 0:
                raise ValueError(f"tools.cache: {name!r} must be 0 or more seconds, got {seconds}")
        self.max_entries = max_entries
        self.max_bytes = max_bytes
        self.bytes = 0
        self._clock = clock
        self._store: OrderedDict[Key, _Stored] = OrderedDict()

    def __len__(self) -> int:
        return len(self._store)

    def ttl(self, name: str, effects: ToolEffects) -> float:
        """Seconds a result of tool ``name`` may be reused (0: never)."""
        if not effects.reusable:
            return 0.0
        override = self.ttls.get(name)
        return override if override is not None else effects.cache_ttl

    def ignored_overrides(self, effects_of: Callable[[str], ToolEffects | None]) -> list[str]:
        """Why some of :attr:`ttls` have no effect, one line each, for a log; ``effects_of`` gives a tool's
        effects by name, None for an unknown name (:meth:`ToolRegistry.effects`)."""
        problems = []
        for name, seconds in self.ttls.items():
            effects = effects_of(name)
            if effects is None:
                problems.append(f"tools.cache: no tool is called {name!r} (yet)")
            elif seconds and not effects.reusable:
                problems.append(f"tools.cache: {name!r} is never cached: it changes something, only acts, or "
                                "answers each session differently")
        return problems

    def get(self, scope: object, name: str, arguments: Mapping[str, Any]) -> ToolResult | None:
        """The stored result of this call, marked ``cached``, or None (never stored, or expired)."""
        key = (scope, name, canonical_arguments(arguments))
        stored = self._store.get(key)
        if stored is None:
            return None
        if self._clock() >= stored.expires:
            self._drop(key)
            return None
        self._store.move_to_end(key)
        return replace(stored.result, cached=True)

    def put(self, scope: object, name: str, arguments: Mapping[str, Any], result: ToolResult, ttl: float) -> None:
        """Keep ``result`` for ``ttl`` seconds; an error, a zero ``ttl`` or a result over the byte bound is not
        kept. The least recently used results make room."""
        if result.is_error or ttl <= 0:
            return
        key = (scope, name, canonical_arguments(arguments))
        size = len(name) + len(key[2].encode()) + len(result.output.encode())
        if size > self.max_bytes:
            log.debug("tool %r: a result of %d bytes is too large to cache", name, size)
            return
        if key in self._store:
            self._drop(key)
        self._store[key] = _Stored(result, self._clock() + ttl, size)
        self.bytes += size
        while len(self._store) > self.max_entries or self.bytes > self.max_bytes:
            self._drop(next(iter(self._store)))

    def _drop(self, key: Key) -> None:
        self.bytes -= self._store.pop(key).size
