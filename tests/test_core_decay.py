"""``streamcal.core.decay``: the one forgetting clock of ECE and the isotonic stream
(issue 14, part A).

The compiled stores inline the clock's per-event arithmetic; these tests check that
their clock (``t``, ``t_ref``, ``phase``), the weights they store and the weights they
report are those of the functions in :mod:`streamcal.core.decay`, and that the weights
relative to the newest event are the decayed weights of the slow oracles.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from streamcal import OnlineIsotonic, VennAbers
from streamcal.core import decay
from streamcal.metrics import ECE
from tests import references as ref
from tests import references_metrics as RM


@pytest.mark.parametrize("half_life", [0.7, 1.0, 3.0, 20.0])
@pytest.mark.parametrize("strategy", ["uniform", "quantile"])
def test_ece_clock_is_the_decay_clock(half_life, strategy):
    rng = np.random.default_rng(int(half_life * 10))
    m = ECE(n_bins=1, strategy=strategy, half_life=half_life)
    store = m._store
    renormalised = 0
    for _ in range(300):
        t, t_ref, phase = store.t, store.t_ref, store.phase
        e = decay.clock_exponent(t, t_ref, half_life, phase)
        before = store.weight
        m.update(int(rng.random() < 0.5), float(rng.random()), 1.0)
        if e >= decay.METRIC_RENORM_EXPONENT:
            # renormalised by floor(e): the new event is stored at 2 ** (e - floor(e))
            renormalised += 1
            assert (store.t_ref, store.phase) == decay.renormalised_clock(t, e, math.floor(e))
            assert store.phase == e - math.floor(e)
        else:
            assert (store.t_ref, store.phase) == (t_ref, phase)
            if strategy == "uniform":
                added = store.bin_lists()[0][0] - before
                assert math.isclose(added, 2.0**e, rel_tol=1e-12)
        assert store.t == t + 1
        assert m._unit() == decay.weight_scale(store.t, store.t_ref, half_life, store.phase)
    assert (renormalised > 0) == (300 > half_life * decay.METRIC_RENORM_EXPONENT)


@pytest.mark.parametrize("half_life", [1.0, 5.0])
def test_ece_weights_relative_to_the_newest_are_the_decayed_weights(half_life):
    rng = np.random.default_rng(1)
    n = 200
    p, w = rng.random(n), rng.choice([0.0, 0.5, 1.0, 2.0], n)
    m = ECE(n_bins=1, half_life=half_life)
    for pi, wi in zip(p, w):
        m.update(1, float(pi), float(wi))
    expected = RM.decayed_weights(w, half_life)
    kept = expected > 2.0**-decay.METRIC_RENORM_EXPONENT * expected.sum()
    (b,) = m.bins
    np.testing.assert_allclose(b.weight, expected[kept].sum(), rtol=1e-9)


@pytest.mark.parametrize("klass", [OnlineIsotonic, VennAbers])
@pytest.mark.parametrize("half_life", [0.5, 2.0, 30.0])
@pytest.mark.parametrize("window_size", [None, 15])
def test_isotonic_clock_is_the_decay_clock(klass, half_life, window_size):
    rng = np.random.default_rng(7)
    cal = klass(half_life=half_life, window_size=window_size)
    stream = cal._stream
    for i in range(400):
        # heavy and light weights force renormalisations both ways
        w = float(rng.choice([1.0, 1e-295, 1e160, 0.0, 3.0]))
        t, t_ref, phase = stream.n_events, stream.t_ref, stream.phase
        e = decay.clock_exponent(t, t_ref, half_life, phase)
        assert stream.next_weight() == 2.0 ** min(e, 1000.0)
        try:
            cal.learn_one(float(rng.random()), int(rng.random() < 0.5), w)
        except ValueError:  # 1e160 beside 1e-295: refused, the clock unchanged
            assert (stream.n_events, stream.t_ref, stream.phase) == (t, t_ref, phase)
            continue
        if (stream.t_ref, stream.phase) != (t_ref, phase):
            # renormalised at this event by an integer shift
            assert stream.t_ref == t
            shift = e - stream.phase
            assert shift == int(shift)
            assert (stream.t_ref, stream.phase) == decay.renormalised_clock(t, e, int(shift))
        assert stream.weight_scale() == decay.weight_scale(
            stream.n_events, stream.t_ref, half_life, stream.phase
        )
    assert stream.t_ref > 0  # the extreme weights renormalised at least once


def test_isotonic_blocks_weigh_the_decayed_weights():
    rng = np.random.default_rng(3)
    n, half_life = 120, 4.0
    x, y, w = rng.random(n), (rng.random(n) < 0.5).astype(float), rng.choice([1.0, 2.0], n)
    cal = OnlineIsotonic(half_life=half_life)
    for xi, yi, wi in zip(x, y, w):
        cal.learn_one(float(xi), yi, float(wi))
    expected = ref.decayed_weights(w, half_life)
    np.testing.assert_allclose(sum(b.weight for b in cal.blocks), np.sum(expected), rtol=1e-9)


def test_the_functions_are_the_documented_formulas():
    assert decay.clock_exponent(10, 4, 3.0, 0.5) == 6 / 3.0 + 0.5
    assert decay.weight_scale(11, 4, 3.0, 0.5) == 2.0 ** -(6 / 3.0 + 0.5)
    assert decay.renormalised_clock(12, 70.5, 70) == (12, 0.5)
    # the metrics drop below 2 ** -64 of the total; isotonic keeps down to 2 ** -1000
    assert decay.METRIC_RENORM_EXPONENT < decay.ISOTONIC_RENORM_EXPONENT
    assert decay.ISOTONIC_FORGET_EXPONENT == 1000
