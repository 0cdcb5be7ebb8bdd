"""The prior on the pieces of FIR, NA-FIR and one-vs-rest isotonic regression
(``prior_strength``, :mod:`streamcal.core.prior`; issue 13, item 2: no certain
forecast by accident), against the batch oracles of ``tests/references_fir.py``
(scikit-learn's ``IsotonicRegression`` with the pseudo-event as one more weighted
point)."""

from __future__ import annotations

import collections
import json
import math

import numpy as np
import pytest

from streamcal import FIR, NAFIR, OneVsRestIsotonic
from streamcal.base import MulticlassCalibrator
from streamcal.checks.multiclass import MIXED_CLASSES, yield_multiclass_stream
from streamcal.core import fir as F
from streamcal.core import prior as PR
from streamcal.core.pav import pav_blocks
from tests import references_fir as R
from tests.snapshot_fixtures import check_restores_without_prior, entries_of

KLASSES = [FIR, NAFIR, OneVsRestIsotonic]


# ------------------------------------------------------------------ the core rule


def _random_pieces(rng, n_cells):
    """Level sets ``(weights, sums)`` of the isotonic fit of random weighted cells."""
    ws = rng.uniform(0.1, 3.0, n_cells).tolist()
    ss = [w * t for w, t in zip(ws, rng.choice([0.0, 1.0, rng.uniform()], n_cells))]
    blocks = pav_blocks(ws, ss)
    return [b[2] for b in blocks], [b[3] for b in blocks]


@pytest.mark.parametrize("seed", range(12))
def test_prior_piece_value_matches_batch_refit(seed):
    rng = np.random.default_rng(seed)
    weights, sums = _random_pieces(rng, int(rng.integers(1, 25)))
    for a, m in [(0.0, 0.5), (1.0, 0.5), (2.0, 0.5), (5.0, 0.0), (5.0, 1.0), (0.3, 0.9)]:
        got = PR.prior_piece_values(weights, sums, a, m)
        want = [R.prior_piece_reference(weights, sums, i, a, m) for i in range(len(weights))]
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
        assert got == [PR.prior_piece_value(weights, sums, i, a, m) for i in range(len(weights))]
        assert all(x <= y + 1e-15 for x, y in zip(got, got[1:])), "not monotone"
        if a == 0:
            assert got == [s / w for w, s in zip(weights, sums)]
        elif 0 < m < 1:
            assert all(0.0 < v < 1.0 for v in got)


def test_prior_piece_value_keeps_all_zero_and_all_one_pieces_off_the_bounds():
    # One block of 3 zeros and one of 2 ones: the exact fit says 0 and 1.
    weights, sums = [3.0, 2.0], [0.0, 2.0]
    assert PR.prior_piece_value(weights, sums, 0, 0.0, 0.5) == 0.0
    assert PR.prior_piece_value(weights, sums, 0, 1.0, 0.5) == 0.5 / 4
    assert PR.prior_piece_value(weights, sums, 1, 1.0, 0.5) == 2.5 / 3


# ------------------------------------------------------------------ piece statistics


@pytest.mark.parametrize("seed", range(10))
def test_fitted_maps_carry_their_pieces_weights_and_label_sums(seed):
    rng = np.random.default_rng(seed)
    m, K = int(rng.integers(1, 50)), int(rng.integers(2, 5))
    P = np.array([rng.multinomial(10, p) for p in rng.dirichlet(np.ones(K), m)]) / 10.0
    y = rng.integers(0, K, m)
    w = rng.choice([0.0, 0.5, 1.0, 2.25], m)
    w[0] = 1.0
    flat, onehot = P.ravel(), (np.arange(K)[None, :] == y[:, None]).ravel()
    wf = np.repeat(w, K)
    nafir = F.fit_nafir(P, y, w).map
    for g, values_are_means in ((F.fit_fir(P, y, w), True), (nafir, False)):
        g._check()
        for lo, hi, ww, ss, v in zip(g.lo, g.hi, g.weights, g.sums, g.values):
            inside = (flat >= lo) & (flat <= hi)
            assert math.isclose(ww, math.fsum(wf[inside]), rel_tol=1e-12)
            assert math.isclose(ss, math.fsum(wf[inside & onehot]), rel_tol=1e-12, abs_tol=1e-12)
            if values_are_means:
                assert v == ss / ww
    for c, g in enumerate(F.fit_ovr(P, y, w)):
        for lo, hi, ww, ss in zip(g.lo, g.hi, g.weights, g.sums):
            inside = (P[:, c] >= lo) & (P[:, c] <= hi)
            assert math.isclose(ww, math.fsum(w[inside]), rel_tol=1e-12)
            assert math.isclose(ss, math.fsum(w[inside & (y == c)]), rel_tol=1e-12, abs_tol=1e-12)


def test_isotonic_map_statistics_round_trip_and_checks():
    g = F.IsotonicMap([0.0, 0.5], [0.25, 1.0], [0.25, 0.5], [4.0, 2.0], [1.0, 1.0])
    g._check()
    assert len(g.to_lists()) == 5 and F.IsotonicMap.from_lists(g.to_lists()) == g
    plain = F.IsotonicMap([0.0, 0.5], [0.25, 1.0], [0.25, 0.5])
    assert len(plain.to_lists()) == 3 and plain.weights is None and plain != g
    for bad in (
        F.IsotonicMap([0.0, 0.5], [0.25, 1.0], [0.25, 0.5], [4.0, 2.0], [5.0, 1.0]),  # S > W
        F.IsotonicMap([0.0, 0.5], [0.25, 1.0], [0.25, 0.5], [0.0, 2.0], [0.0, 1.0]),  # W = 0
        F.IsotonicMap([0.0, 0.5], [0.25, 1.0], [0.25, 0.5], [4.0], [1.0]),  # too few
        F.IsotonicMap([0.0, 0.5], [0.25, 1.0], [0.25, 0.5], [4.0, 2.0], None),
    ):
        with pytest.raises(AssertionError):
            bad._check()


# ------------------------------------------------------------------ the calibrators


def _oracle_probabilities(klass, events, queries, classes, a, interpolation, eps):
    """Predictions of the fit on ``events`` under the prior, by the batch oracle."""
    fit_classes, P, y, w = F.events_to_arrays(events)
    assert fit_classes == classes
    if klass is FIR:
        gs = [R.prior_fir_reference(P, y, w, a, 0.5, interpolation)] * len(classes)
    else:
        gs = R.prior_ovr_reference(P, y, w, a, 0.5, interpolation)
    G = np.array([[g(np.array([q.get(c, 0.0)]))[0] for c, g in zip(classes, gs)] for q in queries])
    return R.probabilities(G, eps)


def _grid_stream(n, seed):
    """Events on the grid of 1/20 (ties within and across events, probabilities 0 and
    1; scikit-learn pools scores closer than 1e-15, FIR only equal ones, so the grid's
    values are exact), over-confident labels, weights 0, 0.5, 1 and 2.25, classes of
    mixed types, some left out of a forecast."""
    rng = np.random.default_rng(seed)
    classes = ["a", 1, "c", 2.5][: 2 + seed % 3]
    events = []
    for _ in range(n):
        q = rng.dirichlet(np.full(len(classes), 0.7))
        p = rng.multinomial(20, q) / 20.0
        label = classes[rng.choice(len(classes), p=q)]
        scores = {c: float(v) for c, v in zip(classes, p) if v > 0 or rng.random() < 0.5}
        events.append((scores, label, float(rng.choice([0.0, 0.5, 1.0, 1.0, 2.25]))))
    return events


@pytest.mark.parametrize("klass", [FIR, OneVsRestIsotonic])
@pytest.mark.parametrize("interpolation", ["step", "linear"])
@pytest.mark.parametrize("a", [0.5, 2.0])
@pytest.mark.parametrize("seed", range(4))
def test_prior_predictions_match_the_batch_oracle_at_every_refit(klass, interpolation, a, seed):
    size, every = (40, 9) if seed % 2 else (25, 25)
    cal = klass(window_size=size, refit_every=every, interpolation=interpolation, prior_strength=a)
    events = _grid_stream(120, seed)
    tail = collections.deque(maxlen=size)
    rng = np.random.default_rng(seed)
    checked = 0
    for t, (s, label, w) in enumerate(events, start=1):
        cal.learn_one(s, label, w)
        tail.append((s, label, w))
        if t % every or cal._maps is None:
            continue
        classes = list(cal._fit_classes)
        queries = [s for s, _, _ in list(tail)[-5:]]
        queries += [dict(zip(classes, p)) for p in rng.dirichlet(np.ones(len(classes)), 5).tolist()]
        want = _oracle_probabilities(klass, list(tail), queries, classes, a, interpolation, cal.epsilon)
        for q, row in zip(queries, want):
            out = cal.predict_one(q)
            np.testing.assert_allclose([out[c] for c in classes], row, rtol=1e-12, atol=1e-14)
        checked += 1
    assert checked >= 3


@pytest.mark.parametrize("seed", range(3))
def test_nafir_prior_pools_its_values_weighted_by_their_pairs(seed):
    # NA-FIR's values are not block means: the prior pools the pseudo-event with each
    # piece's value, weighted by the pairs the piece covers, its label 1/2 scaled to
    # the fit's units (oracle: scikit-learn)
    cal = NAFIR(window_size=60, refit_every=60, prior_strength=1.5)
    for s, label, w in yield_multiclass_stream(60, seed=seed):
        cal.learn_one(s, label, w)
    g = cal.fitted_map
    sums = [v * w for v, w in zip(g.values, g.weights)]
    m = min(0.5 * math.fsum(sums) / math.fsum(g.sums), 1.0)  # 1/2 in the fit's units
    want = [R.prior_piece_reference(g.weights, sums, i, 1.5, m) for i in range(len(g))]
    np.testing.assert_allclose(cal._read[0], want, rtol=1e-12, atol=1e-14)
    exact = NAFIR(window_size=60, refit_every=60, prior_strength=0)
    for s, label, w in yield_multiclass_stream(60, seed=seed):
        exact.learn_one(s, label, w)
    assert exact.fitted_map == g  # the fit itself is unchanged
    assert cal._read[0] != g.values


@pytest.mark.parametrize("klass", KLASSES)
def test_prior_keeps_an_all_certain_window_off_certain_forecasts(klass):
    # a perfectly separable window: the exact fit says 0 and 1, and after the floor a
    # class gets 1e-6; with the prior every class keeps a share the data have not ruled out
    exact = klass(window_size=40, refit_every=40, prior_strength=0)
    shrunk = klass(window_size=40, refit_every=40, prior_strength=1.0)
    for i in range(40):
        s = {"a": 0.9, "b": 0.1} if i % 2 else {"a": 0.2, "b": 0.8}
        for cal in (exact, shrunk):
            cal.learn_one(s, "a" if i % 2 else "b")
    q = {"a": 0.9, "b": 0.1}
    assert exact.predict_one(q)["b"] < 1e-5
    out = shrunk.predict_one(q)
    assert 1e-3 < out["b"] < 0.05 and 0.95 < out["a"] < 1.0


@pytest.mark.parametrize("klass", KLASSES)
@pytest.mark.parametrize("interpolation", ["step", "linear"])
def test_prior_read_out_is_monotone_and_inside_0_1(klass, interpolation):
    cal = klass(window_size=80, refit_every=80, interpolation=interpolation, prior_strength=0.5)
    for s, label, w in yield_multiclass_stream(80, seed=5):
        cal.learn_one(s, label, w)
    cal._check()
    for values in cal._read:
        assert all(0.0 < v < 1.0 for v in values)
        assert all(x <= y for x, y in zip(values, values[1:]))


@pytest.mark.parametrize("klass", KLASSES)
def test_prior_strength_zero_is_the_exact_fit_bit_for_bit(klass):
    # prior_strength=0 reads the maps' own values (the very lists), so predictions are
    # those of the calibrator before the prior existed; the snapshot fixtures of
    # tests/test_snapshot_fixtures.py check the same against recorded outputs
    cal = klass(window_size=50, refit_every=7, prior_strength=0)
    shrunk = klass(window_size=50, refit_every=7, prior_strength=1.0)
    for s, label, w in yield_multiclass_stream(100, seed=1, classes=MIXED_CLASSES):
        cal.learn_one(s, label, w)
        shrunk.learn_one(s, label, w)
        assert all(r is g.values for r, g in zip(cal._read or (), cal._maps or ()))
    assert cal._maps == shrunk._maps  # the prior never changes the fit
    assert any(r != g.values for r, g in zip(shrunk._read, shrunk._maps))


@pytest.mark.parametrize(
    "value", [-1.0, math.inf, math.nan, True, "1"], ids=["negative", "inf", "nan", "bool", "str"]
)
@pytest.mark.parametrize("klass", KLASSES)
def test_bad_prior_strength(klass, value):
    with pytest.raises((ValueError, TypeError), match="'prior_strength' parameter of"):
        klass(prior_strength=value)


# ------------------------------------------------------------------ snapshots


OLD_CLASSES = ("FIR", "NAFIR", "OneVsRestIsotonic")


def _old_entries():
    return entries_of(OLD_CLASSES)


def test_old_snapshots_restore_without_the_prior():
    # written before prior_strength existed: restored as the calibrator they were
    check_restores_without_prior(OLD_CLASSES, 10)
    for entry in _old_entries():
        assert all(len(g) == 3 for g in entry["snapshot"]["state"]["maps"] or ())


def test_old_snapshot_given_a_prior_starts_it_at_the_next_refit():
    entry = next(e for e in _old_entries() if e["snapshot"]["params"]["refit_every"] == 7)
    snap = entry["snapshot"]
    plain = MulticlassCalibrator.from_dict(snap)
    params = {**snap["params"], "prior_strength": 1.0}
    primed = MulticlassCalibrator.from_dict({**snap, "params": params})
    events = yield_multiclass_stream(200, seed=entry["seed"])[120:]
    until_refit = 7 - primed._window.n_pushed % 7
    for i, (s, label, w) in enumerate(events[:until_refit + 3]):
        assert primed.predict_one(s) == plain.predict_one(s), f"event {i}"
        if i + 1 == until_refit:  # the refit: statistics, then the prior
            assert primed._maps[0].weights is None
        primed.learn_one(s, label, w)
        plain.learn_one(s, label, w)
        if i + 1 == until_refit:
            break
    assert primed._maps == plain._maps and primed._maps[0].weights is not None
    assert primed._read != plain._read


@pytest.mark.parametrize("klass", KLASSES)
def test_snapshot_round_trip_keeps_the_prior_and_statistics(klass):
    cal = klass(window_size=30, refit_every=10, prior_strength=2.0)
    events = yield_multiclass_stream(45, seed=3)
    for s, label, w in events[:35]:
        cal.learn_one(s, label, w)
    snap = json.loads(json.dumps(cal.to_dict()))
    assert all(len(g) == 5 for g in snap["state"]["maps"])
    twin = klass.from_dict(snap)
    for s, label, w in events[35:]:
        assert twin.predict_one(s) == cal.predict_one(s)
        twin.learn_one(s, label, w)
        cal.learn_one(s, label, w)


@pytest.mark.parametrize(
    "corrupt",
    [
        lambda g: g[4].__setitem__(0, g[3][0] * 2 + 1),  # label sum above the weight
        lambda g: g[3].__setitem__(0, -1.0),  # negative weight
        lambda g: g.pop(),  # sums missing
        lambda g: g[4].__setitem__(-1, g[4][-1] * 0.5),  # value no longer the mean
    ],
    ids=["sum-above-weight", "negative-weight", "no-sums", "not-the-mean"],
)
def test_corrupted_piece_statistics_are_refused(corrupt):
    cal = FIR(window_size=30, refit_every=10, prior_strength=1.0)
    for s, label, w in yield_multiclass_stream(30, seed=4):
        cal.learn_one(s, label, w)
    snap = json.loads(json.dumps(cal.to_dict()))
    corrupt(snap["state"]["maps"][0])
    with pytest.raises(ValueError):
        FIR.from_dict(snap)
