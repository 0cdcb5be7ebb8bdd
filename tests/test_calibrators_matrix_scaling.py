"""VectorScaling, MatrixScaling and DirichletCalibration against the scipy oracles of
``tests/references_matrix_scaling.py`` (issue 17, item 1): the streaming refits, on the
window's tail, and the batch fits of :mod:`streamcal.core.matrix_scaling`."""

import math
import pickle
import random

import numpy as np
import pytest

from tests import references_matrix_scaling as R

from streamcal import (
    DirichletCalibration,
    MatrixScaling,
    TemperatureScaling,
    VectorScaling,
)
from streamcal.base import MulticlassCalibrator
from streamcal.core.matrix_scaling import (
    features,
    fit_dirichlet,
    fit_matrix_scaling,
    fit_vector_scaling,
    scaling_nll,
)
from streamcal.registry import make_multiclass_calibrator

CLASSES = ("cat", "dog", 3, 2.5)


def _stream(n, seed, classes=CLASSES, logits=False, sharp=2.5, missing=True, zero_w=True):
    """Over-confident forecasts (true probabilities ``q``, forecast ``q ** sharp``
    renormalised), some with a class left out, weights in [0, 3] with some zeros."""
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        q = [rng.gammavariate(1.0, 1.0) for _ in classes]
        t = sum(q)
        q = [v / t for v in q]
        f = [v**sharp for v in q]
        t = sum(f)
        s = {c: v / t for c, v in zip(classes, f)}
        if missing and rng.random() < 0.2:
            drop = rng.choice(classes)
            gone = s.pop(drop)
            s = {c: v / (1.0 - gone) for c, v in s.items()} if gone < 1 else s
        y = rng.choices(classes, q)[0]
        w = 0.0 if zero_w and rng.random() < 0.05 else rng.uniform(0.2, 3.0)
        if logits:
            s = {c: math.log(max(v, 1e-9)) + 0.7 for c, v in s.items()}
        out.append((s, y, w))
    return out


def _model(cal):
    """(diagonal, lambda, mu, nu, logits) of a calibrator, as the oracle takes them."""
    if isinstance(cal, DirichletCalibration):
        return False, cal.reg_lambda, cal.reg_mu, cal.reg_diagonal, False
    l2 = cal.l2
    return isinstance(cal, VectorScaling), l2, l2, l2, cal.input == "logits"


def _close(a: dict, b: dict, tol: float) -> bool:
    return a.keys() == b.keys() and all(abs(a[k] - b[k]) <= tol for k in a)


MAKERS = [
    lambda **kw: VectorScaling(**kw),
    lambda **kw: VectorScaling(input="logits", l2=0.01, **kw),
    lambda **kw: MatrixScaling(**kw),
    lambda **kw: MatrixScaling(input="logits", l2=0.05, **kw),
    lambda **kw: DirichletCalibration(**kw),
    lambda **kw: DirichletCalibration(reg_lambda=0.2, reg_mu=0.01, reg_diagonal=1e-3, **kw),
]


@pytest.mark.parametrize("make", MAKERS)
@pytest.mark.parametrize("seed", [0, 1])
def test_streaming_refits_match_the_scipy_oracle_on_the_window(make, seed):
    cal = make(window_size=70, refit_every=25)
    diagonal, lam, mu, nu, logits = _model(cal)
    events = _stream(180, seed, logits=logits)
    probes = [s for s, _, _ in _stream(6, seed + 100, logits=logits, missing=False)]
    checked = 0
    for t, (s, y, w) in enumerate(events, start=1):
        cal.learn_one(s, y, w)
        if t % 25:
            continue
        fitted = R.fit(events[max(0, t - 70):t], diagonal, lam, mu, nu, logits)
        for x in probes:
            got = cal.predict_one(x)
            assert _close(got, R.predict(fitted, x, logits), 1e-6), (t, x, got)
        checked += 1
    assert checked == 7


@pytest.mark.parametrize("fit, diagonal", [(fit_vector_scaling, True), (fit_matrix_scaling, False)])
@pytest.mark.parametrize("seed", [2, 3, 4])
def test_batch_fits_match_the_scipy_oracle(fit, diagonal, seed):
    rng = np.random.default_rng(seed)
    K = 3 + seed % 2
    X = rng.normal(size=(60, K)) * 2.0
    y = rng.integers(0, K, size=60)
    w = rng.uniform(0.0, 2.0, size=60)
    W, b = fit(X, y, w, l2=0.02)
    events = [({c: float(v) for c, v in enumerate(row)}, int(c), float(wi)) for row, c, wi in zip(X, y, w)]
    # the oracle's classes are in order of first appearance: relabel to 0..K-1 first
    order = R.fit_classes(events)
    assert sorted(order) == list(range(K))
    perm = np.array(order)
    oracle = R.fit(events, diagonal, 0.02, 0.02, 0.02, logits=True)
    Wo = np.empty((K, K))
    Wo[np.ix_(perm, perm)] = np.array(oracle[1])
    bo = np.empty(K)
    bo[perm] = oracle[2]
    S, So = X @ W.T + b, X @ Wo.T + bo
    P = np.exp(S) / np.exp(S).sum(axis=1, keepdims=True)
    Po = np.exp(So) / np.exp(So).sum(axis=1, keepdims=True)
    assert np.abs(P - Po).max() <= 1e-6
    if diagonal:
        assert np.count_nonzero(W - np.diag(np.diag(W))) == 0


def test_fit_dirichlet_is_matrix_scaling_on_log_probabilities_and_odir_differs():
    rng = np.random.default_rng(5)
    P = rng.dirichlet([0.5, 0.5, 0.5], size=80)
    y = rng.integers(0, 3, size=80)
    Wd, bd = fit_dirichlet(P, y, reg_lambda=0.03, reg_mu=0.03, reg_diagonal=0.03)
    Wm, bm = fit_matrix_scaling(features(P), y, l2=0.03)
    assert np.abs(Wd - Wm).max() <= 1e-9 and np.abs(bd - bm).max() <= 1e-9
    # a strong ODIR lambda shrinks the off-diagonal weights only
    Ws, _ = fit_dirichlet(P, y, reg_lambda=100.0, reg_mu=0.03, reg_diagonal=0.03)
    off = ~np.eye(3, dtype=bool)
    assert np.abs(Ws[off]).max() < 0.1 * np.abs(Wd[off]).max()


@pytest.mark.parametrize("fit", [fit_vector_scaling, fit_matrix_scaling])
def test_warm_start_reaches_the_same_fit(fit):
    rng = np.random.default_rng(6)
    X = rng.normal(size=(200, 4)) * 3.0
    y = rng.integers(0, 4, size=200)
    W, b = fit(X, y)
    W2, b2 = fit(X, y, init=(W + rng.normal(size=(4, 4)), b - 2.0))
    assert np.abs(W - W2).max() <= 1e-9 and np.abs(b - b2).max() <= 1e-9


def test_separable_window_has_a_finite_fit_and_the_penalty_bounds_it():
    x = np.log([[0.9, 0.1]] * 30)
    y = [0] * 30
    small = fit_matrix_scaling(x, y, l2=1e-6)
    large = fit_matrix_scaling(x, y, l2=1e-2)
    for W, b in (small, large):
        assert np.isfinite(W).all() and np.isfinite(b).all()
    # the weaker the penalty, the surer the (always right) top class
    nll = [scaling_nll(W, b, x, y) for W, b in (small, large)]
    assert nll[0] < nll[1] < scaling_nll(np.eye(2), np.zeros(2), x, y)


def test_fits_without_two_classes_are_none():
    assert fit_vector_scaling(np.zeros((0, 3)), []) is None
    assert fit_matrix_scaling([[0.0]], [0]) is None
    assert fit_dirichlet([[0.5, 0.5]], [0], w=[0.0]) is None


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda: fit_vector_scaling([[0.0, 1.0]], [0], l2=0.0), "'l2'"),
        (lambda: fit_matrix_scaling([[0.0, float("nan")]], [0]), "'x'"),
        (lambda: fit_matrix_scaling([[0.0, 1.0]], [2]), "'labels'"),
        (lambda: fit_matrix_scaling([[0.0, 1.0]], [0], w=[-1.0]), "'w'"),
        (lambda: fit_dirichlet([[0.5, 0.5]], [0], reg_mu=-1.0), "'reg_mu'"),
        (lambda: fit_dirichlet([[1.5, 0.5]], [0]), "'probabilities'"),
        (lambda: fit_matrix_scaling([[0.0, 1.0]], [0], init=(np.eye(3), np.zeros(3))), "'init'"),
    ],
)
def test_batch_fits_reject_bad_arguments(call, name):
    with pytest.raises(ValueError, match=name):
        call()


@pytest.mark.parametrize(
    "make, param",
    [
        (lambda v: VectorScaling(l2=v), "l2"),
        (lambda v: MatrixScaling(l2=v), "l2"),
        (lambda v: DirichletCalibration(reg_lambda=v), "reg_lambda"),
        (lambda v: DirichletCalibration(reg_mu=v), "reg_mu"),
        (lambda v: DirichletCalibration(reg_diagonal=v), "reg_diagonal"),
    ],
)
@pytest.mark.parametrize("bad", [0.0, -1.0, float("nan"), float("inf"), "0.1", None])
def test_constructors_reject_bad_penalties(make, param, bad):
    with pytest.raises((ValueError, TypeError), match=f"'{param}'.*must be a finite real number > 0. Got"):
        make(bad)


def test_bad_input_parameter():
    with pytest.raises(ValueError, match="'input'"):
        VectorScaling(input="log")
    with pytest.raises(TypeError):
        DirichletCalibration(input="logits")  # Dirichlet calibration takes probabilities


def test_warm_started_stream_equals_fits_from_scratch():
    # the refit inside learn_one starts from the previous fit; a clone fitted from
    # scratch on the same window must agree (the penalised NLL has one minimiser)
    cal = MatrixScaling(window_size=50, refit_every=10)
    events = _stream(200, 9, classes=(0, 1, 2))
    for t, (s, y, w) in enumerate(events, start=1):
        cal.learn_one(s, y, w)
        if t % 10 == 0:
            fresh = cal.clone()
            fresh._fit_events(events[max(0, t - 50):t])
            assert np.abs(fresh._W - cal._W).max() <= 1e-9


def test_improves_an_over_confident_stream_where_temperature_cannot_fix_a_bias():
    # forecasts over-confident and biased towards class 0: vector and matrix scaling
    # (per-class biases) beat temperature scaling in log loss on later events
    rng = random.Random(11)

    def event():
        q = [rng.gammavariate(1.0, 1.0) for _ in range(3)]
        t = sum(q)
        q = [v / t for v in q]
        f = [q[0] * 3.0, q[1], q[2]]
        f = [v**2 for v in f]
        t = sum(f)
        return {c: v / t for c, v in enumerate(f)}, rng.choices(range(3), q)[0]

    train = [event() for _ in range(1500)]
    test = [event() for _ in range(1500)]
    loss = {}
    for cal in (TemperatureScaling(1500, 1500), VectorScaling(1500, 1500), MatrixScaling(1500, 1500), DirichletCalibration(1500, 1500)):
        for s, y in train:
            cal.learn_one(s, y)
        loss[type(cal).__name__] = sum(-math.log(cal.predict_one(s)[y]) for s, y in test) / len(test)
    raw = sum(-math.log(s[y]) for s, y in test) / len(test)
    assert loss["TemperatureScaling"] < raw
    for name in ("VectorScaling", "MatrixScaling", "DirichletCalibration"):
        assert loss[name] < loss["TemperatureScaling"] - 0.01, loss


def test_unknown_and_missing_classes_at_prediction():
    cal = DirichletCalibration(window_size=40, refit_every=40)
    for s, y, w in _stream(40, 12, classes=("a", "b", "c")):
        cal.learn_one(s, y, w)
    out = cal.predict_one({"a": 0.5, "b": 0.3, "z": 0.2})
    assert set(out) == {"a", "b", "c", "z"}  # "c" of the fit gets a probability
    assert out["z"] == 0.2 and math.isclose(sum(out.values()), 1.0)
    assert cal.predict_one({"z": 1.0}) == {"z": 1.0}
    assert set(cal.weights) == {"a", "b", "c"} and set(cal.bias) == {"a", "b", "c"}


@pytest.mark.parametrize("klass", [VectorScaling, MatrixScaling, DirichletCalibration])
def test_merge_refused_with_the_reason(klass):
    a, b = klass(window_size=20, refit_every=5), klass(window_size=20, refit_every=5)
    with pytest.raises(TypeError, match="window_size"):
        a.merge(b)


@pytest.mark.parametrize("klass", [VectorScaling, MatrixScaling, DirichletCalibration])
def test_snapshot_round_trip_and_corrupted_fits_rejected(klass):
    cal = klass(window_size=30, refit_every=10)
    for s, y, w in _stream(45, 13):
        cal.learn_one(s, y, w)
    d = cal.to_dict()
    back = MulticlassCalibrator.from_dict(d)
    probe = {"cat": 0.2, "dog": 0.5, 3: 0.3}
    assert back.predict_one(probe) == cal.predict_one(probe)
    assert pickle.loads(pickle.dumps(cal)).predict_one(probe) == cal.predict_one(probe)
    assert repr(cal).startswith(klass.__name__)
    corrupt = [
        ("bias", lambda st: st["bias"].pop()),
        ("bias", lambda st: st["bias"].__setitem__(0, "x")),
        ("weights", lambda st: st["weights"].pop()),
        ("fit_classes", lambda st: st["fit_classes"].__setitem__(0, "not a class")),
        ("bias", lambda st: st.__setitem__("bias", None)),
    ]
    for key, spoil in corrupt:
        bad = cal.to_dict()
        spoil(bad["state"])
        with pytest.raises(ValueError, match="fit_classes|bias|weights"):
            MulticlassCalibrator.from_dict(bad)


@pytest.mark.parametrize(
    "name, klass",
    [("vector_scaling", VectorScaling), ("matrix_scaling", MatrixScaling), ("dirichlet", DirichletCalibration)],
)
def test_registry_short_names(name, klass):
    cal = make_multiclass_calibrator(name)
    assert type(cal) is klass
    assert make_multiclass_calibrator(f"{name}:window_size=300").window_size == 300


def test_command_line_names_in_a_multiclass_replay(tmp_path, capsys):
    # the three short names run in ``streamcal replay`` on a multiclass log, and the
    # log loss printed is that of predicting each event before learning it
    import csv

    from tests.test_cli_replay import table

    from streamcal.cli import main

    events = _stream(300, 14, classes=("a", "b", "c"), missing=False, zero_w=False)
    path = tmp_path / "mc.csv"
    with open(path, "w", newline="") as f:
        out = csv.writer(f)
        out.writerow(["a", "b", "c", "label"])
        for s, y, _ in events:
            out.writerow([repr(s["a"]), repr(s["b"]), repr(s["c"]), y])
    specs = ["vector_scaling:window_size=100,refit_every=20", "matrix_scaling", "dirichlet:refit_every=50"]
    argv = ["replay", str(path), "--score", "a,b,c", "--no-progress", "--metric", "log_loss", "--calibrator", *specs]
    assert main(argv) == 0
    rows = table(capsys.readouterr().out)
    assert list(rows) == ["raw", *specs]
    for spec in specs:
        cal = make_multiclass_calibrator(spec)
        losses = []
        for s, y, _ in events:
            losses.append(-math.log(cal.predict_one(s)[y]))
            cal.learn_one(s, y)
        assert rows[spec]["log_loss"][0] == pytest.approx(sum(losses) / len(losses), abs=5.1e-5)
    assert rows["vector_scaling:window_size=100,refit_every=20"]["log_loss"][0] < rows["raw"]["log_loss"][0]


@pytest.mark.parametrize("klass", [VectorScaling, MatrixScaling])
def test_logits_near_the_float_range_leave_the_stream_uncalibrated_not_broken(klass):
    # a window holding a logit of 1e300 overflows the Newton step: the fit stops
    # where it is, never NaN probabilities (found by check_corrupted_snapshot_rejected)
    cal = klass(window_size=10, refit_every=5, input="logits")
    for i in range(5):
        cal.learn_one({"a": 1e300 if i == 2 else 1.0, "b": 0.0}, "ab"[i % 2])
    out = cal.predict_one({"a": 1.0, "b": 0.0})
    assert all(math.isfinite(p) for p in out.values()) and math.isclose(sum(out.values()), 1.0)
    W, b = fit_matrix_scaling([[1e300, 0.0], [0.0, 1.0]], [1, 0])
    assert np.isfinite(W).all() and np.isfinite(b).all()
