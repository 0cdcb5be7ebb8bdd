"""The read-only hypothetical query of the compiled isotonic block store
(``streamcal/core/_pav_query.pxd``): the step fit at ``x`` had one event ``(x, w, y)``
been added, found from the tree's bridges without inserting anything.

Where its guards hold (exact coordinates: dyadic weights, the new total below
``2**(qexp + 53)``; no hull ever computed without them since the last rebuild) it must
give the floats of the insert-read-restore path (``k_hypothetical``) bit for bit, and
both must be the correctly rounded value of exact isotonic regression (PAV in
Fractions, the textbook stack of ``tests/references.pav_cells``) of the cells plus the
event. Elsewhere it must decline (the store then inserts and restores). Stores are
random: ties, dyadic weights from 2**-40 to 2**40 and extreme ones (2**-900, 2**900),
removals, leaf capacity 4 (deep trees) to 128; queries at stored keys, new keys, below
and above every key, with labels 0, 1 and in between, weights 1, 2, 0.5, 3 and others.
"""

import math
import random
from fractions import Fraction

import pytest

from streamcal.core import _pav_ops
from streamcal.core.pav import IsotonicBlockStore


def _exact_value(store, x, w, y):
    """Exact PAV (Fractions) of the store's cells plus the event ``(x, w, y)``, the
    value of the block holding ``x``, rounded once to a float."""
    xs, ws, ss, _ = store.cells()
    cells = {k: [Fraction(a), Fraction(b)] for k, a, b in zip(xs.tolist(), ws.tolist(), ss.tolist())}
    cell = cells.setdefault(x, [Fraction(0), Fraction(0)])
    cell[0] += Fraction(w)
    cell[1] += Fraction(w * y)  # the store adds the rounded product, as here
    blocks = []  # [W, S, last key]
    for k in sorted(cells):
        blocks.append([cells[k][0], cells[k][1], k])
        while len(blocks) > 1 and blocks[-2][1] * blocks[-1][0] >= blocks[-1][1] * blocks[-2][0]:
            w2, s2, k2 = blocks.pop()
            blocks[-1][0] += w2
            blocks[-1][1] += s2
            blocks[-1][2] = k2
    for W, S, last in blocks:
        if x <= last:
            return float(S / W)
    raise AssertionError("x beyond the last block")


def _random_store(rng, cap, n, keys, weights):
    store = IsotonicBlockStore(cap)
    events = []
    for _ in range(n):
        x = rng.random() if keys == "float" else rng.randrange(keys) / keys
        if weights == "unit":
            w = 1.0
        elif weights == "dyadic":
            w = 2.0 ** rng.randint(-40, 40)
        elif weights == "extreme":
            w = 2.0 ** rng.choice([-900, -3, 0, 5, 900])
        else:
            w = float(rng.randint(1, 9))
        y = float(rng.random() < x) if rng.random() < 0.9 else rng.choice([0.25, 0.5])
        store.add(x, w, y)
        events.append((x, w, y))
        if events and rng.random() < 0.15:
            gone = events.pop(rng.randrange(len(events)))
            if store.remove(*gone):  # the cell dropped with others (see remove): re-add them
                for e in events:
                    if e[0] == gone[0]:
                        store.add(*e)
    return store


def _queries(rng, store):
    xs = store.cells()[0].tolist()
    picked = rng.sample(xs, min(len(xs), 12)) if xs else []
    return picked + [-1.0, 2.0, 0.0, 1.0] + [rng.random() for _ in range(8)]


@pytest.mark.parametrize("seed", range(40))
def test_readonly_query_is_the_insert_restore_path_bit_for_bit(seed):
    rng = random.Random(seed)
    cap = rng.choice([4, 4, 5, 8, 64, 128])
    keys = rng.choice(["float", 7, 40])
    weights = rng.choice(["unit", "unit", "int", "dyadic", "extreme"])
    store = _random_store(rng, cap, rng.choice([1, 3, 30, 200, 600]), keys, weights)
    before = (store.to_lists(), store._op_nodes, store._op_hull, store._op_moved)
    answered = 0
    for x in _queries(rng, store):
        for w in (1.0, 2.0, 0.5, 3.0, 2.0 ** -45):
            for y in (0.0, 1.0, 0.5, 0.25):
                got, want = _pav_ops.hypothetical_paths(store, x, w, y)
                if got is None:
                    continue
                answered += 1
                assert got.hex() == want.hex(), (x, w, y, got, want)
                assert got == _exact_value(store, x, w, y), (x, w, y)
            got, want = _pav_ops.hypothetical_paths(store, x, w, 0.0, pair=True)
            if got is not None:
                assert [v.hex() for v in got] == [v.hex() for v in want], (x, w, got, want)
    # the insert-restore path ran after each query: the query itself changed nothing
    # and needed nothing to change (the counters compared once both paths are done)
    assert store.to_lists() == before[0]
    store._check()
    if weights in ("unit", "int") and not store._inexact and store.n_cells:
        assert answered > 0
        # read-only: no tree node touched
        counters = (store._op_nodes, store._op_hull, store._op_moved)
        q = store._op_query
        queries = _queries(rng, store)
        for x in queries:
            store.hypothetical_value(x, 1.0, 1.0)
        assert (store._op_nodes, store._op_hull, store._op_moved) == counters
        assert store._op_query == q + len(queries)


@pytest.mark.parametrize("cap", [4, 64, 128])
def test_readonly_query_declines_without_exact_coordinates(cap):
    """A weight or label sum whose lowest bit would put the total past 2**53 of its
    units (weight 0.1 or label 0.3 among unit weights), a total past 2**53 units, or a
    store whose coordinates are not exact (non-dyadic weights): the query declines,
    and the store inserts and restores. A weight of 0.5 among unit weights is exact
    (the units halve, as the insertion would halve them). A
    hull once computed without exact coordinates turns the query off (``_inexact``)
    until the store is rebuilt."""
    rng = random.Random(cap)
    store = IsotonicBlockStore(cap)
    for _ in range(300):
        store.add(rng.random(), 1.0, float(rng.random() < 0.5))
    assert not store._inexact
    assert _pav_ops.hypothetical_paths(store, 0.5, 1.0, 1.0)[0] is not None
    assert _pav_ops.hypothetical_paths(store, 0.5, 0.5, 0.5)[0] is not None
    assert not store._inexact
    # declined, and the insertion of its event makes the path's coordinates inexact
    # (the total past 2**53 units of its lowest bit): their hulls are so computed
    for w, y in [(1.0, 0.3), (0.1, 1.0), (2.0 ** -60, 1.0), (2.0 ** 60, 1.0)]:
        store.rebuild(*store.cells())
        assert _pav_ops.hypothetical_paths(store, 0.5, w, y)[0] is None
        assert store._inexact
    assert _pav_ops.hypothetical_paths(store, 0.5, 1.0, 1.0)[0] is None
    store.rebuild(*store.cells())
    assert not store._inexact
    assert _pav_ops.hypothetical_paths(store, 0.5, 1.0, 1.0)[0] is not None
    odd = IsotonicBlockStore(cap)
    for _ in range(50):
        odd.add(rng.random(), 0.1, 1.0)
    assert odd._inexact
    assert _pav_ops.hypothetical_paths(odd, 0.5, 1.0, 1.0)[0] is None


def test_readonly_query_on_tiny_stores():
    """Empty store: no query (the label itself, the cold start); one cell, a query at
    it, below it and above it; ties of the query with the cell."""
    store = IsotonicBlockStore(4)
    assert _pav_ops.hypothetical_paths(store, 0.5, 1.0, 1.0) == (None, None)
    assert store.hypothetical_value(0.5, 1.0, 0.0) == 0.0
    store.add(0.5, 1.0, 1.0)
    for x in (0.25, 0.5, 0.75):
        for y in (0.0, 1.0):
            got, want = _pav_ops.hypothetical_paths(store, x, 1.0, y)
            assert got is not None and got.hex() == want.hex()
            assert got == _exact_value(store, x, 1.0, y)
    assert store.hypothetical_value(0.5, 1.0, 0.0) == 0.5
    assert store.hypothetical_value(0.75, 1.0, 0.0) == 0.5  # pooled with 0.5's label 1
    assert store.hypothetical_value(0.25, 1.0, 1.0) == 1.0


@pytest.mark.parametrize("seed", range(6))
def test_readonly_query_far_from_the_current_blocks(seed):
    """Long monotone runs (one block of hundreds of cells, the label-1 query at its
    start pooling across many leaves) and alternating labels (many small blocks):
    every key queried both ways, capacity 4."""
    rng = random.Random(seed)
    store = IsotonicBlockStore(4)
    n = 300
    for i in range(n):
        if seed % 2:
            y = 0.0 if i < n - 3 else 1.0  # one block of label 0, three 1s at the end
        else:
            y = float(i % 2)
        store.add(i / n, 1.0, y)
    for x in store.cells()[0].tolist()[:: 1 + seed] + [rng.random() for _ in range(30)]:
        for y in (0.0, 1.0):
            got, want = _pav_ops.hypothetical_paths(store, x, 1.0, y)
            assert got is not None and got.hex() == want.hex(), (x, y)
            assert got == _exact_value(store, x, 1.0, y)
    assert math.isfinite(store.hypothetical_value(0.5, 1.0, 1.0))
