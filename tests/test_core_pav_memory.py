"""Running out of memory never breaks the exact isotonic store, nor loses an event.

The compiled store allocates nodes when a leaf splits and when a tree is rebuilt from
cells; its scapegoat rebalancing needs one pointer array. Each test lets the store make
only ``k`` more allocations (``IsotonicBlockStore._limit_allocations``), so that a
MemoryError is raised at every place one can be, then checks that:

- the call that raised left the state exactly as it was (cells, to_dict) and every
  invariant holds (``_check``);
- once memory is back, the same call succeeds, and the whole stream ends in the state
  of a twin fed the same events with no limit (a rebalancing that was put off changes
  the tree's shape only: the cells and every prediction are the same floats).
"""

import random

import numpy as np
import pytest

import streamcal.calibrators.isotonic as isotonic_module
from streamcal import OnlineIsotonic
from streamcal.core._pav import IsotonicBlockStore


def _cells(store):
    return [a.tolist() for a in store.cells()]


def _events(seed, n, weights=(1.0, 1.0, 0.25, 3.0, 2.0**40, 1e-7)):
    rng = random.Random(seed)
    keys = [rng.random() for _ in range(n // 3)]
    out = []
    for _ in range(n):
        x = rng.choice(keys) if rng.random() < 0.3 else rng.random()
        w = rng.choice(weights)
        out.append((x, w, float(rng.random() < x)))
    return out


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("cap", [4, 64])
def test_store_add_out_of_memory_changes_nothing(seed, cap):
    rng = random.Random(100 + seed)
    store, twin = IsotonicBlockStore(cap), IsotonicBlockStore(cap)
    failures = 0
    for x, w, y in _events(seed, 600):
        twin.add(x, w, y)
        before = _cells(store)
        store._limit_allocations(rng.choice([0, 0, 1, 2, 5]))
        try:
            store.add(x, w, y)
        except MemoryError:
            failures += 1
            assert _cells(store) == before
            store._check()
            store._limit_allocations(-1)
            store.add(x, w, y)
        store._limit_allocations(-1)
        store._check()
    assert failures >= 3  # splits did run out of memory
    assert _cells(store) == _cells(twin)
    for q in np.linspace(-0.1, 1.1, 61):
        assert store.predict_step(q) == twin.predict_step(q)
        assert store.predict_linear(q) == twin.predict_linear(q)


@pytest.mark.parametrize("seed", range(3))
def test_rebalancing_put_off_without_memory_keeps_the_fit(seed):
    """Removals with no allocation allowed: every scapegoat rebuild is put off, the tree
    stays valid, and the fit is the twin's, which did rebuild."""
    events = _events(seed, 800, weights=(1.0, 0.25, 3.0))  # no cell absorbed
    store, twin = IsotonicBlockStore(4), IsotonicBlockStore(4)
    for x, w, y in events:
        store.add(x, w, y)
        twin.add(x, w, y)
    rng = random.Random(seed)
    rng.shuffle(events)
    store._limit_allocations(0)
    for i, (x, w, y) in enumerate(events[:700]):
        store.remove(x, w, y)
        twin.remove(x, w, y)
        if i % 50 == 0:
            store._check()
    store._check()
    assert _cells(store) == _cells(twin)
    for q in np.linspace(0.0, 1.0, 41):
        assert store.predict_step(q) == twin.predict_step(q)


def test_rebuild_out_of_memory_keeps_the_old_store():
    store = IsotonicBlockStore(4)
    for x, w, y in _events(7, 200):
        store.add(x, w, y)
    before = _cells(store)
    xs = np.linspace(0.0, 1.0, 300)
    ones = np.ones_like(xs)
    for k in (0, 1, 10, 100):
        store._limit_allocations(k)
        with pytest.raises(MemoryError):
            store.rebuild(xs, ones, ones * 0.5, np.ones(300, dtype=np.int64))
        store._limit_allocations(-1)
        assert _cells(store) == before
        store._check()
    store.rebuild(xs, ones, ones * 0.5, np.ones(300, dtype=np.int64))
    assert _cells(store)[0] == xs.tolist()
    store._check()


@pytest.mark.parametrize(
    "params",
    [{}, {"window_size": 300}, {"window_size": 200, "half_life": 150.0}, {"half_life": 25.0}],
    ids=["exact", "window", "window-half-life", "half-life"],
)
@pytest.mark.parametrize("cap", [4, 64])
def test_calibrator_learn_one_out_of_memory_loses_nothing(params, cap, monkeypatch):
    """A window's eviction comes before its add: the add must not then fail. Leaves of
    4 cells split, empty and merge all the time (the cases the reservation before an
    eviction must foresee)."""
    monkeypatch.setattr(isotonic_module._IsotonicStoreCalibrator, "_leaf_capacity", lambda self: cap)
    rng = random.Random(3)
    cal, twin = OnlineIsotonic(**params), OnlineIsotonic(**params)
    failures = 0
    for x, w, y in _events(11, 1500):
        twin.learn_one(x, y, w)
        before = cal.to_dict()
        cal._store._limit_allocations(rng.choice([0, 0, 1, 3]))
        try:
            cal.learn_one(x, y, w)
        except MemoryError:
            failures += 1
            cal._store._limit_allocations(-1)
            assert cal.to_dict() == before
            cal._store._check()
            cal.learn_one(x, y, w)
        cal._store._limit_allocations(-1)
    assert failures >= 3
    assert cal.to_dict() == twin.to_dict()
    for q in np.linspace(0.0, 1.0, 21):
        assert cal.predict_one(q) == twin.predict_one(q)


def _stream_state(stream, store):
    return [a.tolist() for a in store.cells()], [list(e) for e in stream.window_events()], stream.n_events


@pytest.mark.parametrize("seed", range(40))
def test_window_eviction_then_add_out_of_memory_changes_nothing(seed):
    """Leaves of 4 cells, few keys, weights of 1e-7 beside 1 and 2: evictions drop
    cells whose rest is negligible and re-add the window's other events of that key
    (IsotonicStream._readd), which can split a leaf, and keys move to neighbour leaves
    when the first key of a leaf goes. With no allocation allowed, every event either
    learns or changes nothing; retried with memory, the stream is its twin's."""
    from streamcal.core._isotonic_stream import IsotonicStream

    rng = random.Random(seed)
    window, half_life = rng.choice([6, 10, 20]), rng.choice([0.0, 0.0, 50.0])
    store, twin_store = IsotonicBlockStore(4), IsotonicBlockStore(4)
    stream = IsotonicStream(store, window_size=window, half_life=half_life)
    twin = IsotonicStream(twin_store, window_size=window, half_life=half_life)
    keys = [rng.random() for _ in range(8)]
    failures = 0
    for _ in range(300):
        x = rng.choice(keys) if rng.random() < 0.6 else rng.random()
        w, y = rng.choice([1.0, 1e-7, 1e-7, 2.0]), float(rng.random() < 0.5)
        twin.learn_one(x, y, w)
        before = _stream_state(stream, store)
        store._limit_allocations(0)
        try:
            stream.learn_one(x, y, w)
        except MemoryError:
            failures += 1
            store._limit_allocations(-1)
            assert _stream_state(stream, store) == before
            stream.learn_one(x, y, w)
        store._limit_allocations(-1)
        assert _stream_state(stream, store) == _stream_state(twin, twin_store)
    store._check()
    assert failures > 0
