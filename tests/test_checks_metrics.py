"""Every streaming metric, with each of its ``_unit_test_params()``, against every shared
check in :mod:`streamcal.checks.metrics` (the river.checks pattern); and the checks
themselves must be able to fail: each broken metric below has one deliberate bug that
the matching check has to catch."""

import math
import typing

import numpy as np
import pytest

from tests import known_gaps

import streamcal.metrics
from streamcal import _validation as V
from streamcal.checks import metrics as C
from streamcal.checks._common import concrete_classes, yield_cases
from streamcal.metrics.base import BinaryCalibrationMetric, StreamingMetric

# the interfaces exported next to the metrics (not metrics themselves)
_BASES = {
    StreamingMetric,
    BinaryCalibrationMetric,
    getattr(streamcal.metrics, "MulticlassCalibrationMetric", StreamingMetric),
}

METRICS = concrete_classes(streamcal.metrics, StreamingMetric, exclude=_BASES)


@pytest.mark.parametrize(
    "metric, check",
    [
        pytest.param(*case[1:], id=case[0], marks=known_gaps.marks(*case[1:]))
        for case in yield_cases(METRICS, C.yield_metric_checks)
    ],
)
def test_check(metric, check):
    check(metric)


def test_every_metric_is_checked():
    names = {k.__name__ for k in METRICS}
    assert {
        "Brier",
        "LogLoss",
        "ECE",
        "Sharpness",
        "ROCAUC",
        "CalibrationRefinement",
        "MurphyDecomposition",
    } <= names


# ------------------------------------------------------------------- streams


def test_streams_are_deterministic_and_well_formed():
    assert C.yield_binary_events(50, seed=3) == C.yield_binary_events(50, seed=3)
    events = C.yield_multiclass_events(200, seed=3, classes=C.STR_CLASSES)
    assert events == C.yield_multiclass_events(200, seed=3, classes=C.STR_CLASSES)
    for t, (y, p, w) in enumerate(events):
        assert all(0.0 <= v <= 1.0 for v in p.values())
        assert abs(math.fsum(p.values()) - 1.0) < 1e-12
        assert w >= 0.0
        if t < 80:  # the third class appears late
            assert y != "bird" and "bird" not in p
    assert any("bird" in p for _, p, _ in events[80:])
    assert any(len(p) == 2 for _, p, _ in events[80:]), (
        "some late forecasts leave a class out"
    )
    binary = C.yield_binary_events(400, seed=1)
    assert {0.0, 1.0} <= {p for _, p, _ in binary}, "edge forecasts present"
    assert 0.0 in {w for _, _, w in binary}, "zero weights present"


# ------------------------------------------------------------------- broken metrics


class _ScoreSums:
    """The state of the toy metrics below: total weight ``W``, weighted sum ``S`` of the
    per-event scores and number ``n`` of positive-weight events; ``get()`` is S / W."""

    def _reset(self):
        self._W = 0.0
        self._S = 0.0
        self._n = 0

    def _add(self, w, score):
        # the weight rule: score <= 2, so every sum stays finite while W <= DBL_MAX / 2
        V.check_weight_room(w, self._W, V.weight_capacity(2.0), type(self).__name__, "update")
        self._W += w
        self._S += w * score
        self._n += 1

    def _remove(self, w, score):
        self._n -= 1
        if self._n == 0:
            self._reset()
            return
        self._W -= w
        self._S -= w * score

    def get(self):
        return self._S / self._W if self._W > 0.0 else 0.0

    def _get_state(self):
        return {"W": self._W, "S": self._S, "n": self._n}

    def _set_state(self, state):
        self._W, self._S, self._n = (
            float(state["W"]),
            float(state["S"]),
            int(state["n"]),
        )


class RunningBrier(_ScoreSums, BinaryCalibrationMetric):
    """Weighted mean of (p - y)**2, written plainly: a correct metric the bugs build on.

    Examples
    --------
    >>> m = RunningBrier()
    >>> m.update(1, 0.5)
    >>> m.get()
    0.25

    """

    def _update(self, y, p, w):
        if w > 0.0:
            self._add(w, (p - y) ** 2)

    def update_many(self, y_true, y_pred, w=None):
        # all or nothing: the weight rule checked on the batch's total first
        ws = [] if w is None else [x for x in w if V.is_real(x)]
        if w is not None and len(ws) == len(w) and all(math.isfinite(x) and x >= 0 for x in ws):
            total = sum(ws)  # inf when the batch alone overflows: refused
            V.check_weight_room(total, self._W, V.weight_capacity(2.0), "RunningBrier", "update_many")
        super().update_many(y_true, y_pred, w)

    def _revert(self, y, p, w):
        if w > 0.0:
            self._remove(w, (p - y) ** 2)


class UpdateReturnsSelf(RunningBrier):
    def update(self, y_true, y_pred, w=1.0):
        super().update(y_true, y_pred, w)
        return self


class MutatesBeforeValidating(RunningBrier):
    def update(self, y_true, y_pred, w=1.0):
        self._n += 0 if w == 1.0 else 1  # touches the state before the checks run
        super().update(y_true, y_pred, w)


class SkipsValidationOnRevert(RunningBrier):
    def revert(self, y_true, y_pred, w=1.0):
        self._revert(
            float(y_true == 1),
            float(y_pred) if not isinstance(y_pred, dict) else 0.5,
            float(w),
        )


class BrokenRevert(RunningBrier):
    def _revert(self, y, p, w):
        if w > 0.0:
            self._n -= 1
            self._W -= w
            self._S -= w * abs(p - y)  # not the inverse of _update


class RevertLeavesResidue(RunningBrier):
    def _revert(self, y, p, w):
        if w > 0.0:
            self._n -= 1
            self._W -= w
            self._S -= (
                w * (p - y) ** 2
            )  # never resets: 0/0 guarded, but a residue remains


class CountsZeroWeights(RunningBrier):
    def _update(self, y, p, w):
        self._n += w == 0.0
        super()._update(y, p, w)


class ForgetsInSnapshot(RunningBrier):
    def _get_state(self):
        return {"W": self._W, "S": self._S, "n": 0}


class SharedStateClone(RunningBrier):
    _shared: typing.ClassVar[dict] = {"W": 0.0}

    def _update(self, y, p, w):
        super()._update(y, p, w)
        self._shared["W"] += w  # class-level state: clones are not independent

    def _reset(self):
        super()._reset()
        self._total = self._shared


class NanWhenEmpty(RunningBrier):
    def get(self):
        return self._S / self._W if self._W > 0.0 else math.nan


class IgnoresDictPredictions(RunningBrier):
    def update(self, y_true, y_pred, w=1.0):
        if isinstance(y_pred, dict):
            y_pred = y_pred.get(False, y_pred.get(0))  # reads the wrong class
        super().update(y_true, y_pred, w)


class KeepsALog(RunningBrier):
    def _reset(self):
        super()._reset()
        self._log = []

    def _update(self, y, p, w):
        super()._update(y, p, w)
        self._log.append(p)  # reverts never trim it

    def _get_state(self):
        return {**super()._get_state(), "log": list(self._log)}

    def _set_state(self, state):
        super()._set_state(state)
        self._log = list(state["log"])


class LazyWindow(RunningBrier):
    """Claims a window but keeps everything.

    Examples
    --------
    >>> LazyWindow(window_size=3).get()
    0.0

    """

    _revertible = False

    def __init__(self, window_size=None):
        self.window_size = window_size
        super().__init__()


class RevertsSilently(LazyWindow):
    def revert(self, y_true, y_pred, w=1.0):
        return None


class UndocumentedMetric(RunningBrier):
    pass


UndocumentedMetric.__doc__ = "A metric without an example."


class AcceptsLabelTwo(RunningBrier):
    def update(self, y_true, y_pred, w=1.0):
        y = (
            1.0
            if y_true == 2
            else V.check_label(y_true, "AcceptsLabelTwo", "update", "y_true")
        )
        p = V.check_probability(y_pred, "AcceptsLabelTwo", "update")
        self._update(y, p, V.check_weight(w, "AcceptsLabelTwo", "update"))


class VagueError(RunningBrier):
    def update(self, y_true, y_pred, w=1.0):
        if isinstance(y_pred, float) and math.isnan(y_pred):
            raise ValueError("bad input")
        super().update(y_true, y_pred, w)


@pytest.mark.parametrize(
    "broken, check",
    [
        (UpdateReturnsSelf(), C.check_protocol),
        (MutatesBeforeValidating(), C.check_bad_input_leaves_state_unchanged),
        (SkipsValidationOnRevert(), C.check_bad_input_leaves_state_unchanged),
        (AcceptsLabelTwo(), C.check_bad_input_leaves_state_unchanged),
        (VagueError(), C.check_bad_input_leaves_state_unchanged),
        (BrokenRevert(), C.check_revert_any_order),
        (BrokenRevert(), C.check_rolling_matches_tail),
        (RevertLeavesResidue(), C.check_revert_any_order),
        (CountsZeroWeights(), C.check_zero_weight_changes_nothing),
        (ForgetsInSnapshot(), C.check_dict_roundtrip),
        (SharedStateClone(), C.check_clone_is_independent),
        (NanWhenEmpty(), C.check_get_empty_then_finite),
        (IgnoresDictPredictions(), C.check_dict_prediction_matches_float),
        (KeepsALog(), C.check_rolling_memory_bounded),
        (LazyWindow(window_size=10), C.check_window_matches_tail),
        (RevertsSilently(), C.check_revert_not_implemented),
        (UndocumentedMetric(), C.check_docstring_has_example),
    ],
    ids=lambda x: type(x).__name__ if isinstance(x, StreamingMetric) else x.__name__,
)
def test_check_catches_the_bug(broken, check):
    with pytest.raises(AssertionError):
        check(broken)


def test_correct_metric_passes_every_check():
    C.check_metric(RunningBrier())


def test_yield_metric_checks_by_kind():
    names = {c.__name__ for c in C.yield_metric_checks(LazyWindow(window_size=5))}
    assert (
        "check_revert_not_implemented" in names and "check_window_matches_tail" in names
    )
    assert "check_rolling_matches_tail" not in names
    names = {c.__name__ for c in C.yield_metric_checks(RunningBrier())}
    assert {
        "check_revert_any_order",
        "check_rolling_matches_tail",
        "check_rolling_memory_bounded",
    } <= names


def test_multiclass_metrics_get_multiclass_streams():
    class Multi:
        _multiclass = True

    events = C.yield_events(Multi(), 20, seed=0)
    assert all(isinstance(p, dict) for _, p, _ in events)
    assert all(
        isinstance(p, float) for _, p, _ in C.yield_events(RunningBrier(), 20, seed=0)
    )
    assert np.isclose(sum(events[-1][1].values()), 1.0)


# ------------------------------------------------------------------- a multiclass metric


def _check_multiclass(y_true, y_pred, w, owner, method):
    """Inline validation for the toy multiclass metric (the real ones use _validation)."""
    if type(y_true) not in (str, int, bool) and not (type(y_true) is float and math.isfinite(y_true)):
        raise V.argument_error(
            TypeError, "y_true", owner, method, "a JSON scalar class label", y_true
        )
    domain = "a dict of class probabilities in [0, 1] summing to 1"
    if not isinstance(y_pred, dict) or not y_pred:
        raise V.argument_error(TypeError, "y_pred", owner, method, domain, y_pred)
    if not all(type(k) in (str, int, bool) for k in y_pred):
        raise V.argument_error(TypeError, "y_pred", owner, method, domain, y_pred)
    if not all(V.is_real(v) and 0.0 <= v <= 1.0 for v in y_pred.values()):
        raise V.argument_error(ValueError, "y_pred", owner, method, domain, y_pred)
    if abs(math.fsum(y_pred.values()) - 1.0) > 1e-6:
        raise V.argument_error(ValueError, "y_pred", owner, method, domain, y_pred)
    return V.check_weight(w, owner, method)


class ToyMulticlassBrier(_ScoreSums, StreamingMetric):
    """Multiclass Brier score with a per-class count of labels (so that class discovery
    and int / str keys go through the snapshots): a correct metric for the checks.

    Examples
    --------
    >>> m = ToyMulticlassBrier()
    >>> m.update("a", {"a": 0.5, "b": 0.5})
    >>> m.get()
    0.5

    """

    _multiclass = True

    def _reset(self):
        super()._reset()
        self._labels = {}

    def _score(self, y, p):
        return sum((v - (c == y)) ** 2 for c, v in p.items()) + (0.0 if y in p else 1.0)

    def update(self, y_true, y_pred, w=1.0):
        w = _check_multiclass(y_true, y_pred, w, "ToyMulticlassBrier", "update")
        if w > 0.0:
            self._add(w, self._score(y_true, y_pred))
            self._labels[y_true] = self._labels.get(y_true, 0) + 1

    def revert(self, y_true, y_pred, w=1.0):
        w = _check_multiclass(y_true, y_pred, w, "ToyMulticlassBrier", "revert")
        if w > 0.0:
            self._remove(w, self._score(y_true, y_pred))
            if self._n:
                self._labels[y_true] -= 1
                if not self._labels[y_true]:
                    del self._labels[y_true]

    def _get_state(self):
        return {
            **super()._get_state(),
            "labels": [[c, k] for c, k in self._labels.items()],
        }

    def _set_state(self, state):
        super()._set_state(state)
        self._labels = {c: int(k) for c, k in state["labels"]}


class MulticlassKeysBecomeStrings(ToyMulticlassBrier):
    def _get_state(self):
        return {
            **super()._get_state(),
            "labels": {c: k for c, k in self._labels.items()},
        }

    def _set_state(self, state):
        super()._set_state({**state, "labels": list(state["labels"].items())})


class MulticlassRemembersClasses(ToyMulticlassBrier):
    def get(self):  # a value that depends on every class ever seen, even once reverted
        return super().get() + 1e-3 * len(self._seen) if self._W > 0.0 else 0.0

    def _reset(self):
        super()._reset()
        self._seen = set()

    def update(self, y_true, y_pred, w=1.0):
        super().update(y_true, y_pred, w)
        if w > 0.0:
            self._seen.add(y_true)


def test_correct_multiclass_metric_passes_every_check():
    C.check_metric(ToyMulticlassBrier())


@pytest.mark.parametrize(
    "broken, check",
    [
        (MulticlassKeysBecomeStrings(), C.check_dict_roundtrip),
        (MulticlassRemembersClasses(), C.check_revert_any_order),
    ],
    ids=lambda x: type(x).__name__ if isinstance(x, StreamingMetric) else x.__name__,
)
def test_check_catches_the_multiclass_bug(broken, check):
    with pytest.raises(AssertionError):
        check(broken)
