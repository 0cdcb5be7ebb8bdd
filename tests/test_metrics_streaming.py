"""The binary streaming metrics against batch oracles (numpy, scikit-learn and
``tests/references_metrics.py``) at many prefixes and seeds, with ties, weights, the
edge forecasts 0 and 1 and one-class streams; windows against the tail; the
decompositions as identities."""

import json
import math
import pickle

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from river import utils
from sklearn.metrics import roc_auc_score

from streamcal.metrics import (
    ECE,
    ROCAUC,
    CalibrationRefinement,
    MurphyDecomposition,
    ReliabilityBin,
    Sharpness,
    StreamingMetric,
    _ranking,
    brier_score,
    calibration_refinement,
    expected_calibration_error,
)
from tests import references_metrics as R

TOL = 1e-12


def stream(seed, n=200, labels="bernoulli", weights=True, decimals=2):
    """``(y, p, w)`` arrays: forecasts rounded to ``decimals`` (ties), about 5% exactly 0
    or 1; labels Bernoulli(p ** 1.5), all 0 or all 1; weights 1, 0.5, 0.3, 3 and 0, or
    with ``weights="dyadic"`` 1, 0.5, 0.25, 3 and 0, whose sums are exact (equal-mass
    edges are discontinuous in the cumulative weights: with other weights, rounding can
    move a forecast lying exactly on an edge)."""
    rng = np.random.default_rng(seed)
    p = rng.beta(1.5, 1.5, n)
    if decimals is not None:
        p = np.round(p, decimals)
    edge = rng.random(n) < 0.05
    p[edge] = rng.integers(0, 2, edge.sum())
    if labels == "bernoulli":
        y = (rng.random(n) < p**1.5).astype(int)
    else:
        y = np.full(n, 1 if labels == "ones" else 0)
    choices = [1.0, 1.0, 0.5, 0.25 if weights == "dyadic" else 0.3, 3.0, 0.0]
    w = rng.choice(choices, n) if weights else np.ones(n)
    return y, p, w


def feed(metric, y, p, w=None, check=False):
    for i in range(len(y)):
        metric.update(int(y[i]), float(p[i]), 1.0 if w is None else float(w[i]))
        if check:
            metric._check()
    return metric


def grow(metric, y, p, w=None, check=False):
    """Feed the stream to ``metric`` one event at a time (calling ``_check()`` after
    each if ``check``) and yield the number of events fed so far."""
    for t in range(len(y)):
        metric.update(int(y[t]), float(p[t]), 1.0 if w is None else float(w[t]))
        if check:
            metric._check()
        yield t + 1


def walk(metric, y, p, w, rng, revert_rate):
    """Feed the stream to ``metric``, but at each step (once it holds events) revert a
    random event it holds instead, with probability ``revert_rate``; call ``_check()``
    after each step and yield ``(t, held)``, ``held`` the indices of the events held."""
    held = []
    for t in range(len(y)):
        if held and rng.random() < revert_rate:
            j = held.pop(int(rng.integers(len(held))))
            metric.revert(int(y[j]), float(p[j]), float(w[j]))
        else:
            metric.update(int(y[t]), float(p[t]), float(w[t]))
            held.append(t)
        metric._check()
        yield t, np.array(held, dtype=int)


def prefixes(n, step=13):
    return sorted(set(range(1, n + 1, step)) | {n})


# ====================================================================== ECE


@pytest.mark.parametrize("strategy", ["uniform", "quantile"])
@pytest.mark.parametrize("n_bins", [1, 3, 10])
@pytest.mark.parametrize("labels", ["bernoulli", "zeros", "ones"])
def test_ece_equals_the_batch_function_at_every_prefix(strategy, n_bins, labels):
    for seed in range(3):
        y, p, _ = stream(seed, 150, labels, weights=False, decimals=1 + seed % 2)
        m = ECE(n_bins=n_bins, strategy=strategy)
        for t in grow(m, y, p):
            if t % 7 == 0 or t < 5 or t == len(y):
                want = expected_calibration_error(
                    y[:t], p[:t], n_bins=n_bins, strategy=strategy
                )
                assert m.get() == pytest.approx(want, abs=TOL), (seed, t)


@pytest.mark.parametrize("strategy", ["uniform", "quantile"])
def test_ece_reference_reduces_to_the_batch_function(strategy):
    for seed in range(4):
        y, p, _ = stream(seed, 120, decimals=2)
        assert R.ece(y, p, None, 10, strategy) == pytest.approx(
            expected_calibration_error(y, p, 10, strategy), abs=TOL
        )
        counts = np.random.default_rng(seed).integers(
            0, 4, len(y)
        )  # integer weights = repeats
        assert R.ece(y, p, counts, 5, strategy) == pytest.approx(
            expected_calibration_error(
                np.repeat(y, counts), np.repeat(p, counts), 5, strategy
            ),
            abs=TOL,
        )
        np.testing.assert_array_equal(
            R.quantile_edges(p, np.ones(len(p)), 7),
            np.maximum.accumulate(np.quantile(p, np.arange(8) / 7)),
        )


@pytest.mark.parametrize("strategy", ["uniform", "quantile"])
def test_ece_weighted_matches_the_oracle_at_every_prefix(strategy):
    for seed in range(4):
        y, p, w = stream(seed, 160, weights="dyadic")
        m = ECE(n_bins=6, strategy=strategy)
        for t in grow(m, y, p, w, check=True):
            if t % 11 == 0 or t == len(y):
                assert m.get() == pytest.approx(
                    R.ece(y[:t], p[:t], w[:t], 6, strategy), abs=TOL
                ), (seed, t)


@pytest.mark.parametrize("strategy", ["uniform", "quantile"])
def test_ece_weight_two_is_two_events(strategy):
    y, p, _ = stream(5, 120)
    counts = np.random.default_rng(5).integers(1, 4, len(y))
    weighted = feed(ECE(n_bins=7, strategy=strategy), y, p, counts.astype(float))
    repeated = feed(
        ECE(n_bins=7, strategy=strategy), np.repeat(y, counts), np.repeat(p, counts)
    )
    assert weighted.get() == pytest.approx(repeated.get(), abs=TOL)


@pytest.mark.parametrize("strategy", ["uniform", "quantile"])
def test_ece_window_matches_the_tail(strategy):
    y, p, w = stream(7, 300, weights="dyadic")
    k = 40
    m = ECE(n_bins=5, strategy=strategy, window_size=k)
    held = []
    for t in range(len(y)):
        m.update(int(y[t]), float(p[t]), float(w[t]))
        m._check()
        if w[t] > 0:
            held.append(t)
        if t % 17 == 0:
            tail = held[-k:]
            assert m.get() == pytest.approx(
                R.ece(y[tail], p[tail], w[tail], 5, strategy), abs=TOL
            )


@pytest.mark.parametrize("strategy", ["uniform", "quantile"])
@pytest.mark.parametrize("half_life", [3.0, 25.0])
def test_ece_half_life_matches_decayed_weights(strategy, half_life):
    y, p, w = stream(8, 400)  # 400 events: with half_life 3, several rescalings
    m = ECE(n_bins=5, strategy=strategy, half_life=half_life)
    for t in range(len(y)):
        m.update(int(y[t]), float(p[t]), float(w[t]))
        m._check()
        if t % 23 == 0 or t == len(y) - 1:
            dw = R.decayed_weights(w[: t + 1], half_life)
            assert m.get() == pytest.approx(
                R.ece(y[: t + 1], p[: t + 1], dw, 5, strategy), abs=1e-10
            ), t
    if strategy == "quantile" and half_life == 3.0:
        assert len(m._values) <= 101, "decayed forecasts are forgotten"


def test_ece_rolling_matches_the_batch_function_on_the_tail():
    y, p, _ = stream(9, 250, weights=False)
    for strategy in ("uniform", "quantile"):
        rolling = utils.Rolling(ECE, window_size=30, n_bins=4, strategy=strategy)
        for t in range(len(y)):
            rolling.update(int(y[t]), float(p[t]))
            rolling.obj._check()
            lo = max(0, t - 29)
            want = expected_calibration_error(y[lo : t + 1], p[lo : t + 1], 4, strategy)
            assert rolling.get() == pytest.approx(want, abs=1e-10)


@pytest.mark.parametrize("strategy", ["uniform", "quantile"])
def test_ece_random_updates_and_reverts(strategy):
    rng = np.random.default_rng(10)
    y, p, w = stream(10, 400, weights="dyadic")
    m = ECE(n_bins=4, strategy=strategy)
    for t, idx in walk(m, y, p, w, rng, 0.4):
        if t % 9 == 0:
            assert m.get() == pytest.approx(
                R.ece(y[idx], p[idx], w[idx], 4, strategy), abs=1e-10
            )


@pytest.mark.parametrize("strategy", ["uniform", "quantile"])
@pytest.mark.parametrize("half_life", [None, 10.0])
def test_ece_bins_match_the_oracle(strategy, half_life):
    y, p, w = stream(11, 150, weights="dyadic")
    m = feed(ECE(n_bins=6, strategy=strategy, half_life=half_life), y, p, w)
    ww = w if half_life is None else R.decayed_weights(w, half_life)
    want = R.reliability_bins(y, p, ww, 6, strategy)
    got = m.bins
    assert all(isinstance(b, ReliabilityBin) for b in got)
    assert ReliabilityBin._fields == (
        "lower",
        "upper",
        "weight",
        "mean_prediction",
        "mean_outcome",
    )
    assert len(got) == len(want)
    for g, e in zip(got, want):
        assert g == pytest.approx(e, abs=1e-10)
    assert sum(b.weight for b in got) == pytest.approx(np.sum(ww), rel=1e-12)
    assert ECE().bins == ()


@pytest.mark.parametrize("strategy", ["uniform", "quantile"])
def test_ece_bins_are_the_plot_helper_records(strategy):
    from streamcal import plot

    y, p, w = stream(19, 200, weights="dyadic")
    m = feed(ECE(n_bins=8, strategy=strategy), y, p, w)
    want = plot.binned_reliability(y, p, n_bins=8, strategy=strategy, weights=w)
    assert len(m.bins) == len(want)
    for g, e in zip(m.bins, want):
        assert tuple(g) == pytest.approx(tuple(e), abs=1e-12)


def test_ece_revert_to_empty_is_exact_and_unknown_events_are_refused():
    m = ECE(strategy="quantile")
    m.update(1, 0.3, 0.7)
    m.update(0, 0.6, 0.1)
    with pytest.raises(ValueError, match="previously added"):
        m.revert(1, 0.45)
    m.revert(1, 0.3, 0.7)
    m.revert(0, 0.6, 0.1)
    assert m.get() == 0.0 and m._weight == 0.0 and m._values == {}
    with pytest.raises(ValueError, match="previously added"):
        m.revert(1, 0.3)


@pytest.mark.parametrize(
    "params, message",
    [
        ({"n_bins": 0}, "'n_bins' parameter of ECE must be an int >= 1"),
        ({"n_bins": 2.0}, "'n_bins'"),
        ({"strategy": "equal"}, "'strategy' parameter of ECE must be a str among"),
        ({"window_size": 0}, "'window_size'"),
        ({"half_life": 0.0}, "'half_life'"),
        ({"half_life": math.inf}, "'half_life'"),
        ({"half_life": 5.0, "window_size": 5}, "at most one of the two"),
    ],
)
def test_ece_rejects_bad_parameters(params, message):
    with pytest.raises(ValueError, match=message):
        ECE(**params)


def test_uniform_bin_rule_matches_the_batch_function_near_edges():
    from streamcal.core.binning import uniform_edges
    from streamcal.metrics._binned import uniform_bin

    for n in (1, 3, 6, 7, 10, 13, 49, 100):
        edges = uniform_edges(n)
        for e in np.arange(n + 1) / n:
            for v in (e, np.nextafter(e, -1.0), np.nextafter(e, 2.0)):
                if 0.0 <= v <= 1.0:
                    assert uniform_bin(float(v), n, edges) == R.uniform_bin(v, n), (
                        n,
                        v,
                    )


# ====================================================================== Sharpness


def test_sharpness_is_the_bank_marketing_formula():
    script = R.bank_marketing_sharpness()
    for seed in range(4):
        for labels in ("bernoulli", "zeros", "ones"):
            y, p, _ = stream(
                seed, 200, labels, weights=False, decimals=None if seed % 2 else 2
            )
            m = Sharpness()
            for t in grow(m, y, p):
                if t % 19 == 0 or t == len(y):
                    assert m.get() == pytest.approx(script(y[:t], p[:t]), abs=TOL)


def test_sharpness_weighted_and_reverted():
    rng = np.random.default_rng(12)
    y, p, w = stream(12, 300)
    m = Sharpness(n_bins=4)
    for t, idx in walk(m, y, p, w, rng, 0.3):
        if t % 7 == 0:
            assert m.get() == pytest.approx(
                R.sharpness(y[idx], p[idx], w[idx], 4), abs=1e-10
            )


def test_sharpness_on_binned_forecasts_is_mean_outcome_minus_refinement():
    for seed in range(5):
        y, p, w = stream(seed, 200)
        centres = (
            np.minimum((p * 10).astype(int), 9) + 0.5
        ) / 10  # one forecast per bin
        s = feed(Sharpness(), y, centres, w)
        cr = feed(CalibrationRefinement(), y, centres, w)
        mean_y = np.sum(w * y) / np.sum(w)
        assert mean_y - s.get() == pytest.approx(cr.refinement, abs=TOL)


# ====================================================================== ROCAUC


def test_roc_auc_matches_sklearn_at_every_prefix():
    for seed in range(6):
        y, p, w = stream(seed, 250, decimals=1 + seed % 3)
        m = ROCAUC()
        for t in grow(m, y, p, w):
            pos = w[:t] > 0
            if len(set(y[:t][pos])) < 2:
                assert m.get() == 0.0, "undefined until both classes weigh"
            elif t % 5 == 0 or t == len(y):
                want = roc_auc_score(y[:t], p[:t], sample_weight=w[:t])
                assert m.get() == pytest.approx(want, abs=TOL), (seed, t)


def test_roc_auc_matches_the_pairwise_oracle_unweighted_and_on_one_class():
    for labels in ("bernoulli", "zeros", "ones"):
        y, p, _ = stream(3, 120, labels, weights=False)
        m = feed(ROCAUC(), y, p)
        assert m.get() == pytest.approx(R.auc_pairs(y, p), abs=TOL)


def test_roc_auc_random_updates_and_reverts_with_small_blocks(monkeypatch):
    monkeypatch.setattr(
        _ranking, "_LOAD", 2
    )  # blocks of at most 4: splits and deletions happen
    rng = np.random.default_rng(13)
    for decimals in (1, None):
        y, p, w = stream(13, 500, decimals=decimals)
        m = ROCAUC()
        for t, idx in walk(m, y, p, w, rng, 0.45):
            if t % 10 == 0:
                assert m.get() == pytest.approx(
                    R.auc_pairs(y[idx], p[idx], w[idx]), abs=1e-10
                )
        assert len(m._keys) > 3
        for j in idx.tolist():
            m.revert(int(y[j]), float(p[j]), float(w[j]))
            m._check()
        assert m.get() == 0.0 and m._keys == [] and m._u == 0.0


def test_roc_auc_rolling_matches_sklearn_on_the_tail():
    y, p, _ = stream(14, 300, weights=False)
    rolling = utils.Rolling(ROCAUC, window_size=50)
    for t in range(len(y)):
        rolling.update(int(y[t]), float(p[t]))
        lo = max(0, t - 49)
        if t % 10 == 0 and len(set(y[lo : t + 1])) == 2:
            assert rolling.get() == pytest.approx(
                roc_auc_score(y[lo : t + 1], p[lo : t + 1]), abs=TOL
            )


def test_roc_auc_snapshot_with_many_blocks(monkeypatch):
    monkeypatch.setattr(_ranking, "_LOAD", 3)
    y, p, w = stream(15, 300, decimals=None)
    m = feed(ROCAUC(), y, p, w)
    restored = StreamingMetric.from_dict(json.loads(json.dumps(m.to_dict())))
    restored._check()
    assert pickle.dumps(sorted(vars(restored).items())) == pickle.dumps(
        sorted(vars(m).items())
    )


# ====================================================================== CalibrationRefinement


def _pooled(p, r):
    return np.minimum(1.0, np.floor(p / r + 0.5) * r) if r is not None else p


@pytest.mark.parametrize("resolution", [None, 0.1, 0.3, 1e-3])
def test_calibration_refinement_matches_the_batch_decomposition(resolution):
    for seed in range(4):
        y, p, w = stream(seed, 200, decimals=None if seed == 3 else 2)
        m = CalibrationRefinement(resolution=resolution)
        for t in grow(m, y, p, w, check=True):
            if (t % 9 == 0 or t == len(y)) and w[:t].any():
                want = calibration_refinement(y[:t], _pooled(p[:t], resolution), w[:t])
                got = (m.get(), m.calibration, m.refinement)
                assert got == pytest.approx(tuple(want), abs=TOL), (seed, t)
                assert m.get() == pytest.approx(m.calibration + m.refinement, abs=TOL)
        if resolution is not None:
            assert len(m._groups) <= math.floor(1 / resolution + 0.5) + 1


def test_calibration_refinement_random_updates_and_reverts():
    rng = np.random.default_rng(16)
    for resolution in (None, 0.05):
        y, p, w = stream(16, 500)
        m = CalibrationRefinement(resolution=resolution)
        for t, idx in walk(m, y, p, w, rng, 0.45):
            if t % 10 == 0 and w[idx].any():
                want = calibration_refinement(
                    y[idx], _pooled(p[idx], resolution), w[idx]
                )
                assert (m.get(), m.calibration, m.refinement) == pytest.approx(
                    tuple(want), abs=1e-10
                )
                assert m.get() == pytest.approx(m.calibration + m.refinement, abs=TOL)
        for j in idx.tolist():
            m.revert(int(y[j]), float(p[j]), float(w[j]))
        assert (m.get(), m.calibration, m.refinement, m._groups) == (0.0, 0.0, 0.0, {})


_events = st.lists(
    st.tuples(
        st.integers(0, 1),
        st.sampled_from([0.0, 0.1, 0.25, 0.5, 0.7, 0.9, 1.0, 1 / 3]),
        st.sampled_from([1.0, 0.5, 2.0, 0.3, 1e-3, 0.0, 7.5]),
    ),
    min_size=1,
    max_size=60,
)


@settings(max_examples=150, deadline=None)
@given(events=_events, n_reverts=st.integers(0, 30))
def test_brier_is_calibration_plus_refinement(events, n_reverts):
    m = CalibrationRefinement()
    for y, p, w in events:
        m.update(y, p, w)
        assert abs(m.get() - (m.calibration + m.refinement)) <= TOL
    peak = sum(w for _, _, w in events)
    for y, p, w in events[:n_reverts]:
        m.revert(y, p, w)
        assert abs(m.get() - (m.calibration + m.refinement)) <= TOL * max(
            1.0, peak / m._weight if m._weight else 1.0
        )
        m._check()


# ====================================================================== MurphyDecomposition

_TERMS = (
    "reliability",
    "resolution",
    "uncertainty",
    "within_bin_variance",
    "within_bin_covariance",
)


def _murphy_values(m):
    return {"brier": m.get(), **{k: getattr(m, k) for k in _TERMS}}


def _identity_gap(m):
    terms = (
        m.reliability
        - m.resolution
        + m.uncertainty
        + m.within_bin_variance
        - m.within_bin_covariance
    )
    return abs(m.get() - terms)


@pytest.mark.parametrize("n_bins", [1, 4, 10])
def test_murphy_matches_the_oracle_at_every_prefix(n_bins):
    for seed in range(4):
        y, p, w = stream(seed, 200, decimals=None if seed == 3 else 2)
        m = MurphyDecomposition(n_bins=n_bins)
        for t in grow(m, y, p, w, check=True):
            if (t % 9 == 0 or t == len(y)) and w[:t].any():
                want = R.murphy(y[:t], p[:t], w[:t], n_bins)
                got = _murphy_values(m)
                for k in want:
                    assert got[k] == pytest.approx(want[k], abs=TOL), (seed, t, k)
                assert _identity_gap(m) <= TOL


def test_murphy_brier_is_the_brier_score_and_one_value_per_bin_has_no_extra_terms():
    y, p, _ = stream(17, 300, weights=False)
    m = feed(MurphyDecomposition(), y, p)
    assert m.get() == pytest.approx(brier_score(y, p), abs=TOL)
    centres = (np.minimum((p * 10).astype(int), 9) + 0.5) / 10
    m = feed(MurphyDecomposition(), y, centres)
    assert abs(m.within_bin_variance) <= TOL and abs(m.within_bin_covariance) <= TOL
    assert m.get() == pytest.approx(
        m.reliability - m.resolution + m.uncertainty, abs=TOL
    )
    # and then Murphy's resolution + uncertainty is Foster-Hart's refinement
    cr = feed(CalibrationRefinement(), y, centres)
    assert cr.calibration == pytest.approx(m.reliability, abs=TOL)
    assert cr.refinement == pytest.approx(m.uncertainty - m.resolution, abs=TOL)


def test_murphy_random_updates_and_reverts():
    rng = np.random.default_rng(18)
    y, p, w = stream(18, 500)
    m = MurphyDecomposition(n_bins=5)
    for t, idx in walk(m, y, p, w, rng, 0.45):
        assert _identity_gap(m) <= TOL
        if t % 10 == 0 and w[idx].any():
            want = R.murphy(y[idx], p[idx], w[idx], 5)
            got = _murphy_values(m)
            for k in want:
                assert got[k] == pytest.approx(want[k], abs=1e-10), (t, k)


@settings(max_examples=150, deadline=None)
@given(events=_events, n_bins=st.integers(1, 12), n_reverts=st.integers(0, 30))
def test_murphy_identity(events, n_bins, n_reverts):
    m = MurphyDecomposition(n_bins=n_bins)
    for y, p, w in events:
        m.update(y, p, w)
        assert _identity_gap(m) <= TOL
    # after reverts, running sums carry the rounding of what was removed: the identity
    # holds to TOL relative to the largest weight ever held over the weight left
    peak = sum(w for _, _, w in events)
    for y, p, w in events[:n_reverts]:
        m.revert(y, p, w)
        assert _identity_gap(m) <= TOL * max(
            1.0, peak / m._weight if m._weight else 1.0
        )


def test_empty_decompositions_are_zero():
    m = MurphyDecomposition()
    m.update(1, 0.3, 0.0)
    assert m.get() == 0.0 and all(getattr(m, k) == 0.0 for k in _TERMS)
    m = CalibrationRefinement()
    m.update(1, 0.3, 0.0)
    assert (m.get(), m.calibration, m.refinement) == (0.0, 0.0, 0.0)


def test_metrics_combine_with_river_classification_metrics():
    """``+`` makes one river ``Metrics`` of classification metrics, river's or
    streamcal's, in either order, each fed as alone; river's multi-output wrappers take
    a streamcal metric; anything else is refused as river refuses it."""
    from river import metrics as river_metrics
    from river.metrics.multioutput import MacroAverage

    from streamcal.metrics import ECE, Brier, ConfidenceECE, MulticlassBrier, PathECE

    events = [(True, 0.8), (False, 0.3), (True, 0.4), (False, 0.1)]
    combined = river_metrics.LogLoss() + Brier() + ECE(n_bins=4)
    alone = [river_metrics.LogLoss(), Brier(), ECE(n_bins=4)]
    for y, p in events:
        proba = {True: p, False: 1.0 - p}
        combined.update(y, proba)
        for m in alone:
            m.update(y, proba)
    assert combined.get() == [m.get() for m in alone]
    assert isinstance(ECE() + river_metrics.LogLoss(), river_metrics.base.Metrics)
    multiclass = ConfidenceECE(n_bins=2) + MulticlassBrier()
    multiclass.update("a", {"a": 0.7, "b": 0.3})
    assert multiclass.get() == pytest.approx([0.3, 0.18], abs=1e-15)
    macro = MacroAverage(Brier())
    macro.update({0: True, 1: False}, {0: {True: 0.8, False: 0.2}, 1: {True: 0.3, False: 0.7}})
    assert macro.get() == pytest.approx((0.04 + 0.09) / 2, abs=1e-15)
    with pytest.raises(ValueError, match="Brier and MAE metrics are not compatible"):
        Brier() + river_metrics.MAE()
    path = PathECE({"root": None, "a": "root"}, n_bins=5)  # not of classes' probabilities
    for pair in [(Brier(), path), (path, Brier())]:
        with pytest.raises(ValueError, match="metrics are not compatible"):
            pair[0] + pair[1]


@pytest.mark.parametrize("strategy", ["uniform", "quantile"])
@pytest.mark.parametrize("half_life", [0.001, 0.01])
def test_ece_half_life_drops_weights_that_underflow(strategy, half_life):
    # an event of weight 1e-300, then one of weight 1 more than 64 half-lives later:
    # the renormalisation rescaled the light event's weight to 0.0 (below the double
    # range) but kept it, its count 1 beside a weight of 0; _check failed and from_dict
    # refused the metric's own snapshot. It is now forgotten, as what weighs less than
    # 2**-64 of the total is
    m = ECE(half_life=half_life, strategy=strategy)
    m.update(0, 0.5, 1e-300)
    m.update(1, 0.03, 1.0)
    m._check()
    restored = ECE.from_dict(json.loads(json.dumps(m.to_dict(), allow_nan=False)))
    assert restored.get() == m.get() == pytest.approx(0.97)


def test_refinement_resolution_below_the_grid_index_range_is_refused():
    # the compiled store keys a forecast by int(p / resolution + 0.5), a C integer:
    # resolution=1e-300 reported a Brier score of 1.0 for one event (p=0.3, y=1), and a
    # snapshot with resolution=5e-324 raised OverflowError from from_dict
    from streamcal.metrics import CalibrationRefinement

    for bad in (5e-324, 1e-300, 1e-19):
        with pytest.raises(ValueError, match=r"'resolution' parameter of CalibrationRefinement must be"):
            CalibrationRefinement(resolution=bad)
    m = CalibrationRefinement(resolution=1e-18)
    m.update(1, 0.3)
    assert m.get() == pytest.approx(0.49)
    d = json.loads(json.dumps(m.to_dict()))
    d["params"]["resolution"] = 5e-324
    with pytest.raises(ValueError):
        CalibrationRefinement.from_dict(d)


@pytest.mark.parametrize("strategy", ["uniform", "quantile"])
def test_ece_half_life_below_the_clock_step_is_refused(strategy):
    # half_life=5e-324 was accepted: 1 / half_life is inf, the sums became NaN and
    # every update after the first was refused; the clock's smallest half-life (that of
    # OnlineIsotonic) now applies, where only the newest event counts
    for bad in (5e-324, 1e-310, 1e-19):
        with pytest.raises(ValueError, match=r"'half_life' parameter of ECE must be .* >= 1e-18"):
            ECE(half_life=bad, strategy=strategy)
    m = ECE(half_life=1e-18, strategy=strategy)
    for y, p, w in [(0, 0.5, 1.0), (1, 0.03, 1e-8), (1, 0.7, 2.0)]:
        m.update(y, p, w)
    m._check()
    assert m.get() == pytest.approx(0.3)
    assert ECE.from_dict(json.loads(json.dumps(m.to_dict(), allow_nan=False))).get() == m.get()
