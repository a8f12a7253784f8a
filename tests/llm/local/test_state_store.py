"""StateStore on its own: the byte bound, least recently used first, and states covering one another."""

from __future__ import annotations

import numpy as np

from voxcall.llm.local.state_store import SavedState, StateStore, common_prefix


def state(tokens: list[int], nbytes: int = 100) -> SavedState:
    return SavedState(tuple(tokens), np.zeros(nbytes, dtype=np.uint8))


def test_common_prefix() -> None:
    assert common_prefix([1, 2, 3], [1, 2, 4, 5]) == 2
    assert common_prefix([1, 2], [1, 2, 3]) == 2
    assert common_prefix(np.array([1, 2, 3], dtype=np.int32), [1, 2, 3]) == 3
    assert common_prefix([], [1]) == 0
    assert common_prefix([9], [1]) == 0


def test_best_is_the_longest_shared_prefix() -> None:
    store = StateStore(1000)
    store.add(state([1, 2, 3, 4]))
    store.add(state([1, 5, 6]))
    found, shared = store.best([1, 2, 3, 9])
    assert found is not None and found.tokens == (1, 2, 3, 4) and shared == 3
    assert store.best([7, 8]) == (None, 0)


def test_the_bound_evicts_the_least_recently_used() -> None:
    store = StateStore(250)
    a, b, c = state([1, 1]), state([2, 2]), state([3, 3])
    store.add(a)
    store.add(b)
    store.used(a)  # b is now the least recently used
    store.add(c)
    assert [s.tokens for s in store.states] == [(1, 1), (3, 3)]
    assert store.nbytes == 200


def test_a_state_larger_than_the_bound_is_not_kept() -> None:
    store = StateStore(50)
    store.add(state([1, 2]))
    assert len(store) == 0 and store.nbytes == 0


def test_a_longer_state_replaces_the_ones_it_covers() -> None:
    store = StateStore(1000)
    store.add(state([1, 2]))
    store.add(state([1, 3]))
    assert store.covers([1, 2]) and store.covers([1]) and not store.covers([1, 2, 3])
    store.add(state([1, 2, 3]))
    assert [s.tokens for s in store.states] == [(1, 3), (1, 2, 3)]
    assert store.nbytes == 200


def test_discard_forgets_a_state() -> None:
    store = StateStore(1000)
    kept = state([1, 2])
    store.add(kept)
    store.discard(kept)
    assert len(store) == 0 and store.nbytes == 0
