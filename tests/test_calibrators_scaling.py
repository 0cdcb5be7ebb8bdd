"""``OnlinePlatt`` and ``OnlineBeta`` (issue #3) against the oracles of
``tests/references_scaling.py``.

Three layers of reference:

1. the update rule itself: the pure core (:mod:`streamcal.core.newton`) follows, event
   by event, a numpy transcription of the rule its docstring states (full ``H``, the
   implicit equation always solved by Brent's method, the projection as a bounded QP);
2. the batch fit it converges to: the weighted, ridge-penalised logistic-regression
   maximum likelihood (scipy L-BFGS-B with ``a, b >= 0`` for beta calibration),
   itself cross-checked against scikit-learn's ``LogisticRegression``; the online
   parameters are compared with it in units of its standard error on stationary
   streams drawn from true Platt and beta maps, with and without forgetting;
3. identities that hold exactly: cold start, zero weights, bit-for-bit invariance under
   scaling weights and the penalty by a power of two, ``OnlineBeta("am") ==
   OnlinePlatt(monotone=True)``, ``m = 1/2`` maps to 1/2 with ``"ab"``.

``_check()`` (``P = H^-1`` finite, positive definite, ``H >= reg I``, consistent
inverse, constraints) runs after every update in the event-by-event tests.

References: Platt (1999); Kull, Silva Filho and Flach (2017), "Beta calibration",
AISTATS (Algorithms 1 and 2, section 3.3 on ``a, b >= 0``); Gupta and Ramdas (2023),
"Online Platt Scaling with Calibeating", ICML.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn.linear_model import LogisticRegression

from streamcal import OnlineBeta, OnlinePlatt
from streamcal.calibrators import scaling
from streamcal.core import newton
from streamcal.core.newton import OnlineNewtonLogistic

try:  # tests/ as a package (tests/__init__.py) or as a plain directory on sys.path
    from tests import references_scaling as ref
except ImportError:  # pragma: no cover
    import references_scaling as ref

KINDS = ["platt", "platt_monotone", "abm", "am", "ab"]
EDGE_QUERIES = [
    0.0,
    5e-324,
    1e-300,
    1e-12,
    0.3,
    0.5,
    0.7,
    1.0 - 1e-12,
    1.0 - 2.0**-53,
    1.0,
]


def make(kind, **kw):
    if kind == "platt":
        return OnlinePlatt(**kw)
    if kind == "platt_monotone":
        return OnlinePlatt(monotone=True, **kw)
    return OnlineBeta(kind, **kw)


def theta(cal):
    return np.array(cal._core.theta)


def true_stream(kind, truth, n, seed, score_dist=(1.0, 1.0)):
    """Scores ~ Beta(score_dist), labels ~ Bernoulli(sigmoid(features(s) . truth))."""
    rng = np.random.default_rng(seed)
    s = rng.beta(*score_dist, n)
    p = 1.0 / (1.0 + np.exp(-(ref.features(s, kind) @ np.asarray(truth, dtype=float))))
    return s, (rng.random(n) < p).astype(int)


def messy_stream(n, seed):
    """Edge scores (0, 1, tiny, ties), labels that turn against the scores half-way
    (so that constraints bind), and weights 0, fractional and 10."""
    rng = np.random.default_rng(seed)
    s = rng.random(n)
    s = np.where(rng.random(n) < 0.05, rng.integers(0, 2, n).astype(float), s)
    s = np.where(rng.random(n) < 0.03, 1e-200, s)
    s = np.where(rng.random(n) < 0.1, np.round(s, 1), s)
    p = np.where(np.arange(n) < n // 2, s, 1.0 - s)
    y = (rng.random(n) < p).astype(int)
    w = rng.choice([1.0, 1.0, 0.5, 2.25, 0.0, 10.0], n)
    return s, y, w


# ---------------------------------------------------------------------- the oracle


@pytest.mark.parametrize("kind", ["platt", "abm"])
def test_batch_oracle_agrees_with_scikit_learn(kind):
    """With a vanishing penalty, the oracle is scikit-learn's weighted logistic
    regression on the same features (C large; its intercept is unpenalised)."""
    s, y = true_stream(kind, ref.MODELS[kind][0], 3000, seed=1)
    w = np.random.default_rng(2).choice([0.5, 1.0, 3.0], len(s))
    X = ref.features(s, kind)
    ours = ref.logistic_fit(X, y, w, theta0=np.zeros(X.shape[1]), reg=1e-9)
    sk = LogisticRegression(C=1e12, tol=1e-12, max_iter=100_000)
    sk.fit(X[:, :-1], y, sample_weight=w)
    theirs = np.concatenate([sk.coef_[0], sk.intercept_])
    np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-5)


def test_batch_oracle_constrained_equals_betacal_refit():
    """Kull et al. (section 3.3) drop a feature whose coefficient comes out negative and
    refit, as ``betacal`` does; with one active constraint that is the constrained fit."""
    s, y = true_stream("abm", (-0.5, 1.5, 0.2), 4000, seed=3)
    X = ref.features(s, "abm")
    free = ref.logistic_fit(X, y, reg=1e-9)
    assert free[0] < 0  # the unconstrained fit is decreasing in ln s
    constrained = ref.logistic_fit(X, y, reg=1e-9, nonneg=(0, 1))
    refit = ref.logistic_fit(X[:, 1:], y, reg=1e-9)
    assert constrained[0] == 0.0
    np.testing.assert_allclose(constrained[1:], refit, rtol=1e-6, atol=1e-7)


# ---------------------------------------------------------------------- the update rule


@pytest.mark.parametrize("decay", [1.0, 0.97])
@pytest.mark.parametrize("kind", KINDS)
def test_core_follows_the_stated_rule_event_by_event(kind, decay):
    theta0, nonneg = ref.MODELS[kind]
    s, y, w = messy_stream(160, seed=4)
    X = ref.features(s, kind)
    core = OnlineNewtonLogistic(theta0, 1.0, decay, nonneg)
    thetas, hs = ref.online_newton_reference(X, y, w, theta0, 1.0, decay, nonneg)
    for i in range(len(s)):
        core.update(tuple(X[i].tolist()), float(y[i]), float(w[i]))
        core._check()
        # the explicit step is taken when within a relative 1e-6 of the implicit one
        np.testing.assert_allclose(core.theta, thetas[i], rtol=0, atol=1e-5)
        H = np.array(core.hessian())
        np.testing.assert_allclose(H, hs[i], rtol=0, atol=1e-5 * np.abs(hs[i]).max())


@pytest.mark.parametrize("y", [0.0, 1.0])
def test_implicit_step_solves_its_equation(y):
    rng = np.random.default_rng(5)
    for _ in range(300):
        z = float(rng.choice([-1.0, 1.0]) * 10 ** rng.uniform(-3, 2.8))
        c = float(10 ** rng.uniform(-6, 12))
        u = newton._implicit_step(z, c, y)
        want = ref._implicit_root(z, c, y)
        assert abs(u - want) <= 1e-6 * abs(want - z) + 1e-12 * (1 + abs(want)), (
            z,
            c,
            y,
            u,
            want,
        )


def test_projection_is_the_h_norm_nearest_feasible_point():
    rng = np.random.default_rng(6)
    for _ in range(200):
        d = int(rng.choice([2, 3]))
        nonneg = (0, 1) if d == 3 else [(0,), (0, 1)][int(rng.integers(2))]
        A = rng.normal(size=(d, d))
        H = A @ A.T + 0.05 * np.eye(d)
        H[0, 1] = H[1, 0] = H[0, 1] * 3  # strong coupling, still positive definite?
        if np.linalg.eigvalsh(H)[0] <= 1e-3:
            continue
        P = np.linalg.inv(H)
        t = rng.normal(size=d) * 2
        core = OnlineNewtonLogistic((1.0,) * d, 1.0, 1.0, nonneg)
        got = np.array(core._project(t.tolist(), P[np.triu_indices(d)].tolist()))
        want = ref._project(t, H, nonneg)
        assert all(got[j] >= 0 for j in nonneg)
        dist = (got - t) @ H @ (got - t)
        dist_ref = (want - t) @ H @ (want - t)
        assert dist <= dist_ref * (1 + 1e-9) + 1e-12
        np.testing.assert_allclose(got, want, atol=1e-6)


# ---------------------------------------------------------------------- convergence

# (kind, true parameters, score distribution); for "abm"/"ab" the true a or b can be
# negative, so that the constraint binds and the target is the constrained fit
CONVERGENCE_CASES = [
    ("platt", (1.8, -0.4), (2.0, 3.0)),
    ("platt", (0.5, 0.3), (1.0, 1.0)),
    ("platt", (-1.0, 0.2), (2.0, 2.0)),  # anti-informative scores: a < 0
    ("platt_monotone", (-1.0, 0.2), (2.0, 2.0)),  # ... constrained: a = 0
    ("abm", (0.6, 1.5, 0.3), (0.7, 0.7)),
    ("abm", (2.0, 2.0, -1.0), (2.0, 2.0)),
    ("abm", (-0.5, 1.5, 0.2), (1.0, 1.0)),  # constrained: a = 0
    ("am", (0.5, 0.4), (0.7, 0.7)),
    ("ab", (0.6, 1.4), (1.0, 1.0)),
]


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("kind, truth, dist", CONVERGENCE_CASES)
def test_converges_to_the_batch_fit(kind, truth, dist, seed):
    """On a stationary stream of 20,000 events the online parameters are within 2
    standard errors of the batch fit on the same events (typically a few tenths: the
    recursion's curvature was measured at earlier, rougher parameters), and the online
    predictions, made before each label, lose at most 0.002 nats per event to the batch
    fit's in-sample log loss (the cost of learning; about (k/2) ln(n) / n = 0.0007 for
    k = 3 parameters, plus the cold start)."""
    n = 20_000
    s, y = true_stream(kind, truth, n, seed=10 + seed, score_dist=dist)
    theta0, nonneg = ref.MODELS[kind]
    X = ref.features(s, kind)
    cal = make(kind)
    predict, learn = cal.predict_one, cal.learn_one
    online = np.empty(n)
    for i, (si, yi) in enumerate(zip(s.tolist(), y.tolist())):
        online[i] = predict(si)
        learn(si, yi)
        if i % 2000 == 0:
            cal._check()
    cal._check()
    batch = ref.logistic_fit(X, y, None, theta0, 1.0, nonneg)
    active = [j for j in nonneg if batch[j] == 0.0]
    free = [j for j in range(len(theta0)) if j not in active]
    se = np.zeros(len(theta0))
    se[free] = ref.fisher_standard_errors(X[:, free], batch[free])
    got = theta(cal)
    for j in active:  # the constraint binds: the online value sits on it or next to it
        assert 0.0 <= got[j] <= 0.02, (j, got)
    assert np.all(np.abs(got - batch)[free] <= 2.0 * se[free]), (
        got - batch
    ) / np.where(se > 0, se, 1)
    batch_loss = ref.log_loss(1.0 / (1.0 + np.exp(-(X @ batch))), y).mean()
    online_loss = ref.log_loss(online, y).mean()
    assert online_loss - batch_loss <= 0.002, (online_loss, batch_loss)
    # the final online map is, on these events, as good as the batch fit
    final_loss = ref.log_loss(cal.predict_many(s), y).mean()
    assert final_loss - batch_loss <= 5e-5, (final_loss, batch_loss)


def test_constraint_uses_the_newton_metric():
    """With ``a`` held at 0 the remaining parameters reach the fit of the model without
    ``ln s`` (a Euclidean clip of ``a`` would leave ``b`` and ``c`` biased)."""
    s, y = true_stream("abm", (-0.8, 1.0, 0.5), 20_000, seed=7, score_dist=(1.0, 1.0))
    cal = OnlineBeta()
    cal.learn_many(s, y)
    X = ref.features(s, "abm")
    without_ln_s = ref.logistic_fit(X[:, 1:], y, None, (1.0, 0.0), 1.0)
    se = ref.fisher_standard_errors(X[:, 1:], without_ln_s)
    assert 0.0 <= cal.a <= 0.02  # on the constraint, or just off it after the last step
    assert np.all(np.abs(np.array([cal.b, cal.c]) - without_ln_s) <= 2 * se)


# ---------------------------------------------------------------------- forgetting


@pytest.mark.parametrize(
    "kind, truth", [("platt", (1.8, -0.4)), ("abm", (0.6, 1.5, 0.3))]
)
def test_half_life_tracks_the_decayed_fit(kind, truth):
    """With ``half_life`` the target is the fit with weights ``2 ** (-age / half_life)``
    (and the whole penalty); on a stationary stream the online parameters stay within a
    fraction of that fit's standard error."""
    n, h = 6000, 500.0
    s, y = true_stream(kind, truth, n, seed=8)
    theta0, nonneg = ref.MODELS[kind]
    X = ref.features(s, kind)
    cal = make(kind, half_life=h)
    for start in range(0, n, 1000):
        cal.learn_many(s[start : start + 1000], y[start : start + 1000])
        cal._check()
        m = start + 1000
        wd = ref.decayed_weights(np.ones(m), h)
        batch = ref.logistic_fit(X[:m], y[:m], wd, theta0, 1.0, nonneg)
        se = ref.fisher_standard_errors(X[:m], batch, wd)
        assert np.all(np.abs(theta(cal) - batch) <= 0.5 * se), (
            m,
            (theta(cal) - batch) / se,
        )


def test_half_life_follows_drift():
    """The true map changes half-way. One half-life after the change the forgetting fit
    is still catching up with its target, the decayed batch fit (a few standard errors
    behind); twenty half-lives later it is back within a fraction of a standard error of
    it and near the new map, while the plain fit still remembers the old map."""
    n, h = 8000, 200.0
    s1, y1 = true_stream("platt", (2.0, -1.0), n // 2, seed=9)
    s2, y2 = true_stream("platt", (0.5, 1.0), n // 2, seed=10)
    s, y = np.concatenate([s1, s2]), np.concatenate([y1, y2])
    X = ref.features(s, "platt")
    forgetting, plain = OnlinePlatt(half_life=h), OnlinePlatt()
    plain.learn_many(s, y)
    forgetting.learn_many(s[: n // 2 + 200], y[: n // 2 + 200])
    forgetting.learn_many(s[n // 2 + 200 :], y[n // 2 + 200 :])
    wd = ref.decayed_weights(np.ones(n), h)
    batch = ref.logistic_fit(X, y, wd, (1.0, 0.0), 1.0)
    se = ref.fisher_standard_errors(X, batch, wd)
    assert np.all(np.abs(theta(forgetting) - batch) <= 0.5 * se), (
        theta(forgetting) - batch
    ) / se
    assert np.all(np.abs(theta(forgetting) - [0.5, 1.0]) <= 3 * se), theta(forgetting)
    assert theta(plain)[1] < 1.0 - 2.5 * se[1], theta(plain)


def test_half_life_zero_weight_events_only_age():
    cal = OnlinePlatt(half_life=10.0)
    cal.learn_many([0.2, 0.8, 0.6], [0, 1, 1])
    before = theta(cal)
    P0 = np.array(cal._core.inverse_hessian())
    for _ in range(200):
        cal.learn_one(0.5, 1, 0.0)
        cal._check()
    # the data's curvature has decayed by 2**-20: P is back to (nearly) I / reg, and
    # the penalty pulled theta towards the identity map
    np.testing.assert_allclose(cal._core.inverse_hessian(), np.eye(2), atol=1e-4)
    assert not np.allclose(P0, np.eye(2), atol=1e-2)
    assert np.linalg.norm(theta(cal) - [1.0, 0.0]) < np.linalg.norm(before - [1.0, 0.0])


# ---------------------------------------------------------------------- weights


@pytest.mark.parametrize("half_life", [None, 30.0])
@pytest.mark.parametrize("kind", KINDS)
def test_scaling_weights_and_penalty_by_a_power_of_two_is_exact(kind, half_life):
    s, y, w = messy_stream(400, seed=11)
    base = make(kind, half_life=half_life)
    base.learn_many(s, y, w)
    for factor in (4.0, 0.125):
        scaled = make(kind, half_life=half_life, regularization=factor)
        for a, b, c in zip(s.tolist(), y.tolist(), w.tolist()):
            scaled.learn_one(a, b, c * factor)
        assert scaled._core.theta == base._core.theta
        assert [scaled.predict_one(q) for q in EDGE_QUERIES] == [
            base.predict_one(q) for q in EDGE_QUERIES
        ]


@pytest.mark.parametrize("kind", KINDS)
def test_zero_weight_teaches_nothing(kind):
    s, y, w = messy_stream(200, seed=12)
    cal = make(kind)
    for q in EDGE_QUERIES:
        cal.learn_one(q, 1, 0.0)
    assert all(cal.predict_one(q) == q for q in EDGE_QUERIES)  # still the cold start
    cal.learn_many(s, y, w)
    snapshot = json.dumps(cal.to_dict())
    for q in EDGE_QUERIES:
        cal.learn_one(q, 0, 0.0)
    cal.learn_many(s, y, np.zeros(len(s)))
    assert json.dumps(cal.to_dict()) == snapshot


@pytest.mark.parametrize(
    "kind, truth", [("platt", (1.5, -0.3)), ("abm", (0.6, 1.5, 0.3))]
)
def test_integer_weights_reach_the_weighted_fit(kind, truth):
    """An event of weight k is not k repeated events for an online rule (the steps are
    taken at different points), but both reach the weighted batch fit, which is the fit
    of the repeated events (the oracle's own identity is checked first)."""
    n = 8000
    s, y = true_stream(kind, truth, n, seed=13)
    k = np.random.default_rng(14).integers(1, 4, n)
    theta0, nonneg = ref.MODELS[kind]
    X = ref.features(s, kind)
    weighted = ref.logistic_fit(X, y, k.astype(float), theta0, 1.0, nonneg)
    repeated = ref.logistic_fit(
        np.repeat(X, k, axis=0), np.repeat(y, k), None, theta0, 1.0, nonneg
    )
    np.testing.assert_allclose(weighted, repeated, rtol=1e-6, atol=1e-7)
    se = ref.fisher_standard_errors(X, weighted, k.astype(float))
    cal_w, cal_r = make(kind), make(kind)
    cal_w.learn_many(s, y, k)
    cal_r.learn_many(np.repeat(s, k), np.repeat(y, k))
    assert np.all(np.abs(theta(cal_w) - weighted) <= 2 * se)
    assert np.all(np.abs(theta(cal_r) - weighted) <= 2 * se)
    assert np.all(np.abs(theta(cal_w) - theta(cal_r)) <= 0.5 * se)


@pytest.mark.parametrize("kind", KINDS)
def test_absurd_weight_is_refused_and_leaves_state_unchanged(kind):
    cal = make(kind)
    s, y, w = messy_stream(100, seed=15)
    cal.learn_many(s, y, w)
    snapshot = json.dumps(cal.to_dict())
    preds = [cal.predict_one(q) for q in EDGE_QUERIES]
    with pytest.raises(ValueError, match="'w' argument of .*learn_one.* Got 1e\\+300"):
        cal.learn_one(0.3, 1, 1e300)
    with pytest.raises(ValueError, match="'w'"):  # learn_many is atomic
        cal.learn_many([0.2, 0.3, 0.4], [0, 1, 1], [1.0, 1e300, 1.0])
    assert json.dumps(cal.to_dict()) == snapshot
    assert [cal.predict_one(q) for q in EDGE_QUERIES] == preds
    fresh = make(kind)
    with pytest.raises(ValueError, match="'w'"):
        fresh.learn_one(0.3, 1, 1e300)
    assert all(fresh.predict_one(q) == q for q in EDGE_QUERIES)  # still cold
    cal.learn_one(0.3, 1, 1e6)  # large but representable weights are fine
    cal._check()


# ---------------------------------------------------------------------- edges


@pytest.mark.parametrize("half_life", [None, 5.0])
@pytest.mark.parametrize("kind", KINDS)
def test_cold_start_is_the_score_itself(kind, half_life):
    cal = make(kind, half_life=half_life)
    assert all(cal.predict_one(q) == q for q in EDGE_QUERIES)
    assert cal.predict_many(EDGE_QUERIES).tolist() == EDGE_QUERIES
    cal.learn_one(0.5, 1, 0.0)
    assert all(cal.predict_one(q) == q for q in EDGE_QUERIES)
    cal.learn_one(0.9, 0)
    assert any(cal.predict_one(q) != q for q in EDGE_QUERIES)


@pytest.mark.parametrize("kind", KINDS)
def test_edge_scores_are_clipped(kind):
    cal = make(kind)
    s, y, w = messy_stream(300, seed=16)
    for a, b, c in zip(s.tolist(), y.tolist(), w.tolist()):
        cal.learn_one(a, b, c)
        cal._check()
        for q in (0.0, 5e-324, 1.0):
            p = cal.predict_one(q)
            assert isinstance(p, float) and 0.0 <= p <= 1.0
    eps = scaling.EPS
    assert (
        cal.predict_one(0.0)
        == cal.predict_one(5e-324)
        == cal.predict_one(1e-300)
        == cal.predict_one(eps)
    )
    assert (
        cal.predict_one(1.0)
        == cal.predict_one(1.0 - 2.0**-53)
        == cal.predict_one(1.0 - eps)
    )
    assert cal.predict_one(eps) != cal.predict_one(2 * eps) or cal.predict_one(
        0.3
    ) == cal.predict_one(0.7)


@pytest.mark.parametrize("label", [0, 1])
@pytest.mark.parametrize("kind", KINDS)
def test_one_class_streams(kind, label):
    """All labels equal: the maximum-likelihood fit does not exist (it runs off to
    infinity); the online fit moves towards the label slowly and stays finite."""
    cal = make(kind)
    rng = np.random.default_rng(17)
    s = np.concatenate([[0.0, 1.0], rng.random(3000)])
    previous = None
    for i, a in enumerate(s.tolist()):
        cal.learn_one(a, label)
        if i % 100 == 0:
            cal._check()
            p = cal.predict_one(0.5)
            if previous is not None and kind != "ab":  # "ab" keeps map(1/2) = 1/2
                assert (p >= previous) if label else (p <= previous)
            previous = p
    cal._check()
    probe = cal.predict_many(np.linspace(0, 1, 11))
    assert np.all(np.isfinite(probe)) and np.all((probe >= 0) & (probe <= 1))
    if kind != "ab":  # "ab" pins map(1/2) = 1/2: the two halves pull b (or a) apart
        assert np.all(probe[1:-1] > 0.9) if label else np.all(probe[1:-1] < 0.1)


# ---------------------------------------------------------------------- parameters


@pytest.mark.parametrize("parameters", ["abm", "am", "ab"])
def test_beta_parameters_describe_the_map(parameters):
    s, y = true_stream("abm", (0.6, 1.5, 0.3), 3000, seed=18)
    cal = OnlineBeta(parameters)
    cal.learn_many(s, y)
    a, b, c = cal.a, cal.b, cal.c
    assert a >= 0.0 and b >= 0.0
    grid = np.linspace(0.0, 1.0, 101)
    np.testing.assert_allclose(
        cal.predict_many(grid), ref.beta_map(grid, a, b, c), rtol=1e-12, atol=1e-15
    )
    if parameters == "am":
        assert a == b
    if parameters == "ab":
        assert (
            c == (a - b) * math.log(2.0)
            and cal.m == 0.5
            and cal.predict_one(0.5) == 0.5
        )
    m = cal.m
    assert m is not None and abs(cal.predict_one(m) - 0.5) < 1e-9
    # m as Kull et al. define it: c = b ln(1 - m) - a ln m
    assert abs(b * math.log(1 - m) - a * math.log(m) - c) < 1e-9


def test_midpoint_edge_cases():
    mid = scaling._midpoint
    assert mid(0.0, 0.0, 0.3) is None  # a constant map
    assert mid(0.0, 1.0, 0.5) is None  # above 1/2 everywhere
    assert mid(1.0, 0.0, -0.5) is None  # below 1/2 everywhere
    assert mid(0.0, 1.0, -0.5) == pytest.approx(1.0 - math.exp(-0.5), rel=1e-12)
    assert mid(2.0, 2.0, 1.0) == pytest.approx(1.0 / (1.0 + math.exp(0.5)), rel=1e-15)
    m = mid(0.3, 2.0, 0.1)
    assert abs(0.3 * math.log(m) - 2.0 * math.log(1 - m) + 0.1) < 1e-12
    # crossings that round to an end are not in (0, 1): None, not 1.0 or 0.0 (an outside
    # check: OnlineBeta("am") with a = 7e-4, c = -0.217 gave m = 1.0, mapped to 0.452)
    assert mid(7e-4, 7e-4, -0.217) is None  # 1 - e**-310
    assert mid(7e-4, 7e-4, 0.6) is None  # e**-857
    assert mid(7e-4, 0.0, -0.217) is None  # the bisection's end
    assert mid(0.0, 7e-4, 0.217) is None


def test_platt_parameters_describe_the_map():
    s, y = true_stream("platt", (1.8, -0.4), 2000, seed=19)
    cal = OnlinePlatt()
    cal.learn_many(s, y)
    grid = np.clip(np.linspace(0.0, 1.0, 101), scaling.EPS, 1 - scaling.EPS)
    want = 1.0 / (1.0 + np.exp(-(cal.a * np.log(grid / (1 - grid)) + cal.b)))
    np.testing.assert_allclose(cal.predict_many(grid), want, rtol=1e-12, atol=1e-15)


def test_monotone_platt_is_beta_am():
    """Beta calibration with a = b is Platt scaling on logit(s) with a >= 0 (Kull et
    al., Proposition 1): the two calibrators follow the same trajectory bit for bit."""
    s, y, w = messy_stream(600, seed=20)
    platt, beta = OnlinePlatt(monotone=True), OnlineBeta("am")
    for a, b, c in zip(s.tolist(), y.tolist(), w.tolist()):
        platt.learn_one(a, b, c)
        beta.learn_one(a, b, c)
        assert platt.a == beta.a and platt.b == beta.c
        assert platt.predict_one(a) == beta.predict_one(a)
    assert platt.a == 0.0  # the second half of the stream turned the scores around


def test_unconstrained_platt_can_reverse_the_scores():
    s, y = true_stream("platt", (-1.0, 0.2), 3000, seed=21)
    free, monotone = OnlinePlatt(), OnlinePlatt(monotone=True)
    free.learn_many(s, y)
    monotone.learn_many(s, y)
    assert free.a < -0.5 and free.predict_one(0.9) < free.predict_one(0.1)
    assert monotone.a == 0.0 and monotone._monotone and not free._monotone
    assert "monotone" in monotone._tags and "monotone" not in free._tags


# ---------------------------------------------------------------------- properties


events = st.lists(
    st.tuples(
        st.one_of(
            st.floats(0.0, 1.0),
            st.sampled_from([0.0, 1.0, 5e-324, 0.5, 1.0 - 2.0**-53]),
        ),
        st.integers(0, 1),
        st.one_of(st.sampled_from([0.0, 1.0]), st.floats(0.0, 1e4)),
    ),
    max_size=60,
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(events, st.sampled_from(KINDS), st.sampled_from([None, 3.0]))
def test_random_streams_keep_the_invariants(stream, kind, half_life):
    cal = make(kind, half_life=half_life)
    grid = np.linspace(0.0, 1.0, 51)
    for s, y, w in stream:
        cal.learn_one(s, y, w)
        cal._check()
        p = cal.predict_many(grid)
        assert np.all(np.isfinite(p)) and np.all((p >= 0) & (p <= 1))
        if cal._monotone:
            assert np.all(np.diff(p) >= -1e-15)  # up to one rounding of sigmoid
    restored = type(cal).from_dict(json.loads(json.dumps(cal.to_dict())))
    assert restored.predict_many(grid).tolist() == cal.predict_many(grid).tolist()


def test_check_catches_corruption():
    core = OnlineNewtonLogistic((1.0, 1.0, 0.0), 1.0, 1.0, (0, 1))
    core.update3(-0.5, 0.7, 1.0, 1.0, 1.0)
    core._check()
    bad = core.to_lists()
    bad[1][0] = -1.0  # P no longer positive definite
    core.set_lists(bad)
    with pytest.raises(AssertionError, match="positive definite"):
        core._check()
    core = OnlineNewtonLogistic((1.0, 1.0), 2.0, 1.0, (0, 1))
    core.set_lists([[1.0, 1.0], [1.0, 0.0, 1.0]])  # P = I > I / reg: H < reg I
    with pytest.raises(AssertionError, match="reg I"):
        core._check()
    core.set_lists([[-0.1, 1.0], [0.5, 0.0, 0.5]])
    with pytest.raises(AssertionError, match="constraint"):
        core._check()
    with pytest.raises(ValueError, match="does not match"):
        core.set_lists([[1.0, 1.0, 1.0], [0.5, 0.0, 0.5]])


# ---------------------------------------------------------------------- parameters' validation


@pytest.mark.parametrize(
    "klass, kwargs, name",
    [
        (OnlinePlatt, {"regularization": 0.0}, "regularization"),
        (OnlinePlatt, {"regularization": math.inf}, "regularization"),
        (OnlinePlatt, {"regularization": "1"}, "regularization"),
        (OnlinePlatt, {"half_life": 0}, "half_life"),
        (OnlinePlatt, {"half_life": -2.0}, "half_life"),
        (OnlinePlatt, {"monotone": 1}, "monotone"),
        (OnlineBeta, {"parameters": "abc"}, "parameters"),
        (OnlineBeta, {"regularization": -1.0}, "regularization"),
        (OnlineBeta, {"half_life": math.nan}, "half_life"),
    ],
)
def test_bad_parameters(klass, kwargs, name):
    with pytest.raises(
        ValueError, match=f"The '{name}' parameter of {klass.__name__} must be"
    ):
        klass(**kwargs)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"theta0": (1.0,)},
        {"regularization": 0.0},
        {"decay": 1.5},
        {"nonnegative": (2,)},
        {"nonnegative": (1,), "theta0": (1.0, -1.0)},
    ],
)
def test_core_rejects_bad_arguments(kwargs):
    args = {"theta0": (1.0, 0.0), **kwargs}
    with pytest.raises(ValueError):
        OnlineNewtonLogistic(**args)


@pytest.mark.parametrize(
    "events",
    [
        [(0.26, 0, 1e8), (0.74, 0, 1e8)],
        [(0.38, 0, 1e12), (0.47, 1, 1e8), (0.07, 0, 1e4), (0.93, 1, 1e12), (0.42, 1, 1e12)],
    ],
)
def test_snapshot_after_large_weights_restores(events):
    # P = H^-1 grows ill-conditioned under large weights (a condition of 6e7 after two
    # events of weight 1e8); the cofactor inverse then misses H P = I by 1e-5 and more
    # (it grows as eps * cond**2), which _check refused with an absolute 1e-6, so that
    # from_dict refused the snapshot of a calibrator that had learnt nothing invalid
    cal = OnlineBeta()
    for s, y, w in events:
        cal.learn_one(s, y, w)
    cal._check()
    restored = type(cal).from_dict(json.loads(json.dumps(cal.to_dict())))
    assert [restored.predict_one(q) for q in (0.1, 0.5, 0.9)] == [cal.predict_one(q) for q in (0.1, 0.5, 0.9)]
