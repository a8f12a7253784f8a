"""``SentPrompts``: the prompts a llama.cpp server was last sent, to know how much of a new prompt it may hold.

The server keeps each slot's evaluated tokens, and the prompts its slots dropped in a host-memory cache; a request
whose prompt begins the same way evaluates only the rest. A request *shorter* than what a slot holds cuts the slot
to it, so a warm sent in chunks (:meth:`~voxcall.llm.local.server_engine.ServerEngine.warm`) starts from the
longest prefix the server was sent already, not from the start. The record is bounded (:data:`REMEMBERED`, the
least recently sent forgotten first) and never holds a prompt that another one held begins with.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence

import numpy as np

REMEMBERED = 64
"""Prompts remembered: about as many as the server's prompt cache holds for a small model."""


def common_prefix(first: Sequence[int], second: Sequence[int]) -> int:
    """How many tokens ``first`` and ``second`` share from the start."""
    n = min(len(first), len(second))
    if n == 0:
        return 0
    differ = np.asarray(first[:n]) != np.asarray(second[:n])
    return int(differ.argmax()) if differ.any() else n


class SentPrompts:
    """The last :data:`REMEMBERED` prompts sent, as token tuples."""

    def __init__(self) -> None:
        self._prompts: OrderedDict[tuple[int, ...], None] = OrderedDict()  # least recently sent first

    def __len__(self) -> int:
        return len(self._prompts)

    def add(self, prompt: Sequence[int]) -> None:
        """Note that ``prompt`` was sent (the most recent), forgetting the prompts it begins with."""
        key = tuple(prompt)
        for shorter in [p for p in self._prompts if len(p) <= len(key) and key[:len(p)] == p]:
            del self._prompts[shorter]
        if not any(len(p) > len(key) and p[:len(key)] == key for p in self._prompts):
            self._prompts[key] = None
        while len(self._prompts) > REMEMBERED:
            self._prompts.popitem(last=False)

    def longest(self, prompt: Sequence[int]) -> int:
        """The most tokens ``prompt`` shares from the start with a prompt sent (0: none)."""
        return max((common_prefix(sent, prompt) for sent in self._prompts), default=0)
