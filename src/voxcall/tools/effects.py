"""``ToolEffects``: what a tool declares about its effects, which decides whether its results may be reused
(:mod:`voxcall.tools.cache`) and whether the model must be asked to report them.

Python tools declare it with ``@tool(cache_ttl=…, returns=False)`` (or the same options of
:meth:`~voxcall.tools.ToolRegistry.register`); MCP tools with their annotations (``readOnlyHint``,
``destructiveHint``) and the ``voxcall/returns`` key of their ``_meta`` (see :func:`mcp_effects`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["MCP_READ_ONLY_TTL", "RETURNS_META_KEY", "ToolEffects", "mcp_effects"]

MCP_READ_ONLY_TTL = 30.0
"""Seconds the result of an MCP tool annotated ``readOnlyHint: true`` is reused, unless ``tools.cache`` says
otherwise for that tool."""

RETURNS_META_KEY = "voxcall/returns"
"""The ``_meta`` key by which an MCP tool says it only acts (``false``): its result is nothing to report."""


@dataclass(frozen=True, slots=True)
class ToolEffects:
    """What a tool says about itself. The default is a tool that declares nothing: never cached unless the
    operator asks for it, and its result reported by the model."""

    changes: bool | None = None
    """True: it changes something (so a result is never reused); False: it only reads; None: not declared."""
    cache_ttl: float = 0.0
    """Seconds a result may be reused for the same arguments, as the tool declares (0: not at all)."""
    returns: bool = True
    """False: the tool only acts (its output is "ok" or an error), so no model round runs just to report it."""
    per_caller: bool = False
    """Its handler receives the caller's :class:`~voxcall.tools.ToolContext`: a result may differ per session."""
    cancellable: bool | None = None
    """Whether a run may be cut off when its response is cancelled (barge-in); None: as :attr:`stoppable` says."""
    repeats: bool = False
    """True: the same arguments twice in one user turn are meant to run twice (``next_track``); otherwise the
    repeat is answered with the first call's result."""

    def __post_init__(self) -> None:
        if self.cache_ttl < 0:
            raise ValueError(f"cache_ttl must be 0 or more seconds, got {self.cache_ttl}")
        if self.cache_ttl and not self.reusable:
            why = "receives the caller's ToolContext" if self.per_caller else "changes something"
            raise ValueError(f"a tool that {why} cannot declare a cache_ttl")

    @property
    def stoppable(self) -> bool:
        """Whether a running call may be cancelled with its response: as declared, else only a tool that does
        not change anything (cutting off one that does could leave its change half made, and lose its result)."""
        return self.cancellable if self.cancellable is not None else self.changes is not True

    @property
    def reusable(self) -> bool:
        """Whether a result may ever be reused: not for a tool that changes something (an action-only tool
        does) or that answers each caller differently, whatever the configuration says."""
        return self.changes is not True and self.returns and not self.per_caller


def mcp_effects(annotations: Any, meta: Mapping[str, Any] | None) -> ToolEffects:
    """The effects an MCP tool declares: ``readOnlyHint: true`` reads only (cached for
    :data:`MCP_READ_ONLY_TTL`); ``readOnlyHint: false`` or ``destructiveHint: true`` changes something (never
    cached). ``idempotentHint`` alone does not make a tool cacheable: an idempotent tool may still change
    something (``set_volume(30)``), and a reused result would skip that change. ``_meta["voxcall/returns"]:
    false`` marks a tool that only acts. ``annotations`` is the SDK's ``ToolAnnotations`` or None."""
    read_only = getattr(annotations, "read_only_hint", None)
    destructive = getattr(annotations, "destructive_hint", None)
    returns = not (meta is not None and meta.get(RETURNS_META_KEY) is False)
    if read_only is True and returns:
        return ToolEffects(changes=False, cache_ttl=MCP_READ_ONLY_TTL)
    changes = True if read_only is False or destructive is True or not returns else None
    return ToolEffects(changes=changes, returns=returns)
