"""Sorted cumulative isotonic regression (SCIR): the core (points, maximal upper sets,
two-dimensional isotonic regression, the fitted map) against the brute-force oracles of
tests/references_scir.py, and the SCIR shell against the batch fit on its window.

References: Arad and Rosset, "Improving multi-class calibration through
normalization-aware isotonic techniques", section 4.2 and appendix A.1; Robertson,
Wright and Dykstra (1988), theorem 1.4.4 (the max-min formula)."""

import collections
import json
import math
import pickle
from unittest import mock

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.isotonic import IsotonicRegression

from streamcal import SCIR
from streamcal.base import MulticlassCalibrator
from streamcal.core import scir
from tests import references_scir as R

# ------------------------------------------------------------------------ helpers


def random_events(rng, n, K, ties=True):
    """``(P, labels, w)``: over-confident Dirichlet forecasts; with ``ties``, on a 0.05
    grid with one-hot rows and zeros; weights 1, 0.5, 2.25 and 0."""
    truth = rng.dirichlet(np.full(K, 0.8), size=n)
    labels = np.array([rng.choice(K, p=row) for row in truth])
    P = truth**2.5
    P /= P.sum(axis=1, keepdims=True)
    if ties:
        P = np.round(P * 20) / 20
        P[:, -1] = 0.0
        P[:, -1] = np.maximum(0.0, 1.0 - P.sum(axis=1))
        one_hot = rng.random(n) < 0.05
        P[one_hot] = np.eye(K)[rng.integers(0, K, one_hot.sum())]
        P /= P.sum(axis=1, keepdims=True)
    w = rng.choice([1.0, 1.0, 0.5, 2.25, 0.0], size=n)
    return P, labels, w


def fitted_points(P, labels, w):
    """The pooled fitted points ``(xs, rs, g)`` that fit_scir builds its map from."""
    keep = np.asarray(w) > 0
    q, y, ww = scir.sorted_cumulative_points(
        np.asarray(P)[keep], np.asarray(labels)[keep], np.asarray(w)[keep]
    )
    K = np.asarray(P).shape[1]
    r = np.broadcast_to(np.arange(1, K), q.shape)
    _, _, xs, rs, _, g = scir._fit_pooled(q.ravel(), r.ravel(), y.ravel(), ww.ravel())
    return xs, rs, g


def query_vectors(rng, K, n):
    """Probability vectors to predict on: random, tied, with zeros, one-hot, uniform."""
    out = [list(v) for v in rng.dirichlet(np.ones(K), size=n)]
    out += [
        list(np.round(v * 10) / 10 / (np.round(v * 10) / 10).sum())
        for v in rng.dirichlet(np.ones(K), size=n)
        if (np.round(v * 10)).sum() > 0
    ]
    out.append([1.0 / K] * K)
    out.append([1.0] + [0.0] * (K - 1))
    out.append([0.0] * (K - 1) + [1.0])
    return out


# -------------------------------------------------------------------------- points


def test_points_of_the_paper_example():
    # section 4.2: p = [0.2, 0.4, 0.3, 0.1], y = class 3 (index 2)
    q, y, w = scir.sorted_cumulative_points([[0.2, 0.4, 0.3, 0.1]], [2])
    assert q[0].tolist() == [0.4, 0.4 + 0.3, 0.4 + 0.3 + 0.2]
    assert y[0].tolist() == [0.0, 1.0, 1.0] and w[0].tolist() == [1.0, 1.0, 1.0]


@pytest.mark.parametrize("K", [1, 2, 3, 5, 6])
def test_points_match_every_tie_order(K):
    rng = np.random.default_rng(K)
    P, labels, w = random_events(rng, 150, K)
    q, y, ww = scir.sorted_cumulative_points(P, labels, w)
    assert q.shape == y.shape == ww.shape == (150, K - 1)
    for i in range(150):
        q_ref, y_ref = R.cumulative_points(P[i].tolist(), int(labels[i]))
        assert q[i].tolist() == q_ref  # same additions, same floats
        np.testing.assert_allclose(y[i], y_ref, rtol=0, atol=1e-15)
        assert (ww[i] == w[i]).all()


# ------------------------------------------------------------- maximal upper sets


def _check_upper_set(cols, v, mask, h):
    B = R.below(np.arange(len(v)), cols)
    assert not B[mask][:, ~mask].any(), "not an upper set"
    assert math.isclose(float(np.sum(np.asarray(v)[mask])), h, rel_tol=0, abs_tol=1e-12)


def test_maximal_upper_set_matches_brute_force():
    rng = np.random.default_rng(0)
    for _ in range(300):
        m = int(rng.integers(1, 10))
        n_cols = int(rng.integers(1, 5))
        cols = rng.integers(0, n_cols, m)
        v = rng.normal(size=m) * (rng.random(m) < 0.8)  # some zeros
        mask, h = scir.maximal_upper_set(cols, v)
        _check_upper_set(cols, v, mask, h)
        assert h == pytest.approx(R.maximal_upper_set_brute(cols, v), abs=1e-12)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(0, 3), st.integers(-3, 3)),
        min_size=1,
        max_size=9,
    )
)
def test_maximal_upper_set_hypothesis(points):
    cols = np.array([c for c, _ in points])
    v = np.array([float(x) for _, x in points])
    mask, h = scir.maximal_upper_set(cols, v)
    _check_upper_set(cols, v, mask, h)
    assert h == R.maximal_upper_set_brute(cols, v)  # integers: exact


def test_algorithm2_as_printed_misses_the_maximal_upper_set():
    """The printed pseudo-code takes a point of value >= 0 whenever j > l, without
    comparing with M[i + 1, j] as lemma A.11 does. Here it returns the whole set (H =
    0, 'the block is constant') while {x_3} has H = 100 / 21 > 0."""
    y = np.array([1.0, 0.0, 1.0])
    w = np.array([1.0, 10.0, 10.0])
    v = w * (y - np.sum(w * y) / np.sum(w))
    ranks = [1, 1, 2]  # positions 1, 2, 3 of the sorted grid
    printed = R.algorithm2_as_printed(ranks, v.tolist())
    assert printed == [0, 1, 2] and abs(v[printed].sum()) < 1e-12
    mask, h = scir.maximal_upper_set(np.array(ranks) - 1, v)
    assert mask.tolist() == [False, False, True] and h == pytest.approx(100 / 21)
    assert R.maximal_upper_set_brute(np.array(ranks), v) == pytest.approx(100 / 21)
    # and the fit is the isotonic regression, not the constant
    g = scir.isotonic_regression_2d([0.1, 0.2, 0.3], ranks, y, w)
    np.testing.assert_allclose(g, [1 / 11, 1 / 11, 1.0], rtol=0, atol=1e-15)


# ----------------------------------------------------- two-dimensional isotonic fit


def test_isotonic_matches_max_min_formula_exactly():
    rng = np.random.default_rng(1)
    for _ in range(150):
        n = int(rng.integers(1, 9))
        x = rng.integers(0, 4, n) / 4  # ties in x, identical points
        r = rng.integers(1, 4, n)
        y = rng.choice([0.0, 0.5, 1.0], n)
        w = rng.choice([0.5, 1.0, 2.25], n)
        g = scir.isotonic_regression_2d(x, r, y, w)
        np.testing.assert_allclose(g, R.isotonic_minmax(x, r, y, w), rtol=0, atol=1e-12)


def test_isotonic_matches_quadratic_programme():
    rng = np.random.default_rng(2)
    for trial in range(30):
        n = int(rng.integers(5, 30))
        x = rng.random(n) if trial % 2 else rng.integers(0, 6, n) / 6
        r = rng.integers(1, 5, n)
        y = rng.random(n) if trial % 3 else rng.integers(0, 2, n).astype(float)
        w = rng.choice([0.5, 1.0, 2.25], n)
        g = scir.isotonic_regression_2d(x, r, y, w)
        g_qp, objective = R.isotonic_qp(x, r, y, w)
        np.testing.assert_allclose(g, g_qp, rtol=0, atol=1e-6)
        assert np.sum(w * (g - y) ** 2) <= objective + 1e-12
        # feasible: g_i <= g_j whenever i is below j
        i, j = np.nonzero(R.below(x, r))
        assert (g[i] <= g[j] + 1e-15).all()


def test_one_rank_is_pav_with_tied_scores_pooled():
    rng = np.random.default_rng(3)
    for _ in range(20):
        n = int(rng.integers(1, 300))
        x = np.round(rng.random(n), 2)
        y = rng.integers(0, 2, n).astype(float)
        w = rng.choice([0.5, 1.0, 2.25], n)
        g = scir.isotonic_regression_2d(x, np.ones(n, dtype=int), y, w)
        ref = IsotonicRegression().fit(x, y, sample_weight=w).predict(x)
        np.testing.assert_allclose(g, ref, rtol=0, atol=1e-12)


def _bounded_upper_set_calls(n_points):
    """A stand-in for scir.maximal_upper_set that raises once it has been called more
    often than a terminating fit can call it: at most two passes (floating point, then
    exact) per node of a split tree with ``n_points`` leaves."""
    budget = [2 * (2 * n_points - 1)]
    real = scir.maximal_upper_set

    def bounded(*args, **kwargs):
        budget[0] -= 1
        assert budget[0] >= 0, "maximal_upper_set called too often: the splitting loops"
        return real(*args, **kwargs)

    return bounded


_HANG_CASE = """
from streamcal.core import scir
g = scir.isotonic_regression_2d([0.6, 0.7, 0.7], [1, 1, 1], [1.0, 0.0, 1.0], [1.0, 1e70, 1e70])
assert g.tolist() == [0.5, 0.5, 0.5], g
from streamcal import SCIR
cal = SCIR(window_size=30, refit_every=3)
cal.learn_one({"a": 0.6, "b": 0.4}, "a", 1.0)
for t in range(6):
    cal.learn_one({"a": 0.3, "b": 0.7}, "ab"[t % 2], 1e70)
print(cal.predict_one({"a": 0.5, "b": 0.5}))
"""


def test_split_fit_terminates_when_weights_differ_by_1e70():
    """Weight 1 beside weight 1e70: w (y - mean) of the heavy point rounded to 0, the
    whole block had H = 0.5 > 0 and was 'split' into itself and the empty set, forever.
    Run in a subprocess with a hard timeout so a regression fails instead of hanging."""
    import subprocess
    import sys

    out = subprocess.run(
        [sys.executable, "-c", _HANG_CASE], capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0, out.stderr
    # in-process as well, with a bound on the number of passes
    with mock.patch.object(scir, "maximal_upper_set", _bounded_upper_set_calls(2)):
        g = scir.isotonic_regression_2d([0.6, 0.7, 0.7], [1, 1, 1], [1.0, 0.0, 1.0], [1.0, 1e70, 1e70])
    assert g.tolist() == [0.5, 0.5, 0.5]


def test_light_point_gets_its_own_value_beside_heavy_ones():
    """A split that only a point of weight 1e-70 gains from is found (exact path): the
    floating-point pass would pool it with the heavy points at 0.5."""
    x, r = [0.25, 0.75, 0.25, 0.75], [1, 3, 2, 2]
    y, w = [0.0, 0.5, 1.0, 0.0], [1e-70, 1e70, 1e70, 1e70]
    g = scir.isotonic_regression_2d(x, r, y, w)
    np.testing.assert_allclose(g, R.isotonic_minmax(x, r, y, w), rtol=0, atol=1e-12)
    assert g[0] == 0.0


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.integers(0, 3),
            st.integers(1, 3),
            st.sampled_from([0.0, 0.25, 0.5, 1.0]),
            st.sampled_from([1.0, 1e-70, 1e70]),
        ),
        min_size=1,
        max_size=8,
    )
)
def test_isotonic_with_extreme_weights_terminates_and_matches_max_min_formula(points):
    x = np.array([p[0] / 4 for p in points])
    r = np.array([p[1] for p in points])
    y = np.array([p[2] for p in points])
    w = np.array([p[3] for p in points])
    with mock.patch.object(scir, "maximal_upper_set", _bounded_upper_set_calls(len(points))):
        g = scir.isotonic_regression_2d(x, r, y, w)
    np.testing.assert_allclose(g, R.isotonic_minmax(x, r, y, w), rtol=0, atol=1e-12)


def test_isotonic_rejects_bad_weights_and_lengths():
    with pytest.raises(ValueError):
        scir.isotonic_regression_2d([0.1, 0.2], [1, 1], [0.0, 1.0], [1.0, 0.0])
    with pytest.raises(ValueError):
        scir.isotonic_regression_2d([0.1, 0.2], [1], [0.0, 1.0])
    assert scir.isotonic_regression_2d([], [], []).tolist() == []


@pytest.mark.parametrize(
    "K, n, ties", [(3, 400, True), (5, 1500, False), (6, 600, True)]
)
def test_fit_is_optimal_on_larger_windows(K, n, ties):
    """The optimality certificate of isotonic regression (Robertson, Wright and Dykstra,
    theorem 1.3.1): the fit is feasible, every level set has its weighted mean, and no
    upper set has a positive sum of weighted residuals (checked by the maximal upper set
    of the residuals, itself checked against brute force above)."""
    rng = np.random.default_rng(K + n)
    P, labels, w = random_events(rng, n, K, ties)
    keep = w > 0
    q, y, ww = scir.sorted_cumulative_points(P[keep], labels[keep], w[keep])
    r = np.broadcast_to(np.arange(1, K), q.shape)
    _, _, _, rs, W, WY = scir._pool(q.ravel(), r.ravel(), y.ravel(), ww.ravel())
    _, _, _, _, _, g = scir._fit_pooled(q.ravel(), r.ravel(), y.ravel(), ww.ravel())
    for j in range(1, K):  # feasible: no point below a rank-j point has a larger value
        m = rs <= j
        running = np.maximum.accumulate(g[m])
        at_j = rs[m] == j
        assert (running[at_j] <= g[m][at_j] + 1e-14).all()
    for value in np.unique(g):
        s = g == value
        assert abs(WY[s].sum() / W[s].sum() - value) <= 1e-12
    residuals = WY - W * g
    assert abs(residuals.sum()) <= 1e-9  # so no lower set has a negative sum either
    _, h = scir.maximal_upper_set(rs - 1, residuals)
    assert h <= 1e-9


# ------------------------------------------------------------------------- the map


def test_two_classes_is_top_label_isotonic_regression():
    rng = np.random.default_rng(4)
    P, labels, w = random_events(rng, 500, 2)
    m = scir.fit_scir(P, labels, w)
    keep = w > 0
    top = P[keep].max(axis=1)
    p_label = P[keep][np.arange(keep.sum()), labels[keep]]
    right = np.where(P[keep, 0] == P[keep, 1], 0.5, (p_label == top).astype(float))
    iso = IsotonicRegression().fit(top, right, sample_weight=w[keep])
    for t in np.unique(top):
        assert m.value(float(t), 1) == pytest.approx(
            float(iso.predict([t])[0]), abs=1e-12
        )


@pytest.mark.parametrize("K", [2, 3, 4, 5])
def test_predict_matches_oracle(K):
    rng = np.random.default_rng(10 + K)
    for trial in range(4):
        P, labels, w = random_events(rng, 40, K, ties=trial % 2 == 0)
        if not (w > 0).any():
            continue
        m = scir.fit_scir(P, labels, w)
        m._check()
        xs, rs, g = fitted_points(P, labels, w)
        for p in query_vectors(rng, K, 6) + [list(row) for row in P[:8]]:
            for eps in (0.0, 1e-6, 0.05):
                got = m.predict(p, eps)
                ref = R.predict(xs.tolist(), rs.tolist(), g.tolist(), p, eps)
                np.testing.assert_allclose(got, ref, rtol=0, atol=1e-12)


def test_map_is_monotone_and_equals_the_fit_at_fitted_points():
    rng = np.random.default_rng(5)
    for K in (3, 5):
        P, labels, w = random_events(rng, 300, K)
        m = scir.fit_scir(P, labels, w)
        xs, rs, g = fitted_points(P, labels, w)
        for x, r, gi in zip(xs.tolist(), rs.tolist(), g.tolist()):
            assert m.value(x, r) == pytest.approx(gi, abs=1e-12)
        qa = rng.random(2000) * 1.1 - 0.05
        qb = qa + rng.random(2000) * rng.choice([0.0, 0.01, 0.3], 2000)
        ra = rng.integers(1, K, 2000)
        rb = np.minimum(ra + rng.integers(0, 2, 2000), K - 1)
        for a, b, i, j in zip(qa.tolist(), qb.tolist(), ra.tolist(), rb.tolist()):
            assert m.value(a, i) <= m.value(b, j)
            assert 0.0 <= m.value(a, i) <= 1.0
        assert m.value(-1.0, 1) == m.low == g.min()


def test_predict_many_matches_predict_exactly():
    rng = np.random.default_rng(6)
    for K in (1, 2, 4, 6):
        P, labels, w = random_events(rng, 200, K)
        if K == 1:
            P = np.ones((200, 1))
        m = scir.fit_scir(P, labels, w)
        Q = np.array(query_vectors(rng, K, 40) + [list(row) for row in P[:40]])
        for eps in (0.0, 1e-6):
            many = m.predict_many(Q, eps)
            assert many.tolist() == [m.predict(list(q), eps) for q in Q.tolist()]


def test_predictions_are_probability_vectors_and_class_order_free():
    rng = np.random.default_rng(7)
    K = 5
    P, labels, w = random_events(rng, 400, K)
    m = scir.fit_scir(P, labels, w)
    perm = rng.permutation(K)
    inverse = np.argsort(perm)
    m_perm = scir.fit_scir(P[:, perm], inverse[labels], w)
    assert m_perm == m  # same points whatever the order of the classes
    for p in query_vectors(rng, K, 50):
        out = m.predict(p, 1e-6)
        assert abs(math.fsum(out) - 1.0) <= 1e-12 and min(out) > 0.0
        out_perm = m_perm.predict([p[i] for i in perm], 1e-6)
        assert out_perm == [out[i] for i in perm]
        tied = [i for i in range(K) if p[i] == p[0]]
        assert len({out[i] for i in tied}) == 1  # tied classes share their mass


def test_weights_zero_dropped_and_integer_weights_are_repetitions():
    rng = np.random.default_rng(8)
    P, labels, w = random_events(rng, 300, 4)
    keep = w > 0
    assert scir.fit_scir(P, labels, w) == scir.fit_scir(P[keep], labels[keep], w[keep])
    P, labels = P[:100], labels[:100]
    twice = scir.fit_scir(P, labels, np.full(100, 2.0))
    repeated = scir.fit_scir(np.repeat(P, 2, axis=0), np.repeat(labels, 2))
    assert twice.thresholds == repeated.thresholds  # values: sums in another order
    for a, b in zip(twice.values, repeated.values):
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-15)
    with pytest.raises(ValueError):
        scir.fit_scir(P, labels, np.zeros(100))


def test_degenerate_fits():
    # one class
    m = scir.fit_scir([[1.0], [1.0]], [0, 0])
    assert (
        m.n_classes == 1
        and m.predict([1.0]) == [1.0]
        and m.predict_many([[1.0]]).tolist() == [[1.0]]
    )
    m._check()
    # the label is always the top class: the map is 1 at every rank
    P = np.array([[0.7, 0.2, 0.1], [0.4, 0.35, 0.25], [1.0, 0.0, 0.0]])
    m = scir.fit_scir(P, [0, 0, 0])
    assert m.values == [[1.0], [1.0]] and m.low == 1.0
    assert m.predict([0.2, 0.5, 0.3], 0.0) == [0.0, 1.0, 0.0]
    # the label is always a class of probability 0 (tied with another in the first
    # two events): the top class is never right, whatever its probability
    m = scir.fit_scir([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.5, 0.5, 0.0]], [2, 2, 2])
    assert m.values == [[0.0], [0.0, 1 / 3]]
    assert m.predict([0.0, 0.0, 1.0], 0.0) == [0.5, 0.5, 0.0]
    assert m.predict([1.0, 0.0, 0.0], 0.0) == [0.0, 0.5, 0.5]  # tied at 0
    m._check()


def test_map_state_round_trip_and_check_catches_corruption():
    rng = np.random.default_rng(9)
    P, labels, w = random_events(rng, 200, 4)
    m = scir.fit_scir(P, labels, w)
    again = scir.SCIRMap.from_list(json.loads(json.dumps(m.to_list())))
    assert again == m and again.thresholds == m.thresholds
    again._check()
    assert "SCIRMap(n_classes=4" in repr(m)
    bad = scir.SCIRMap.from_list(m.to_list())
    bad.values[0] = bad.values[0][::-1]
    with pytest.raises(AssertionError):
        bad._check()
    bad = scir.SCIRMap.from_list(m.to_list())
    bad.values[2] = [0.0] * len(bad.values[2])  # rank 3 below rank 2
    with pytest.raises(AssertionError):
        bad._check()


def test_fit_time_is_small_for_12500_events_and_5_classes():
    """Not a timing assertion (the benchmark measures it): the fit runs, and its split
    tree stays small."""
    rng = np.random.default_rng(12)
    P, labels, _ = random_events(rng, 12_500, 5, ties=False)
    calls = []
    original = scir.maximal_upper_set

    def counting(*args):
        calls.append(len(args[1]))
        return original(*args)

    scir.maximal_upper_set = counting
    try:
        m = scir.fit_scir(P, labels)
    finally:
        scir.maximal_upper_set = original
    m._check()
    assert len(calls) < 2000 and sum(calls) < 40 * 50_000


# ------------------------------------------------------------------------ the shell


def stream(seed, n, classes=("a", "b", "c", "d"), late=True):
    """Events ``(scores, label, w)`` with ties, zeros, missing keys, a late class and
    zero weights."""
    rng = np.random.default_rng(seed)
    out = []
    for t in range(n):
        k = len(classes) - 1 if late and t < n // 3 else len(classes)
        truth = rng.dirichlet(np.full(k, 0.8))
        label = classes[int(rng.choice(k, p=truth))]
        p = truth**2.5
        p = np.round(p / p.sum() * 20) / 20
        p[-1] = max(0.0, 1.0 - p[:-1].sum())
        p /= p.sum()
        scores = {
            c: float(v) for c, v in zip(classes[:k], p) if v > 0 or rng.random() < 0.5
        }
        if not scores:
            scores = {label: 1.0}
        w = float(rng.choice([1.0, 1.0, 0.5, 2.25, 0.0]))
        out.append((scores, label, w))
    return out


def batch_fit(events):
    """The fit on ``events`` built independently: classes with positive probability
    or as label in a positive-weight event; columns in an arbitrary (sorted) order."""
    pos = [(s, y, w) for s, y, w in events if w > 0]
    if not pos:
        return None, set()
    classes = sorted(
        {y for _, y, _ in pos} | {c for s, _, _ in pos for c, p in s.items() if p > 0},
        key=repr,
    )
    col = {c: j for j, c in enumerate(classes)}
    P = np.zeros((len(pos), len(classes)))
    for i, (s, _, _) in enumerate(pos):
        for c, p in s.items():
            if p > 0:
                P[i, col[c]] = p
    labels = [col[y] for _, y, _ in pos]
    return scir.fit_scir(P, labels, [w for _, _, w in pos]), set(classes)


@pytest.mark.parametrize(
    "window_size, refit_every", [(50, 10), (30, 7), (100, 100), (1, 1), (40, 80)]
)
def test_every_refit_equals_the_batch_fit_on_the_window(window_size, refit_every):
    cal = SCIR(window_size=window_size, refit_every=refit_every)
    tail = collections.deque(maxlen=window_size)
    probes = [
        {"a": 0.5, "b": 0.3, "c": 0.2},
        {"a": 0.25, "b": 0.25, "c": 0.25, "d": 0.25},
        {"d": 1.0},
    ]
    last = [cal.predict_one(x) for x in probes]
    assert last == probes  # cold start
    for t, (s, y, w) in enumerate(stream(window_size + refit_every, 400), start=1):
        cal.learn_one(s, y, w)
        tail.append((s, y, w))
        cal._check()
        now = [cal.predict_one(x) for x in probes]
        if t % refit_every == 0:
            expected, classes = batch_fit(list(tail))
            assert cal.calibration_map == expected
            assert set(cal.fitted_classes) == classes
        else:
            assert now == last
        last = now


def test_cold_start_and_window_without_weight():
    cal = SCIR(window_size=3, refit_every=3)
    x = {"a": 0.6, "b": 0.4}
    assert cal.predict_one(x) == x and cal.predict_one(x) is not x
    for y in "abb":
        cal.learn_one(x, y, 0.0)
    assert cal.calibration_map is None and cal.fitted_classes == ()
    assert cal.predict_one(x) == x
    assert cal.classes == ("a", "b")
    for y in "aba":
        cal.learn_one(x, y)
    assert cal.calibration_map is not None
    assert cal.predict_one(x) == pytest.approx({"a": 2 / 3, "b": 1 / 3}, abs=1e-5)
    for y in "abb":
        cal.learn_one(x, y, 0.0)
    assert cal.calibration_map is None and cal.predict_one(x) == x


def test_unknown_classes_keep_their_raw_probability():
    cal = SCIR(window_size=20, refit_every=20)
    for i in range(20):
        cal.learn_one({"a": 0.7, "b": 0.2, "c": 0.1}, "aab"[i % 3])
    assert cal.fitted_classes == ("a", "b", "c")
    base = cal.predict_one({"a": 0.7, "b": 0.2, "c": 0.1})
    out = cal.predict_one({"a": 0.35, "b": 0.1, "c": 0.05, "z": 0.5})
    assert out["z"] == 0.5
    for c in "abc":  # the known part is renormalised, calibrated and rescaled
        assert out[c] == pytest.approx(0.5 * base[c], abs=1e-15)
    out = cal.predict_one({"z": 1.0})
    assert out == {"a": 0.0, "b": 0.0, "c": 0.0, "z": 1.0}
    out = cal.predict_one({"a": 1.0})  # known classes absent from the scores
    assert set(out) == {"a", "b", "c"} and abs(math.fsum(out.values()) - 1) < 1e-12
    cal.learn_one({"a": 0.5, "y": 0.5}, "new")  # new classes as keys and as label
    assert cal.classes == ("a", "b", "c", "y", "new")


def test_one_class_window():
    cal = SCIR(window_size=10, refit_every=5)
    for _ in range(5):
        cal.learn_one({"a": 1.0}, "a")
    assert cal.fitted_classes == ("a",)
    assert cal.predict_one({"a": 1.0}) == {"a": 1.0}
    assert cal.predict_one({"a": 0.25, "b": 0.75}) == {"a": 0.25, "b": 0.75}


def test_epsilon_floors_and_zero_keeps_zeros():
    for eps, low in ((0.0, 0.0), (0.01, 0.01 / 1.02)):
        cal = SCIR(window_size=10, refit_every=10, epsilon=eps)
        for _ in range(10):
            cal.learn_one({"a": 0.6, "b": 0.3, "c": 0.1}, "a")
        out = cal.predict_one({"a": 0.6, "b": 0.3, "c": 0.1})
        assert out["b"] == pytest.approx(low, abs=1e-15) and out["c"] == out["b"]


def test_snapshots_restore_and_continue_identically():
    events = stream(3, 300, classes=(0, "b", 2.5, 3.5))
    cal = SCIR(window_size=80, refit_every=25)
    for s, y, w in events[:200]:
        cal.learn_one(s, y, w)
    copies = [
        pickle.loads(pickle.dumps(cal)),
        MulticlassCalibrator.from_dict(json.loads(json.dumps(cal.to_dict()))),
    ]
    for other in copies:
        assert type(other) is SCIR and other.classes == cal.classes
        assert other.calibration_map == cal.calibration_map
        other._check()
    for s, y, w in events[200:]:
        cal.learn_one(s, y, w)
        for other in copies:
            other.learn_one(s, y, w)
            assert other.predict_one(s) == cal.predict_one(s)
    assert copies[1].to_dict() == cal.to_dict()


def test_bad_input_leaves_the_state_unchanged():
    cal = SCIR(window_size=10, refit_every=4)
    for s, y, w in stream(4, 30):
        cal.learn_one(s, y, w)
    before = json.dumps(cal.to_dict())
    for args in (
        ({"a": 0.5, "b": 0.6}, "a"),
        ({"a": 1.0}, ["a"]),
        ({"a": 1.0}, "a", -1.0),
        ("x", "a"),
    ):
        with pytest.raises((ValueError, TypeError)):
            cal.learn_one(*args)
    with pytest.raises(ValueError, match="'scores'"):
        cal.predict_one({"a": 0.5})
    assert json.dumps(cal.to_dict()) == before


@pytest.mark.parametrize(
    "params, name",
    [
        ({"window_size": 0}, "window_size"),
        ({"refit_every": 1.5}, "refit_every"),
        ({"epsilon": -0.1}, "epsilon"),
        ({"epsilon": 1.0}, "epsilon"),
        ({"epsilon": "0"}, "epsilon"),
    ],
)
def test_parameters_are_validated(params, name):
    with pytest.raises(
        (ValueError, TypeError), match=f"'{name}' argument of SCIR must be"
    ):
        SCIR(**params)
