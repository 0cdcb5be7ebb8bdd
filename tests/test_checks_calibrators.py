"""Every calibrator, with each of its ``_unit_test_params()``, against every shared check
in :mod:`streamcal.checks` (the river.checks pattern)."""

import pytest

from tests import known_gaps

import streamcal.calibrators
from streamcal.base import BinaryCalibrator
from streamcal.checks import yield_checks
from streamcal.checks._common import concrete_classes, yield_cases

CALIBRATORS = concrete_classes(streamcal.calibrators, BinaryCalibrator)


def _cases():
    for name, cal, check in yield_cases(CALIBRATORS, yield_checks):
        yield pytest.param(cal, check, id=name, marks=known_gaps.marks(cal, check))


@pytest.mark.parametrize("calibrator, check", list(_cases()))
def test_check(calibrator, check):
    check(calibrator)


def test_every_calibrator_is_exported_at_top_level():
    import streamcal

    for klass in CALIBRATORS:
        assert getattr(streamcal, klass.__name__) is klass


# ---------------------------------------------------------------------- the check hooks
# ``_check_inputs`` (inputs other than a float score) and ``_cold_start_value`` (a
# documented cold start other than the score) must not make the checks toothless.


def _broken_hook_cases():
    from streamcal import EpsilonCalibratedForecaster, MultiCalibeater
    from streamcal.checks import calibrators as C

    class WrongColdStart(EpsilonCalibratedForecaster):
        def _cold_start_value(self, score):
            return 0.5  # the forecaster actually starts at 0.55

    class TupleLearnsBeforeValidating(MultiCalibeater):
        def learn_one(self, score, label, w=1.0):
            self._n_events += 1
            super().learn_one(score, label, w)

    class TupleBatchDiffers(MultiCalibeater):
        def learn_many(self, scores, labels, w=None):
            super().learn_many(scores, labels, None)  # drops the weights

    class TuplePredictManyOff(MultiCalibeater):
        def predict_many(self, scores):
            return super().predict_many(scores) * 0.99

    return [
        (WrongColdStart(seed=0), C.check_cold_start),
        (WrongColdStart(seed=0), C.check_clone_is_independent),
        (TupleLearnsBeforeValidating(2), C.check_bad_input_leaves_state_unchanged),
        (TupleBatchDiffers(2), C.check_learn_many_matches_learn_one),
        (TuplePredictManyOff(2), C.check_predict_many_matches_predict_one),
    ]


@pytest.mark.parametrize("index", range(5))
def test_checks_with_hooks_catch_bugs(index):
    broken, check = _broken_hook_cases()[index]
    with pytest.raises(AssertionError):
        check(broken)


def test_sane_while_learning_runs_outputs_learn_and_check_twice():
    # checks/_common.sane_while_learning: the one loop the binary, multiclass and path
    # suites use on a calibrator restored from a corrupted snapshot
    from streamcal.checks import _common

    calls = []

    class Probe:
        def _check(self):
            calls.append("check")

    sane = _common.sane_while_learning(
        lambda c: calls.append("outputs"), lambda c: calls.append("learn")
    )
    sane(Probe())
    assert calls == ["outputs", "learn", "check"] * 2
    calls.clear()
    sane(object.__new__(type("NoCheck", (), {})))  # no _check: outputs and learning only
    assert calls == ["outputs", "learn"] * 2

    def broken(c):
        raise AssertionError("a prediction is nan")

    with pytest.raises(AssertionError, match="a prediction is nan"):
        _common.sane_while_learning(broken, lambda c: None)(Probe())


def test_bounded_memory_helpers_catch_growth():
    # checks/_common.has_bounded_memory and check_state_stops_growing: the one rule
    # (a bounding parameter set) and the one loop of every family's check_bounded_memory
    from streamcal import HistogramBinning, OnlineIsotonic
    from streamcal.checks import _common

    assert not _common.has_bounded_memory(OnlineIsotonic())
    assert _common.has_bounded_memory(OnlineIsotonic(window_size=50))
    assert not _common.has_bounded_memory(object())  # no _bounded_memory_params at all

    class Grows:
        def __init__(self, bounded):
            self.bounded, self.items = bounded, []

        def clone(self):
            return Grows(self.bounded)

    def learn_chunk(obj, chunk):
        obj.items.extend(range(5000))
        if obj.bounded:
            del obj.items[:-5000]

    def size(obj):
        return len(obj.items)

    _common.check_state_stops_growing(Grows(True), learn_chunk, 200, size)
    with pytest.raises(AssertionError, match="keeps growing"):
        _common.check_state_stops_growing(Grows(False), learn_chunk, 200, size)
    seen = []
    _common.check_state_stops_growing(
        HistogramBinning(), lambda c, i: seen.append(i), 0, size=lambda c: 1
    )
    assert seen == [0, 1, 2, 3]
