"""Direct batch oracles for the public classes whose own tests compare them with
something other than a slow, obviously correct oracle: the streaming ``Brier`` and
``LogLoss`` (scikit-learn and a numpy formula, at every prefix, with ties, weights, the
edge forecasts 0 and 1, one-class streams and rolling windows) and the top-label view
of ``MulticlassCalibrationMonitor`` (the literal e-process oracle of
``tests/references_monitor.py`` fed the top probability and its correctness)."""

import math

import numpy as np
import pytest
import sklearn.metrics
from river import utils

from streamcal.metrics import Brier, LogLoss
from streamcal.monitor import CalibrationMonitor, MulticlassCalibrationMonitor
from tests import references_monitor as RM


def binary_stream(seed, n=160, labels="bernoulli"):
    """``(y, p, w)``: forecasts rounded to two decimals (ties), about 5% exactly 0 or 1;
    Bernoulli, all-0 or all-1 labels; weights 1, 0.5, 0.3, 3 and 0."""
    rng = np.random.default_rng(seed)
    p = np.round(rng.beta(1.5, 1.5, n), 2)
    edge = rng.random(n) < 0.05
    p[edge] = rng.integers(0, 2, edge.sum())
    if labels == "bernoulli":
        y = (rng.random(n) < p**1.5).astype(int)
    else:
        y = np.full(n, int(labels == "ones"))
    w = rng.choice([1.0, 1.0, 0.5, 0.3, 3.0, 0.0], n)
    return y, p, w


def log_loss_oracle(y, p, w, eps):
    """Weighted mean of -log(q), q the probability given to the outcome (p or 1 - p)
    clipped to [eps, 1 - eps]: a confident miss costs -log(eps) exactly, either way
    round, as LogLoss documents. (Clipping p before taking 1 - p, as sklearn and
    ``streamcal.metrics.log_loss`` do, costs 34.5396, not -log(eps) = 34.5388, for
    p = 1, y = 0 at eps = 1e-15, since 1 - 1e-15 is not a double.)"""
    q = np.clip(np.where(y == 1, p, 1.0 - p), eps, 1.0 - eps)
    return float(np.sum(w * -np.log(q)) / np.sum(w))


CASES = [(seed, "bernoulli") for seed in range(5)] + [(5, "zeros"), (6, "ones")]


@pytest.mark.parametrize("seed, labels", CASES)
def test_brier_matches_sklearn_at_every_prefix(seed, labels):
    y, p, w = binary_stream(seed, labels=labels)
    m = Brier()
    for t in range(len(y)):
        m.update(int(y[t]), float(p[t]), float(w[t]))
        if w[: t + 1].any():
            want = sklearn.metrics.brier_score_loss(
                y[: t + 1], p[: t + 1], sample_weight=w[: t + 1], pos_label=1
            )
            assert m.get() == pytest.approx(want, rel=1e-12, abs=1e-15), t
        else:
            assert m.get() == 0.0


@pytest.mark.parametrize("eps", [1e-15, 1e-3])
@pytest.mark.parametrize("seed, labels", CASES)
def test_log_loss_matches_the_formula_at_every_prefix(seed, labels, eps):
    y, p, w = binary_stream(seed, labels=labels)
    m = LogLoss(eps=eps)
    for t in range(len(y)):
        m.update(int(y[t]), float(p[t]), float(w[t]))
        if w[: t + 1].any():
            want = log_loss_oracle(y[: t + 1], p[: t + 1], w[: t + 1], eps)
            assert m.get() == pytest.approx(want, rel=1e-12, abs=1e-15), t


@pytest.mark.parametrize("seed", range(3))
def test_log_loss_matches_sklearn_away_from_the_edges(seed):
    rng = np.random.default_rng(seed)
    p = np.round(rng.uniform(0.01, 0.99, 120), 2)
    y = (rng.random(120) < p).astype(int)
    w = rng.choice([1.0, 0.5, 2.0, 0.0], 120)
    m = LogLoss()
    for t in range(len(y)):
        m.update(int(y[t]), float(p[t]), float(w[t]))
        if t >= 5 and len(set(y[: t + 1].tolist())) == 2 and w[: t + 1].any():
            want = sklearn.metrics.log_loss(
                y[: t + 1], p[: t + 1], sample_weight=w[: t + 1], labels=[0, 1]
            )
            assert m.get() == pytest.approx(want, rel=1e-12), t


@pytest.mark.parametrize("window", [1, 7, 40])
def test_rolling_brier_and_log_loss_match_the_tail(window):
    y, p, w = binary_stream(11, n=200)
    brier = utils.Rolling(Brier, window_size=window)
    ll = utils.Rolling(LogLoss, window_size=window)
    for t in range(len(y)):
        brier.update(int(y[t]), float(p[t]), float(w[t]))
        ll.update(int(y[t]), float(p[t]), float(w[t]))
        lo = max(0, t + 1 - window)
        ty, tp, tw = y[lo : t + 1], p[lo : t + 1], w[lo : t + 1]
        if tw.any():
            want = float(np.sum(tw * (tp - ty) ** 2) / np.sum(tw))
            assert brier.get() == pytest.approx(want, rel=1e-9, abs=1e-12), t
            want = log_loss_oracle(ty, tp, tw, 1e-15)
            assert ll.get() == pytest.approx(want, rel=1e-9, abs=1e-12), t


# ------------------------------------------------------------ the multiclass monitor


def multiclass_stream(n, seed, classes=("a", "b", "c")):
    """Probability vectors on a 0.01 grid (ties within and across vectors), calibrated
    for the first half and over-confident after; the label drawn from the truth."""
    rng = np.random.default_rng(seed)
    out = []
    for t in range(n):
        truth = rng.dirichlet(np.ones(len(classes)))
        f = truth if t < n // 2 else truth**3 / (truth**3).sum()
        head = np.floor(f[:-1] * 100) / 100
        vec = [*head.tolist(), 1.0 - float(head.sum())]
        proba = {c: float(v) for c, v in zip(classes, vec)}
        out.append((proba, classes[int(rng.choice(len(classes), p=truth))]))
    return out


@pytest.mark.parametrize(
    "params",
    [{}, {"alpha": 0.2, "lam": 0.5, "half_life": None, "resolution": None}],
    ids=["default", "single-lam"],
)
@pytest.mark.parametrize("seed", range(3))
def test_top_label_monitor_matches_the_literal_eprocess_oracle(params, seed):
    template = CalibrationMonitor(**params)
    mc = MulticlassCalibrationMonitor(template, view="top-label")
    events = multiclass_stream(400, seed)
    scores, labels = [], []
    for proba, label in events:
        top = max(proba, key=proba.get)  # ties: the first class in the dict's order
        scores.append(proba[top])
        labels.append(int(label == top))
    expected = RM.eprocess_trace(
        scores,
        labels,
        alpha=template.alpha,
        lams=template.lam if isinstance(template.lam, tuple) else (template.lam,),
        half_life=template.half_life,
        window_size=template.window_size,
        resolution=template.resolution,
        prior_weight=template.prior_weight,
    )
    n_alarms = 0
    for t, ((proba, label), (e, alarm)) in enumerate(zip(events, expected)):
        mc.update(proba, label)
        assert mc.drift_detected == alarm, t
        assert math.isclose(mc.e_value, e, rel_tol=1e-9), (t, mc.e_value, e)
        n_alarms += alarm
    assert mc.n_alarms == n_alarms >= 1  # so that the restarts are compared too


# ------------------------------------------------- the multiclass proper scores


def multiclass_events(seed, n=150, classes=("a", "b", 3, 2.5)):
    """``(label, proba, w)``: probabilities on a 0.01 grid, about 10% one-hot, some
    forecasts leaving a class out (the label too, sometimes); dyadic weights and 0."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        k = int(rng.integers(1, len(classes) + 1))
        kept = [classes[i] for i in sorted(rng.choice(len(classes), k, replace=False))]
        if rng.random() < 0.1:
            vec = [0.0] * k
            vec[int(rng.integers(k))] = 1.0
        else:
            head = np.floor(rng.dirichlet(np.ones(k))[:-1] * 100) / 100
            vec = [*head.tolist(), 1.0 - float(head.sum())]
        label = classes[int(rng.integers(len(classes)))]
        w = float(rng.choice([1.0, 1.0, 0.5, 2.25, 0.0]))
        out.append((label, dict(zip(kept, vec)), w))
    return out


def multiclass_oracle(events, score, eps=1e-15):
    """Weighted mean of the Brier score summed over the union of the classes (absent
    classes have probability 0) or of -log(clip(p_y)), from a numpy matrix."""
    classes = list(dict.fromkeys(c for y, p, _ in events for c in [*p, y]))
    P = np.array([[p.get(c, 0.0) for c in classes] for _, p, _ in events])
    Y = np.array([[float(y == c) for c in classes] for y, _, _ in events])
    w = np.array([w for _, _, w in events])
    if score == "brier":
        losses = ((P - Y) ** 2).sum(axis=1)
    else:
        losses = -np.log(np.clip((P * Y).sum(axis=1), eps, 1.0 - eps))
    return float(np.sum(w * losses) / np.sum(w))


@pytest.mark.parametrize("seed", range(4))
def test_multiclass_brier_and_cross_entropy_match_numpy_at_every_prefix(seed):
    from streamcal.metrics import CrossEntropy, MulticlassBrier

    events = multiclass_events(seed)
    brier, ce, ce2 = MulticlassBrier(), CrossEntropy(), CrossEntropy(eps=0.01)
    for t, (y, p, w) in enumerate(events, start=1):
        for m in (brier, ce, ce2):
            m.update(y, p, w)
        if any(w for _, _, w in events[:t]):
            want = multiclass_oracle(events[:t], "brier")
            assert brier.get() == pytest.approx(want, rel=1e-12, abs=1e-15), t
            want = multiclass_oracle(events[:t], "log")
            assert ce.get() == pytest.approx(want, rel=1e-12, abs=1e-15), t
            want = multiclass_oracle(events[:t], "log", eps=0.01)
            assert ce2.get() == pytest.approx(want, rel=1e-12, abs=1e-15), t
