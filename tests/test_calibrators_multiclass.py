"""TemperatureScaling, TopLabel and ClassWise against the batch oracles of
tests/references_multiclass_cal.py (scipy's bounded scalar minimisation of the window's
NLL; scikit-learn's isotonic regression per class; binary calibrators fed by hand)."""

import collections
import json
import math
import warnings

import numpy as np
import pytest

from streamcal import (
    ClassWise,
    HistogramBinning,
    OnlineIsotonic,
    OnlinePlatt,
    TemperatureScaling,
    TopLabel,
)
from streamcal.base import MulticlassCalibrator
from streamcal.checks.multiclass import STR_CLASSES, yield_multiclass_stream
from streamcal.core.temperature import T_MAX, T_MIN, fit_temperature, temperature_nll
from tests import references_multiclass_cal as R


def _close(a: dict, b: dict, tol: float) -> bool:
    return a.keys() == b.keys() and all(abs(a[k] - b[k]) <= tol for k in a)


def _logit_stream(n, seed, **kw):
    """The shared stream with log-probabilities (floored at 1e-9) plus a random shift
    per event (logits are defined up to one)."""
    rng = np.random.default_rng(seed + 1000)
    out = []
    for s, y, w in yield_multiclass_stream(n, seed, **kw):
        shift = float(rng.normal(0, 3))
        out.append(({c: math.log(max(p, 1e-9)) + shift for c, p in s.items()}, y, w))
    return out


# --------------------------------------------------------------- the pure fit


def _random_problem(rng, n, k):
    Z = rng.normal(0, 2, (n, k))
    Z[rng.random((n, k)) < 0.1] = -np.inf  # absent classes
    Z[:, 0] = np.where(np.isfinite(Z[:, 0]), Z[:, 0], 0.0)  # one finite logit per row
    y = rng.integers(0, k, n)
    w = rng.choice([1.0, 0.5, 2.0, 0.0], n)
    return Z, y, w


@pytest.mark.parametrize("seed", range(12))
def test_fit_temperature_matches_scipy(seed):
    rng = np.random.default_rng(seed)
    n, k = int(rng.integers(2, 80)), int(rng.integers(2, 6))
    Z, y, w = _random_problem(rng, n, k)
    Z *= rng.choice([0.2, 1.0, 5.0])  # under- and over-confident
    t = fit_temperature(Z, y, w)
    events = [
        (
            {j: float(Z[i, j]) for j in range(k) if np.isfinite(Z[i, j])},
            int(y[i]),
            float(w[i]),
        )
        for i in range(n)
    ]
    events = [(s, lab if lab in s else -1, wi) for s, lab, wi in events]
    if t is None:
        return
    oracle = R.temperature_fit(events, logits=True)
    f_ours = R.temperature_nll(t, events, logits=True)
    f_oracle = R.temperature_nll(oracle, events, logits=True)
    assert f_ours <= f_oracle + 1e-9 * max(1.0, abs(f_oracle))
    assert abs(1 / t - 1 / oracle) <= 1e-5 * max(1.0, 1 / oracle)
    assert math.isclose(
        temperature_nll(t, Z, y, w), f_ours, rel_tol=1e-12, abs_tol=1e-12
    )


def test_fit_temperature_ends_and_degenerate_cases():
    # always the top class: the NLL falls as T falls, down to the bound
    Z = np.log([[0.7, 0.2, 0.1], [0.1, 0.6, 0.3]])
    assert fit_temperature(Z, [0, 1]) == T_MIN
    # always the least likely class: flatten as much as allowed
    assert fit_temperature(Z, [2, 0]) == T_MAX
    # nothing informs T: no rows, zero weights, a label of probability 0, one class,
    # equal logits
    assert fit_temperature(np.zeros((0, 3)), []) is None
    assert fit_temperature(Z, [0, 1], [0.0, 0.0]) is None
    assert fit_temperature([[0.0, -np.inf]], [1]) is None
    assert fit_temperature([[2.0, -np.inf]], [0]) is None
    assert fit_temperature([[1.0, 1.0]], [0]) is None
    # a calibrated forecaster keeps T = 1 (labels drawn to match exactly)
    Z = np.log([[0.75, 0.25]] * 4)
    assert fit_temperature(Z, [0, 0, 0, 1]) == pytest.approx(1.0, abs=1e-12)
    with pytest.raises(ValueError, match="'labels'"):
        fit_temperature(Z, [0, 0, 0, 2])
    with pytest.raises(ValueError, match="'w'"):
        fit_temperature(Z, [0, 0, 0, 1], [1, 1, 1, -1])
    with pytest.raises(ValueError, match="'logits'"):
        fit_temperature([[np.nan, 0.0]], [0])


@pytest.mark.parametrize("huge", [1e155, 1e200, 1e300])
def test_fit_temperature_huge_logit_of_the_label_changes_nothing(huge):
    # a row whose label's logit is ``huge`` above the rest has loss 0 at every
    # temperature; its other classes are ``huge`` from the row's mean, whose square
    # overflows: the fit must neither warn nor move
    rng = np.random.default_rng(3)
    Z, y, w = _random_problem(rng, 40, 3)
    t = fit_temperature(Z, y, w)
    Zh = np.vstack([Z, [[huge, 0.0, 1.0]]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert fit_temperature(Zh, np.append(y, 0), np.append(w, 2.0)) == t
        assert fit_temperature([[huge, 0.0], [0.0, 2.0]], [1, 1]) == T_MAX


def test_fit_recovers_the_true_temperature():
    rng = np.random.default_rng(0)
    Z = rng.normal(0, 3, (20000, 4))
    P = np.exp(Z / 2.0)
    P /= P.sum(axis=1, keepdims=True)
    y = np.array([rng.choice(4, p=p) for p in P])
    assert fit_temperature(Z, y) == pytest.approx(2.0, rel=0.05)


# --------------------------------------------------------- TemperatureScaling


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("logits", [False, True])
def test_temperature_scaling_refits_on_the_window(seed, logits):
    """At every refit the temperature is the scipy fit of the window's tail; in
    between it stays; predictions are softmax(z / T) over the fitted classes."""
    size, every = 70, 15
    cal = TemperatureScaling(
        window_size=size,
        refit_every=every,
        input="logits" if logits else "probabilities",
    )
    stream = (_logit_stream if logits else yield_multiclass_stream)(300, seed)
    tail = collections.deque(maxlen=size)
    T = None
    for t, (s, y, w) in enumerate(stream, start=1):
        cal.learn_one(s, y, w)
        tail.append((s, y, w))
        if t % every == 0:
            T = R.temperature_fit(list(tail), logits)
            assert cal.temperature == pytest.approx(T, rel=1e-6)
            T = cal.temperature
            cal._window._check()
            assert cal._window.events() is not None and len(cal._window) == len(tail)
        if T is None:
            assert cal.temperature is None
            continue
        assert cal.temperature == T
        for q in (s, stream[(7 * t) % len(stream)][0]):
            if all(c in cal._fit_classes for c in q):
                assert _close(cal.predict_one(q), R.tempered(q, T, logits), 1e-12)


def test_temperature_scaling_cools_an_over_confident_stream():
    stream = yield_multiclass_stream(
        3000, seed=3, weights=False, distinct=True, temperature=2.5
    )
    cal = TemperatureScaling(window_size=3000, refit_every=3000)
    for s, y, w in stream:
        cal.learn_one(s, y, w)
    assert (
        1.8 < cal.temperature < 3.2
    )  # the stream's forecasts are q ** 2.5, renormalised


def test_logits_and_log_probabilities_agree():
    stream = yield_multiclass_stream(200, seed=5, distinct=True)
    stream = [(s, y, w) for s, y, w in stream if all(p > 0 for p in s.values())]
    a = TemperatureScaling(window_size=500, refit_every=len(stream))
    b = TemperatureScaling(window_size=500, refit_every=len(stream), input="logits")
    for s, y, w in stream:
        a.learn_one(s, y, w)
        b.learn_one({c: math.log(p) + 7.0 for c, p in s.items()}, y, w)
    assert a.temperature == pytest.approx(b.temperature, rel=1e-9)
    q = stream[0][0]
    out_a = a.predict_one(q)
    out_b = b.predict_one({c: math.log(p) - 2.0 for c, p in q.items()})
    assert _close(out_a, out_b, 1e-9)


def test_zero_probabilities_and_absent_classes():
    cal = TemperatureScaling(window_size=10, refit_every=4)
    events = [
        ({"a": 0.9, "b": 0.1}, "a"),
        ({"a": 0.8, "b": 0.2}, "b"),
        ({"a": 0.6, "b": 0.4}, "a"),
    ]
    for s, y in events:
        cal.learn_one(s, y)
    cal.learn_one(
        {"a": 1.0, "b": 0.0}, "b"
    )  # infinitely surprising: left out of the fit
    assert cal.temperature == pytest.approx(
        R.temperature_fit([(s, y, 1.0) for s, y in events]), rel=1e-6
    )
    # a class with probability 0 keeps it; a dict leaving it out means the same
    assert cal.predict_one({"a": 1.0, "b": 0.0}) == {"a": 1.0, "b": 0.0}
    assert cal.predict_one({"a": 1.0}) == {"a": 1.0}
    # a class the fit never saw keeps its raw probability
    out = cal.predict_one({"a": 0.6, "b": 0.2, "z": 0.2})
    assert out["z"] == 0.2 and math.isclose(sum(out.values()), 1.0)
    tempered = R.tempered({"a": 0.6, "b": 0.2}, cal.temperature)
    assert out["a"] == pytest.approx(0.8 * tempered["a"], abs=1e-12)
    # only the unseen class and zero-probability known classes
    assert cal.predict_one({"a": 0.0, "z": 1.0}) == {"a": 0.0, "z": 1.0}


def test_temperature_scaling_snapshot_and_clone():
    cal = TemperatureScaling(window_size=30, refit_every=10, input="logits")
    for s, y, w in _logit_stream(55, seed=2, classes=STR_CLASSES):
        cal.learn_one(s, y, w)
    copy = MulticlassCalibrator.from_dict(json.loads(json.dumps(cal.to_dict())))
    assert copy.temperature == cal.temperature and copy.classes == cal.classes
    assert len(copy._window) == 30 and copy._window.n_pushed == 55
    assert cal.clone().temperature is None


@pytest.mark.parametrize(
    "params, message",
    [
        ({"window_size": 0}, "'window_size'"),
        ({"refit_every": 1.5}, "'refit_every'"),
        ({"input": "logit"}, "'input'"),
        ({"input": None}, "'input'"),
    ],
)
def test_temperature_scaling_parameters(params, message):
    with pytest.raises((ValueError, TypeError), match=message):
        TemperatureScaling(**params)


def test_logits_validation():
    cal = TemperatureScaling(input="logits")
    cal.learn_one({"a": 5.0, "b": -3}, "a")  # logits need not be probabilities
    with pytest.raises(ValueError, match="'scores'"):
        cal.learn_one({"a": math.inf, "b": 0.0}, "a")
    with pytest.raises(ValueError, match="'scores'"):
        TemperatureScaling().learn_one({"a": 5.0, "b": -3.0}, "a")


# ------------------------------------------------------------------ wrappers


@pytest.mark.parametrize("seed", range(3))
def test_top_label_matches_per_class_isotonic(seed):
    stream = yield_multiclass_stream(250, seed, classes=STR_CLASSES)
    cal = TopLabel(OnlineIsotonic(interpolation="linear"))
    rng = np.random.default_rng(seed)
    for t, (s, y, w) in enumerate(stream, start=1):
        cal.learn_one(s, y, w)
        if t % 25:
            continue
        seen = stream[:t]
        tops = {max(q, key=q.get) for q, _, _ in seen}
        for _ in range(10):
            q = stream[int(rng.integers(t))][0]
            top = max(q, key=q.get)
            if (
                top not in tops
                or sum(q.values()) - q[top] <= 0
                or not set(q) <= set(cal.classes)
            ):
                continue
            assert _close(cal.predict_one(q), R.top_label_isotonic(seen, q), 1e-9)


@pytest.mark.parametrize("normalize", [True, False])
@pytest.mark.parametrize("seed", range(3))
def test_class_wise_matches_per_class_isotonic(seed, normalize):
    stream = yield_multiclass_stream(250, seed)
    cal = ClassWise(OnlineIsotonic(interpolation="linear"), normalize=normalize)
    rng = np.random.default_rng(seed)
    for t, (s, y, w) in enumerate(stream, start=1):
        cal.learn_one(s, y, w)
        if t % 25:
            continue
        for _ in range(8):
            q = stream[int(rng.integers(t))][0]
            assert _close(
                cal.predict_one(q),
                R.class_wise_isotonic(stream[:t], q, normalize=normalize),
                1e-9,
            )


def test_class_wise_normalize_false_keeps_each_class_fit_and_old_snapshots_normalise():
    events = [({"a": 0.6, "b": 0.3, "c": 0.1}, "a"),
              ({"a": 0.5, "b": 0.1, "c": 0.4}, "c"),
              ({"a": 0.2, "b": 0.5, "c": 0.3}, "a")]
    raw = ClassWise(OnlineIsotonic(), normalize=False)
    for s, y in events:
        raw.learn_one(s, y)
    # each value is its class's own isotonic fit; an unknown class keeps its score
    assert raw.predict_one({"a": 0.5, "b": 0.3, "c": 0.2}) == {"a": 0.5, "b": 0.0, "c": 0.0}
    assert raw.predict_one({"a": 0.5, "b": 0.3, "new": 0.2}) == {
        "a": 0.5, "b": 0.0, "c": 0.0, "new": 0.2}
    back = ClassWise.from_dict(raw.to_dict())
    assert back.normalize is False and back.predict_one({"a": 0.5, "b": 0.3, "c": 0.2})["a"] == 0.5
    # a snapshot written before the option existed has no 'normalize': it normalises
    old = raw.to_dict()
    del old["params"]["normalize"]
    assert ClassWise.from_dict(old).predict_one({"a": 0.5, "b": 0.3, "c": 0.2})["a"] == 1.0
    with pytest.raises(ValueError, match="'normalize' parameter of ClassWise must be a bool"):
        ClassWise(OnlineIsotonic(), normalize=1)


@pytest.mark.parametrize("wrapper", [TopLabel, ClassWise])
def test_wrappers_equal_binary_calibrators_fed_by_hand(wrapper):
    stream = yield_multiclass_stream(300, seed=8)
    cal = wrapper(OnlinePlatt())
    by_hand: dict = {}
    order: list = []
    for s, y, w in stream:
        cal.learn_one(s, y, w)
        for c in [*s, y]:
            if c not in order:
                order.append(c)
        if wrapper is TopLabel:
            top = max(s, key=s.get)
            by_hand.setdefault(top, OnlinePlatt()).learn_one(s[top], y == top, w)
        else:
            for c in order:
                by_hand.setdefault(c, OnlinePlatt()).learn_one(s.get(c, 0.0), y == c, w)
    assert cal.classes == tuple(order)
    for c, g in by_hand.items():
        assert cal.calibrators[c].to_dict() == g.to_dict()
    q = {0: 0.5, 1: 0.3, 2: 0.15, 3: 0.05}
    out = cal.predict_one(q)
    if wrapper is TopLabel:
        h = by_hand[0].predict_one(0.5)
        expected = {
            0: h,
            1: 0.3 * (1 - h) / 0.5,
            2: 0.15 * (1 - h) / 0.5,
            3: 0.05 * (1 - h) / 0.5,
        }
    else:
        raw = {c: by_hand[c].predict_one(q.get(c, 0.0)) for c in order}
        expected = {c: v / sum(raw.values()) for c, v in raw.items()}
    assert _close(out, expected, 1e-12)


def test_top_label_rules():
    cal = TopLabel(OnlineIsotonic())
    cal.learn_one({"a": 0.5, "b": 0.5}, "b")  # a tie: "a", first in the dict, is on top
    cal.learn_one({"a": 0.9, "b": 0.1}, "a")
    assert list(cal.calibrators) == ["a"]
    # "b" was never on top: passes through
    assert cal.predict_one({"b": 0.7, "a": 0.3}) == {"b": 0.7, "a": 0.3}
    # the others have no mass: 1 - h' spread evenly over the other known classes
    cal.learn_one({"c": 1.0}, "c")
    out = cal.predict_one({"a": 1.0})
    h = cal.calibrators["a"].predict_one(1.0)
    assert out == {"a": h, "b": (1 - h) / 2, "c": (1 - h) / 2}
    # a single known class keeps all the mass
    solo = TopLabel(OnlineIsotonic())
    solo.learn_one({"a": 1.0}, "a")
    solo.learn_one({"a": 1.0}, "a", 0.0)
    assert solo.predict_one({"a": 1.0}) == {"a": 1.0}


def test_top_label_improves_top_label_calibration():
    from streamcal.metrics import TopLabelECE

    stream = yield_multiclass_stream(6000, seed=9, weights=False, distinct=True)
    cal = TopLabel(HistogramBinning(n_bins=10))
    raw, calibrated = TopLabelECE(), TopLabelECE()
    for t, (s, y, w) in enumerate(stream):
        if t >= 3000:
            raw.update(y, s)
            calibrated.update(y, cal.predict_one(s))
        cal.learn_one(s, y, w)
    assert calibrated.get() < 0.5 * raw.get()


def test_class_wise_rules():
    cal = ClassWise(OnlineIsotonic())
    cal.learn_one({"a": 0.7, "b": 0.3}, "a")
    cal.learn_one({"a": 0.2, "b": 0.8}, "c")  # "c" learns from this event on
    assert cal.classes == ("a", "b", "c")
    assert cal.calibrators["c"].n_events == 1
    # every known class is in the output, one left out of the scores too
    out = cal.predict_one({"a": 0.6, "b": 0.4})
    assert set(out) == {"a", "b", "c"} and math.isclose(sum(out.values()), 1.0)
    # a class seen only as a label: its fit at p = 0 is 1
    only = ClassWise(OnlineIsotonic())
    only.learn_one({"a": 0.5, "b": 0.5}, "c")
    assert only.predict_one({"a": 0.5, "b": 0.5}) == {"a": 0.0, "b": 0.0, "c": 1.0}
    # every calibrated value 0: the known classes share their mass evenly
    zero = ClassWise(OnlineIsotonic())
    zero.learn_one({"a": 0.2, "b": 0.8}, "b")
    zero.learn_one({"a": 0.8, "b": 0.2}, "a")
    out = zero.predict_one({"a": 0.2, "b": 0.2, "new": 0.6})
    assert _close(out, {"a": 0.2, "b": 0.2, "new": 0.6}, 1e-15) and out["new"] == 0.6
    flat = ClassWise(OnlineIsotonic())
    flat.learn_one({"a": 0.5, "b": 0.5}, "a")
    flat.learn_one({"a": 0.5, "b": 0.5}, "b")
    assert flat.predict_one({"a": 0.9, "b": 0.1}) == {"a": 0.5, "b": 0.5}
    flat.learn_one({"a": 0.5, "b": 0.5}, "a", 0.0)
    flat.learn_one({"a": 1.0}, "b")  # both fits pool: a's to 1/3, b's to 2/3
    assert flat.predict_one({"a": 1.0}) == {"a": 0.5 / 1.5, "b": 1.0 / 1.5}
    # "zz" learns (0, 1) from its first event on; a: 0.5 at 0.5, b: pooled 1/3
    z = ClassWise(OnlineIsotonic())
    z.learn_one({"a": 0.5, "b": 0.5}, "a")
    z.learn_one({"a": 0.5, "b": 0.5}, "b")
    z.learn_one({"a": 0.4, "b": 0.6}, "zz")
    out = z.predict_one({"a": 0.5, "b": 0.5})
    total = 0.5 + 1 / 3 + 1.0
    assert _close(out, {"a": 0.5 / total, "b": 1 / 3 / total, "zz": 1.0 / total}, 1e-15)


@pytest.mark.parametrize("wrapper", [TopLabel, ClassWise])
@pytest.mark.parametrize(
    "bad", [OnlineIsotonic, None, TemperatureScaling(), "isotonic"]
)
def test_wrappers_need_a_binary_calibrator(wrapper, bad):
    with pytest.raises(
        ValueError,
        match="'calibrator' parameter .* must be a BinaryCalibrator instance",
    ):
        wrapper(bad)


@pytest.mark.parametrize("wrapper", [TopLabel, ClassWise])
def test_wrappers_refuse_a_calibrator_of_several_forecasts(wrapper):
    """Each class's calibrator is fed one probability: a MultiCalibeater (a tuple of
    experts' forecasts) is refused at construction, as a calibeater's base is
    (regression: accepted, then every event failed naming MultiCalibeater.learn_one's
    'score', ClassWise having registered the event's classes first)."""
    from streamcal import MultiCalibeater

    with pytest.raises(ValueError, match="'calibrator' parameter of .* must be a calibrator taking a float score"):
        wrapper(MultiCalibeater(2))


def test_wrappers_clone_the_template_and_keep_it():
    template = OnlinePlatt()
    cal = ClassWise(template)
    cal.learn_many([{0: 0.2, 1: 0.8}] * 3, [0, 1, 1])
    assert template.to_dict() == OnlinePlatt().to_dict()  # untouched
    assert all(g is not template for g in cal.calibrators.values())
    restored = MulticlassCalibrator.from_dict(json.loads(json.dumps(cal.to_dict())))
    assert restored.predict_one({0: 0.3, 1: 0.7}) == cal.predict_one({0: 0.3, 1: 0.7})


def test_refitted_calibrators_share_one_learn_one():
    # issue 14: learn_one was written again in each refitted calibrator; now one, in
    # _RefitMulticlass, calling the refit hook _refit_window when a refit is due
    from streamcal import FIR, SCIR, DirichletCalibration, MatrixScaling, MulticlassIRP, VectorScaling
    from streamcal.calibrators._refit import _RefitMulticlass

    shared = [TemperatureScaling, VectorScaling, MatrixScaling, DirichletCalibration, FIR, MulticlassIRP]
    for cls in shared:
        assert cls.learn_one is _RefitMulticlass.learn_one, cls
    assert SCIR.learn_one is not _RefitMulticlass.learn_one  # SCIR encodes events itself


@pytest.mark.parametrize("input", ["probabilities", "logits"])
def test_each_refit_of_learn_one_is_the_fit_of_its_window(input):
    # the refit hook of every scaling reads the window as _fit_events reads its events
    from streamcal import DirichletCalibration, MatrixScaling, VectorScaling

    events = [(s, y) for s, y, _ in yield_multiclass_stream(45, seed=4, classes=STR_CLASSES, weights=False)]
    if input == "logits":
        events = [({c: math.log(p) for c, p in s.items() if p > 0}, y) for s, y in events]
    for cls in (TemperatureScaling, VectorScaling, MatrixScaling, DirichletCalibration):
        if cls is DirichletCalibration and input == "logits":
            continue  # it takes probabilities only
        kw = {} if cls is DirichletCalibration else {"input": input}
        cal, ref = cls(window_size=20, refit_every=7, **kw), cls(window_size=20, refit_every=7, **kw)
        for i, (s, y) in enumerate(events, 1):
            cal.learn_one(s, y)
            ref._push(s, y, 1.0)
            if i % 7 == 0:
                ref._fit_events(ref._window_events())
                probe = events[0][0]
                a, b = cal.predict_one(probe), ref.predict_one(probe)
                assert a.keys() == b.keys() and all(math.isclose(a[c], b[c], abs_tol=1e-9) for c in a), (cls, i)


def test_class_wise_snapshot_without_a_class_calibrator_is_refused():
    # a ClassWise holds a calibrator for every known class; from_dict accepted None in
    # its place (as TopLabel may hold), and the restored object raised AttributeError
    # at its first predict_one (ClassWise.from_dict itself, through _check, and a
    # KeyedCalibrator's fallback accepted it silently)
    from streamcal import KeyedCalibrator

    events = [({0: 0.3, 1: 0.7}, 1), ({0: 0.6, 1: 0.4}, 0), ({0: 0.2, 1: 0.5, 2: 0.3}, 2)]
    cal = ClassWise(OnlineIsotonic())
    keyed = KeyedCalibrator(ClassWise(OnlineIsotonic()), fallback=True)
    for p, y in events:
        cal.learn_one(p, y)
        keyed.learn_one("a", p, y)
    d = json.loads(json.dumps(cal.to_dict()))
    d["state"]["calibrators"][1] = None
    with pytest.raises(ValueError, match=r"state\['calibrators'\]\[1\] of ClassWise must be"):
        ClassWise.from_dict(d)
    d = json.loads(json.dumps(keyed.to_dict()))
    d["state"]["fallback"]["state"]["calibrators"][0] = None
    with pytest.raises(ValueError):
        KeyedCalibrator.from_dict(d)
