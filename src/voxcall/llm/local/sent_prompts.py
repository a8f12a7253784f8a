"""``SentPrompts``: the prompts a llama.cpp server was last sent, to know how much of a new prompt it may hold.

The server keeps each slot's evaluated tokens, and the prompts its slots dropped in a host-memory cache; a request
whose prompt begins the same way evaluates only the rest. A request *shorter* than what a slot holds cuts the slot
to it, so a warm sent in chunks (:meth:`~voxcall.llm.local.server_engine.ServerEngine.warm`) starts from the
longest prefix the server was sent already, not from the start. The record is bounded (:data:`REMEMBERED`, the
least recently sent forgotten first) and never holds a prompt that another one held begins with.

With one slot, the record also says when the server would miss its own cache (:meth:`SentPrompts.cache_missed`):
llama.cpp's server looks in its prompt cache only when a new prompt keeps less than half of what the slot holds
(:data:`KEPT_TO_STAY`). A short prompt that begins as a longer one (a session without tools, whose instructions
begin every tools prompt) keeps most of itself for the longer one, so the slot stays, and the longer one's tokens
after the short one's are evaluated again although the cache holds them: measured with SmolLM2, 265 cached tokens,
a slot holding 104 tokens of which the new prompt kept 84 evaluated 318 (1.5-1.9 s on two cores); holding 184, of
which it kept 84 (0.46), the cache gave 265.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence

import numpy as np

REMEMBERED = 64
"""Prompts remembered: about as many as the server's prompt cache holds for a small model."""
KEPT_TO_STAY = 0.5
"""The share of a slot's tokens a new prompt must keep for llama.cpp's server to keep the slot without looking in its
prompt cache (measured: 0.50 stays, 0.46 looks)."""
CACHE_GAIN = 32
"""Tokens the prompt cache must hold beyond what the slot keeps for a look there to be worth it (a look saves the
slot and restores a prompt: tens of milliseconds; 32 tokens take ~0.13 s to evaluate with SmolLM2 on two cores)."""


def common_prefix(first: Sequence[int], second: Sequence[int]) -> int:
    """How many tokens ``first`` and ``second`` share from the start."""
    n = min(len(first), len(second))
    if n == 0:
        return 0
    differ = np.asarray(first[:n]) != np.asarray(second[:n])
    return int(differ.argmax()) if differ.any() else n


class SentPrompts:
    """The last :data:`REMEMBERED` prompts sent, as token tuples, to a server that has one slot and a prompt cache
    and hears from no one else (``sole_cached_slot``: the server in this process) or not."""

    def __init__(self, *, sole_cached_slot: bool = False) -> None:
        self.sole_cached_slot = sole_cached_slot
        self._prompts: OrderedDict[tuple[int, ...], None] = OrderedDict()  # least recently sent first
        self.slot: tuple[int, ...] = ()
        """The prompt last sent: what the slot of a server with one slot holds (its start, before any reply)."""

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

    def cache_missed(self, prompt: Sequence[int]) -> bool:
        """Whether the server (with one slot and a prompt cache: ``sole_cached_slot``), holding :attr:`slot`, would
        keep the slot for ``prompt`` (it keeps at least :data:`KEPT_TO_STAY` of it) without looking in its prompt
        cache, where a start of ``prompt`` longer by :data:`CACHE_GAIN` tokens or more may be, having been sent
        before."""
        if not (self.sole_cached_slot and self.slot):
            return False
        kept = common_prefix(self.slot, prompt)
        return kept >= KEPT_TO_STAY * len(self.slot) and self.longest(prompt) >= kept + CACHE_GAIN
