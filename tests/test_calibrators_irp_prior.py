"""The prior of MulticlassIRP (issue 13, item 2: no certain forecast by accident).

``prior_strength = a`` values a region of the simplex at ``(S_k + a / K) / (W + a)``
(the prior of ``streamcal.core.prior``, label vector 1/K per class) and the fit checks
ROC monotony on those values; ``a = 0`` is Berta, Bach and Jordan's fit. Checked against
the brute-force oracle of ``tests/references_irp.py`` extended with the prior, the
LP test of ROC monotony, the snapshots written before the prior existed, and the
covtype stream on which the paper's fit gave the observed class probability 0.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from streamcal import MulticlassIRP
from streamcal.core import irp as core
from streamcal.datasets import covtype_predictions
from tests import references_irp as RI
from tests.snapshot_fixtures import check_restores_without_prior, entries_of, record
from tests.test_calibrators_irp import simplex_stream


# ------------------------------------------------------------------ the batch fit


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("K, m", [(3, 4), (3, 6), (4, 3)])
@pytest.mark.parametrize("a, lam", [(0.5, 0.0), (2.0, 0.0), (1.0, 0.05)])
def test_fit_under_the_prior_matches_the_brute_force_oracle(seed, K, m, a, lam):
    P, y, w = simplex_stream(seed, 14, K, weights="continuous")
    fit = core.fit_multiclass_irp(P, y, w, smoothing=lam, grid_size=m, prior_strength=a)
    fit._check()
    leaves, gains, splits = RI.multiclass_recursion(
        P, y, w, core.simplex_grid(K, m), smoothing=lam, prior=a
    )
    assert np.allclose(fit.gains, gains, rtol=1e-9, atol=0)
    assert np.allclose(fit.split_points, np.array(splits).reshape(-1, K))
    queries = np.vstack([P, np.random.default_rng(0).dirichlet(np.ones(K), 30)])
    expected = [RI.predict_leaves(leaves, q.tolist()) for q in queries]
    assert np.allclose(fit.predict(queries), expected, atol=1e-12)
    # what is read is ROC-monotone on the split points, after every split
    for t in range(fit.n_steps + 1):
        f = fit.prefix(t)
        assert RI.roc_monotone_lp(P, f.predict(P), f.split_points)
    out = fit.predict(queries)
    assert np.all(out > 0) and np.all(out < 1)


def test_prior_values_a_region_at_its_posterior_mean():
    # one split: each region's value is (S_k + a/K) / (W + a), an empty region takes
    # its parent's value; the plain fit says 0 and 1 in the same regions
    P = [[0.8, 0.1, 0.1], [0.7, 0.2, 0.1], [0.1, 0.8, 0.1], [0.2, 0.2, 0.6]]
    exact = core.fit_multiclass_irp(P, [0, 1, 1, 2], grid_size=10)
    fit = core.fit_multiclass_irp(P, [0, 1, 1, 2], grid_size=10, prior_strength=3.0)
    assert exact.split_points.tolist() == fit.split_points.tolist() == [[0.8, 0.1, 0.1]]
    assert exact.predict([[0.9, 0.05, 0.05]]).tolist() == [[1.0, 0.0, 0.0]]
    # the split around (0.8, 0.1, 0.1) makes three regions: the first event
    # (W = 1, S = (1, 0, 0)), the second and third (W = 2, S = (0, 2, 0)), the fourth
    # (W = 1, S = (0, 0, 1))
    assert np.allclose(fit.predict([[0.9, 0.05, 0.05]]), [[2 / 4, 1 / 4, 1 / 4]], atol=1e-15)
    assert np.allclose(fit.predict([[0.3, 0.6, 0.1]]), [[1 / 5, 3 / 5, 1 / 5]], atol=1e-15)
    assert np.allclose(fit.predict([[0.1, 0.1, 0.8]]), [[1 / 4, 1 / 4, 2 / 4]], atol=1e-15)


def test_prior_zero_is_the_paper_fit():
    P, y, w = simplex_stream(3, 40, 3, weights="continuous")
    plain = core.fit_multiclass_irp(P, y, w, grid_size=6)
    zero = core.fit_multiclass_irp(P, y, w, grid_size=6, prior_strength=0)
    assert zero.to_lists() == plain.to_lists() and zero.gains.tolist() == plain.gains.tolist()
    leaves, _, _ = RI.multiclass_recursion(P, y, w, core.simplex_grid(3, 6))
    assert np.allclose(zero.predict(P), [RI.predict_leaves(leaves, p.tolist()) for p in P])
    assert np.any(zero.predict(P) == 0.0)  # which is what the prior is for


@pytest.mark.parametrize(
    "value", [-1.0, math.inf, math.nan, True, "1"], ids=["negative", "inf", "nan", "bool", "str"]
)
def test_bad_prior_strength(value):
    with pytest.raises((ValueError, TypeError), match="'prior_strength' parameter of MulticlassIRP"):
        MulticlassIRP(prior_strength=value)
    with pytest.raises((ValueError, TypeError), match="'prior_strength' argument of fit_multiclass_irp"):
        core.fit_multiclass_irp([[0.5, 0.5]], [0], prior_strength=value)


# ------------------------------------------------------------------ the calibrator


def _covtype_events(K: int, n: int):
    P_cal, Y_cal, P_test, Y_test = covtype_predictions(K)
    P = np.vstack([P_cal, P_test])[:n]
    y = np.argmax(np.vstack([Y_cal, Y_test]), axis=1)[:n]
    return [(dict(enumerate(p.tolist())), int(c)) for p, c in zip(P, y)]


def test_default_never_gives_the_observed_class_zero_where_the_paper_fit_did():
    # the covtype K = 3 stream of simulations/multiclass_compare.py, prequential, at the
    # calibrator's defaults (refits at events 200, 400 and 600): the paper's fit gave
    # the observed class probability exactly 0 there, the default prior never does
    events = _covtype_events(3, 800)
    exact, default = MulticlassIRP(prior_strength=0), MulticlassIRP()
    assert default.prior_strength == 1.0
    zeros = {"exact": 0, "default": 0}
    smallest = 1.0
    for t, (s, c) in enumerate(events):
        if t >= 200:
            zeros["exact"] += exact.predict_one(s)[c] == 0.0
            out = default.predict_one(s)
            zeros["default"] += out[c] == 0.0
            smallest = min(smallest, *out.values())
        exact.learn_one(s, c)
        default.learn_one(s, c)
    assert zeros["exact"] >= 3 and zeros["default"] == 0
    assert smallest > 1e-3
    default._check()
    assert all(0.0 < v < 1.0 for node in default._values for v in node)


def _old_entries():
    return entries_of(("MulticlassIRP",))


def test_old_snapshots_restore_as_the_paper_fit():
    # written before prior_strength existed: restored with prior_strength=0
    check_restores_without_prior(("MulticlassIRP",), 2)


def test_prior_zero_reproduces_the_outputs_recorded_before_the_prior_existed():
    # a fresh MulticlassIRP(prior_strength=0) learning the fixture's stream writes the
    # same snapshot and gives the same outputs, bit for bit, as the version that wrote
    # the fixtures; the default prior does not
    for entry in _old_entries():
        params = entry["snapshot"]["params"]
        again = record("multiclass", MulticlassIRP(**params, prior_strength=0), entry["seed"])
        assert again["snapshot"]["state"] == entry["snapshot"]["state"]
        assert again["outputs"] == entry["outputs"]
    default = record("multiclass", MulticlassIRP(**params), entry["seed"])
    assert default["outputs"] != entry["outputs"]


def test_snapshot_round_trip_keeps_the_prior():
    events = _covtype_events(3, 90)
    cal = MulticlassIRP(window_size=50, refit_every=20, prior_strength=0.5, grid_size=6)
    for s, c in events[:70]:
        cal.learn_one(s, c)
    snap = json.loads(json.dumps(cal.to_dict()))
    assert snap["params"]["prior_strength"] == 0.5
    twin = MulticlassIRP.from_dict(snap)
    for s, c in events[70:]:
        assert twin.predict_one(s) == cal.predict_one(s)
        twin.learn_one(s, c)
        cal.learn_one(s, c)
    assert twin.to_dict() == cal.to_dict()
