"""The grid isotonic store (streamcal/core/_grid_pav.pyx, issue 11): bit for bit the
general store's fit (streamcal/core/_pav.pyx) and the batch PAV oracle of
tests/references.py, its invariants (``_check``) after every mutation, its cost bound by
counting operations, and OnlineIsotonic(resolution=...) using it transparently."""

import math
import pickle

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from streamcal import OnlineIsotonic
from streamcal.core._grid_pav import GridIsotonicStore
from streamcal.core.pav import IsotonicBlockStore
from tests import references as ref

# dyadic weights, some of them too far apart to share the exact regime (2**40 units)
WEIGHTS = st.sampled_from([1.0, 1.0, 1.0, 2.0, 0.5, 3.0, 0.25, 0.75, 2.0 ** -40, 2.0 ** 30, 1e3])
LABELS = st.sampled_from([0.0, 1.0, 0.0, 1.0, 0.5])


def _assert_same_fit(grid, general, K, events):
    """Step and linear read-outs at every key (and off the grid) equal the general
    store's, and the step read-out equals the batch oracle's, bit for bit."""
    fit = ref.isotonic_fit([e[0] for e in events], [e[2] for e in events],
                           [e[1] for e in events])
    for x in [-1.0] + [float(k) for k in range(K)] + [float(K)]:
        assert grid.predict_step(x) == general.predict_step(x), x
        assert grid.predict_linear(x) == general.predict_linear(x), x
        assert grid.predict_step(x) == ref.predict_step(fit, x), x


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    K=st.integers(1, 70),
    B=st.integers(2, 9),
    events=st.lists(st.tuples(st.integers(0, 69), WEIGHTS, LABELS), min_size=1, max_size=120),
    every=st.integers(1, 9),
    blocks=st.sampled_from(["never", "always", "auto"]),
)
def test_grid_store_matches_general_store_and_oracle(K, B, events, every, blocks):
    grid = GridIsotonicStore(K, leaf_capacity=B, blocks=blocks)
    general = IsotonicBlockStore(leaf_capacity=4)
    held = []
    for i, (k, w, y) in enumerate(events):
        x = float(k % K)
        if grid.add(x, w, y):
            # refused: the total would reach 2**40 units (a weight 2**-40 beside 2**30);
            # the store is unchanged (checked below against the general store)
            assert (sum(e[1] for e in held) + w) / min([w] + [e[1] for e in held]) >= 2.0 ** 39
            continue
        general.add(x, w, y)
        held.append((x, w, y))
        if i % every == 0 or i == len(events) - 1:
            grid._check()
            _assert_same_fit(grid, general, K, held)
    if not held:
        return
    xs, ws, ss, ns = grid.cells()
    gx, gw, gs, gn = general.cells()
    assert xs.tolist() == gx.tolist() and ws.tolist() == gw.tolist()
    assert ss.tolist() == gs.tolist() and ns.tolist() == gn.tolist()
    # a reload from the cells rebuilds the same tree
    other = GridIsotonicStore(K, leaf_capacity=B)
    assert other.load(xs, ws, ss, ns)
    other._check()
    assert [k for k, _, _ in other.hull()] == [k for k, _, _ in grid.hull()]
    for x in range(K):
        assert other.predict_step(x) == grid.predict_step(x)
        assert other.predict_linear(x) == grid.predict_linear(x)


@pytest.mark.parametrize("blocks", ["never", "always"])
def test_events_outside_the_exact_regime_are_refused_and_leave_the_store_as_it_was(blocks):
    grid = GridIsotonicStore(10, leaf_capacity=2, blocks=blocks)
    assert grid.add(3.0, 1.0, 1.0) == 0
    before = [a.tolist() for a in grid.cells()], grid.hull()
    # 0.1 is not a multiple of a power of two that keeps the total below 2**40 units
    for x, w, y in [(2.0, 0.1, 1.0), (2.0, 2.0 ** 41, 0.0), (2.0, 2.0 ** -600, 1.0),
                    (10.0, 1.0, 1.0), (2.5, 1.0, 1.0), (-1.0, 1.0, 0.0)]:
        assert grid.add(x, w, y) == 1
        assert ([a.tolist() for a in grid.cells()], grid.hull()) == before
        grid._check()
    assert not grid.load([1.0, 1.0], [1.0, 1.0], [0.0, 0.0], [1, 1])  # keys not increasing
    assert not grid.load([1.5], [1.0], [0.0], [1])  # off the grid


@pytest.mark.parametrize("blocks", ["never", "always"])
def test_a_finer_weight_rescales_the_units_exactly(blocks):
    grid = GridIsotonicStore(8, leaf_capacity=2, blocks=blocks)
    general = IsotonicBlockStore()
    events = [(1.0, 1.0, 1.0), (5.0, 4.0, 0.0), (2.0, 2.0 ** -20, 1.0), (6.0, 3.0, 1.0),
              (0.0, 0.5, 0.0)]
    for e in events:
        assert grid.add(*e) == 0
        general.add(*e)
        grid._check()
        _assert_same_fit(grid, general, 8, events[: events.index(e) + 1])


def _streams(n, rng):
    s = rng.random(n)
    keys = np.floor(s / 1e-3 + 0.5)
    alt = (np.arange(n) % 2).astype(float)
    return {
        "ascending": (np.floor(np.arange(n) / n / 1e-3 + 0.5), alt),
        "descending": (np.floor((1 - np.arange(n) / n) / 1e-3 + 0.5), alt),
        "all-zero": (keys, np.zeros(n)),
        "independent": (keys, (rng.random(n) < 0.5).astype(float)),
        "rare": (keys, (rng.random(n) < 0.01).astype(float)),
        "random": (keys, (rng.random(n) < s).astype(float)),
    }


@pytest.mark.parametrize("B", [2, 8, 32])
def test_cost_per_event_is_bounded_by_counting(B):
    """Every add costs at most 2B (leaf cells: the one-sided edge check, then the scan
    when it fails) + h (3 (h + 1) + 1 + 2 (h + log2 B) + 2) (per ancestor: one locate,
    the tangency tests, and when the bridge changed a descent and two locates) counted
    operations, whatever the stream: the docstring's O(B + h (h + log B)) without
    amortisation. (The tree alone: ``blocks="never"``.)"""
    rng = np.random.default_rng(0)
    K = 1001
    for name, (keys, labels) in _streams(4000, rng).items():
        grid = GridIsotonicStore(K, leaf_capacity=B, blocks="never")
        h = grid.height
        bound = 2 * B + h * (3 * (h + 1) + 1 + 2 * (h + math.ceil(math.log2(B))) + 2)
        worst = 0
        for x, y in zip(keys.tolist(), labels.tolist()):
            before = grid._op_hull
            assert grid.add(x, 1.0, y) == 0
            worst = max(worst, grid._op_hull - before)
            assert grid._op_nodes >= 0
        assert worst <= bound, (name, worst, bound)
        grid._check()


@pytest.mark.parametrize("blocks", ["never", "always"])
@pytest.mark.parametrize("heavy", [2.0 ** 29, 2.0 ** 30 - 1.0, 2.0 ** 30, 2.0 ** 31, 2.0 ** 38])
def test_leaf_hulls_across_the_64_bit_limit(heavy, blocks):
    """A leaf scan uses 64-bit cross products while its partial sums stay below 2**31
    units and 128-bit ones after: leaves whose sums cross that limit mid-scan, with
    near-collinear points (labels 0 / 1 / 0.5 beside heavy cells), give the general
    store's fit and the batch oracle's, bit for bit."""
    K, B = 16, 8
    rng = np.random.default_rng(int(heavy) % 1000)
    grid = GridIsotonicStore(K, leaf_capacity=B, blocks=blocks)
    general = IsotonicBlockStore(leaf_capacity=4)
    events = []
    for i in range(200):
        x = float(rng.integers(0, K))
        w = heavy if i % 7 == 3 else float(rng.integers(1, 4))
        y = float(rng.choice([0.0, 1.0, 0.5]))
        if grid.add(x, w, y):
            continue
        general.add(x, w, y)
        events.append((x, w, y))
        if i % 10 == 0:
            grid._check()
            _assert_same_fit(grid, general, K, events)
    assert len(events) > 100 and sum(e[1] for e in events) > 2.0 ** 31
    grid._check()
    _assert_same_fit(grid, general, K, events)


def test_kept_locates_skip_the_descents():
    """A label-1 event at a key already held, after the successor of every bridge end on
    its path (here the last key of a full tree: the event is in every ancestor's right
    child), moves no point before it: each ancestor's cached locate of its bridge end
    is kept (``_kept_locate``), except where the bridge ends at the event's cell or at
    its predecessor; the add costs the leaf scan, one tangency check per level and
    here at most one descent (h + 1 steps), where each level used to locate by descent
    (43 steps per event instead of 21 on this stream). The fit stays the general
    store's."""
    K, B = 1023, 8
    rng = np.random.default_rng(1)
    grid = GridIsotonicStore(K, leaf_capacity=B, blocks="never")
    general = IsotonicBlockStore(leaf_capacity=4)
    events = [(float(x), 1.0, float(rng.random() < x / K)) for x in range(K)]
    for e in events:
        assert grid.add(*e) == 0
        general.add(*e)
    for _ in range(50):
        before = grid._op_hull
        assert grid.add(K - 1.0, 1.0, 1.0) == 0
        general.add(K - 1.0, 1.0, 1.0)
        events.append((K - 1.0, 1.0, 1.0))
        assert grid._op_hull - before <= B + 2 * grid.height + 1
    grid._check()
    _assert_same_fit(grid, general, K, events)


@pytest.mark.parametrize("B", [3, 8])
def test_fast_adds_keep_every_hull_and_bridge_on_every_stream(B):
    """The shortcuts of an add (streamcal/core/_grid_kernels.pxd: a leaf keeping its
    vertices by the check of one side of the hull edge over the event's cell, the
    leaf scan resumed before the cell, locates kept where the changed interval misses
    them, tangency tests skipped when their points moved together) leave every leaf
    hull and every bridge as recomputed by brute force (``_check`` after every add),
    on dense keys with weights 1, 2, 0.5 and labels 0, 1, 0.5, and the general
    store's fit; and the leaf check does run (adds scanning fewer cells than a
    leaf holds)."""
    rng = np.random.default_rng(B)
    K = 40
    for name, (keys, labels) in _streams(400, rng).items():
        grid = GridIsotonicStore(K, leaf_capacity=B, blocks="never")
        general = IsotonicBlockStore(leaf_capacity=4)
        events, short = [], 0
        for i, (x, y) in enumerate(zip((keys % K).tolist(), labels.tolist())):
            w = [1.0, 2.0, 0.5][i % 3]
            y = 0.5 if i % 11 == 5 else y
            before = grid._op_hull
            assert grid.add(x, w, y) == 0
            short += grid._op_hull - before < B
            general.add(x, w, y)
            events.append((x, w, y))
            grid._check()
        _assert_same_fit(grid, general, K, events)
        assert short > 0, name


# ---------------------------------------------------------------- OnlineIsotonic


def _general_twin(cal_events, resolution, linear):
    """Predictions of the general store fed the same grid keys (what OnlineIsotonic did
    before the grid store), at every key."""
    store = IsotonicBlockStore()
    for s, y, w in cal_events:
        if w > 0:
            store.add(ref.grid_round(s, resolution), w, y)
    return store


@pytest.mark.parametrize("interpolation", ["step", "linear"])
@pytest.mark.parametrize("seed", range(4))
def test_online_isotonic_resolution_uses_the_grid_store_bit_for_bit(interpolation, seed):
    rng = np.random.default_rng(seed)
    r = 0.01
    cal = OnlineIsotonic(resolution=r, interpolation=interpolation)
    assert cal._stream.grid_store is not None
    events = []
    for t in range(600):
        s = float(rng.random()) if t % 5 else float(rng.integers(0, 3)) / 2  # ties
        y = int(rng.random() < s)
        w = float(rng.choice([1.0, 0.5, 2.0, 0.0]))
        p = cal.predict_one(s)
        store = _general_twin(events, r, interpolation == "linear")
        if store.n_cells:
            k = ref.grid_round(s, r)
            v = store.predict_linear(k) if interpolation == "linear" else store.predict_step(k)
            assert p == min(1.0, max(0.0, v))
        else:
            assert p == s
        cal.learn_one(s, y, w)
        events.append((s, y, w))
        if t % 97 == 0:
            cal._check()
    assert cal._stream.grid_store is not None
    # the batch paths are the loop's floats; snapshots keep the grid store and the fit
    s = rng.random(300)
    y = (rng.random(300) < s).astype(int)
    assert cal.predict_many(s).tolist() == [cal.predict_one(a) for a in s.tolist()]
    twins = [pickle.loads(pickle.dumps(cal)), OnlineIsotonic.from_dict(cal.to_dict())]
    loop = cal.clone()
    loop._set_state(cal._get_state())
    expect = []
    for a, b in zip(s.tolist(), y.tolist()):
        expect.append(loop.predict_one(a))
        loop.learn_one(a, b)
    got = cal.predict_learn_many(s, y)
    assert got.tolist() == expect
    for twin in twins:
        assert twin._stream.grid_store is not None
        assert twin.predict_learn_many(s, y).tolist() == expect
        assert twin.to_dict() == cal.to_dict() == loop.to_dict()


def test_weights_leaving_the_exact_regime_move_to_the_general_store():
    rng = np.random.default_rng(5)
    cal = OnlineIsotonic(resolution=0.001)
    events = []
    for t in range(400):
        s, y = float(rng.random()), int(rng.random() < 0.5)
        w = 0.1 if t == 250 else 1.0  # 0.1 has no exact representation in 2**40 units
        cal.learn_one(s, y, w)
        events.append((s, y, w))
        assert (cal._stream.grid_store is None) == (t >= 250)
    store = _general_twin(events, 0.001, False)
    for s in np.linspace(0, 1, 101).tolist():
        assert cal.predict_one(s) == min(1.0, max(0.0, store.predict_step(ref.grid_round(s, 0.001))))
    cal._check()


def test_snapshot_merge_and_learn_many_keep_the_grid_store_in_step():
    rng = np.random.default_rng(9)
    s = rng.random(2000)
    y = (rng.random(2000) < s).astype(int)
    a = OnlineIsotonic(resolution=1e-3)
    a.learn_many(s[:1000], y[:1000])   # a batch refit through the general store
    a.learn_many(s[1000:1010], y[1000:1010])   # a short batch: the loop
    b = OnlineIsotonic(resolution=1e-3)
    for u, v in zip(s[:1010].tolist(), y[:1010].tolist()):
        b.learn_one(u, v)
    probe = np.linspace(0, 1, 201)
    assert a.predict_many(probe).tolist() == b.predict_many(probe).tolist()
    assert a._stream.grid_store is not None
    a._check()
    m = a.merge(b) if hasattr(a, "merge") else a._merge(b)
    m._check()
    c = OnlineIsotonic(resolution=1e-3)
    for u, v in zip(list(s[:1010]) * 2, list(y[:1010]) * 2):
        c.learn_one(u, v)
    assert m.predict_many(probe).tolist() == c.predict_many(probe).tolist()
    # learning after a restore goes on in the grid store, as in the original
    d = OnlineIsotonic.from_dict(a.to_dict())
    assert d.predict_learn_many(s[1010:], y[1010:]).tolist() == a.predict_learn_many(s[1010:], y[1010:]).tolist()
    assert d.to_dict() == a.to_dict()
