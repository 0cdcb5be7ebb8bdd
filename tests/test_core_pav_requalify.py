"""The compiled isotonic block store stays a function of its cells and its scale of
exact coordinates (``exactness_scale``) when that scale changes
(``streamcal/core/_pav_requalify.pxd``).

Whether a node's coordinates are exact decides how its hull is found: exact tests, or
the inexact ones whose tie band pools two edges whose slopes agree to within a few units
of roundoff. Before, a weight finer than any held (the scale falls), a hypothetical
event's restore or a scaling out of the range of exact scales changed that for nodes off
the updated path without recomputing them: ``_check()`` failed ("leaf hull size",
"bridge") and a pickled copy, rebuilt afresh, could predict another float.
"""

import pickle
import random

import numpy as np
import pytest

from streamcal import OnlineIsotonic
from streamcal.core.pav import IsotonicBlockStore

# Two cells whose slopes differ by 2**-49 relative (the first cell 1 + 2**-49 heavy, sum
# 1; the second of label 1): a near-tie the exact tests keep apart and the inexact
# ones pool.
_NEAR_TIE = [(0.1, 1.0, 1.0), (0.1, 2.0**-49, 0.0), (0.2, 2.0**-13, 1.0)]


def _store(events, cap=4):
    store = IsotonicBlockStore(leaf_capacity=cap)
    for e in events:
        store.add(*e)
        store._check()
    return store


def test_a_finer_weight_elsewhere_requalifies_the_leaves_it_did_not_touch():
    # the leaf of 0.1 and 0.18 is exact until 2**-56 arrives in the other leaf
    store = _store([
        (0.1, 1.0, 1.0), (0.2, 2.0**-37, 1.0), (0.3, 2.0**-18, 0.0), (0.1, 2.0**-49, 0.0),
        (0.18177732668488744, 2.0**-13, 1.0),
    ])
    assert store.exactness_scale == -49
    store.add(0.7, 2.0**-56, 0.0)
    assert store.exactness_scale == -56
    store._check()  # was: "leaf hull size"


@pytest.mark.parametrize("exponent", [-1000, -1020])
def test_scaling_out_of_the_exact_range_and_back(exponent):
    # the scale falls below 2**-1000, where no coordinates are taken as exact (their
    # products would underflow); no cell underflows (the finest bit is 2**-1069)
    store = _store(_NEAR_TIE)
    assert [b.value for b in store.blocks()] == [(2.0**52 - 8) / (2.0**52), 1.0]
    store.scale_by_power_of_two(exponent)
    store._check()  # was: "leaf hull size"
    assert len(store.blocks()) == 1  # the near-tie pooled, as a rebuild pools it
    store.scale_by_power_of_two(-exponent)
    store._check()
    assert len(store.blocks()) == 2


def test_a_finer_hypothetical_event_leaves_the_tree_as_it_was():
    store = _store(_NEAR_TIE + [(0.5, 1.0, 0.0), (0.6, 1.0, 1.0)])
    values = [b.value for b in store.blocks()]
    store.hypothetical_value(0.55, 2.0**-60, 1.0)  # exact coordinates lost meanwhile
    assert store.exactness_scale == -49
    store._check()
    assert [b.value for b in store.blocks()] == values


@pytest.mark.parametrize("span", [60, 120])
def test_wide_dyadic_weights_check_and_restore_bit_for_bit(span):
    """Dyadic weights across ``span`` binades, leaves of 4, 5 and 8 cells: ``_check()``
    after every add, scaling and hypothetical fit, and the pickled copy (rebuilt with
    the same scale) predicts the same floats. Seeds 709 and 748 (span 60) predicted
    other floats (by 8e-16) after a pickle before."""
    grid = [i / 200 for i in range(201)]
    for seed in list(range(60)) + [709, 748]:
        rng = random.Random(seed)
        store = IsotonicBlockStore(leaf_capacity=rng.choice([4, 5, 8]))
        exponent = 0
        for _ in range(rng.choice([10, 50, 300])):
            r = rng.random()
            x = rng.choice([0.1, 0.2, 0.3, 0.5, 0.7, rng.random()])
            w = 2.0 ** (exponent + rng.randint(-span, 5)) * rng.choice([1, 1, 1, 3, 5])
            y = float(rng.random() < 0.5)
            if r < 0.05:
                k = rng.choice([-40, -3, 3, 40])
                exponent += k
                store.scale_by_power_of_two(k)
            elif r < 0.2 and len(store):
                store.hypothetical_value(x, w, y)
            else:
                store.add(x, w, y)
            store._check()
        copy = pickle.loads(pickle.dumps(store))
        assert copy.exactness_scale == store.exactness_scale
        copy._check()
        assert [copy.predict_step(x) for x in grid] == [store.predict_step(x) for x in grid], seed


def test_snapshots_keep_the_scale_their_store_had():
    cal = OnlineIsotonic(window_size=3)
    for i in range(8):  # the 2**-56 event leaves the window; its scale stays
        cal.learn_one(i / 10, i % 2, 2.0**-56 if i == 2 else 1.0)
    assert cal._stream.store.exactness_scale == -56
    copies = [OnlineIsotonic.from_dict(cal.to_dict()), pickle.loads(pickle.dumps(cal))]
    for s, y in [(0.15, 1), (0.95, 0), (0.35, 1), (0.05, 0)]:
        cal.learn_one(s, y, 2.0**-20)
        for copy in copies:
            copy.learn_one(s, y, 2.0**-20)
            assert copy.to_dict() == cal.to_dict()
    assert cal._stream.store.exactness_scale == -56


def test_a_merge_keeps_the_finer_scale_of_the_two():
    a, b, both = OnlineIsotonic(), OnlineIsotonic(), OnlineIsotonic()
    for i in range(20):
        s, y, w = i / 20, i % 2, (2.0**-70 if i == 7 else 3.0)
        (a if i < 10 else b).learn_one(s, y, w)
        both.learn_one(s, y, w)
    merged = a.merge(b)
    assert merged._stream.store.exactness_scale == both._stream.store.exactness_scale == -70
    assert merged.to_dict()["state"] == both.to_dict()["state"]


def test_learn_many_leaves_the_scale_the_loop_leaves():
    rng = np.random.default_rng(3)
    s, y = rng.random(400), (rng.random(400) < 0.5).astype(float)
    w = np.ldexp(1.0, rng.integers(-70, 0, 400))
    loop, many = OnlineIsotonic(), OnlineIsotonic()
    for i in range(400):
        loop.learn_one(float(s[i]), int(y[i]), float(w[i]))
    many.learn_many(s, y, w)
    assert many._stream.store.exactness_scale == loop._stream.store.exactness_scale
    assert many.to_dict() == loop.to_dict()


def test_a_prior_finer_than_the_cells_recomputes_only_its_paths():
    """A prior of strength 0.3 (label sums 0.15, bits down to 2**-55) on unit weights
    lowers the scale for each read and puts it back: the nodes recomputed are the
    paths', not the tree (the first version of this change recomputed every node,
    twice per read: 4 ms per ``predict_one`` at 10^5 cells)."""
    rng = np.random.default_rng(0)
    s = rng.random(20_000)
    cal = OnlineIsotonic(prior_strength=0.3)
    cal.learn_many(s, (rng.random(20_000) < s).astype(float))
    store = cal._stream.store
    before = store._op_nodes
    for x in rng.random(50):
        cal.predict_one(float(x))
    assert (store._op_nodes - before) / 50 < 100  # about 4 paths of ~9 nodes
    assert store.exactness_scale == 0
    cal._check()


def test_a_hypothetical_that_splits_a_leaf_leaves_it_requalified():
    # leaves of 4: the hypothetical event splits a full leaf, whose other half is
    # built under the lowered scale; it must follow the scale put back
    for seed in range(40):
        rng = random.Random(seed)
        store = _store([(rng.random(), 1.0 + 2.0**-49 * rng.randint(0, 3), float(rng.random() < 0.5))
                        for _ in range(60)])
        for _ in range(20):
            store.hypothetical_value(rng.random(), 2.0 ** rng.randint(-80, -40), 1.0)
            store._check()


def test_the_scale_stays_a_double_s_under_forgetting_with_a_window():
    # each renormalisation scales the cells down; with a window nothing coarsens the
    # scale again, which drifted without bound (a snapshot refused, then an int
    # overflow): it stops at 2**-1074, the finest bit of any double
    cal = OnlineIsotonic(window_size=5, half_life=0.1)
    rng = np.random.default_rng(0)
    s = rng.random(20_000)
    cal.learn_many(s, (rng.random(20_000) < s).astype(float))
    assert cal._stream.store.exactness_scale == -1074
    assert OnlineIsotonic.from_dict(cal.to_dict()).to_dict() == cal.to_dict()
    cal._check()


@pytest.mark.parametrize("bad", [-10**30, "a", float("-inf"), -2.5, True, -1075, 1024])
def test_rebuild_refuses_a_bad_scale_before_changing_anything(bad):
    store = _store([(0.5, 1.0, 1.0), (0.7, 2.0, 0.0)])
    before = store.to_lists()
    with pytest.raises(ValueError, match=r"'qexp' argument of IsotonicBlockStore.rebuild"):
        store.rebuild(*store.cells(), qexp=bad)
    assert store.to_lists() == before
    store._check()


def test_corp_keeps_the_scale_through_snapshots_and_merges():
    from streamcal.metrics import CORP

    events = [(1, 0.1, 1.0), (0, 0.1, 2.0**-49), (1, 0.2, 2.0**-13), (1, 0.5, 1.0),
              (0, 0.5, 2.0**-60)]
    whole, a, b = CORP(), CORP(), CORP()
    for i, (y, p, w) in enumerate(events):
        whole.update(y, p, w)
        (a if i < 4 else b).update(y, p, w)
    merged = a.merge(b)
    assert merged.to_dict()["state"] == whole.to_dict()["state"]
    restored = CORP.from_dict(whole.to_dict())
    assert restored.to_dict() == whole.to_dict()
    plain = CORP()
    for y, p, w in [(1, 0.1, 2.0), (0, 0.3, 4.0), (1, 0.6, 2.0)]:
        plain.update(y, p, w)
    old = plain.to_dict()
    del old["state"]["exactness_scale"]  # written before the entry existed
    assert CORP.from_dict(old).to_dict() == plain.to_dict()  # the cells' scale: 2**1


def test_a_grid_store_learns_a_batch_as_the_loop_and_merges_as_one_object():
    events = [(0.1, 1, 1.0), (0.1, 0, 2.0**-49), (0.2, 1, 2.0**-13), (0.5, 1, 1.0),
              (0.5, 0, 2.0**-60)] + [(0.7, 1, 1.0)] * 12
    s, y, w = (np.array(c, dtype=float) for c in zip(*events))
    loop, many = OnlineIsotonic(resolution=0.01), OnlineIsotonic(resolution=0.01)
    for e in events:
        loop.learn_one(*e)
    many.learn_many(s, y, w)
    assert many.to_dict() == loop.to_dict()
    assert many.predict_one(0.1) == loop.predict_one(0.1)
    a, b, both = (OnlineIsotonic(resolution=0.1) for _ in range(3))
    for o in (a, both):
        o.learn_one(0.2, 1)
    for o in (b, both):
        o.learn_one(0.2, 1)
    assert a.merge(b).to_dict() == both.to_dict()
