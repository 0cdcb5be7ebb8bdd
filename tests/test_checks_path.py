"""PathCalibrator, with each of its ``_unit_test_params()``, against every shared check
of :mod:`streamcal.checks.path` (the river.checks pattern, as the multiclass suite);
and checks that must fail on a deliberately broken path calibrator."""

import pytest

from streamcal.calibrators import PathCalibrator
from streamcal.checks import path as C
from streamcal.checks._common import yield_cases


@pytest.mark.parametrize(
    "calibrator, check",
    [pytest.param(*case[1:], id=case[0]) for case in yield_cases([PathCalibrator], C.yield_path_checks)],
)
def test_check(calibrator, check):
    check(calibrator)


class _NotMonotone(PathCalibrator):
    """Bug: the leaf's probability is reported for every node of the path, reversed."""

    def predict_one(self, leaf_scores):
        out = super().predict_one(leaf_scores)
        return dict(zip(out, reversed(list(out.values()))))


class _KeepsInput(PathCalibrator):
    """Bug: keeps the last leaf_scores dict, and predicts from it."""

    def learn_one(self, leaf_scores, label, w=1.0):
        super().learn_one(leaf_scores, label, w)
        self._last = leaf_scores


def test_the_checks_can_fail():
    tax = {0: None, 1: 0, 2: 0, 3: 1, 4: 1}
    with pytest.raises(AssertionError, match="not monotone"):
        C.check_outputs_are_monotone_paths(_NotMonotone(tax))
    with pytest.raises(AssertionError, match="kept a reference"):
        C.check_input_not_mutated_or_kept(_KeepsInput(tax))
