"""The shared checks must be able to fail: each broken calibrator below has one
deliberate bug, and the matching check has to catch it."""

import copy

import numpy as np
import pytest

from streamcal import _validation as V
from streamcal.base import BinaryCalibrator
from streamcal.checks import calibrators as C


class RunningMean(BinaryCalibrator):
    """Predicts the weighted mean label seen so far (a correct, trivial calibrator).

    Examples
    --------
    >>> cal = RunningMean()
    >>> cal.learn_one(0.2, 1)
    >>> cal.predict_one(0.9)
    1.0

    """

    _monotone = True

    def __init__(self, window_size=None):
        V.check_param(
            "RunningMean", "window_size", window_size,
            window_size is None or (V.is_integer(window_size) and window_size >= 1),
            "an int >= 1 or None",
        )
        self.window_size = window_size
        self._reset()

    def _reset(self):
        self._W = 0.0
        self._S = 0.0
        self._log = []

    def learn_one(self, score, label, w=1.0):
        V.check_score(score, "RunningMean", "learn_one")
        y = V.check_label(label, "RunningMean", "learn_one")
        w = V.check_weight(w, "RunningMean", "learn_one")
        V.check_weight_room(w, self._W, V.DBL_MAX, "RunningMean", "learn_one")
        self._W += w
        self._S += w * y
        self._log.append(score)
        if self.window_size is not None:
            del self._log[: -self.window_size]

    def learn_many(self, scores, labels, w=None):
        # all or nothing: the weight rule checked on the batch's total first
        ws = [] if w is None else [x for x in w if V.is_real(x)]
        if w is not None and len(ws) == len(w) and all(np.isfinite(x) and x >= 0 for x in ws):
            total = float(np.sum(ws))  # inf when the batch alone overflows: refused
            V.check_weight_room(total, self._W, V.DBL_MAX, "RunningMean", "learn_many")
        super().learn_many(scores, labels, w)

    def predict_one(self, score):
        s = V.check_score(score, "RunningMean", "predict_one")
        return s if self._W == 0 else self._S / self._W

    def _get_state(self):
        return {"W": self._W, "S": self._S, "log": list(self._log)}

    def _validate_state(self, state, check):
        # a correct calibrator validates the snapshots it restores (issue 13, item 4)
        W = check.weight(check.entry(state, "W"), "state['W']")
        check.real(check.entry(state, "S"), "state['S']", 0.0, W)
        log = check.list(check.entry(state, "log"), "state['log']", max_n=self.window_size, what="scores")
        for i, s in enumerate(log):
            check.real(s, f"state['log'][{i}]", 0.0, 1.0)

    def _set_state(self, state):
        self._W, self._S, self._log = state["W"], state["S"], list(state["log"])


class ReturnsSelf(RunningMean):
    def learn_one(self, score, label, w=1.0):
        super().learn_one(score, label, w)
        return self


class LearnsBeforeValidating(RunningMean):
    def learn_one(self, score, label, w=1.0):
        self._log.append(0.0)
        super().learn_one(score, label, w)


class PredictManyOff(RunningMean):
    def _predict_many_validated(self, scores):
        return super()._predict_many_validated(scores) * 0.99


class ForgetsInSnapshot(RunningMean):
    def _get_state(self):
        return {"W": self._W, "S": self._S, "log": []}


class CloneKeepsState(RunningMean):
    def clone(self):
        return copy.deepcopy(self)  # a "clone" that carries what was learnt


class PickleForgets(RunningMean):
    def __getstate__(self):
        return {k: v for k, v in vars(self).items() if k != "_log"}

    def __setstate__(self, state):
        vars(self).update(state, _log=[])


class PickleMisreads(RunningMean):
    def __setstate__(self, state):
        vars(self).update(state)
        self._S *= 1.0 + 1e-15  # off in the last bit: the outputs must be equal exactly


class OutOfRange(RunningMean):
    def predict_one(self, score):
        return super().predict_one(score) + (0.5 if self._W else 0.0)


class NotMonotone(RunningMean):
    def predict_one(self, score):
        p = super().predict_one(score)
        return p if self._W == 0 else (p * (1.0 - score) if score <= 1 else p)


class GrowsWithWindow(RunningMean):
    _bounded_memory_params = ("window_size",)

    def _reset(self):
        super()._reset()
        self._seen = []

    def learn_one(self, score, label, w=1.0):
        super().learn_one(score, label, w)
        self._seen.append(score)  # a history nobody trims


class LoopDiffers(RunningMean):
    def _learn_many_validated(self, scores, labels, w):
        super()._learn_many_validated(scores, labels, w * 2.0 + 1.0)


@pytest.mark.parametrize(
    "broken, check",
    [
        (ReturnsSelf(), C.check_learn_one_returns_none),
        (LearnsBeforeValidating(), C.check_bad_input_leaves_state_unchanged),
        (PredictManyOff(), C.check_predict_many_matches_predict_one),
        (ForgetsInSnapshot(), C.check_dict_roundtrip),
        (CloneKeepsState(), C.check_clone_is_independent),
        (PickleForgets(), C.check_pickle_roundtrip),
        (PickleMisreads(), C.check_pickle_roundtrip),
        (OutOfRange(), C.check_outputs_finite_in_unit_interval),
        (NotMonotone(), C.check_monotone),
        (GrowsWithWindow(window_size=10), C.check_bounded_memory),
        (LoopDiffers(), C.check_learn_many_matches_learn_one),
    ],
    ids=lambda x: type(x).__name__ if isinstance(x, BinaryCalibrator) else x.__name__,
)
def test_check_catches_the_bug(broken, check):
    with pytest.raises(AssertionError):
        check(broken)


def test_correct_calibrator_passes_every_check():
    from streamcal.checks import check_calibrator

    check_calibrator(RunningMean())
    check_calibrator(RunningMean(window_size=10))


def test_yield_stream_is_deterministic():
    a = C.yield_stream(50, seed=3)
    b = C.yield_stream(50, seed=3)
    assert all(np.array_equal(x, y) for x, y in zip(a, b))
