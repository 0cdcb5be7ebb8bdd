"""Exponential forgetting over very long horizons: no overflow, no underflow, no NaN.

A stream of 10**8 events cannot run in a test, but what could break over one is the
exponent of the newest weight, 10**8 / half_life, and the renormalisations that keep it
bounded. A tiny half-life pushes the exponent through 10**8 half-lives in 10**5 events,
far beyond the range of a double (2**1024), through the same code paths.
"""

import math

import numpy as np
import pytest

from streamcal import OnlineIsotonic
from tests import references as ref


def _stream(n, seed):
    rng = np.random.default_rng(seed)
    s = np.round(rng.random(n), 2)
    y = (rng.random(n) < s**2).astype(int)
    return s.tolist(), y.tolist()


@pytest.mark.parametrize("half_life", [1e-3, 0.01, 0.7])
@pytest.mark.parametrize("window_size", [None, 7])
def test_exponent_far_beyond_double_range_stays_finite_and_exact(half_life, window_size):
    cal = OnlineIsotonic(half_life=half_life, window_size=window_size)
    s, y = _stream(20_000, seed=1)
    for i, (a, b) in enumerate(zip(s, y)):
        cal.learn_one(a, b)
        if i % 997 == 0:
            cal._check()
            for q in (0.0, 0.33, 1.0):
                p = cal.predict_one(q)
                assert math.isfinite(p) and 0.0 <= p <= 1.0
            p0, p1 = cal.predict_interval_one(a)
            assert 0.0 <= p0 <= p1 <= 1.0
    assert cal.n_events / half_life > 2 * 1024  # the exponent went beyond the double range
    # The fit equals the weighted oracle on the recent events: with these half-lives the
    # weight of anything older than 60 events is below 2**-85 of the newest, far below
    # the 1e-12 tolerance, so the oracle on the last 60 events is exact to rounding.
    tail = 60 if window_size is None else window_size
    ages = np.arange(tail)[::-1]
    weights = 2.0 ** (-ages / half_life)
    fit = ref.isotonic_fit(s[-tail:], y[-tail:], weights.tolist())
    for q in np.linspace(0, 1, 21).tolist() + s[-tail:]:
        assert cal.predict_one(q) == pytest.approx(ref.predict_step(fit, q), abs=1e-12)


def test_renormalisation_keeps_block_values_bit_for_bit():
    cal = OnlineIsotonic(half_life=2.0)
    s, y = _stream(3000, seed=2)
    for a, b in zip(s, y):
        cal.learn_one(a, b)
    # 3000 events at half-life 2 cross the renormalisation threshold (512 half-lives)
    assert cal._t_ref > 0
    cal._check()
    # a renormalisation alone (no event) changes no value
    values = list(cal._store._values)
    cal._store.scale_by_power_of_two(-300)
    assert cal._store._values == values
    cal._store.scale_by_power_of_two(300)
    cal._check()


def test_window_with_weights_beyond_double_precision():
    """Weights 1e20 apart: removing the heavy event of a cell leaves sums that rounding
    has wiped out; the calibrator re-adds the light events and stays exact."""
    cal = OnlineIsotonic(window_size=3)
    cal.learn_one(0.5, 1, 1e20)
    cal.learn_one(0.5, 0, 1.0)
    cal.learn_one(0.2, 1, 1.0)
    cal.learn_one(0.9, 1, 1.0)  # evicts the heavy event
    cal._check()
    fit = ref.isotonic_fit([0.5, 0.2, 0.9], [0, 1, 1], [1.0, 1.0, 1.0])
    for q in (0.1, 0.2, 0.5, 0.7, 0.9, 1.0):
        assert cal.predict_one(q) == ref.predict_step(fit, q)


def _near_tie_stream(seed, n):
    """Scores on a coarse grid, repeated in pairs, labels alternating 0, 1 in 95% of
    the events: with forgetting (no exact coordinates) many hull points are collinear
    within rounding, the bridge tests' near-ties."""
    rng = np.random.default_rng(seed)
    s = np.repeat(rng.integers(0, 30, n // 2) / 32, 2)
    y = (rng.random(n) < 0.3 + 0.5 * s).astype(int)
    alternate = rng.random(n) < 0.95
    y[alternate] = (np.arange(n) % 2)[alternate]
    return s.tolist(), y.tolist()


@pytest.mark.parametrize(
    "seed, window_size, half_life",
    [(1148, 37, 5.0), (0, 37, 5.0), (0, None, 5.0), (1, 37, 5.0), (4, 37, 5.0)],
)
def test_bridge_ends_stay_on_the_childrens_hulls_under_near_ties(monkeypatch, seed, window_size, half_life):
    """A bridge descent without exact coordinates may call a near-tie either way; it
    must still end on vertices of its children's hulls. (Before the descent kept to the
    keys its ancestors' hulls keep, the first case ended on a leaf vertex that its
    parent's bridge passes over: ``_check`` failed at event 274 with "vertex counts
    (2, 1) != ranks (2, 2)", leaves of 8 cells.)"""
    import streamcal.calibrators.isotonic as isotonic_module

    monkeypatch.setattr(isotonic_module._IsotonicStoreCalibrator, "_leaf_capacity", lambda self: 8)
    s, y = _near_tie_stream(seed, 800)
    cal = OnlineIsotonic(window_size=window_size, half_life=half_life)
    events = []
    for a, b in zip(s, y):
        cal.learn_one(a, b)
        events.append((a, b, 1.0))
        cal._check()
    fit = ref.isotonic_fit(*ref.online_isotonic_sample(events, window_size=window_size, half_life=half_life))
    for q in np.arange(33).tolist():
        assert cal.predict_one(q / 32) == pytest.approx(ref.predict_step(fit, q / 32), abs=1e-12)


def _fixed_point_stream(seed, n, kind):
    """Scores on a grid of 1/32 (descending, or repeated in pairs), labels alternating
    in 95% of the events: with a half-life of 0.3 events, each cell's mean label sits
    within a few units of roundoff of one fixed point, r / (1 + r) with r = 2**(1/0.3),
    while the weights span 2**500: near-ties beside light, steep stretches."""
    rng = np.random.default_rng(seed)
    if kind == "descending":
        s = np.sort(rng.integers(0, 33, n) / 32)[::-1]
    else:
        s = np.repeat(rng.integers(0, 30, (n + 1) // 2) / 32, 2)[:n]
    y = (rng.random(n) < 0.3 + 0.5 * s).astype(int)
    alternate = rng.random(n) < 0.95
    y[alternate] = (np.arange(n) % 2)[alternate]
    return [(float(a), int(b), 1.0) for a, b in zip(s, y)]


def _run_against_oracle(monkeypatch, events, capacity, check=True):
    import streamcal.calibrators.isotonic as isotonic_module

    monkeypatch.setattr(isotonic_module._IsotonicStoreCalibrator, "_leaf_capacity", lambda self: capacity)
    cal = OnlineIsotonic(half_life=0.3)
    for i, event in enumerate(events):
        cal.learn_one(*event)
        if check:
            cal._check()
        fit = ref.isotonic_fit(*ref.online_isotonic_sample(events[: i + 1], half_life=0.3))
        for q in range(33):
            assert cal.predict_one(q / 32) == pytest.approx(ref.predict_step(fit, q / 32), abs=1e-12), (i, q / 32)


@pytest.mark.parametrize("seed, capacity", [(979934, 8), (454789, 4)])
def test_a_light_steep_stretch_beside_near_ties_keeps_its_block(monkeypatch, seed, capacity):
    """The bridge descent met a left edge and a right edge parallel within the tie band
    with the right one strictly above: it went left, read the two as one line, and
    pooled a block of 2**-70 of the weight and value 0.99 into its neighbour of value
    0.91 (predictions 0.9097 against the oracle's 0.9991 at event 57 of the first
    stream). Found by an outside fuzz; the bridge now goes right there."""
    _run_against_oracle(monkeypatch, _fixed_point_stream(seed, 150, "descending"), capacity)


@pytest.mark.xfail(strict=True, reason=(
    "known gap: adjacent blocks whose values differ by a few units of roundoff are not "
    "always pooled without exact coordinates (_check: 'values not strictly increasing', "
    "0.9097421473884828 then 0.9097421473884827 at event 67); predictions still agree "
    "with the oracle (the next test)"))
def test_near_tie_blocks_are_pooled_under_forgetting(monkeypatch):
    _run_against_oracle(monkeypatch, _fixed_point_stream(515626, 150, "pairs"), 6)


def test_near_tie_blocks_predict_as_the_oracle(monkeypatch):
    _run_against_oracle(monkeypatch, _fixed_point_stream(515626, 150, "pairs"), 6, check=False)


@pytest.mark.xfail(strict=True, reason=(
    "known gap: the tie band's decisions fit no single point set; at event 110 the cells "
    "0.1875 and 0.21875 join the block of value 0.9097 instead of the one of 9.5e-08 "
    "(outside fuzz, 3 of 16,717 streams of this kind after the parallel-edge rule, 32 of "
    "8,015 before it)"))
def test_near_tie_light_cells_keep_their_block(monkeypatch):
    _run_against_oracle(monkeypatch, _fixed_point_stream(989651, 150, "pairs"), 5, check=False)
