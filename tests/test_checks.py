"""Every calibrator, with each of its ``_unit_test_params()``, against every shared check
in :mod:`streamcal.checks` (the river.checks pattern)."""

import inspect

import pytest

import streamcal.calibrators
from streamcal.base import BinaryCalibrator
from streamcal.checks import yield_checks

CALIBRATORS = [
    obj
    for name in streamcal.calibrators.__all__
    if inspect.isclass(obj := getattr(streamcal.calibrators, name)) and issubclass(obj, BinaryCalibrator)
]


def _cases():
    for klass in CALIBRATORS:
        for params in klass._unit_test_params():
            cal = klass(**params)
            for check in yield_checks(cal):
                yield pytest.param(cal, check, id=f"{cal!r}-{check.__name__}")


@pytest.mark.parametrize("calibrator, check", list(_cases()))
def test_check(calibrator, check):
    check(calibrator)


def test_every_calibrator_is_exported_at_top_level():
    import streamcal

    for klass in CALIBRATORS:
        assert getattr(streamcal, klass.__name__) is klass
