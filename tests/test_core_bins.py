"""``streamcal.core.bins``: the one home of the bin and edge rules (issue 14, part A).

Every rule is compared with the slow oracles of ``tests/references*.py`` (the rules the
metrics and calibrators were written against), and every compiled fast path that
inlines a rule (``core/_binning.pyx``, ``core/_calibeating.pyx``,
``metrics/_kernels.pyx``) with the home function, on scores that include 0, 1, every
edge ``i / n`` and the floats either side of it.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from streamcal.core import _calibeating
from streamcal.core import bins as B
from streamcal.core._binning import Int64Binner
from streamcal.core.binning import HistogramBinner
from streamcal.metrics import ECE, MurphyDecomposition, Sharpness
from streamcal.metrics._functional import _bin_indices
from tests import references_binning as RB
from tests import references_calibeating as RC
from tests import references_metrics as RM
from tests import references_multiclass as RMC

N_BINS = [1, 2, 3, 5, 7, 10, 13, 20, 49, 100]

unit_floats = st.floats(0.0, 1.0, allow_nan=False)


def _edge_scores(n_bins: int, seed: int = 0, n_random: int = 300) -> list[float]:
    """0, 1, the smallest and largest floats inside, every edge ``i / n`` and the floats
    either side of it (also those of ``np.linspace``'s edges), and random scores."""
    values = [0.0, 1.0, 5e-324, 2.2250738585072014e-308, 1.0 - 2**-53]
    for i in range(n_bins + 1):
        for e in (i / n_bins, float(np.linspace(0.0, 1.0, n_bins + 1)[i])):
            lo, hi = math.nextafter(e, 0.0), math.nextafter(e, 1.0)
            values += [e, lo, hi, math.nextafter(lo, 0.0), math.nextafter(hi, 1.0)]
    values += np.random.default_rng(seed).random(n_random).tolist()
    return [min(max(v, 0.0), 1.0) for v in values]


# ---------------------------------------------------------------------- edges


@pytest.mark.parametrize("n_bins", N_BINS)
def test_uniform_edges_are_the_division_bit_for_bit(n_bins):
    edges = B.uniform_edges(n_bins)
    assert edges == RB.uniform_edges(n_bins)
    assert edges == (np.arange(n_bins + 1, dtype=np.float64) / n_bins).tolist()
    assert edges[0] == 0.0 and edges[-1] == 1.0


def test_uniform_edges_are_not_linspace():
    # the documented difference (README, ECE docstring): 3 / 10 vs linspace's edge
    assert B.uniform_edges(10)[3] == 0.3
    assert np.linspace(0, 1, 11)[3] == 0.30000000000000004


@settings(max_examples=200, deadline=None)
@given(
    st.lists(unit_floats, min_size=1, max_size=40),
    st.integers(1, 12),
)
def test_quantile_edges_are_algorithm_1(scores, n_bins):
    xs, counts = np.unique(np.array(scores), return_counts=True)
    assert B.quantile_edges(xs, counts, n_bins) == RB.quantile_edges(scores, n_bins)


@settings(max_examples=200, deadline=None)
@given(st.lists(unit_floats, min_size=1, max_size=60), st.integers(1, 25))
def test_linear_quantile_edges_with_unit_weights_are_numpy_quantiles(scores, n_bins):
    x = np.sort(np.array(scores))
    levels = np.arange(n_bins + 1, dtype=np.float64) / n_bins
    expected = np.maximum.accumulate(np.quantile(x, levels))
    got = B.linear_quantile_edges(x, np.arange(1.0, len(x) + 1.0), n_bins)
    assert got.tolist() == expected.tolist()


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.tuples(unit_floats, st.integers(1, 5)), min_size=1, max_size=30),
    st.integers(1, 12),
)
def test_linear_quantile_edges_with_weights_are_the_reference(events, n_bins):
    p = np.array([e[0] for e in events])
    w = np.array([float(e[1]) for e in events])
    order = np.argsort(p, kind="stable")
    got = B.linear_quantile_edges(p[order], np.cumsum(w[order]), n_bins)
    assert got.tolist() == RM.quantile_edges(p, w, n_bins).tolist()
    # integer weights: the quantiles of the sample with each forecast repeated
    levels = np.arange(n_bins + 1, dtype=np.float64) / n_bins
    expanded = np.repeat(p, w.astype(int))
    np.testing.assert_allclose(
        got, np.maximum.accumulate(np.quantile(expanded, levels)), rtol=0, atol=1e-15
    )


def test_the_two_quantile_flavours_differ():
    # Gupta-Ramdas: order statistics, ends 0 and 1; linear: interpolated, ends min, max
    x = np.array([0.1, 0.2, 0.3, 0.4])
    assert B.quantile_edges(x, [1, 1, 1, 1], 2) == [0.0, 0.3, 1.0]
    assert B.linear_quantile_edges(x, np.arange(1.0, 5.0), 2).tolist() == [0.1, 0.25, 0.4]


# ---------------------------------------------------------------------- bin of a score


@pytest.mark.parametrize("n_bins", N_BINS)
def test_uniform_bin_is_the_edge_rule(n_bins):
    scores = _edge_scores(n_bins, seed=n_bins)
    edges = B.uniform_edges(n_bins)
    got = [B.uniform_bin(p, n_bins, edges) for p in scores]
    assert got == [B.uniform_bin(p, n_bins) for p in scores]
    assert got == [RM.uniform_bin(p, n_bins) for p in scores]
    assert got == [RB.bin_of(edges, p) for p in scores]
    assert B.uniform_bins(np.array(scores), n_bins).tolist() == got
    assert RMC.uniform_bins(scores, n_bins).tolist() == got
    assert _bin_indices(np.array(scores), n_bins, "uniform").tolist() == got
    assert B.edge_bins(np.array(scores), edges).tolist() == got


@settings(max_examples=300, deadline=None)
@given(unit_floats, st.integers(1, 200))
def test_uniform_bin_holds_its_score(p, n_bins):
    edges = B.uniform_edges(n_bins)
    b = B.uniform_bin(p, n_bins)
    assert 0 <= b < n_bins
    assert edges[b] <= p and (p < edges[b + 1] or b == n_bins - 1)


@pytest.mark.parametrize("n_bins", N_BINS)
def test_floor_bin_is_the_product_rule(n_bins):
    scores = _edge_scores(n_bins, seed=n_bins)
    got = [B.floor_bin(x, n_bins) for x in scores]
    assert got == [RC.bin_of(x, n_bins) for x in scores]
    assert got == [min(math.floor(x * n_bins), n_bins - 1) for x in scores]


def test_floor_bin_and_uniform_bin_differ_only_within_a_rounding_of_an_edge():
    # just below an edge whose product rounds up, and on an edge whose product rounds down
    assert B.floor_bin(0.8999999999999999, 10) == 9 and B.uniform_bin(0.8999999999999999, 10) == 8
    assert B.floor_bin(15 / 22, 22) == 14 and B.uniform_bin(15 / 22, 22) == 15
    for n in N_BINS:
        for x in _edge_scores(n, seed=n):
            a, b = B.floor_bin(x, n), B.uniform_bin(x, n)
            if a != b:
                edge = max(a, b) / n
                assert abs(a - b) == 1 and abs(x - edge) <= 2 * math.ulp(edge), (n, x)


@pytest.mark.parametrize("n_bins", N_BINS)
def test_edge_bins_is_bisect_right_on_the_inner_edges(n_bins):
    rng = np.random.default_rng(n_bins)
    edges = RB.quantile_edges(rng.random(3 * n_bins).round(2).tolist(), n_bins)
    scores = _edge_scores(n_bins, seed=n_bins) + edges
    assert B.edge_bins(np.array(scores), edges).tolist() == [
        RB.bin_of(edges, s) for s in scores
    ]


def test_quantile_batch_bins_use_the_linear_edges():
    rng = np.random.default_rng(3)
    p = rng.random(200).round(2)
    levels = np.arange(8, dtype=np.float64) / 7
    edges = np.maximum.accumulate(np.quantile(p, levels))  # the batch rule before issue 14
    expected = np.clip(np.searchsorted(edges, p, side="right") - 1, 0, 6)
    assert _bin_indices(p, 7, "quantile").tolist() == expected.tolist()


# ---------------------------------------------------------------------- compiled twins


@pytest.mark.parametrize("n_bins", N_BINS)
def test_compiled_calibeating_bins_are_floor_bin(n_bins):
    scores = _edge_scores(n_bins, seed=n_bins)
    assert [_calibeating.bin_index(x, n_bins) for x in scores] == [
        B.floor_bin(x, n_bins) for x in scores
    ]
    # the joint bin of several experts is built from the same rule
    for a, b in zip(scores, reversed(scores)):
        assert _calibeating.joint_bin((a, b), n_bins) == (
            B.floor_bin(a, n_bins) + n_bins * B.floor_bin(b, n_bins)
        )


@pytest.mark.parametrize("klass", [Sharpness, MurphyDecomposition, ECE])
@pytest.mark.parametrize("n_bins", [1, 3, 7, 10, 49])
def test_compiled_metric_bins_are_uniform_bin(klass, n_bins):
    metric = klass(n_bins=n_bins)
    for p in _edge_scores(n_bins, seed=n_bins, n_random=100):
        metric.update(1, p)
        counts = metric._store.bin_lists()[-1]
        assert counts == [int(b == B.uniform_bin(p, n_bins)) for b in range(n_bins)], p
        metric.revert(1, p)


@pytest.mark.parametrize("binner", [Int64Binner, HistogramBinner])
@pytest.mark.parametrize("n_bins", [1, 3, 7, 10, 49])
def test_histogram_binner_bins_are_uniform_bin(binner, n_bins):
    # bin j holds one positive and j negatives: it predicts 1 / (j + 1)
    core = binner(n_bins, "uniform", None, 0.0)
    for j in range(n_bins):
        mid = (j + 0.5) / n_bins
        core.learn(mid, 1.0, 1.0)
        for _ in range(j):
            core.learn(mid, 0.0, 1.0)
    for s in _edge_scores(n_bins, seed=n_bins, n_random=100):
        assert round(1.0 / core.predict(s)) - 1 == B.uniform_bin(s, n_bins), s
