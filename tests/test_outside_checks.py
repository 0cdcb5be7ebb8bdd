"""Regression tests replaying the outside checks of issue 13, item 3 ("one rule for
inputs everywhere"): each test guards one finding, with the example the checks found.

The rules themselves are stated in the module docstring of streamcal._validation.
"""

from __future__ import annotations

import json
import math
import pickle

import numpy as np
import pytest

from streamcal import (
    FIR,
    IRP,
    NAFIR,
    SCIR,
    EpsilonCalibratedForecaster,
    HedgingCalibeater,
    MulticlassIRP,
    OnlineBeta,
    OnlineIsotonic,
    OnlinePlatt,
    TemperatureScaling,
    TopLabel,
    TrackingCalibeater,
)
from streamcal import _validation as V
from streamcal.metrics import (
    ECE,
    TECE,
    Brier,
    CalibrationRefinement,
    ClasswiseECE,
    ConfidenceECE,
    CrossEntropy,
    LogLoss,
    MulticlassBrier,
    MurphyDecomposition,
    Sharpness,
    TopLabelECE,
)

HUGE = r"'w' argument of {}\.{} must be a finite real number >= 0 small enough"


def _state(obj):
    """The whole state, to compare before and after a refused event."""
    return json.dumps(obj.to_dict(), sort_keys=True), pickle.dumps(obj)


def _refused(obj, call, owner, method, value):
    before = _state(obj)
    pattern = HUGE.format(owner, method) + r".* Got " + repr(value).replace("+", r"\+")
    with pytest.raises(ValueError, match=pattern):
        call()
    assert _state(obj) == before
    json.dumps(obj.to_dict(), allow_nan=False)  # still a finite, JSON-safe state


# ---------------------------------------------------------------- huge weights


@pytest.mark.parametrize("params", [{}, {"window_size": 3}, {"half_life": 5.0}])
def test_huge_weight_twice_refused_by_online_isotonic_state_unchanged(params):
    cal = OnlineIsotonic(**params)
    try:
        cal.learn_one(0.5, 1, 1e308)
        cal.learn_one(0.5, 1, 1e308)
    except ValueError as exc:  # refused: naming w, nothing changed (checked below)
        assert "'w' argument of OnlineIsotonic.learn_one" in str(exc)
    json.dumps(cal.to_dict(), allow_nan=False)
    assert 0.0 <= cal.predict_one(0.5) <= 1.0


@pytest.mark.parametrize("klass", [EpsilonCalibratedForecaster, HedgingCalibeater])
def test_huge_weight_refused_by_foster_games_state_unchanged(klass):
    cal = klass(seed=0)
    cal.learn_one(0.3, 0)
    _refused(cal, lambda: cal.learn_one(0.5, 1, 1.7e308), klass.__name__, "learn_one", 1.7e308)
    _refused(cal, lambda: cal.learn_many([0.2, 0.5], [0, 1], [1.0, 1.7e308]), klass.__name__, "learn_many", 1.7e308)
    _refused(
        cal, lambda: cal.predict_learn_many([0.2, 0.5], [0, 1], [1.0, 1.7e308]),
        klass.__name__, "predict_learn_many", 1.7e308,
    )
    assert 0.0 <= cal.predict_one(0.5) <= 1.0


def test_huge_weight_refused_by_hedging_calibeater_state_unchanged():
    cal = HedgingCalibeater(seed=1)
    _refused(cal, lambda: cal.learn_one(0.5, 1, 1.7e308), "HedgingCalibeater", "learn_one", 1.7e308)
    cal.learn_one(0.5, 1, 1.0)
    assert cal.predict_one(0.5) in {(i + 0.5) / cal.n_bins for i in range(cal.n_bins)}


def test_huge_weight_refused_by_tracking_calibeater_state_unchanged():
    cal = TrackingCalibeater()
    cal.learn_one(0.5, 1, 5e307)
    _refused(cal, lambda: cal.learn_one(0.5, 1, 5e307), "TrackingCalibeater", "learn_one", 5e307)
    assert cal.predict_one(0.5) == 1.0


def test_tracking_calibeater_batch_refusal_restores_the_base():
    cal = TrackingCalibeater(base=OnlineIsotonic())
    cal.learn_one(0.5, 1, 1.0)
    before = _state(cal)
    with pytest.raises(ValueError, match=r"learn_many .* at index 2"):
        cal.learn_many([0.45, 0.45, 0.45], [1, 1, 1], [1.0, 5e307, 5e307])
    assert _state(cal) == before


@pytest.mark.parametrize(
    "metric, event",
    [
        (Sharpness(), (1, 0.5)),
        (MurphyDecomposition(), (1, 0.5)),
        (ECE(), (1, 0.5)),
        (ECE(window_size=5), (1, 0.5)),
        (ECE(strategy="quantile", window_size=5), (1, 0.5)),
        (ECE(half_life=3.0), (1, 0.5)),
        (Brier(), (1, 0.5)),
        (LogLoss(), (1, 0.5)),
        (CalibrationRefinement(), (1, 0.5)),
        (TECE(), ("a", {"a": 0.7, "b": 0.3})),
        (ConfidenceECE(), ("a", {"a": 0.7, "b": 0.3})),
        (TopLabelECE(), ("a", {"a": 0.7, "b": 0.3})),
        (ClasswiseECE(), ("a", {"a": 0.7, "b": 0.3})),
        (MulticlassBrier(), ("a", {"a": 0.7, "b": 0.3})),
        (CrossEntropy(), ("a", {"a": 0.7, "b": 0.3})),
    ],
    ids=lambda x: repr(x) if isinstance(x, tuple) else type(x).__name__,
)
def test_huge_weight_refused_by_metric_state_unchanged(metric, event):
    y, p = event
    for _ in range(2):  # accepted while the state stays finite, then refused
        try:
            metric.update(y, p, 1e308)
        except ValueError:
            break
    _refused(metric, lambda: metric.update(y, p, 1.7e308), type(metric).__name__, "update", 1.7e308)
    _refused(metric, lambda: metric.update(y, p, 1e308), type(metric).__name__, "update", 1e308)
    assert math.isfinite(metric.get())
    if not isinstance(p, dict):
        _refused(
            metric, lambda: metric.update_many([y, y], [p, p], [1.0, 1e308]),
            type(metric).__name__, "update_many", 1e308,
        )


def test_sharpness_of_huge_weights_is_finite():
    m = Sharpness()
    m.update(1, 0.9, 1e150)
    m.update(0, 0.1, 1e150)
    assert math.isfinite(m.get())
    with pytest.raises(ValueError, match="'w' argument of Sharpness.update"):
        m.update(1, 0.9, 1e308)


def test_tece_of_huge_weights_does_not_overflow():
    m = TECE()
    m.update("a", {"a": 0.7, "b": 0.3}, 1e300)
    m.update("b", {"a": 0.4, "b": 0.6}, 1e300)
    assert math.isfinite(m.get())
    _refused(m, lambda: m.update("a", {"a": 0.7, "b": 0.3}, 1.7e308), "TECE", "update", 1.7e308)


@pytest.mark.parametrize(
    "make",
    [
        lambda: FIR(window_size=30, refit_every=3),
        lambda: NAFIR(window_size=30, refit_every=3),
        lambda: SCIR(window_size=30, refit_every=3),
        lambda: MulticlassIRP(window_size=30, refit_every=3),
        lambda: TemperatureScaling(window_size=30, refit_every=3),
    ],
    ids=["FIR", "NAFIR", "SCIR", "MulticlassIRP", "TemperatureScaling"],
)
def test_huge_weight_refused_by_refit_calibrator_state_unchanged(make):
    cal = make()
    name = type(cal).__name__
    cal.learn_one({"a": 0.6, "b": 0.4}, "a", 1.0)
    _refused(cal, lambda: cal.learn_one({"a": 0.3, "b": 0.7}, "a", 1e308), name, "learn_one", 1e308)
    _refused(
        cal, lambda: cal.learn_many([{"a": 0.3, "b": 0.7}] * 2, ["a", "b"], [1.0, 1e308]),
        name, "learn_many", 1e308,
    )
    for t in range(6):  # refits on what was accepted stay finite
        cal.learn_one({"a": 0.3, "b": 0.7}, "ab"[t % 2], 1e70)
    assert all(math.isfinite(v) for v in cal.predict_one({"a": 0.5, "b": 0.5}).values())


def test_huge_weight_refused_by_irp_state_unchanged():
    cal = IRP(window_size=30, refit_every=3)
    cal.learn_one(0.4, 0)
    _refused(cal, lambda: cal.learn_one(0.5, 1, 1e308), "IRP", "learn_one", 1e308)
    _refused(cal, lambda: cal.learn_many([0.5, 0.6], [1, 0], [1.0, 1e308]), "IRP", "learn_many", 1e308)
    _refused(
        cal, lambda: cal.predict_learn_many([0.5, 0.6], [1, 0], [1.0, 1e308]),
        "IRP", "predict_learn_many", 1e308,
    )


def test_top_label_wrapper_refusal_by_its_calibrator_changes_nothing():
    cal = TopLabel(OnlinePlatt())
    cal.learn_one({"a": 0.6, "b": 0.4}, "a", 1.0)
    before = _state(cal)
    with pytest.raises(ValueError, match="'w' argument of OnlinePlatt.learn_one"):
        cal.learn_one({"a": 0.3, "c": 0.7}, "c", 1e300)  # a new top class "c"
    assert _state(cal) == before and cal.classes == ("a", "b")


@pytest.mark.parametrize("klass", [OnlinePlatt, OnlineBeta])
def test_logistic_calibrators_keep_refusing_huge_weights(klass):
    cal = klass()
    cal.learn_one(0.3, 1)
    _refused_any = pytest.raises(ValueError, match=f"'w' argument of {klass.__name__}.learn_one")
    before = _state(cal)
    with _refused_any:
        cal.learn_one(0.3, 1, 1e308)
    assert _state(cal) == before


# ---------------------------------------------------------------- labels


BAD_CLASS_LABELS = [b"x", frozenset({"a"}), (float("nan"),), ("t", 1), None]


@pytest.mark.parametrize("label", BAD_CLASS_LABELS, ids=repr)
@pytest.mark.parametrize(
    "make", [FIR, SCIR, lambda: TopLabel(OnlineIsotonic()), TemperatureScaling], ids=["FIR", "SCIR", "TopLabel", "TS"]
)
def test_non_json_label_refused_by_multiclass_calibrator_and_snapshots_still_work(make, label):
    cal = make()
    cal.learn_one({"a": 0.6, "b": 0.4}, "a")
    before = _state(cal)
    with pytest.raises(TypeError, match="'label' argument .* must be a class label: a str, an int, a bool"):
        cal.learn_one({"a": 0.6, "b": 0.4}, label)
    assert _state(cal) == before
    json.dumps(cal.to_dict(), allow_nan=False)


@pytest.mark.parametrize("label", BAD_CLASS_LABELS, ids=repr)
@pytest.mark.parametrize("klass", [ConfidenceECE, TECE, MulticlassBrier, CrossEntropy])
def test_non_json_label_refused_by_multiclass_metric(klass, label):
    m = klass()
    m.update("a", {"a": 0.6, "b": 0.4})
    before = _state(m)
    with pytest.raises(TypeError, match="'y_true' argument .* must be a class label"):
        m.update(label, {"a": 0.6, "b": 0.4})
    assert _state(m) == before


def test_nan_class_key_refused_by_fir():
    cal = FIR()
    with pytest.raises(ValueError, match=r"'scores' argument of FIR.learn_one .*class label nan is not"):
        cal.learn_one({float("nan"): 1.0}, "a")
    assert cal.classes == ()


@pytest.mark.parametrize("key", [float("nan"), b"x", (1, 2), frozenset()], ids=repr)
def test_check_real_vector_checks_keys(key):
    with pytest.raises((TypeError, ValueError), match="'scores' argument of T.learn_one .*class label"):
        V.check_real_vector({key: 1.0, "a": 0.0}, "T", "learn_one")


def test_numpy_class_labels_become_python_scalars():
    assert type(V.check_class_label(np.str_("a"), "X", "m")) is str
    assert type(V.check_class_label(np.float64(2.5), "X", "m")) is float
    vector = V.check_probability_vector({np.int64(1): 0.5, np.int64(2): 0.5}, "X", "m")
    assert [type(k) for k in vector] == [int, int]


# ---------------------------------------------------------------- binary metrics


@pytest.mark.parametrize(
    "y_pred",
    [{True: 0.7, False: 0.9}, {True: 0.7}, {True: 0.5, "x": 0.5}, {True: 0.5, 2: 0.5}, {1: True, 0: False}],
    ids=repr,
)
@pytest.mark.parametrize("klass", [Brier, LogLoss, ECE, Sharpness])
def test_binary_metric_refuses_dicts_that_are_not_probability_vectors(klass, y_pred):
    m = klass()
    m.update(1, 0.4)
    before = _state(m)
    with pytest.raises((TypeError, ValueError), match=f"'y_pred' argument of {klass.__name__}.update"):
        m.update(1, y_pred)
    assert _state(m) == before


def test_brier_accepts_probability_vector_dicts():
    m = Brier()
    m.update(1, {True: 0.7, False: 0.3})
    m.update(0, {1: 0.2, 0: 0.8})
    m.update(1, {True: 1.0})
    assert m.get() == pytest.approx((0.09 + 0.04 + 0.0) / 3)


# ---------------------------------------------------------------- batch types


@pytest.mark.parametrize("klass", [OnlineIsotonic, OnlinePlatt, IRP, TrackingCalibeater])
def test_learn_many_refuses_bool_score_and_weight_like_learn_one(klass):
    cal = klass()
    with pytest.raises(TypeError, match="'score' argument"):
        cal.learn_one(True, 1)
    before = _state(cal)
    for method in ("learn_many", "predict_learn_many"):
        with pytest.raises(TypeError, match=f"'scores' argument of {klass.__name__}.{method} .* Got True at index 1"):
            getattr(cal, method)([0.5, True], [1, 0])
        with pytest.raises(TypeError, match=f"'w' argument of {klass.__name__}.{method} .* Got True at index 0"):
            getattr(cal, method)([0.5, 0.2], [1, 0], [True, 1.0])
    with pytest.raises(TypeError, match="'scores' argument .*predict_many .* at index 0"):
        cal.predict_many([np.True_])
    assert _state(cal) == before


def test_update_many_refuses_bool_prediction_like_update():
    m = Brier()
    with pytest.raises(TypeError, match="'y_pred' argument of Brier.update"):
        m.update(1, True)
    with pytest.raises(TypeError, match="'y_pred' argument of Brier.update_many .* at index 0"):
        m.update_many([1], [True])
    with pytest.raises(TypeError, match="'w' argument of Brier.update_many .* at index 1"):
        m.update_many([1, 0], [0.5, 0.5], [1.0, False])
    assert m.n_events == 0


def test_long_double_above_one_is_not_a_score_in_either_path():
    x = np.longdouble(1) + np.longdouble(1e-19)
    assert x > 1  # not a score, though it rounds to 1.0
    cal = OnlineIsotonic()
    with pytest.raises(ValueError, match="'score' argument of OnlineIsotonic.learn_one"):
        cal.learn_one(x, 1)
    with pytest.raises(ValueError, match="'scores' argument of OnlineIsotonic.learn_many .* at index 0"):
        cal.learn_many(np.array([x]), [1])
    with pytest.raises(ValueError, match="'scores' argument of OnlineIsotonic.learn_many .* at index 1"):
        cal.learn_many([0.5, x], [1, 1])
    with pytest.raises(ValueError, match="'y_pred' argument of Brier.update"):
        Brier().update(1, x)
    # inside [0, 1], a long double is rounded to the nearest double in both paths
    inside = np.longdouble(0.5) + np.longdouble(1e-19)
    a, b = OnlineIsotonic(), OnlineIsotonic()
    a.learn_one(inside, 1)
    b.learn_many(np.array([inside]), [1])
    assert a.to_dict() == b.to_dict()


@pytest.mark.filterwarnings("error::RuntimeWarning")  # refused with a message, not a cast warning
def test_long_double_weight_beyond_double_range_refused():
    w = np.longdouble(1e308) * 10
    with pytest.raises(ValueError, match="'w' argument of OnlineIsotonic.learn_one"):
        OnlineIsotonic().learn_one(0.5, 1, w)
    with pytest.raises(ValueError, match="'w' argument of OnlineIsotonic.learn_many .* at index 0"):
        OnlineIsotonic().learn_many([0.5], [1], np.array([w]))


# ---------------------------------------------------------------- revert on a fresh metric


@pytest.mark.parametrize(
    "metric, event",
    [
        (Brier(), (1, 0.5)),
        (LogLoss(), (1, 0.5)),
        (Sharpness(), (1, 0.5)),
        (MurphyDecomposition(), (1, 0.5)),
        (ECE(), (1, 0.5)),
        (CalibrationRefinement(), (1, 0.5)),
        (MulticlassBrier(), ("a", {"a": 0.5, "b": 0.5})),
        (CrossEntropy(), ("a", {"a": 0.5, "b": 0.5})),
        (ConfidenceECE(), ("a", {"a": 0.5, "b": 0.5})),
        (TECE(), ("a", {"a": 0.5, "b": 0.5})),
    ],
    ids=lambda x: repr(x) if isinstance(x, tuple) else type(x).__name__,
)
def test_revert_on_fresh_metric_raises_state_unchanged(metric, event):
    before = _state(metric)
    with pytest.raises(ValueError, match=r"revert"):
        metric.revert(*event)
    assert _state(metric) == before
    metric.revert(*event, w=0.0)  # a zero weight reverts nothing, as it adds nothing
    assert _state(metric) == before
