"""ClassWise and TopLabel are atomic under the weight rule (issue 13, item 3: "a
ValueError naming ``w`` with the state unchanged"): a weight one class's calibrator
refuses leaves every calibrator and the classes as they were, for a single event and
for a batch (whose error names the index), and ``BinaryCalibrator._weight_refusal``,
the dry run the wrappers rely on, agrees with learning."""

import copy
import inspect

import pytest

import streamcal
from streamcal import IRP, ClassWise, HistogramBinning, OnlineIsotonic, OnlinePlatt, TopLabel
from streamcal.base import BinaryCalibrator
from streamcal.checks._common import fingerprint, snapshot
from streamcal.checks.calibrators import _trained
from streamcal.checks.multiclass import yield_multiclass_stream

# huge weights, and tiny ones (HistogramBinning sums in fixed point: 1e-300 beside 1
# cannot be held exactly)
EXTREME = [1e300, 1e304, 1e306, 1e307, 1e308, 1.7e308, 1e-300]


def _trained_wrapper(cls, inner, n=60, seed=3):
    cal = cls(inner)
    cal.learn_many(*zip(*yield_multiclass_stream(n, seed)))
    return cal


def _state(cal):
    return fingerprint(cal), snapshot(cal), getattr(cal, "classes", None)


def _assert_refused(cal, fn, w, index=None, owner=None):
    before = _state(cal)
    with pytest.raises(ValueError) as info:
        fn()
    msg = str(info.value)
    owner = owner or type(cal).__name__
    assert f"The 'w' argument of {owner}." in msg and f"Got {w!r}" in msg, msg
    if index is not None:
        assert f"at index {index}" in msg, msg
    assert _state(cal) == before, "a refused weight changed the state"


def _refused_by(cal, s, y, w) -> bool:
    """Would ``cal`` (a binary calibrator) refuse the event? Learnt on a copy."""
    try:
        copy.deepcopy(cal).learn_one(s, y, w)
    except ValueError:
        return True
    return False


def test_classwise_platt_single_event_refused_by_a_later_class_is_atomic():
    # the gap of tests/known_gaps.py: over OnlinePlatt, an event refused by one class's
    # calibrator was learnt by the classes before it
    cal = _trained_wrapper(ClassWise, OnlinePlatt())
    s, y = {0: 0.5, 1: 0.3, 2: 0.2}, 1
    found = False
    for w in [10.0 ** (k / 50) for k in range(300, 1000)]:  # 1e6 .. 1e20
        refused = [_refused_by(g, s.get(c, 0.0), y == c, w) for c, g in cal.calibrators.items()]
        if any(refused) and not refused[0]:  # the first class would learn it
            found = True
            break
    assert found, "no weight that one class accepts and a later one refuses"
    _assert_refused(cal, lambda: cal.learn_one(s, y, w), w)
    # and the calibrator still learns ordinary events
    cal.learn_one(s, y, 1.0)


@pytest.mark.parametrize("cls", [ClassWise, TopLabel])
@pytest.mark.parametrize("inner", [OnlineIsotonic(), OnlinePlatt(), IRP(), OnlineIsotonic(window_size=3)])
def test_batch_with_a_refused_weight_learns_nothing(cls, inner):
    for cal in (cls(inner), _trained_wrapper(cls, inner)):
        events = list(yield_multiclass_stream(3, seed=8))
        # the heavy events share a vector: one top class learns all of them in TopLabel
        scores = [events[0][0], events[1][0]] + [events[2][0]] * 3
        labels = [events[0][1], events[1][1]] + [events[2][1]] * 3
        for w in EXTREME:
            try:
                copy.deepcopy(cal).learn_many(scores, labels, [1.0, 2.0, w, w, w])
            except ValueError as exc:
                index = int(str(exc).split("at index ")[1].split(" ")[0].rstrip("."))
                assert index >= 2
                _assert_refused(cal, lambda: cal.learn_many(scores, labels, [1.0, 2.0, w, w, w]), w, index)
                # the events before the refused one, learnt alone, are accepted, and
                # the loop of learn_one refuses the same event
                loop = copy.deepcopy(cal)
                for k in range(index):
                    loop.learn_one(scores[k], labels[k], [1.0, 2.0, w, w, w][k])
                with pytest.raises(ValueError):
                    loop.learn_one(scores[index], labels[index], w)
                break
        else:
            pytest.fail(f"{cls.__name__}({inner!r}) refused none of {EXTREME}")


@pytest.mark.parametrize("cls", [ClassWise, TopLabel])
def test_refused_event_discovers_no_class(cls):
    cal = cls(OnlineIsotonic())
    cal.learn_many([{"a": 0.7, "b": 0.3}], ["a"], [1e308])
    # (TopLabel.learn_one lets its one calibrator's own error through)
    owner = "OnlineIsotonic" if cls is TopLabel else None
    _assert_refused(cal, lambda: cal.learn_one({"a": 0.6, "b": 0.3, "new": 0.1}, "other", 1e308), 1e308, owner=owner)
    assert cal.classes == ("a", "b")
    _assert_refused(
        cal,
        lambda: cal.learn_many([{"a": 0.2, "z": 0.8}, {"a": 0.7, "b": 0.3}], ["z", "a"], [1.0, 1e308]),
        1e308,
        1,
    )
    assert cal.classes == ("a", "b")


@pytest.mark.parametrize("cls", [ClassWise, TopLabel])
@pytest.mark.parametrize("inner", [OnlineIsotonic(), OnlinePlatt(), OnlineIsotonic(half_life=20.0)])
def test_learn_many_matches_learn_one_across_new_classes(cls, inner):
    events = list(yield_multiclass_stream(80, seed=5))
    # classes appear mid-batch
    events[10] = ({**events[10][0]}, "late", 2.0)
    a, b = cls(inner), cls(inner)
    a.learn_many(*zip(*events))
    for e in events:
        b.learn_one(*e)
    assert snapshot(a) == snapshot(b)


def _binary_calibrators():
    for name in sorted(streamcal.__all__):
        obj = getattr(streamcal, name)
        if inspect.isclass(obj) and issubclass(obj, BinaryCalibrator) and not inspect.isabstract(obj):
            for params in obj._unit_test_params():
                yield pytest.param(obj(**params), id=name)


@pytest.mark.parametrize("cal", list(_binary_calibrators()))
def test_weight_refusal_agrees_with_learning(cal):
    if getattr(cal, "_check_inputs", None) is not None:
        pytest.skip("takes other inputs than scores")
    for c in (cal.clone(), _trained(cal, 100, seed=21)):
        for ws in ([1.0, 2.0], [1.0, 1e308, 1e308], [1e308, 1.7e308], [0.5, 1.7e308, 1.0], [1e-300, 3.0]):
            n = len(ws)
            s, y = [0.3, 0.8, 0.55][:n], [1, 0, 1][:n]
            before = _state(c)
            r = c._weight_refusal(s, y, ws)
            assert _state(c) == before, "the dry run changed the state"
            loop, expected = copy.deepcopy(c), -1
            for i in range(n):
                try:
                    loop.learn_one(s[i], y[i], ws[i])
                except ValueError:
                    expected = i
                    break
            assert r == expected, (ws, r, expected)
            if c._weights_surely_fit(ws):
                assert expected == -1


def test_fast_paths_are_taken():
    # OnlineIsotonic without forgetting and IRP answer from their sums, without a copy
    assert OnlineIsotonic()._weights_surely_fit([1.0, 1e308])
    assert not OnlineIsotonic()._weights_surely_fit([1e308, 1e308])
    # under forgetting one event whose stored weight needs no search for a shift (a
    # KeyedCalibrator's fallback asks about one event), a batch never: the dry run
    assert OnlineIsotonic(half_life=5.0)._weights_surely_fit([1.0])
    assert not OnlineIsotonic(half_life=5.0)._weights_surely_fit([1.0, 1.0])
    assert not OnlineIsotonic(half_life=5.0)._weights_surely_fit([1e300])
    assert IRP()._weights_surely_fit([1.0, 2.0])
    assert not IRP()._weights_surely_fit([1e308])
    assert HistogramBinning()._weights_surely_fit([1e-300, 1.7e308])  # exact integer sums
    assert OnlinePlatt()._weights_surely_fit([1.0, 1e6])
    assert not OnlinePlatt()._weights_surely_fit([1.0, 1e7])
    assert OnlinePlatt(regularization=0.5)._weights_surely_fit([5e5])
    assert not OnlinePlatt(regularization=0.5)._weights_surely_fit([6e5])


def test_refit_window_batch_beyond_the_double_range_is_refused_not_overflowing():
    # RefitWindow.check_batch summed the batch with math.fsum, which raised OverflowError
    # ("intermediate overflow in fsum") for weights summing beyond the double range
    from streamcal import FIR, TemperatureScaling

    cal = IRP()
    _assert_refused(cal, lambda: cal.learn_many([0.1, 0.2, 0.3], [0, 1, 0], [1.0, 1e308, 1e308]), 1e308, 1)
    for cal in (FIR(), TemperatureScaling()):
        s = {"a": 0.6, "b": 0.4}
        _assert_refused(cal, lambda: cal.learn_many([s, s, s], ["a", "b", "a"], [1.0, 1e308, 1e308]), 1e308, 1)
