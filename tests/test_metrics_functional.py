"""Batch metrics in streamcal.metrics._functional.

References: scikit-learn's ``brier_score_loss`` and ``log_loss``; for the ECE a slow
pure-Python oracle written below from the definition; and the Murphy (1973)
decomposition of the Brier score, Brier = reliability - resolution + uncertainty, which
holds exactly when every bin holds a single forecast value.
"""

from __future__ import annotations

import math
import random

import numpy as np
import pytest
import sklearn.metrics
from hypothesis import given, settings
from hypothesis import strategies as st

from streamcal.metrics import brier_score, expected_calibration_error, log_loss
from streamcal.metrics._functional import _bin_indices, _binned


def ece_oracle(labels, probs, n_bins, strategy):
    """ECE from the definition, with plain loops.

    Bin i holds the probabilities p with e_i <= p < e_{i+1}, the last bin also p = e_K;
    e_i = i / K ("uniform") or numpy's linear i/K-quantile of the probabilities
    ("quantile": the edges are the definition, so numpy computes them; membership and
    the sums are done here by hand).
    """
    probs = [float(p) for p in probs]
    labels = [float(y) for y in labels]
    n = len(probs)
    if strategy == "uniform":
        edges = [i / n_bins for i in range(n_bins + 1)]
    else:
        edges = [float(e) for e in np.quantile(probs, [i / n_bins for i in range(n_bins + 1)])]
        for i in range(1, len(edges)):
            edges[i] = max(edges[i], edges[i - 1])
    seen = [0] * n
    total = 0.0
    for i in range(n_bins):
        lo, hi = edges[i], edges[i + 1]
        last = i == n_bins - 1
        members = [k for k in range(n) if lo <= probs[k] < hi or (last and lo <= probs[k] <= hi)]
        for k in members:
            seen[k] += 1
        if members:
            mean_y = sum(labels[k] for k in members) / len(members)
            mean_p = sum(probs[k] for k in members) / len(members)
            total += len(members) / n * abs(mean_y - mean_p)
    assert seen == [1] * n, "every probability must fall in exactly one bin"
    return total


def random_case(rng, n, ties=False):
    p = rng.random(n)
    if ties:
        p = np.round(p, 1)
    y = (rng.random(n) < p ** 1.5).astype(int)  # miscalibrated on purpose
    return y, p


# ---------------------------------------------------------------------- Brier, log loss


@pytest.mark.parametrize("seed", range(10))
def test_brier_matches_sklearn(seed):
    rng = np.random.default_rng(seed)
    y, p = random_case(rng, int(rng.integers(1, 300)), ties=seed % 2 == 0)
    p[: len(p) // 10] = rng.integers(0, 2, len(p) // 10)  # some exact 0s and 1s
    expected = sklearn.metrics.brier_score_loss(y, p, labels=[0, 1])
    assert brier_score(y, p) == pytest.approx(expected, rel=1e-12, abs=1e-15)


@pytest.mark.parametrize("seed", range(10))
def test_log_loss_matches_sklearn(seed):
    rng = np.random.default_rng(seed)
    y, p = random_case(rng, int(rng.integers(1, 300)))
    p = np.clip(p, 1e-6, 1 - 1e-6)  # away from the clipping, where both agree exactly
    expected = sklearn.metrics.log_loss(y, p, labels=[0, 1])
    assert log_loss(y, p) == pytest.approx(expected, rel=1e-12)


def test_log_loss_clips_and_never_nans():
    # certain and right costs nothing; certain and wrong costs -log(eps)
    assert log_loss([0, 1], [0.0, 1.0]) == pytest.approx(-math.log1p(-1e-15), abs=1e-15)
    assert log_loss([1], [0.0]) == pytest.approx(-math.log(1e-15))
    assert log_loss([1], [0.0], eps=1e-3) == pytest.approx(-math.log(1e-3))
    assert log_loss([0, 1], [0.0, 1.0], eps=0.0) == 0.0
    assert log_loss([1, 0], [0.0, 0.5], eps=0.0) == math.inf


def test_bool_and_float_labels_are_accepted():
    p = [0.2, 0.7, 0.9]
    assert brier_score([False, True, True], p) == brier_score([0.0, 1.0, 1.0], p) == brier_score([0, 1, 1], p)


# ---------------------------------------------------------------------- ECE


@pytest.mark.parametrize("strategy", ["uniform", "quantile"])
@pytest.mark.parametrize("seed", range(12))
def test_ece_matches_oracle(seed, strategy):
    rng = np.random.default_rng(seed)
    y, p = random_case(rng, int(rng.integers(1, 400)), ties=seed % 3 == 0)
    n_bins = int(rng.integers(1, 25))
    got = expected_calibration_error(y, p, n_bins=n_bins, strategy=strategy)
    assert got == pytest.approx(ece_oracle(y, p, n_bins, strategy), abs=1e-12)


@settings(max_examples=150, deadline=None)
@given(
    data=st.lists(
        st.tuples(st.integers(0, 1), st.floats(0.0, 1.0) | st.sampled_from([0.0, 0.1, 0.3, 0.5, 0.7, 1.0])),
        min_size=1,
        max_size=60,
    ),
    n_bins=st.integers(1, 15),
    strategy=st.sampled_from(["uniform", "quantile"]),
)
def test_ece_matches_oracle_hypothesis(data, n_bins, strategy):
    y, p = zip(*data)
    got = expected_calibration_error(list(y), list(p), n_bins=n_bins, strategy=strategy)
    assert got == pytest.approx(ece_oracle(y, p, n_bins, strategy), abs=1e-12)
    assert 0.0 <= got <= 1.0


def test_uniform_bins_are_half_open_and_the_last_is_closed():
    p = np.array([0.0, 0.0999, 0.1, 0.3, 0.7, 0.9, 0.999, 1.0])
    assert _bin_indices(p, 10, "uniform").tolist() == [0, 0, 1, 3, 7, 9, 9, 9]
    assert _bin_indices(p, 1, "uniform").tolist() == [0] * len(p)


def test_quantile_bins_have_equal_mass_and_keep_ties_together():
    rng = np.random.default_rng(0)
    p = rng.permutation(np.arange(1000) / 1000)
    counts, _, _ = _binned(np.zeros(1000), p, 10, "quantile")
    assert counts.tolist() == [100] * 10
    # half the probabilities tied at one value: that value's events share one bin
    p = np.concatenate([np.full(500, 0.25), rng.random(500)])
    idx = _bin_indices(p, 10, "quantile")
    assert len(set(idx[:500].tolist())) == 1


@pytest.mark.parametrize("strategy", ["uniform", "quantile"])
def test_ece_is_invariant_to_the_order_of_events(strategy):
    rng = np.random.default_rng(1)
    y, p = random_case(rng, 500, ties=True)
    perm = rng.permutation(500)
    a = expected_calibration_error(y, p, strategy=strategy)
    b = expected_calibration_error(y[perm], p[perm], strategy=strategy)
    assert a == pytest.approx(b, abs=1e-14)


def test_ece_special_cases():
    # one bin: |mean label - mean probability|
    assert expected_calibration_error([1, 0, 0], [0.2, 0.5, 0.8], n_bins=1) == pytest.approx(0.5 - 1 / 3)
    # forecasts that match the frequency within each bin: 0
    y = [1, 0, 0, 0, 1, 1, 1, 0]
    p = [0.25, 0.25, 0.25, 0.25, 0.75, 0.75, 0.75, 0.75]
    assert expected_calibration_error(y, p) == pytest.approx(0.0, abs=1e-15)
    assert expected_calibration_error(y, p, strategy="quantile") == pytest.approx(0.0, abs=1e-15)
    # all wrong and certain: 1
    assert expected_calibration_error([0, 1], [1.0, 0.0]) == 1.0


@pytest.mark.parametrize("seed", range(5))
def test_murphy_decomposition_and_ece_bounds(seed):
    """With one forecast value per bin (bin centres), Brier = REL - RES + UNC exactly,
    and ECE^2 <= REL <= ECE (Jensen; |d| <= 1)."""
    rng = random.Random(seed)
    values = [(k + 0.5) / 10 for k in range(10)]
    p = [rng.choice(values) for _ in range(400)]
    y = [int(rng.random() < min(1.0, 1.3 * pk)) for pk in p]
    n, ybar = len(p), sum(y) / len(y)
    rel = res = 0.0
    for v in set(p):
        idx = [k for k in range(n) if p[k] == v]
        o = sum(y[k] for k in idx) / len(idx)
        rel += len(idx) / n * (v - o) ** 2
        res += len(idx) / n * (o - ybar) ** 2
    unc = ybar * (1 - ybar)
    assert brier_score(y, p) == pytest.approx(rel - res + unc, abs=1e-12)
    ece = expected_calibration_error(y, p, n_bins=10)
    assert ece**2 - 1e-12 <= rel <= ece + 1e-12


def test_ece_of_a_calibrated_forecaster_shrinks_with_n():
    rng = np.random.default_rng(2)
    p = rng.random(200_000)
    y = (rng.random(200_000) < p).astype(int)
    # sampling noise only: about 0.4 * sqrt(n_bins / n) ~ 0.003 here
    assert expected_calibration_error(y, p) < 0.01
    assert expected_calibration_error(y, p ** 2) > 0.1


# ---------------------------------------------------------------------- bad input

GOOD_Y, GOOD_P = [0, 1, 1], [0.2, 0.6, 0.9]
FUNCS = [brier_score, log_loss, expected_calibration_error]


@pytest.mark.parametrize("func", FUNCS, ids=lambda f: f.__name__)
@pytest.mark.parametrize(
    "labels, probs, exc, pieces",
    [
        (GOOD_Y, [0.2, 1.5, 0.9], ValueError, ["'probs'", "[0, 1]", "1.5 at index 1"]),
        (GOOD_Y, [0.2, float("nan"), 0.9], ValueError, ["'probs'", "nan at index 1"]),
        (GOOD_Y, [0.2, -0.1, 0.9], ValueError, ["'probs'", "-0.1"]),
        (GOOD_Y, ["a", 0.5, 0.9], TypeError, ["'probs'"]),
        ([0, 2, 1], GOOD_P, ValueError, ["'labels'", "binary label", "2 at index 1"]),
        ([0, 0.5, 1], GOOD_P, ValueError, ["'labels'", "0.5 at index 1"]),
        ([0, None, 1], GOOD_P, TypeError, ["'labels'", "None"]),
        (GOOD_Y, [0.2, 0.6], ValueError, ["'probs'", "same length as 'labels' (3)", "length 2"]),
        ([], [], ValueError, ["'labels'", "non-empty"]),
        ([[0, 1]], [[0.2, 0.6]], ValueError, ["'labels'", "one-dimensional", "(1, 2)"]),
        (GOOD_Y, [[0.2, 0.6, 0.9]], ValueError, ["'probs'", "one-dimensional"]),
    ],
)
def test_bad_arrays_name_the_argument(func, labels, probs, exc, pieces):
    with pytest.raises(exc) as info:
        func(labels, probs)
    message = str(info.value)
    assert func.__name__ in message
    for piece in pieces:
        assert piece in message


@pytest.mark.parametrize(
    "kwargs, exc, pieces",
    [
        ({"n_bins": 0}, ValueError, ["'n_bins'", "int >= 1", "Got 0"]),
        ({"n_bins": 2.5}, TypeError, ["'n_bins'", "2.5"]),
        ({"n_bins": True}, TypeError, ["'n_bins'", "True"]),
        ({"strategy": "equal"}, ValueError, ["'strategy'", "'uniform'", "'quantile'", "'equal'"]),
        ({"strategy": None}, TypeError, ["'strategy'", "None"]),
    ],
)
def test_bad_ece_parameters(kwargs, exc, pieces):
    with pytest.raises(exc) as info:
        expected_calibration_error(GOOD_Y, GOOD_P, **kwargs)
    for piece in ["expected_calibration_error", *pieces]:
        assert piece in str(info.value)


@pytest.mark.parametrize("eps, exc", [(-1e-3, ValueError), (0.5, ValueError), (float("nan"), ValueError), ("1e-15", TypeError)])
def test_bad_log_loss_eps(eps, exc):
    with pytest.raises(exc, match="'eps' argument of log_loss"):
        log_loss(GOOD_Y, GOOD_P, eps=eps)
