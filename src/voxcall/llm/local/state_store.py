"""``StateStore``: saved states of a llama.cpp context, each the tokens it holds and the bytes that restore them.

One context serves every session of :class:`~voxcall.llm.local.llamacpp.LlamaCppBackend`, so sessions with different
system prompts or tools take turns evicting each other's evaluated prefix. A state saved before the context drops
it (:class:`~voxcall.llm.local.model.LocalModel` decides when) lets a later prompt that begins the same way restore
it in a few milliseconds instead of evaluating it again (seconds on two cores).

The store is bounded in bytes and forgets the least recently used states first; a state that alone exceeds the
bound is not kept. It never holds two states of which one is a prefix of the other: the longer serves every prompt
the shorter would (a prompt shares at least as long a prefix with it), so the shorter is dropped when the longer
is added, and a state already covered by a stored one is not added. The store knows nothing of llama.cpp: the
bytes are opaque here.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

__all__ = ["SavedState", "StateStore", "common_prefix"]


def common_prefix(first: Sequence[int] | npt.NDArray[np.int32], second: Sequence[int]) -> int:
    """How many tokens ``first`` and ``second`` share from the start."""
    n = min(len(first), len(second))
    if n == 0:
        return 0
    differ = np.asarray(first[:n]) != np.asarray(second[:n])
    return int(differ.argmax()) if differ.any() else n


@dataclass(frozen=True, slots=True, eq=False)
class SavedState:
    """The state of a context that holds ``tokens`` (llama.cpp's bytes for one sequence)."""

    tokens: tuple[int, ...]
    data: npt.NDArray[np.uint8]

    @property
    def nbytes(self) -> int:
        return int(self.data.nbytes)


class StateStore:
    """Saved context states, at most ``max_bytes`` of them together, the least recently used forgotten first."""

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self._states: OrderedDict[tuple[int, ...], SavedState] = OrderedDict()  # least recently used first
        self.nbytes = 0

    def __len__(self) -> int:
        return len(self._states)

    @property
    def states(self) -> list[SavedState]:
        """The stored states, the least recently used first."""
        return list(self._states.values())

    def best(self, tokens: Sequence[int]) -> tuple[SavedState | None, int]:
        """The stored state sharing the longest prefix with ``tokens``, and that prefix's length (None, 0 when the
        store is empty or no state shares a token)."""
        found: SavedState | None = None
        longest = 0
        for state in self._states.values():
            shared = common_prefix(state.tokens, tokens)
            if shared > longest:
                found, longest = state, shared
        return found, longest

    def covers(self, tokens: Sequence[int]) -> bool:
        """Whether a stored state begins with ``tokens`` (restoring it gives them back)."""
        return any(self._is_prefix(tokens, state.tokens) for state in self._states.values())

    def used(self, state: SavedState) -> None:
        """Mark ``state`` as the most recently used."""
        if state.tokens in self._states:
            self._states.move_to_end(state.tokens)

    def add(self, state: SavedState) -> None:
        """Keep ``state`` (the most recently used), dropping the states it covers, then the least recently used
        ones until the store fits its bound. A state larger than the bound is not kept."""
        if state.nbytes > self.max_bytes:
            return
        for covered in [s for s in self._states.values() if self._is_prefix(s.tokens, state.tokens)]:
            self._drop(covered)
        self._states[state.tokens] = state
        self.nbytes += state.nbytes
        while self.nbytes > self.max_bytes:
            self._drop(next(iter(self._states.values())))

    def discard(self, state: SavedState) -> None:
        """Forget ``state`` (one llama.cpp would not restore)."""
        if self._states.get(state.tokens) is state:
            self._drop(state)

    def _drop(self, state: SavedState) -> None:
        del self._states[state.tokens]
        self.nbytes -= state.nbytes

    @staticmethod
    def _is_prefix(short: Sequence[int], long: Sequence[int]) -> bool:
        return len(short) <= len(long) and common_prefix(short, long) == len(short)
