"""Tests of the shared input checks in streamcal._validation (issue 14: one home each)."""

import numpy as np
import pytest

from streamcal import _validation as V
from streamcal.calibrators import (
    FIR,
    IRP,
    HistogramBinning,
    MultiCalibeater,
    MulticlassIRP,
    OnlineIsotonic,
    PathCalibrator,
    TrackingCalibeater,
)
from streamcal.datasets import rain
from streamcal.monitor import CalibrationMonitor


@pytest.mark.parametrize("value", [None, 1, 7, np.int64(3)])
def test_check_optional_int_param_accepts(value):
    assert V.check_optional_int_param("Owner", "window_size", value, 1) is None


@pytest.mark.parametrize("value", [0, -1, True, 1.0, "3", float("nan")])
def test_check_optional_int_param_rejects_with_the_template(value):
    with pytest.raises(ValueError) as info:
        V.check_optional_int_param("Owner", "window_size", value, 1)
    assert str(info.value) == (
        f"The 'window_size' parameter of Owner must be an int >= 1 or None. "
        f"Got {V.format_value(value)} instead."
    )


def test_check_optional_int_param_minimum_zero():
    V.check_optional_int_param("Owner", "seed", 0, 0)
    with pytest.raises(ValueError, match=r"must be an int >= 0 or None\. Got -1 instead\."):
        V.check_optional_int_param("Owner", "seed", -1, 0)


@pytest.mark.parametrize(
    "make, name, minimum",
    [
        (lambda v: OnlineIsotonic(window_size=v), "window_size", 1),
        (lambda v: HistogramBinning(window_size=v), "window_size", 1),
        (lambda v: IRP(max_bins=v), "max_bins", 1),
        (lambda v: MulticlassIRP(grid_size=v), "grid_size", 1),
        (lambda v: rain.AdversarialNature(seed=v), "seed", 0),
    ],
)
def test_constructors_keep_their_messages(make, name, minimum):
    """The sites that now call the helper give the message they gave before."""
    owner = type(make(None)).__name__
    with pytest.raises(ValueError) as info:
        make(minimum - 1)
    assert str(info.value) == (
        f"The {name!r} parameter of {owner} must be an int >= {minimum} or None. "
        f"Got {minimum - 1} instead."
    )


@pytest.mark.parametrize("cls_name", ["Sharpness", "MurphyDecomposition"])
def test_equal_width_metrics_name_themselves_in_n_bins_errors(cls_name):
    """``__init__`` lives in their shared base: the message still names the class."""
    from streamcal import metrics

    cls = getattr(metrics, cls_name)
    assert cls(n_bins=4).n_bins == 4
    with pytest.raises(ValueError, match=rf"^The 'n_bins' parameter of {cls_name} must be"):
        cls(n_bins=0)


def test_multiclass_bad_prediction_lists_share_their_head():
    from streamcal.checks import _common, metrics, multiclass

    head = [repr(p) for p in _common.BAD_PROBABILITY_DICTS]
    assert len(head) == 6
    for bad in (metrics.BAD_MULTICLASS_PREDICTIONS, multiclass.BAD_PROBABILITY_VECTORS):
        assert [repr(p) for p in bad[: len(head)]] == head
        assert len(bad) > len(head)


@pytest.mark.parametrize("value", [-0.5, float("inf"), float("nan"), True, "1", None])
def test_check_nonnegative_param_rejects_with_the_template(value):
    V.check_nonnegative_param("Owner", "smoothing", 0.0)
    V.check_nonnegative_param("Owner", "smoothing", 2)
    with pytest.raises(ValueError) as info:
        V.check_nonnegative_param("Owner", "smoothing", value)
    assert str(info.value) == (
        f"The 'smoothing' parameter of Owner must be a finite real number >= 0. "
        f"Got {V.format_value(value)} instead."
    )


def test_irp_smoothing_message_unchanged():
    with pytest.raises(ValueError) as info:
        IRP(smoothing=-1.0)
    assert str(info.value) == (
        "The 'smoothing' parameter of IRP must be a finite real number >= 0. Got -1.0 instead."
    )



def test_multiclass_batches_read_each_input_once():
    # generators are read once (listed by MulticlassCalibrator._check_batch); w None
    # means weights 1.0
    from streamcal import ClassWise

    a, b = ClassWise(OnlineIsotonic()), ClassWise(OnlineIsotonic())
    events = [({0: 0.7, 1: 0.3}, 0), ({0: 0.2, 1: 0.8}, 1), ({0: 0.6, 1: 0.4}, 1)]
    a.learn_many((s for s, _ in events), (y for _, y in events), None)
    b.learn_many([s for s, _ in events], [y for _, y in events], [1.0] * 3)
    assert a.to_dict() == b.to_dict()


def test_multiclass_batches_share_one_length_check():
    # the base learn_many and the wrappers' learn_many (issue 14: once copied) check a
    # batch's lengths alike, before any event, and learn nothing
    from streamcal import ClassWise, OneVsRestIsotonic, TemperatureScaling, TopLabel
    from streamcal.checks._common import snapshot

    good = {0: 0.6, 1: 0.4}
    for cal in (ClassWise(OnlineIsotonic()), TopLabel(OnlineIsotonic()), OneVsRestIsotonic(),
                TemperatureScaling(), MulticlassIRP()):
        cal.learn_one(good, 0)
        before = snapshot(cal)
        name = type(cal).__name__
        for args, arg, got in [(([good, "bad"], [0]), "labels", 1), (([good, good], [0, 1], [1.0]), "w", 1)]:
            with pytest.raises(ValueError) as info:
                cal.learn_many(*args)
            assert str(info.value) == (
                f"The '{arg}' argument of {name}.learn_many must have the length of 'scores' (2). "
                f"Got {got} instead."
            )
            assert snapshot(cal) == before


@pytest.mark.parametrize("owner", ["LogLoss", "CrossEntropy", "CORP"])
@pytest.mark.parametrize("eps", [0.0, 0.5, -1e-3, float("nan")])
def test_clipping_level_is_checked_in_one_place(owner, eps):
    # _validation.check_clip_level: the same domain and message for every log score
    import streamcal.metrics as M

    with pytest.raises(ValueError) as err:
        getattr(M, owner)(eps=eps)
    assert str(err.value) == str(pytest.raises(ValueError, V.check_clip_level, eps, owner).value)
    assert f"The 'eps' argument of {owner} must be a real number in (0, 0.5)." in str(err.value)


def test_nonnegative_arguments_share_the_weight_rule():
    # smoothing, prior_strength (fit_irp) and the rain generators' noise and
    # seasonal_amplitude are checked by check_weight: same domain, same message
    from streamcal.core.irp import fit_irp

    s, y = np.array([0.2, 0.8]), np.array([0.0, 1.0])
    for kw, name in [({"smoothing": -1.0}, "smoothing"), ({"prior_strength": np.inf}, "prior_strength")]:
        with pytest.raises(ValueError, match=rf"The '{name}' argument of fit_irp must be a finite real number >= 0\."):
            fit_irp(s, y, **kw)
    with pytest.raises(TypeError, match=r"The 'smoothing' argument of fit_irp must be a finite real number >= 0\."):
        fit_irp(s, y, smoothing=True)
    with pytest.raises(ValueError, match=r"'seasonal_amplitude' argument of rain_sequence must be a finite real number >= 0\."):
        rain.rain_sequence(10, seasonal_amplitude=-0.1)


_VECTORS = [
    [],
    [0.0, 0.5, 1.0],
    [-0.0, 1.0, 0.0],
    [0.3, float("nan"), 0.2],
    [0.3, 1.0000000000000002, 0.2],
    [-5e-324, 0.5],
    [0.5, float("inf")],
    [0.0, 2.0, 1.0],
]


def _outcome(check, *args):
    try:
        out = check(*args)
    except (TypeError, ValueError) as exc:
        return type(exc), str(exc)
    return out.dtype, out.tolist()


@pytest.mark.parametrize("values", _VECTORS)
@pytest.mark.parametrize("layout", ["contiguous", "strided", "readonly"])
def test_float64_batches_are_checked_as_the_general_path_checks_them(values, layout):
    """A float64 numpy vector (the replay's batches) takes a check without temporary
    arrays (replay-t1); it accepts, returns and refuses (same message) exactly what the
    general path does with the same values given as a list."""
    arr = np.array(values, dtype=np.float64)
    if layout == "strided":
        arr = np.repeat(arr, 2)[::2]
    elif layout == "readonly":
        arr.flags.writeable = False
    n = len(values)
    for check, args in [
        (V.check_scores_array, ("Brier", "update_many")),
        (V.check_labels_array, (n, "Brier", "update_many")),
    ]:
        assert _outcome(check, arr, *args) == _outcome(check, list(values), *args)
    # a contiguous vector comes back as it is; a strided one as a contiguous copy (the
    # compiled batch loops take contiguous arrays)
    kept = arr.flags.c_contiguous
    if not np.isnan(arr).any() and ((arr >= 0) & (arr <= 1)).all():
        out = V.check_scores_array(arr, "Brier", "update_many")
        assert (out is arr) == kept and out.flags.c_contiguous
    if ((arr == 0) | (arr == 1)).all():
        out = V.check_labels_array(arr, n, "Brier", "update_many")
        assert (out is arr) == kept and out.flags.c_contiguous
    if not np.isnan(arr).any() and (arr >= 0).all() and (arr < np.inf).all():
        assert V.check_weights_array(arr, n, "Brier", "update_many").flags.c_contiguous
    with pytest.raises(ValueError, match="same length"):
        V.check_scores_array(arr, "Brier", "update_many", n=n + 1)
    with pytest.raises(ValueError, match="Got length"):
        V.check_labels_array(arr, n + 1, "Brier", "update_many")


@pytest.mark.parametrize(
    "check, values, expected",
    [
        (lambda v: V.check_scores_array(v, "Brier", "update_many"), [0.1, 0.2, "abc", 0.5], "'scores'.*Got 'abc' at index 2"),
        (lambda v: V.check_labels_array(v, 4, "Brier", "update_many"), [0, 1, 1, "x"], "'labels'.*Got 'x' at index 3"),
        (lambda v: V.check_weights_array(v, 4, "Brier", "update_many"), [1.0, "w", 1.0, 2.0], "'w'.*Got 'w' at index 1"),
        (lambda v: V.check_scores_array(v, "Brier", "update_many"), (0.1, b"0.2", 0.5), "'scores'.*Got b'0.2' at index 1"),
    ],
)
def test_text_inside_a_list_is_named_at_its_index(check, values, expected):
    """numpy turns a whole list into text when one element is text: the error names
    that element and its index, not the first element."""
    with pytest.raises(TypeError, match=expected):
        check(values)


@pytest.mark.parametrize(
    "make, name",
    [
        (lambda v: IRP(smoothing=v), "smoothing"),
        (lambda v: IRP(prior_strength=v), "prior_strength"),
        (lambda v: MulticlassIRP(smoothing=v), "smoothing"),
        (lambda v: FIR(prior_strength=v), "prior_strength"),
        (lambda v: PathCalibrator({0: None, 1: 0}, prior_strength=v), "prior_strength"),
        (lambda v: TrackingCalibeater(prior_weight=v), "prior_weight"),
        (lambda v: MultiCalibeater(2, prior_weight=v), "prior_weight"),
        (lambda v: CalibrationMonitor(prior_weight=v), "prior_weight"),
    ],
)
def test_nonnegative_params_are_stored_as_python_numbers(make, name):
    # a numpy number is kept as the float it equals (as repr, clone and to_dict show
    # it); an int or a float stays as given
    for given, stored in [(np.float32(1.5), 1.5), (np.int64(2), 2.0), (2, 2), (0.25, 0.25)]:
        obj = make(given)
        value = getattr(obj, name)
        assert value == stored and type(value) is type(stored), (given, value)
        assert type(getattr(obj.clone(), name)) is type(stored)


@pytest.mark.parametrize(
    "owner, domain",
    [
        ("KeyedCalibrator", "a BinaryCalibrator or a MulticlassCalibrator instance"),
        ("CalibratedClassifier", "a BinaryCalibrator or a MulticlassCalibrator instance"),
        ("TopLabel", "a BinaryCalibrator instance"),
        ("ClassWise", "a BinaryCalibrator instance"),
    ],
)
def test_calibrator_argument_is_checked_in_one_place(owner, domain):
    # _validation.check_instance_param: the wrappers and the keyed store word the
    # 'calibrator' check the same way (it was written out three times)
    import river.linear_model

    import streamcal
    import streamcal.compose

    cls = getattr(streamcal, owner, None) or getattr(streamcal.compose, owner)
    args = (river.linear_model.LogisticRegression(), "isotonic")
    with pytest.raises(ValueError) as err:
        cls(*args) if owner == "CalibratedClassifier" else cls("isotonic")
    assert str(err.value) == (
        f"The 'calibrator' parameter of {owner} must be {domain}. Got 'isotonic' instead."
    )


def test_int_beyond_the_float_range_is_not_a_real_number():
    # float(10**400) raises OverflowError: a weight, a parameter or a snapshot entry
    # given such an int raised it from deep inside a check (or was accepted by a
    # constructor and raised it at the first learn_one)
    import streamcal
    from streamcal.metrics import Brier

    huge = 10**400
    assert not V.is_real(huge) and not V.is_real(-huge)
    assert V.is_real(2**1023) and V.is_real(-(2**1023))
    with pytest.raises(TypeError, match=r"The 'w' argument of OnlinePlatt.learn_one must be"):
        streamcal.OnlinePlatt().learn_one(0.5, 1, huge)
    with pytest.raises(TypeError, match=r"The 'w' argument of Brier.update must be"):
        Brier().update(1, 0.5, huge)
    for cls, kw in [
        (streamcal.MultiCalibeater, {"n_experts": 2, "prior_weight": huge}),
        (streamcal.TrackingCalibeater, {"prior_weight": huge}),
        (streamcal.FIR, {"prior_strength": huge}),
        (streamcal.MulticlassIRP, {"smoothing": huge}),
        (streamcal.HistogramBinning, {"prior_strength": huge}),
    ]:
        with pytest.raises((ValueError, TypeError), match=f"'{next(k for k in kw if kw[k] is huge)}' parameter"):
            cls(**kw)
