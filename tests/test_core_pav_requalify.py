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
