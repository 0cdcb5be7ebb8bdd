"""Isotonic recursive partitioning: the pure batch functions of streamcal.core.irp against
slow oracles (tests/references_irp.py, PAV in tests/references.py, scikit-learn's
IsotonicRegression, an LP for ROC monotony), and the windowed shells IRP and
MulticlassIRP against the batch functions on the window's tail.

References: Luss, Rosset and Shahar (2012); Berta, Bach and Jordan (2024), section 2.4,
Definition 3.2, section 3.3 and Algorithm 2.
"""

from __future__ import annotations

import collections
import copy
import itertools
import json
import math
import pathlib

import numpy as np
import pytest
import tomllib
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.isotonic import IsotonicRegression

from streamcal import IRP, MulticlassIRP, OnlineIsotonic
from streamcal.base import BinaryCalibrator, MulticlassCalibrator
from streamcal.core import irp as core
from streamcal.core import irp_interval
from streamcal.datasets import covtype_predictions
from tests import references as R
from tests import references_irp as RI

WEIGHTS = [1.0, 1.0, 0.5, 2.25, 0.0]  # dyadic: sums and products stay exact


def binary_stream(seed, n=None, weights=True, decimals=None):
    """Scores with ties and the edge values 0 and 1, over-confident labels, weights."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 90)) if n is None else n
    d = int(rng.integers(1, 3)) if decimals is None else decimals
    s = np.round(rng.random(n), d)
    s[rng.random(n) < 0.05] = 0.0
    s[rng.random(n) < 0.05] = 1.0
    kind = seed % 5
    if kind == 3:
        y = np.zeros(n, dtype=int)
    elif kind == 4:
        y = np.ones(n, dtype=int)
    else:
        y = (rng.random(n) < s**2).astype(int)
    w = rng.choice(WEIGHTS, n) if weights else None
    return s, y, w


def simplex_stream(seed, n, K, lattice=None, weights="dyadic"):
    """Over-confident Dirichlet forecasts (on a lattice of 1/lattice if given), labels
    drawn from the true probabilities, weights."""
    rng = np.random.default_rng(seed)
    q = rng.dirichlet(np.full(K, 0.8), n)
    y = np.array([rng.choice(K, p=row) for row in q])
    p = q**2.5
    p /= p.sum(axis=1, keepdims=True)
    if lattice:
        p = np.round(p * lattice) / lattice
        p[:, -1] = 1.0 - p[:, :-1].sum(axis=1)
        p = np.clip(p, 0.0, 1.0)
        p /= p.sum(axis=1, keepdims=True)
    if weights == "dyadic":
        w = rng.choice(WEIGHTS, n)
    elif weights == "continuous":
        w = rng.random(n) + 0.1
    else:
        w = None
    return p, y, w


# =================================================================== binary IRP


@pytest.mark.parametrize("seed", range(60))
def test_complete_irp_is_pav(seed):
    s, y, w = binary_stream(seed)
    fit = core.fit_irp(s, y, w)
    fit._check()
    xs, fitted, _ = R.isotonic_fit(
        s.tolist(), y.tolist(), None if w is None else w.tolist()
    )
    assert fit.n_bins == len(set(fitted))  # the level sets of PAV (strictly increasing)
    if xs:
        assert np.max(np.abs(fit.predict(xs) - fitted)) <= 1e-12
        queries = np.linspace(0, 1, 101)
        expected = [R.predict_step((xs, fitted, None), q) for q in queries]
        assert np.max(np.abs(fit.predict(queries) - expected)) <= 1e-12


@pytest.mark.parametrize("seed", range(10))
def test_complete_irp_matches_sklearn(seed):
    s, y, w = binary_stream(seed, n=200, decimals=3)
    w = np.where(w == 0, 1.0, w)  # scikit-learn keeps zero-weight points in its ties
    fit = core.fit_irp(s, y, w)
    ir = IsotonicRegression(out_of_bounds="clip").fit(s, y, sample_weight=w)
    assert np.max(np.abs(fit.predict(s) - ir.predict(s))) <= 1e-12


@pytest.mark.parametrize("seed", range(40))
def test_irp_path_matches_the_exact_oracle(seed):
    s, y, w = binary_stream(seed)
    full = core.fit_irp(s, y, w)
    edges, values, gains = RI.binary_recursion(s, y, w)
    assert np.allclose(full.gains, gains, rtol=1e-12, atol=0)
    assert full.edges.tolist() == edges
    assert np.allclose(full.values, values, rtol=0, atol=1e-12)
    for b in range(1, full.n_bins + 2):
        fit = core.fit_irp(s, y, w, max_bins=b)
        edges, values, _ = RI.binary_recursion(s, y, w, max_bins=b)
        assert fit.edges.tolist() == edges
        assert np.allclose(fit.values, values, rtol=0, atol=1e-12)
        assert fit.n_bins == min(b, full.n_bins)


@pytest.mark.parametrize("seed", range(20))
def test_every_prefix_is_monotone_and_is_the_early_stopped_fit(seed):
    s, y, w = binary_stream(seed, n=80)
    full = core.fit_irp(s, y, w)
    assert full.bins_path.tolist() == list(range(1, full.n_steps + 2))
    for t in range(full.n_steps + 1):
        fit = full.prefix(t)
        fit._check()
        assert np.all(np.diff(fit.values) > 0), "IRP bins strictly increase"
        early = core.fit_irp(s, y, w, max_bins=t + 1)
        assert early.edges.tolist() == fit.edges.tolist()
        assert early.values.tolist() == fit.values.tolist()


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from([0.0, 0.1, 0.25, 0.5, 0.7, 0.9, 1.0]),
            st.integers(0, 1),
            st.sampled_from(WEIGHTS),
        ),
        min_size=1,
        max_size=40,
    )
)
def test_irp_hypothesis_monotone_prefixes_and_pav(events):
    s, y, w = (list(col) for col in zip(*events))
    fit = core.fit_irp(s, y, w)
    for t in range(fit.n_steps + 1):
        assert np.all(np.diff(fit.prefix(t).values) > 0)
    xs, fitted, _ = R.isotonic_fit(s, y, w)
    if xs:
        assert np.max(np.abs(fit.predict(xs) - fitted)) <= 1e-12
    else:
        assert fit.empty


@pytest.mark.parametrize("lam", [0.01, 0.05, 1.0])
def test_smoothing_is_the_regularised_mean_and_keeps_the_bins(lam):
    s, y, w = binary_stream(7, n=120)
    plain = core.fit_irp(s, y, w)
    smooth = core.fit_irp(s, y, w, smoothing=lam)
    assert smooth.edges.tolist() == plain.edges.tolist()
    assert np.allclose(
        smooth.values, (plain.values + lam) / (1 + 2 * lam), rtol=0, atol=1e-15
    )
    # the smoothed value of a bin minimises sum_i w_i [-(y log p + (1-y) log(1-p))] - lam W (log p + log(1-p))
    for value, W, S in zip(smooth.values, *_bin_sums(s, y, w, plain.edges)):
        ps = np.linspace(1e-4, 1 - 1e-4, 20001)
        loss = -(S * np.log(ps) + (W - S) * np.log1p(-ps)) - lam * W * (
            np.log(ps) + np.log1p(-ps)
        )
        assert abs(ps[np.argmin(loss)] - value) < 1e-4


def _bin_sums(s, y, w, edges):
    b = np.searchsorted(edges, s, side="right")
    w = np.ones(len(s)) if w is None else w
    return np.bincount(b, weights=w), np.bincount(b, weights=w * y)


def test_zero_weights_are_dropped_and_weights_are_honoured():
    s, y, w = binary_stream(11, n=100)
    keep = w > 0
    a, b = core.fit_irp(s, y, w), core.fit_irp(s[keep], y[keep], w[keep])
    assert (
        a.edges.tolist() == b.edges.tolist() and a.values.tolist() == b.values.tolist()
    )
    # an integer weight is that many copies
    copies = (4 * w[keep]).astype(int)
    s2, y2 = np.repeat(s[keep], copies), np.repeat(y[keep], copies)
    c = core.fit_irp(s2, y2)
    d = core.fit_irp(s[keep], y[keep], w[keep])
    assert (
        np.allclose(c.values, d.values, atol=1e-12)
        and c.edges.tolist() == d.edges.tolist()
    )


def test_step_prediction_rule_between_and_outside_the_seen_scores():
    fit = core.fit_irp([0.2, 0.4, 0.6, 0.8], [0, 1, 0, 1])
    assert fit.edges.tolist() == [0.4, 0.8]
    assert fit.predict([0.0, 0.2, 0.39, 0.4, 0.7, 0.8, 1.0]).tolist() == [
        0.0,
        0.0,
        0.0,
        0.5,
        0.5,
        1.0,
        1.0,
    ]


def test_empty_and_constant_inputs():
    empty = core.fit_irp([], [])
    assert empty.empty and empty.n_bins == 0 and empty.predict([0.3]).tolist() == [0.3]
    zero = core.fit_irp([0.3, 0.6], [1, 0], [0.0, 0.0])
    assert zero.empty
    for labels in ([0, 0, 0], [1, 1, 1]):
        fit = core.fit_irp([0.0, 0.5, 1.0], labels)
        assert fit.n_bins == 1 and fit.values.tolist() == [float(labels[0])]
    one = core.fit_irp([0.5, 0.5, 0.5], [0, 1, 1])
    assert one.n_bins == 1 and one.values.tolist() == [2 / 3]


@pytest.mark.parametrize(
    "kwargs, name",
    [
        ({"scores": [0.1, 1.5], "labels": [0, 1]}, "scores"),
        ({"scores": [0.1, float("nan")], "labels": [0, 1]}, "scores"),
        ({"scores": [0.1, 0.2], "labels": [0, 2]}, "labels"),
        ({"scores": [0.1, 0.2], "labels": [0]}, "labels"),
        ({"scores": [0.1, 0.2], "labels": [0, 1], "weights": [1.0, -1.0]}, "weights"),
        ({"scores": [0.1], "labels": [0], "max_bins": 0}, "max_bins"),
        ({"scores": [0.1], "labels": [0], "smoothing": -0.1}, "smoothing"),
        ({"scores": [0.1], "labels": [0], "smoothing": math.inf}, "smoothing"),
    ],
)
def test_binary_fits_reject_bad_input(kwargs, name):
    for fn in (core.fit_irp, core.fit_recursive_binning):
        with pytest.raises((ValueError, TypeError), match=f"'{name}'.*must be.*Got"):
            fn(**kwargs)
    with pytest.raises(ValueError, match="'split'"):
        core.fit_recursive_binning([0.1], [0], split="tree")


# =================================================================== 1-D baselines


@pytest.mark.parametrize("seed", range(30))
def test_best_threshold_binning_matches_the_exact_oracle(seed):
    s, y, w = binary_stream(seed)
    fit = core.fit_recursive_binning(s, y, w)
    fit._check()
    edges, values, gains = RI.binary_recursion(s, y, w, split="best")
    assert fit.edges.tolist() == edges
    assert np.allclose(fit.values, values, atol=1e-12)
    assert np.allclose(fit.gains, gains, rtol=1e-12, atol=0)
    # run to completion every bin is constant: no two adjacent cells... differ in mean inside a bin
    xs, W, S = irp_interval._aggregate("t", s, y, w)
    bins = np.searchsorted(fit.edges, xs, side="right")
    for b in np.unique(bins):
        means = S[bins == b] / W[bins == b]
        assert np.allclose(means, means[0], atol=1e-12)


def test_best_threshold_binning_is_not_monotone():
    fit = core.fit_recursive_binning([0.1, 0.2, 0.3, 0.4], [1, 0, 0, 1])
    assert fit.values.tolist() == [1.0, 0.0, 1.0]
    assert core.fit_irp([0.1, 0.2, 0.3, 0.4], [1, 0, 0, 1]).values.tolist() == [
        1 / 3,
        1.0,
    ]


@pytest.mark.parametrize("seed", range(30))
def test_midpoint_binning_matches_the_oracle(seed):
    s, y, w = binary_stream(seed, n=60, decimals=3)
    for max_bins in (None, 1, 2, 3, 5, 8):
        fit = core.fit_recursive_binning(
            s, y, w, max_bins=max_bins, split="midpoint", smoothing=0.05
        )
        fit._check()
        edges, values = RI.midpoint_binning(s, y, w, max_bins=max_bins, smoothing=0.05)
        assert fit.edges.tolist() == edges
        assert np.allclose(fit.values, values, atol=1e-12)
        assert max_bins is None or fit.n_bins <= max_bins
        queries = np.linspace(0, 1, 57)
        assert np.allclose(
            fit.predict(queries),
            [RI.predict_bins(edges, values, q) for q in queries],
            atol=1e-12,
        )


def test_midpoint_edges_are_dyadic_and_breadth_first():
    s = np.linspace(0.01, 0.99, 50)
    y = (s > 0.3).astype(int)
    fit = core.fit_recursive_binning(s, y, split="midpoint", max_bins=4)
    assert fit.edges.tolist() == [0.25, 0.5, 0.75]


# =================================================================== the simplex grid


@pytest.mark.parametrize(
    "K, m", [(1, 3), (2, 5), (3, 1), (3, 4), (3, 7), (4, 3), (4, 5), (5, 2)]
)
def test_simplex_grid_is_every_lattice_point_with_differences_at_most_one(K, m):
    grid = core.simplex_grid(K, m)
    brute = [
        z
        for z in itertools.product(range(-m, 2 * m + 1), repeat=K)
        if sum(z) == m and max(z) - min(z) <= m
    ]
    assert len(grid) == len(brute) == core.grid_count(K, m)
    assert sorted(map(tuple, np.round(grid * m).astype(int).tolist())) == sorted(brute)
    assert np.allclose(grid.sum(axis=1), 1.0)
    keys = np.round(grid * m).astype(int)[
        :, ::-1
    ]  # sorted by the last coordinate first
    assert [tuple(k) for k in keys] == sorted(tuple(k) for k in keys)


def test_default_and_capped_grid_sizes():
    for K in range(2, 9):
        m = core.default_grid_size(K)
        assert core.grid_count(K, m) <= core.GRID_BUDGET < core.grid_count(K, m + 1)
    assert core.default_grid_size(2) == 1199 and core.default_grid_size(3) == 34
    assert core.capped_grid_size(3, 20) == 20
    m = core.capped_grid_size(7, 10)
    assert core.grid_count(7, m) <= core.GRID_MAX < core.grid_count(7, m + 1)
    with pytest.raises(ValueError, match="'grid_size'.*at most 100000 grid points"):
        core.fit_multiclass_irp([[1 / 8] * 8], [0], grid_size=8)


# =================================================================== ROC monotony


def _random_fit(rng, n, K):
    """Forecasts and piecewise-constant fitted values on a random partition."""
    P = rng.dirichlet(np.ones(K), n)
    groups = rng.integers(0, 4, n)
    levels = rng.dirichlet(np.ones(K), 4)
    return P, levels[groups]


@pytest.mark.parametrize("K", [2, 3, 4])
def test_roc_monotone_check_matches_the_lp_and_the_cycles(K):
    rng = np.random.default_rng(K)
    seen = collections.Counter()
    for t in range(60):
        P, Rv = _random_fit(rng, 12, K)
        splits = rng.dirichlet(np.ones(K), int(rng.integers(1, 3)))
        if t % 3 == 1:  # the forecasts themselves: monotone with gamma' = gamma
            Rv = P.copy()
        elif t % 3 == 2:  # each raw region of the first split leans to its own class
            Rv = 0.5 * np.eye(K)[
                np.argmax(P - splits[0], axis=1)
            ] + 0.5 * rng.dirichlet(np.ones(K))
        fast = core.is_roc_monotone(P, Rv, splits)
        assert (
            fast
            == RI.roc_monotone_lp(P, Rv, splits)
            == RI.roc_monotone_cycles(P, Rv, splits)
        )
        seen[fast] += 1
    assert seen[True] and seen[False]


def test_a_three_cycle_can_break_roc_monotony_when_every_pair_passes():
    # one split point, three raw regions; the pairwise tests pass but the cycle
    # 0 -> 1 -> 2 -> 0 has negative weight, so no gamma' reproduces the partition
    gamma = [1 / 3, 1 / 3, 1 / 3]
    P = np.array([[0.8, 0.1, 0.1], [0.1, 0.8, 0.1], [0.1, 0.1, 0.8]])
    Rv = np.array([[0.4, 0.6, 0.0], [0.0, 0.4, 0.6], [0.6, 0.0, 0.4]])
    c = [
        [
            min(r[k] - r[j] for p, r in zip(P, Rv) if RI.argmax_first(p - gamma) == k)
            for j in range(3)
        ]
        for k in range(3)
    ]
    assert all(c[k][j] + c[j][k] >= 0 for k in range(3) for j in range(3))
    assert c[0][1] + c[1][2] + c[2][0] < 0
    assert not core.is_roc_monotone(P, Rv, [gamma])
    assert not RI.roc_monotone_lp(P, Rv, [gamma])


# =================================================================== multiclass IRP


def _compare_to_oracle(P, y, w, K, m, monotone, max_bins=None, smoothing=0.0):
    grid = core.simplex_grid(K, m)
    if monotone:
        fit = core.fit_multiclass_irp(
            P, y, w, max_bins=max_bins, smoothing=smoothing, grid_size=m
        )
    else:
        fit = core.fit_multiclass_recursive_binning(
            P, y, w, max_bins=max_bins, smoothing=smoothing, grid_size=m
        )
    fit._check()
    leaves, gains, splits = RI.multiclass_recursion(
        P, y, w, grid, max_bins, smoothing, monotone
    )
    assert np.allclose(fit.gains, gains, rtol=1e-9, atol=0)
    assert np.allclose(fit.split_points, np.array(splits).reshape(-1, K))
    rng = np.random.default_rng(0)
    queries = np.vstack([P, rng.dirichlet(np.ones(K), 30)])
    expected = [RI.predict_leaves(leaves, q.tolist()) for q in queries]
    assert np.allclose(fit.predict(queries), expected, atol=1e-12)
    return fit


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("K, m", [(3, 4), (3, 6), (4, 3)])
def test_multiclass_irp_matches_the_brute_force_oracle(seed, K, m):
    P, y, w = simplex_stream(seed, 14, K, weights="continuous")
    fit = _compare_to_oracle(P, y, w, K, m, monotone=True)
    for t in range(
        fit.n_steps + 1
    ):  # every intermediate fit is ROC-monotone on its split points
        f = fit.prefix(t)
        assert RI.roc_monotone_lp(P, f.predict(P), f.split_points)


@pytest.mark.parametrize("seed", range(3))
def test_multiclass_irp_early_stopping_and_smoothing_match_the_oracle(seed):
    P, y, w = simplex_stream(seed + 10, 14, 3, weights="continuous")
    full = core.fit_multiclass_irp(P, y, w, grid_size=5)
    for b in range(1, full.n_bins + 1):
        fit = _compare_to_oracle(
            P, y, w, 3, 5, monotone=True, max_bins=b, smoothing=0.05
        )
        assert fit.n_bins <= b
        # the early-stopped fit is a prefix of the full one
        t = fit.n_steps
        assert np.allclose(
            full.prefix(t).predict(P),
            (fit.predict(P) * (1 + 3 * 0.05) - 0.05),
            atol=1e-12,
        )


@pytest.mark.parametrize("seed", range(4))
def test_best_gain_binning_of_the_simplex_matches_the_oracle(seed):
    P, y, w = simplex_stream(seed + 20, 14, 3, weights="continuous")
    _compare_to_oracle(P, y, w, 3, 4, monotone=False)


def test_the_baseline_gives_up_roc_monotony_that_irp_keeps():
    P, Y, _, _ = covtype_predictions(3)
    base = core.fit_multiclass_recursive_binning(P, Y, grid_size=10, max_bins=40)
    irp = core.fit_multiclass_irp(P, Y, grid_size=10)
    assert core.is_roc_monotone(P, irp.predict(P), irp.split_points)
    assert not core.is_roc_monotone(P, base.predict(P), base.split_points)


@pytest.mark.parametrize("seed", range(25))
def test_two_class_irp_on_the_simplex_is_pav(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 60))
    s = (
        rng.integers(0, 21, n) / 20
    )  # a lattice of 0.05; the grid of 1/40 cuts between its points
    y = (rng.random(n) < s**2).astype(int)
    w = rng.choice(WEIGHTS, n)
    P = np.column_stack([1 - s, s])
    fit = core.fit_multiclass_irp(P, y, w, grid_size=40)
    xs, fitted, _ = R.isotonic_fit(s.tolist(), y.tolist(), w.tolist())
    if xs:
        got = fit.predict(np.column_stack([1 - np.array(xs), xs]))
        assert np.max(np.abs(got[:, 1] - fitted)) <= 1e-12
    for t in range(fit.n_steps + 1):
        f = fit.prefix(t)
        assert core.is_roc_monotone(P, f.predict(P), f.split_points)


@pytest.mark.parametrize("seed", range(15))
def test_two_class_path_is_the_binary_path(seed):
    # continuous weights: no ties between gains; the simplex gain is 4 times the binary one
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 60))
    s = rng.integers(0, 21, n) / 20
    y = (rng.random(n) < s**2).astype(int)
    w = rng.random(n) + 0.1
    fit = core.fit_multiclass_irp(np.column_stack([1 - s, s]), y, w, grid_size=40)
    b = core.fit_irp(s, y, w)
    assert np.allclose(fit.gains, 4 * b.gains, rtol=1e-12, atol=1e-12)
    x = np.unique(s)
    for t in range(b.n_steps + 1):
        got = fit.prefix(t).predict(np.column_stack([1 - x, x]))[:, 1]
        assert np.max(np.abs(got - b.prefix(t).predict(x))) <= 1e-12


def test_labels_as_indices_one_hot_or_soft_and_zero_weights():
    P, y, w = simplex_stream(3, 40, 3)
    Y = np.eye(3)[y]
    a = core.fit_multiclass_irp(P, y, w, grid_size=6)
    b = core.fit_multiclass_irp(P, Y, w, grid_size=6)
    keep = w > 0
    c = core.fit_multiclass_irp(P[keep], y[keep], w[keep], grid_size=6)
    q = np.random.default_rng(1).dirichlet(np.ones(3), 50)
    assert np.array_equal(a.predict(q), b.predict(q)) and np.array_equal(
        a.predict(q), c.predict(q)
    )
    soft = core.fit_multiclass_irp(P, 0.5 * Y + 0.5 / 3, w, grid_size=6)  # soft labels
    soft._check()


def test_multiclass_empty_single_class_and_identity():
    e = core.fit_multiclass_irp(np.zeros((0, 3)), np.zeros(0, dtype=int))
    assert e.empty and e.predict([[0.2, 0.3, 0.5]]).tolist() == [[0.2, 0.3, 0.5]]
    one = core.fit_multiclass_irp([[1.0], [1.0]], [0, 0])
    assert one.n_bins == 1 and one.predict([[1.0]]).tolist() == [[1.0]]
    same = core.fit_multiclass_irp(
        [[0.5, 0.5]] * 4, [0, 1, 0, 1]
    )  # one point: nothing to split
    assert same.n_bins == 1 and same.predict([[0.9, 0.1]]).tolist() == [[0.5, 0.5]]


def test_center_binning_starts_at_the_middle_of_the_simplex():
    P, Y, _, _ = covtype_predictions(3)
    fit = core.fit_multiclass_recursive_binning(
        P, Y, grid_size=12, split="center", max_bins=10
    )
    fit._check()
    assert np.allclose(fit.split_points[0], [1 / 3, 1 / 3, 1 / 3])
    assert fit.n_bins <= 10
    assert np.all(np.diff(fit.bins_path) >= 0)


@pytest.mark.parametrize(
    "probs, labels, name",
    [
        ([[0.5, 0.6]], [0], "probs"),
        ([[0.5, float("nan")]], [0], "probs"),
        ([0.5, 0.5], [0], "probs"),
        ([[0.5, 0.5]], [2], "labels"),
        ([[0.5, 0.5]], [0, 1], "labels"),
        ([[0.5, 0.5]], [[1.0, 0.5]], "labels"),
    ],
)
def test_multiclass_fits_reject_bad_input(probs, labels, name):
    for fn in (core.fit_multiclass_irp, core.fit_multiclass_recursive_binning):
        with pytest.raises(ValueError, match=f"'{name}'.*must be.*Got"):
            fn(probs, labels)
    with pytest.raises(ValueError, match="'split'"):
        core.fit_multiclass_recursive_binning([[0.5, 0.5]], [0], split="best-first")
    with pytest.raises(ValueError, match="'weights'"):
        core.fit_multiclass_irp([[0.5, 0.5]], [0], [-1.0])


# =================================================================== the IRP shell


@pytest.mark.parametrize(
    "window_size, refit_every", [(40, 10), (25, 7), (100, 100), (3, 1)]
)
@pytest.mark.parametrize("params", [{}, {"max_bins": 3, "smoothing": 0.05}])
@pytest.mark.parametrize("prior", [{}, {"prior_strength": 0}, {"prior_strength": 0.5}])
def test_irp_refits_equal_the_batch_fit_on_the_window(window_size, refit_every, params, prior):
    s, y, w = binary_stream(5, n=230)
    cal = IRP(window_size=window_size, refit_every=refit_every, **params, **prior)
    tail = collections.deque(maxlen=window_size)
    queries = np.linspace(0, 1, 23).tolist()
    last = queries  # cold start: the scores themselves
    for t, event in enumerate(zip(s.tolist(), y.tolist(), w.tolist()), start=1):
        cal.learn_one(*event)
        tail.append(event)
        now = [cal.predict_one(q) for q in queries]
        if t % refit_every == 0:
            fit = core.fit_irp(
                *(np.array(c) for c in zip(*tail)),
                **params,
                prior_strength=prior.get("prior_strength", 4.0),  # the default
            )
            assert list(cal.edges) == fit.edges.tolist()
            assert list(cal.values) == ([] if fit.empty else fit.values.tolist())
            last = now
        else:
            assert now == last, "predictions moved between refits"
    assert cal.n_events == 230


def test_complete_irp_refit_equals_windowed_online_isotonic():
    s, y, w = binary_stream(8, n=500)
    # without the prior (which stops cuts that would break monotony as read), the
    # complete fit is PAV's
    cal = IRP(window_size=120, refit_every=60, prior_strength=0)
    iso = OnlineIsotonic(window_size=120)
    queries = np.linspace(0, 1, 201)
    for t, event in enumerate(zip(s.tolist(), y.tolist(), w.tolist()), start=1):
        cal.learn_one(*event)
        iso.learn_one(*event)
        if t % 60 == 0:
            assert (
                np.max(np.abs(cal.predict_many(queries) - iso.predict_many(queries)))
                <= 1e-12
            )


def test_irp_learn_many_makes_only_the_last_refit_and_matches_the_loop():
    s, y, w = binary_stream(9, n=700)
    loop, batch = (
        IRP(window_size=50, refit_every=30),
        IRP(window_size=50, refit_every=30),
    )
    for a, b, c in zip(s.tolist(), y.tolist(), w.tolist()):
        loop.learn_one(a, b, c)
    calls = []
    batch._fit_events = lambda events, f=batch._fit_events: (
        calls.append(len(events)),
        f(events),
    )[1]
    batch.learn_many(s[:333], y[:333], w[:333])
    batch.learn_many(s[333:], y[333:], w[333:])
    assert len(calls) == 2
    del batch._fit_events
    assert batch.to_dict() == loop.to_dict()


def test_irp_zero_weight_window_and_cold_start():
    cal = IRP(window_size=5, refit_every=5, prior_strength=0)
    for s in (0.1, 0.3, 0.5, 0.7, 0.9):
        cal.learn_one(s, 1, 0.0)
    assert cal.n_bins == 0 and cal.predict_one(0.42) == 0.42
    cal.learn_many([0.2] * 5, [1, 0, 1, 1, 0])
    assert cal.n_bins == 1 and cal.predict_one(0.9) == 0.6


def test_irp_snapshot_is_json_and_restores():
    s, y, w = binary_stream(2, n=150)
    cal = IRP(window_size=60, refit_every=20, smoothing=0.1)
    cal.learn_many(s, y, w)
    data = json.loads(json.dumps(cal.to_dict()))
    back = BinaryCalibrator.from_dict(data)
    assert back.values == cal.values and back.edges == cal.edges
    back.learn_one(0.5, 1)
    cal.learn_one(0.5, 1)
    assert back.to_dict() == cal.to_dict()


@pytest.mark.parametrize(
    "kwargs, name",
    [
        ({"max_bins": 0}, "max_bins"),
        ({"max_bins": 2.0}, "max_bins"),
        ({"smoothing": -1.0}, "smoothing"),
        ({"smoothing": "0.1"}, "smoothing"),
        ({"window_size": 0}, "window_size"),
        ({"refit_every": 0}, "refit_every"),
    ],
)
def test_irp_parameters_are_validated(kwargs, name):
    for klass in (IRP, MulticlassIRP):
        with pytest.raises(
            (ValueError, TypeError),
            match=f"'{name}' (parameter|argument) of {klass.__name__}",
        ):
            klass(**kwargs)
    with pytest.raises(ValueError, match="'grid_size'"):
        MulticlassIRP(grid_size=0)


# =================================================================== the MulticlassIRP shell


def _dict_events(seed, n, classes=("a", "b", "c")):
    P, y, w = simplex_stream(seed, n, len(classes), lattice=20)
    return [
        ({c: float(p) for c, p in zip(classes, row)}, classes[int(k)], float(v))
        for row, k, v in zip(P, y, w)
    ]


@pytest.mark.parametrize("prior", [{}, {"prior_strength": 0}, {"prior_strength": 0.5}])
def test_multiclass_irp_refits_equal_the_batch_fit_on_the_window(prior):
    events = _dict_events(4, 260)
    cal = MulticlassIRP(window_size=70, refit_every=25, smoothing=0.05, grid_size=8, **prior)
    tail = collections.deque(maxlen=70)
    rng = np.random.default_rng(0)
    queries = rng.dirichlet(np.ones(3), 40)
    last = None
    for t, (s, y, w) in enumerate(events, start=1):
        cal.learn_one(s, y, w)
        tail.append((s, y, w))
        now = [cal.predict_one(dict(zip("abc", q.tolist()))) for q in queries]
        if t % 25 == 0:
            kept = [e for e in tail if e[2] > 0]
            classes = list(dict.fromkeys(c for s_, y_, _ in kept for c in [*s_, y_]))
            assert cal.fit_classes == tuple(classes)
            P = np.array([[s_.get(c, 0.0) for c in classes] for s_, _, _ in kept])
            fit = core.fit_multiclass_irp(
                P,
                [classes.index(y_) for _, y_, _ in kept],
                [w_ for _, _, w_ in kept],
                smoothing=0.05,
                grid_size=8,
                prior_strength=prior.get("prior_strength", 1.0),  # the default
            )
            order = ["abc".index(c) for c in classes]
            expected = fit.predict(queries[:, order])
            for got, exp in zip(now, expected):
                assert np.allclose([got[c] for c in classes], exp, atol=1e-12)
            assert cal.n_bins == fit.n_bins
            last = now
        elif last is not None:
            assert now == last


def test_multiclass_irp_default_grid_and_classes_of_the_window():
    cal = MulticlassIRP(window_size=30, refit_every=30)
    events = _dict_events(5, 30, classes=("x", "y", "z"))
    events[3] = (
        {"x": 0.5, "w": 0.5},
        "w",
        0.0,
    )  # a class named only by a zero-weight event
    for s, y, w in events:
        cal.learn_one(s, y, w)
    assert "w" in cal.classes and "w" not in cal.fit_classes
    out = cal.predict_one({"x": 0.25, "y": 0.25, "z": 0.25, "w": 0.25})
    assert out["w"] == 0.25 and abs(math.fsum(out.values()) - 1) < 1e-12
    # only classes the fit does not know: they keep their mass, known classes get 0
    assert cal.predict_one({"w": 0.6, "v": 0.4}) == {
        "w": 0.6,
        "v": 0.4,
        "x": 0.0,
        "y": 0.0,
        "z": 0.0,
    }


def test_multiclass_irp_one_class_window_and_empty_window():
    cal = MulticlassIRP(window_size=4, refit_every=4)
    for _ in range(4):
        cal.learn_one({"a": 1.0}, "a")
    assert cal.fit_classes == ("a",) and cal.predict_one({"a": 1.0}) == {"a": 1.0}
    assert cal.predict_one({"a": 0.5, "b": 0.5}) == {"a": 0.5, "b": 0.5}
    for _ in range(4):
        cal.learn_one({"a": 0.5, "b": 0.5}, "b", 0.0)
    assert cal.fit_classes == () and cal.predict_one({"a": 0.3, "b": 0.7}) == {
        "a": 0.3,
        "b": 0.7,
    }


def test_multiclass_irp_on_covtype_stays_roc_monotone_and_improves_on_constant():
    P, Y, Pt, Yt = covtype_predictions(4)
    names = ["c0", "c1", "c2", "c3"]
    cal = MulticlassIRP(window_size=500, refit_every=500, smoothing=0.05)
    cal.learn_many(
        [dict(zip(names, row.tolist())) for row in P],
        [names[int(k)] for k in Y.argmax(axis=1)],
    )
    out = np.array(
        [
            [d[c] for c in names]
            for d in cal.predict_many([dict(zip(names, r.tolist())) for r in Pt])
        ]
    )
    nll = -np.mean(np.log((out * Yt).sum(axis=1)))
    prior = Y.mean(axis=0)
    assert nll < -np.mean(np.log(Yt @ prior)) - 0.3
    assert isinstance(cal, MulticlassCalibrator) and cal.n_bins > 4


# =================================================================== the shipped data


@pytest.mark.parametrize("K", [2, 3, 4])
def test_covtype_predictions_are_the_shared_files(K):
    P_cal, Y_cal, P_test, Y_test = covtype_predictions(K)
    assert P_cal.shape == Y_cal.shape == (500, K) and P_test.shape == Y_test.shape == (
        1000,
        K,
    )
    for P in (P_cal, P_test):
        assert np.allclose(P.sum(axis=1), 1.0) and P.min() >= 0
    for Y in (Y_cal, Y_test):
        assert set(np.unique(Y).tolist()) == {0.0, 1.0} and np.all(Y.sum(axis=1) == 1)
    shared = (
        pathlib.Path(__file__).resolve().parents[2]
        / "shared"
        / "data"
        / "covtype_predictions"
    )
    if shared.is_dir():
        assert np.array_equal(np.load(shared / f"cover{K}_Pcal.npy"), P_cal)
        assert np.array_equal(np.load(shared / f"cover{K}_Ytest.npy"), Y_test)


def test_covtype_files_ship_with_the_package():
    root = pathlib.Path(__file__).resolve().parents[1]
    data = tomllib.loads((root / "pyproject.toml").read_text())["tool"]["setuptools"][
        "package-data"
    ]
    assert "data/covtype/*.npy" in data["streamcal.datasets"]
    assert (
        len(list((root / "streamcal" / "datasets" / "data" / "covtype").glob("*.npy")))
        == 12
    )
    with pytest.raises(ValueError, match="'n_classes'"):
        covtype_predictions(5)


# =================================================================== the simulation


def test_the_covtype_simulation_runs_quick_and_writes_its_outputs(tmp_path):
    pytest.importorskip("matplotlib")
    import importlib.util

    path = (
        pathlib.Path(__file__).resolve().parents[1] / "simulations" / "irp_covtype.py"
    )
    spec = importlib.util.spec_from_file_location("irp_covtype", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert "Question" in module.__doc__ and "--quick" in module.__doc__
    out = module.main(["--quick", "--out", str(tmp_path)])
    for name in ("irp_covtype.md", "irp_covtype.png", "irp_covtype.csv"):
        assert (tmp_path / name).stat().st_size > 0
    assert (tmp_path / "irp_covtype.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # IRP's recursion ends by itself: every intermediate fit is monotone, the last one is its stop
    for K in (2, 3, 4):
        rows = out["paths"][K, "IRP", 0.05]
        assert (
            rows[0]["bins"] == 1
            and rows[-1]["bins"] == out["summary"][K, "IRP"]["end"]["bins"]
        )


# ------------------------------------------------------------- former names (issue 14)

_P3 = [[0.6, 0.3, 0.1], [0.5, 0.3, 0.2], [0.2, 0.7, 0.1], [0.3, 0.5, 0.2], [0.1, 0.1, 0.8]]


@pytest.mark.parametrize(
    "old, new, args",
    [
        ("irp_fit", "fit_irp", ([0.1, 0.2, 0.3, 0.4], [0, 1, 0, 1])),
        ("recursive_binning_fit", "fit_recursive_binning", ([0.1, 0.2, 0.3, 0.4], [1, 0, 0, 1])),
        ("multiclass_irp_fit", "fit_multiclass_irp", (_P3, [0, 0, 1, 0, 2], None, None, 0.0, 10)),
        (
            "multiclass_recursive_binning_fit",
            "fit_multiclass_recursive_binning",
            (_P3, [0, 0, 1, 0, 2], None, None, 0.0, 10),
        ),
    ],
)
def test_former_names_warn_and_give_the_same_fit(old, new, args):
    import streamcal.core

    for module in (core, streamcal.core):
        with pytest.warns(DeprecationWarning, match=f"{old} is deprecated.*use {new} instead"):
            fit = getattr(module, old)(*args)
        assert getattr(module, old).__name__ == old
        ref = getattr(module, new)(*args)
        assert type(fit) is type(ref)
        assert fit.gains.tolist() == ref.gains.tolist() and fit.n_bins == ref.n_bins
        assert old not in module.__all__ and new in module.__all__


def _corrupt_tree(state, what):
    """``state`` (a trained MulticlassIRP's, with a split at the root) with its fitted
    tree corrupted as ``what`` says."""
    g, kids, n = state["gammas"], state["children"], len(state["values"])
    leaf = kids.index(None)
    if what == "child out of range":
        kids[0][0] = n
    elif what == "child pointing back":
        kids[0][0] = 0
    elif what == "child shared":
        kids[0][1] = kids[0][0]
    elif what == "too few children":
        kids[0].pop()
    elif what == "child not an int":
        kids[0][0] = float(kids[0][0])
    elif what == "NaN gamma":
        g[0][0] = math.nan
    elif what == "infinite gamma":
        g[0][1] = math.inf
    elif what == "gamma not a real":
        g[0][1] = "0.5"
    elif what == "too few gammas":
        g[0].pop()
    elif what == "gamma on a leaf":
        g[leaf] = list(g[0])
    elif what == "split without gammas":
        g[0] = None
    elif what == "gammas list too short":
        g.pop()
    elif what == "children list too long":
        kids.append(None)
    elif what == "children not a list":
        state["children"] = {"0": kids[0]}
    elif what == "node values too short":
        state["values"][leaf].pop()
    elif what == "n_bins above the leaves":
        state["n_bins"] = kids.count(None) + 1
    elif what == "orphan node":
        state["values"].append(list(state["values"][0]))
        g.append(None)
        kids.append(None)
    return state


TREE_CORRUPTIONS = [
    "child out of range", "child pointing back", "child shared", "too few children",
    "child not an int", "NaN gamma", "infinite gamma", "gamma not a real", "too few gammas",
    "gamma on a leaf", "split without gammas", "gammas list too short",
    "children list too long", "children not a list", "node values too short",
    "n_bins above the leaves", "orphan node",
]


@pytest.mark.parametrize("what", TREE_CORRUPTIONS)
def test_multiclass_irp_snapshot_with_a_corrupted_tree_is_rejected(what):
    # issue 13: gammas and children were restored unchecked (an out-of-range child
    # raised IndexError in predict_one, a NaN gamma silently picked the first child,
    # a child pointing back looped forever)
    cal = MulticlassIRP(window_size=200, refit_every=100, grid_size=8)
    for s, y, w in _dict_events(5, 200):
        cal.learn_one(s, y, w)
    good = json.loads(json.dumps(cal.to_dict()))
    assert good["state"]["children"][0] is not None, "the fit must have a split"
    MulticlassIRP.from_dict(copy.deepcopy(good))  # the uncorrupted one restores
    bad = copy.deepcopy(good)
    bad["state"] = _corrupt_tree(bad["state"], what)
    with pytest.raises(ValueError, match=r"state\['(gammas|children|values|n_bins)'\]"):
        MulticlassIRP.from_dict(bad)


def test_multiclass_irp_snapshot_does_not_share_the_fit():
    # to_dict() handed out the lists of the fit itself ("gammas", "children",
    # "values"): editing the snapshot (to store or transform it) changed the calibrator
    from streamcal.checks.multiclass import yield_multiclass_stream

    cal = MulticlassIRP(window_size=60, refit_every=30)
    for s, y, w in yield_multiclass_stream(150, seed=2):
        cal.learn_one(s, y, w)
    probe = {0: 0.2, 1: 0.5, 2: 0.3}
    before, text = cal.predict_one(probe), json.dumps(cal.to_dict(), sort_keys=True)
    d = cal.to_dict()
    for key in ("gammas", "children", "values"):
        for entry in d["state"][key]:
            if entry:
                entry[0] = 0.123
    assert json.dumps(cal.to_dict(), sort_keys=True) == text
    assert cal.predict_one(probe) == before
