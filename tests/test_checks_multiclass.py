"""Every multiclass calibrator, with each of its ``_unit_test_params()``, against every
shared check in :mod:`streamcal.checks.multiclass` (the river.checks pattern); and the
checks themselves must be able to fail: each broken calibrator below has one deliberate
bug that the matching check has to catch."""

import math

import pytest

from tests import known_gaps

import streamcal.calibrators
from streamcal import (
    ClassWise,
    OnlineIsotonic,
    OnlinePlatt,
    TemperatureScaling,
    TopLabel,
)
from streamcal.base import MulticlassCalibrator
from streamcal.checks import multiclass as C
from streamcal.checks import yield_multiclass_checks
from streamcal.checks._common import concrete_classes, yield_cases

CALIBRATORS = concrete_classes(streamcal.calibrators, MulticlassCalibrator)


@pytest.mark.parametrize(
    "calibrator, check",
    [
        pytest.param(*case[1:], id=case[0], marks=known_gaps.marks(*case[1:]))
        for case in yield_cases(CALIBRATORS, yield_multiclass_checks)
    ],
)
def test_check(calibrator, check):
    check(calibrator)


def test_every_multiclass_calibrator_is_checked_and_exported():
    import streamcal

    names = {k.__name__ for k in CALIBRATORS}
    assert {"TemperatureScaling", "TopLabel", "ClassWise"} <= names
    for klass in CALIBRATORS:
        assert getattr(streamcal, klass.__name__) is klass


def test_refit_check_applies_to_refittable_calibrators_only():
    names = [
        c.__name__
        for c in yield_multiclass_checks(
            TemperatureScaling(window_size=30, refit_every=5)
        )
    ]
    assert "check_refit_matches_window" in names and "check_bounded_memory" in names
    names = [c.__name__ for c in yield_multiclass_checks(TopLabel(OnlinePlatt()))]
    assert "check_refit_matches_window" not in names


# ------------------------------------------------------------------- the stream


def test_stream_is_deterministic_and_well_formed():
    for classes in (C.INT_CLASSES, C.STR_CLASSES, C.MIXED_CLASSES):
        events = C.yield_multiclass_stream(400, seed=3, classes=classes)
        assert events == C.yield_multiclass_stream(400, seed=3, classes=classes)
        late = classes[-1]
        for t, (s, y, w) in enumerate(events):
            assert abs(math.fsum(s.values()) - 1.0) <= 1e-12
            assert all(0.0 <= v <= 1.0 for v in s.values())
            assert w >= 0.0
            if t < 160:
                assert late not in s and y != late
        assert any(late in s for s, _, _ in events[160:])
        assert any(y == late for _, y, _ in events[160:])
        one_hot = [s for s, _, _ in events if 1.0 in s.values()]
        assert len(one_hot) >= 5
        assert any(
            len(s) < len(classes) for s, _, _ in events[160:]
        )  # a class left out
        assert any(
            len(set(s.values())) < len(s) for s, _, _ in events
        )  # ties in a vector
        assert {w for _, _, w in events} == {0.0, 0.5, 1.0, 2.25}


def test_stream_is_over_confident():
    events = C.yield_multiclass_stream(4000, seed=4, weights=False, distinct=True)
    top = [max(s.values()) for s, _, _ in events]
    right = [y == max(s, key=s.get) for s, y, _ in events]
    assert sum(top) / len(top) > sum(right) / len(right) + 0.05


# ------------------------------------------------------------- planted bugs
# Each class breaks one rule; the named check must fail on it.


class PredictMutates(TemperatureScaling):
    def predict_one(self, scores):
        self._n_predictions = getattr(self, "_n_predictions", 0) + 1
        return super().predict_one(scores)


class LearnsBeforeValidating(ClassWise):
    def learn_one(self, scores, label, w=1.0):
        if isinstance(scores, dict):
            self._discover(scores, 0)
        super().learn_one(scores, label, w)


class NotNormalised(ClassWise):
    def predict_one(self, scores):
        out = super().predict_one(scores)
        return {c: 0.999 * p for c, p in out.items()}


class DropsNewClass(TopLabel):
    def predict_one(self, scores):
        out = super().predict_one(scores)
        known = set(self.classes)
        if all(c in known for c in scores):
            return out
        return {c: p for c, p in out.items() if c in known} or out


class RescalesNewClass(TemperatureScaling):
    """Tempers an unseen class too (against the documented rule)."""

    def predict_one(self, scores):
        out = super().predict_one(scores)
        if self._beta is None:
            return out
        return self._tempered(scores)

    def _tempered(self, scores):
        m = max(scores.values())
        e = {c: (p / m) ** self._beta for c, p in scores.items()}
        t = sum(e.values())
        return {c: v / t for c, v in e.items()}


class ColdStartReturnsInput(ClassWise):
    def predict_one(self, scores):
        return scores if not self.classes else super().predict_one(scores)


class ForgetsFitInSnapshot(TemperatureScaling):
    def _get_state(self):
        state = super()._get_state()
        state["beta"] = None
        return state


class IntLabelsBecomeStrings(ClassWise):
    def _get_state(self):
        state = super()._get_state()
        state["classes"] = [
            str(c) if isinstance(c, int) else c for c in state["classes"]
        ]
        return state


class BatchDropsWeights(TemperatureScaling):
    def learn_many(self, scores, labels, w=None):
        super().learn_many(scores, labels, None)


class PredictManyOff(TopLabel):
    def predict_many(self, scores):
        return super().predict_many(scores)[::-1]


class WindowOffByOne(TemperatureScaling):
    """Refits on the window without its newest event."""

    def learn_one(self, scores, label, w=1.0):
        scores, label, w = self._check_event(scores, label, w)
        self._discover(scores, label)
        reg = self._classes
        event = (tuple([reg[k] for k in scores]), tuple(scores.values()), reg[label], w)
        due = (
            self._window.n_pushed
            and (self._window.n_pushed + 1) % self.refit_every == 0
        )
        if due:
            self._fit_events(self._window_events())
        self._window.push(event)


class RefitsEveryEvent(TemperatureScaling):
    def learn_one(self, scores, label, w=1.0):
        super().learn_one(scores, label, w)
        self._fit_events(self._window_events())


class KeepsCallersDict(TemperatureScaling):
    def learn_one(self, scores, label, w=1.0):
        super().learn_one(scores, label, w)
        self._last = scores

    def _get_state(self):
        return {
            **super()._get_state(),
            "last": list(getattr(self, "_last", {}).values()),
        }

    def _set_state(self, state):
        super()._set_state(state)


class UnboundedWindow(TemperatureScaling):
    def learn_one(self, scores, label, w=1.0):
        super().learn_one(scores, label, w)
        self._log = getattr(self, "_log", []) + [w]


class SortsClasses(ClassWise):
    def predict_one(self, scores):
        return dict(sorted(super().predict_one(scores).items()))


BROKEN = [
    (
        PredictMutates(window_size=40, refit_every=10),
        C.check_predict_does_not_change_state,
    ),
    (LearnsBeforeValidating(OnlinePlatt()), C.check_bad_input_leaves_state_unchanged),
    (NotNormalised(OnlinePlatt()), C.check_outputs_are_probability_vectors),
    (DropsNewClass(OnlineIsotonic()), C.check_unknown_classes),
    (RescalesNewClass(window_size=40, refit_every=10), C.check_unknown_classes),
    (ColdStartReturnsInput(OnlinePlatt()), C.check_cold_start),
    (ForgetsFitInSnapshot(window_size=40, refit_every=10), C.check_dict_roundtrip),
    (IntLabelsBecomeStrings(OnlinePlatt()), C.check_dict_roundtrip),
    (
        BatchDropsWeights(window_size=40, refit_every=10),
        C.check_learn_many_matches_learn_one,
    ),
    (PredictManyOff(OnlineIsotonic()), C.check_predict_many_matches_predict_one),
    (WindowOffByOne(window_size=40, refit_every=10), C.check_refit_matches_window),
    (RefitsEveryEvent(window_size=40, refit_every=10), C.check_refit_matches_window),
    (
        KeepsCallersDict(window_size=40, refit_every=10),
        C.check_input_not_mutated_or_kept,
    ),
    (UnboundedWindow(window_size=40, refit_every=10), C.check_bounded_memory),
    (SortsClasses(OnlinePlatt()), C.check_unknown_classes),
]


@pytest.mark.parametrize(
    "index",
    range(len(BROKEN)),
    ids=[f"{type(b).__name__}-{c.__name__}" for b, c in BROKEN],
)
def test_checks_catch_planted_bugs(index):
    broken, check = BROKEN[index]
    with pytest.raises((AssertionError, TypeError)):
        check(broken)


def test_planted_bugs_leave_other_checks_green():
    """The broken classes fail for their bug, not for something else: e.g. the
    window off by one passes the output check."""
    C.check_outputs_are_probability_vectors(
        WindowOffByOne(window_size=40, refit_every=10)
    )
    C.check_pickle_roundtrip(WindowOffByOne(window_size=40, refit_every=10))
