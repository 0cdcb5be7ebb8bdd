"""FIR, NA-FIR and one-vs-rest isotonic regression (:mod:`streamcal.core.fir`) and their
windowed calibrators (:mod:`streamcal.calibrators.fir`), against the oracles of
``tests/references_fir.py``: scikit-learn's ``IsotonicRegression`` on the flattened
(or per-class) pairs, and NA-FIR's problem handed to scipy's trust-constr
(Arad and Rosset, sections 3.3 and 4.1, appendix A.2; issue 6, items 3 and 4).
"""

from __future__ import annotations

import collections
import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from streamcal import FIR, NAFIR, OneVsRestIsotonic
from streamcal.checks.multiclass import MIXED_CLASSES, yield_multiclass_stream
from streamcal.core import fir as F
from tests import references_fir as R

EPS = F.DEFAULT_EPSILON


def _data(seed: int, m: int | None = None, K: int | None = None):
    """A small random problem ``(P, y, w)``: Dirichlet forecasts, or forecasts on a
    grid of 1/20 (ties within and across events, edge probabilities 0 and 1), a few
    one-hot rows; over-confident labels; weights mixing 0, 0.5, 1 and 2.25 (every
    third seed unit weights). Grid values are ``k / 20`` exactly, so equal
    probabilities are equal floats (scikit-learn pools values within 1e-15 of each
    other, FIR only equal ones)."""
    rng = np.random.default_rng(seed)
    m = int(rng.integers(1, 60)) if m is None else m
    K = int(rng.integers(2, 6)) if K is None else K
    q = rng.dirichlet(np.full(K, 0.7), size=m)
    if seed % 2:
        P = np.array([rng.multinomial(20, row) for row in q]) / 20.0
    else:
        P = q**2.0
        P /= P.sum(axis=1, keepdims=True)
    hot = rng.random(m) < 0.1
    P[hot] = np.eye(K)[rng.integers(0, K, hot.sum())]
    y = np.array([rng.choice(K, p=row) for row in q])
    w = None if seed % 3 == 0 else rng.choice([0.0, 0.5, 1.0, 2.25], size=m)
    if w is not None and not (w > 0).any():
        w[0] = 1.0
    return P, y, w


def _queries(P, rng):
    return np.concatenate(
        [P.ravel(), rng.random(50), [0.0, 1.0, 0.5, 1e-12, 1 - 1e-12]]
    )


# ------------------------------------------------------------------ FIR and OvR


@pytest.mark.parametrize("seed", range(40))
@pytest.mark.parametrize("interpolation", ["step", "linear"])
def test_fir_matches_sklearn(seed, interpolation):
    P, y, w = _data(seed)
    g = F.fit_fir(P, y, w)
    g._check()
    ref = R.fir_reference(P, y, w, interpolation)
    q = _queries(P, np.random.default_rng(seed))
    np.testing.assert_allclose(
        g.predict_array(q, interpolation), ref(q), rtol=0, atol=1e-12
    )
    assert [g(x, interpolation) for x in q.tolist()] == g.predict_array(
        q, interpolation
    ).tolist()
    np.testing.assert_allclose(
        F.predict_proba(P, g, EPS, interpolation),
        R.probabilities(ref(P), EPS),
        rtol=0,
        atol=1e-12,
    )


@pytest.mark.parametrize("seed", range(40))
@pytest.mark.parametrize("interpolation", ["step", "linear"])
def test_ovr_matches_sklearn(seed, interpolation):
    P, y, w = _data(seed)
    maps = F.fit_ovr(P, y, w)
    refs = R.ovr_reference(P, y, w, interpolation)
    assert len(maps) == P.shape[1]
    q = _queries(P, np.random.default_rng(seed))
    for g, ref in zip(maps, refs):
        g._check()
        np.testing.assert_allclose(
            g.predict_array(q, interpolation), ref(q), rtol=0, atol=1e-12
        )
    G = np.column_stack([ref(P[:, c]) for c, ref in enumerate(refs)])
    np.testing.assert_allclose(
        F.predict_proba(P, maps, EPS, interpolation),
        R.probabilities(G, EPS),
        rtol=0,
        atol=1e-12,
    )


def test_fir_edge_cases():
    # every label the same class, one event, one-hot only, a single class
    P = np.array([[0.7, 0.3], [0.4, 0.6], [1.0, 0.0]])
    assert F.fit_fir(P, [0, 0, 0]).values == [0.0, 0.5, 1.0]
    assert F.fit_fir([[0.2, 0.8]], [1]).values == [0.0, 1.0]
    assert F.fit_fir(np.eye(3), [0, 1, 2]).values == [0.0, 1.0]
    assert F.fit_fir([[1.0], [1.0]], [0, 0]).values == [1.0]
    assert F.fit_fir(P, [0, 1, 0], [0.0, 0.0, 0.0]) is None
    assert F.fit_ovr(P, [0, 1, 0], [0.0, 0.0, 0.0]) is None
    assert F.fit_nafir(P, [0, 1, 0], [0.0, 0.0, 0.0]) is None
    # zero weights are dropped, not counted
    assert F.fit_fir(P, [0, 1, 1], [1.0, 1.0, 0.0]) == F.fit_fir(P[:2], [0, 1])


def test_integer_weights_equal_duplicated_events():
    P, y, _ = _data(5, m=30, K=4)
    w = np.random.default_rng(0).integers(1, 4, size=30).astype(float)
    rep = np.repeat(np.arange(30), w.astype(int))
    assert F.fit_fir(P, y, w) == F.fit_fir(P[rep], y[rep])
    assert F.fit_ovr(P, y, w) == F.fit_ovr(P[rep], y[rep])
    a, b = F.fit_nafir(P, y, w), F.fit_nafir(P[rep], y[rep])
    # (the maximiser need not be unique: L is flat along some rescalings of g)
    assert math.isclose(a.log_likelihood, b.log_likelihood, rel_tol=1e-12)


def test_events_to_arrays():
    events = [
        ({"a": 0.5, "b": 0.5}, "c", 1.0),
        ({"z": 1.0}, "z", 0.0),
        ({"b": 1.0}, "a", 2.5),
    ]
    classes, P, y, w = F.events_to_arrays(events)
    assert classes == ["a", "b", "c"]  # "z" only in a zero-weight event
    assert P.tolist() == [[0.5, 0.5, 0.0], [0.0, 1.0, 0.0]]
    assert y.tolist() == [2, 0] and w.tolist() == [1.0, 2.5]
    classes, P, y, w = F.events_to_arrays([])
    assert classes == [] and P.shape == (0, 0) and len(y) == len(w) == 0


def test_isotonic_map_check_and_state():
    g = F.IsotonicMap([0.0, 0.5], [0.25, 1.0], [0.1, 0.6])
    g._check()
    assert F.IsotonicMap.from_lists(g.to_lists()) == g and len(g) == 2
    for bad in (
        F.IsotonicMap([0.0, 0.5], [0.25, 1.0], [0.6, 0.1]),  # decreasing
        F.IsotonicMap([0.0, 0.2], [0.25, 1.0], [0.1, 0.6]),  # overlapping
        F.IsotonicMap([0.0], [0.25], [1.5]),  # above 1
    ):
        with pytest.raises(AssertionError):
            bad._check()


# ------------------------------------------------------------------ NA-FIR


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10**6))
def test_nafir_never_worse_than_fir(seed):
    P, y, w = _data(seed)
    fit = F.fit_nafir(P, y, w)
    fit.map._check()
    fir = F.fit_fir(P, y, w)
    assert fit.fir_log_likelihood == F.log_likelihood(P, y, w, fir)
    assert fit.log_likelihood == F.log_likelihood(P, y, w, fit.map)
    assert fit.log_likelihood >= fit.fir_log_likelihood
    ref = R.normalised_log_likelihood(P, y, w, fit.map.predict_array, EPS)
    assert math.isclose(fit.log_likelihood, ref, rel_tol=1e-12, abs_tol=1e-12)
    # on the window the interpolation does not matter
    assert fit.log_likelihood == F.log_likelihood(P, y, w, fit.map, EPS, "linear")


@pytest.mark.parametrize(
    "seed, lower", [(0, None), (1, None), (4, "fir"), (7, None), (9, "fir"), (10, None)]
)
def test_nafir_reaches_a_generic_optimiser(seed, lower):
    P, y, w = _data(seed, m=int(np.random.default_rng(seed).integers(12, 36)))
    fit = F.fit_nafir(P, y, w, lower=lower)
    best, g = R.nafir_generic(P, y, w, lower=lower)
    assert fit.converged
    assert fit.log_likelihood >= best - 1e-8 * (1.0 + abs(best))
    # the oracle's g reads back to its objective (the oracle is self-consistent)
    assert math.isclose(
        R.normalised_log_likelihood(P, y, w, g, EPS), best, rel_tol=1e-9
    )


@pytest.mark.parametrize("seed", range(12))
def test_nafir_steps_keep_invariants_and_never_descend(seed):
    P, y, w = _data(seed, m=40, K=4)
    opt = F.NAFIROptimizer(P, y, w)
    opt._check()
    start = opt.F
    history = [opt.F]
    for _ in range(6):
        opt.cell_step()
        opt._check()
        history.append(opt.F)
        while opt.newton(max_steps=1):
            opt._check()
            history.append(opt.F)
    assert all(b >= a for a, b in itertools.pairwise(history))
    assert opt.F >= start
    g = opt.to_map()
    g._check()
    assert g.values[-1] <= 1.0 and min(v for v in g.values if v > 0) >= opt.lower


def test_nafir_needs_its_box():
    """The documented unboundedness: FIR's top level set is pure (the most confident
    forecasts are right), so the fit presses on the lower end of its box, and the
    wider the box the higher the likelihood (up to the default, [epsilon, 1])."""
    rng = np.random.default_rng(3)
    P = rng.dirichlet(np.ones(4), size=60)
    y = np.array([p.argmax() if p.max() > 0.7 else rng.choice(4, p=p) for p in P])
    w = rng.choice([0.5, 1.0, 2.0], size=60)
    fir = F.fit_fir(P, y, w)
    assert fir.values[-1] == 1.0
    fir_min = min(v for v in fir.values if v > 0)
    anchored = F.fit_nafir(P, y, w, lower="fir")
    assert min(v for v in anchored.map.values if v > 0) == fir_min
    objectives = [anchored.log_likelihood]
    for k in (1, 2):
        objectives.append(F.fit_nafir(P, y, w, lower=fir_min * 10.0**-k).log_likelihood)
    default = F.fit_nafir(P, y, w)
    assert min(v for v in default.map.values if v > 0) >= EPS
    objectives.append(default.log_likelihood)
    assert objectives[1] > objectives[0] + 1e-3
    assert all(b >= a - 1e-9 for a, b in itertools.pairwise(objectives))
    with pytest.raises(ValueError, match="lower"):
        F.fit_nafir(P, y, w, lower=2.0)


def test_nafir_on_covtype():
    from streamcal.datasets.covtype import covtype_predictions

    for k in (3, 4):
        P, Y, _, _ = covtype_predictions(k)
        fit = F.fit_nafir(P, Y.argmax(1))
        assert fit.converged and fit.n_iter <= 10
        assert fit.log_likelihood > fit.fir_log_likelihood + 0.1
        fit.map._check()


# ------------------------------------------------------------------ calibrators


def _expected(cal, events):
    classes, P, y, w = F.events_to_arrays(events)
    if not len(y):
        return None, []
    if isinstance(cal, NAFIR):
        kw = {"lower": cal.lower, "max_iter": cal.max_iter, "tol": cal.tol}
        maps = [F.fit_nafir(P, y, w, epsilon=cal.epsilon, **kw).map]
    elif isinstance(cal, FIR):
        maps = [F.fit_fir(P, y, w)]
    else:
        maps = list(F.fit_ovr(P, y, w))
    return maps, classes


@pytest.mark.parametrize(
    "make",
    [
        FIR,
        NAFIR,
        OneVsRestIsotonic,
        lambda **kw: NAFIR(lower="fir", epsilon=1e-4, **kw),
    ],
    ids=["FIR", "NAFIR", "OneVsRestIsotonic", "NAFIR-fir"],
)
@pytest.mark.parametrize("size, every", [(50, 7), (30, 30), (200, 40)])
def test_fit_after_each_refit_equals_the_batch_fit_on_the_window(make, size, every):
    cal = make(window_size=size, refit_every=every)
    events = yield_multiclass_stream(400, seed=size + every, classes=MIXED_CLASSES)
    tail = collections.deque(maxlen=size)
    for t, (s, label, w) in enumerate(events, start=1):
        cal.learn_one(s, label, w)
        tail.append((s, label, w))
        if t % every == 0:
            maps, classes = _expected(cal, list(tail))
            assert cal._maps == maps, f"event {t}"
            assert list(cal._fit_classes) == classes
            for g in cal._maps or ():
                g._check()


@pytest.mark.parametrize("klass", [FIR, NAFIR, OneVsRestIsotonic])
@pytest.mark.parametrize("interpolation", ["step", "linear"])
def test_predict_one_is_the_core_prediction(klass, interpolation):
    cal = klass(window_size=120, refit_every=120, interpolation=interpolation, prior_strength=0)
    events = yield_multiclass_stream(120, seed=2, distinct=True)
    for s, label, w in events:
        cal.learn_one(s, label, w)
    classes = list(cal._fit_classes)
    P = np.random.default_rng(0).dirichlet(np.ones(len(classes)), size=30)
    fit = cal._maps[0] if klass is not OneVsRestIsotonic else cal._maps
    Q = F.predict_proba(P, fit, cal.epsilon, interpolation)
    for row, q in zip(P, Q):
        out = cal.predict_one(dict(zip(classes, row.tolist())))
        assert list(out) == classes
        np.testing.assert_allclose([out[c] for c in classes], q, rtol=0, atol=1e-15)


def test_nafir_window_likelihood_never_below_fir():
    nafir, fir = (
        NAFIR(window_size=150, refit_every=25),
        FIR(window_size=150, refit_every=25),
    )
    events = yield_multiclass_stream(600, seed=8)
    tail = collections.deque(maxlen=150)
    gains = []
    for t, (s, label, w) in enumerate(events, start=1):
        nafir.learn_one(s, label, w)
        fir.learn_one(s, label, w)
        tail.append((s, label, w))
        if t % 25 == 0:
            _, P, y, ws = F.events_to_arrays(list(tail))
            a = F.log_likelihood(P, y, ws, nafir.fitted_map)
            b = F.log_likelihood(P, y, ws, fir.fitted_map)
            assert a >= b, f"event {t}"
            gains.append(a - b)
            assert nafir.converged
    assert max(gains) > 0.0


def test_a_class_that_left_the_window_passes_through():
    cal = FIR(window_size=4, refit_every=4)
    for _ in range(4):
        cal.learn_one({"a": 0.7, "b": 0.3}, "a")
    for _ in range(4):
        cal.learn_one({"b": 0.6, "c": 0.4}, "b")
    assert list(cal._fit_classes) == ["b", "c"] and set(cal.classes) == {"a", "b", "c"}
    out = cal.predict_one({"a": 0.5, "b": 0.3, "c": 0.2})
    assert out["a"] == 0.5 and math.isclose(sum(out.values()), 1.0)


def test_cold_start_and_fitted_views():
    for cal in (
        FIR(refit_every=2),
        NAFIR(refit_every=2),
        OneVsRestIsotonic(refit_every=2),
    ):
        s = {"x": 0.25, "y": 0.75}
        out = cal.predict_one(s)
        assert out == s and out is not s
        cal.learn_one(s, "y")
        cal.learn_one({"x": 0.9, "y": 0.1}, "x", 0.0)  # only zero weights after
    assert (
        FIR().fitted_map is None
        and NAFIR().converged is None
        and OneVsRestIsotonic().fitted_maps == {}
    )
    cal = OneVsRestIsotonic(window_size=10, refit_every=2)
    cal.learn_many([{"x": 0.25, "y": 0.75}, {"x": 0.9, "y": 0.1}], ["y", "x"])
    assert sorted(cal.fitted_maps) == ["x", "y"]


@pytest.mark.parametrize(
    "kwargs, name",
    [
        ({"window_size": 0}, "window_size"),
        ({"refit_every": 1.5}, "refit_every"),
        ({"interpolation": "cubic"}, "interpolation"),
        ({"epsilon": 0.0}, "epsilon"),
        ({"epsilon": 0.5}, "epsilon"),
        ({"epsilon": "1e-6"}, "epsilon"),
    ],
)
@pytest.mark.parametrize("klass", [FIR, NAFIR, OneVsRestIsotonic])
def test_bad_parameters(klass, kwargs, name):
    with pytest.raises((ValueError, TypeError), match=f"'{name}'"):
        klass(**kwargs)


@pytest.mark.parametrize(
    "kwargs, name",
    [
        ({"max_iter": 0}, "max_iter"),
        ({"tol": -1.0}, "tol"),
        ({"lower": "eps"}, "lower"),
        ({"lower": 0.0}, "lower"),
        ({"lower": 1.5}, "lower"),
    ],
)
def test_bad_nafir_parameters(kwargs, name):
    with pytest.raises((ValueError, TypeError), match=f"'{name}'"):
        NAFIR(**kwargs)


@pytest.mark.parametrize("seed", range(4))
def test_window_arrays_are_the_events_arrays(seed):
    cal = FIR(window_size=37, refit_every=1000)
    events = yield_multiclass_stream(150, seed=seed, classes=MIXED_CLASSES)
    for t, (s, label, w) in enumerate(events):
        cal.learn_one(s, label, w)
        if t % 9 == 0:
            got = cal._window_arrays()
            want = F.events_to_arrays(cal._window_events())
            assert got[0] == want[0]
            for a, b in zip(got[1:], want[1:]):
                assert a.dtype == b.dtype and np.array_equal(a, b)


@pytest.mark.parametrize(
    "old, new", [("fir_fit", "fit_fir"), ("ovr_fit", "fit_ovr"), ("nafir_fit", "fit_nafir")]
)
def test_former_names_warn_and_give_the_same_fit(old, new):
    import streamcal.core

    P, y = [[0.9, 0.1], [0.6, 0.4], [0.8, 0.2], [0.3, 0.7]], [0, 1, 0, 1]
    for module in (F, streamcal.core):
        with pytest.warns(DeprecationWarning, match=f"{old} is deprecated.*use {new} instead"):
            fit = getattr(module, old)(P, y)
        assert repr(fit) == repr(getattr(module, new)(P, y))
        assert old not in getattr(module, "__all__") and new in module.__all__
