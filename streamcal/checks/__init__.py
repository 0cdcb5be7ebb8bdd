"""The shared check suite every calibrator runs through, in the spirit of
``river.checks``.

:func:`yield_checks` yields the checks that apply to a calibrator (each a function of
a fresh calibrator); :func:`check_calibrator` runs them all. The test-suite parametrises
every calibrator, with each of its ``_unit_test_params()``, against every check.
:func:`yield_metric_checks` and :func:`check_metric` do the same for the streaming
metrics (see :mod:`streamcal.checks.metrics`), and :func:`yield_monitor_checks` and
:func:`check_monitor` for the calibration monitors (see :mod:`streamcal.checks.monitors`),
and :func:`yield_multiclass_checks` and :func:`check_multiclass_calibrator` for the
multiclass calibrators (see :mod:`streamcal.checks.multiclass`), and
:func:`yield_keyed_checks` and :func:`check_keyed_calibrator` for
:class:`streamcal.KeyedCalibrator` (see :mod:`streamcal.checks.keyed`), and
:func:`yield_path_checks` and :func:`check_path_calibrator` for the path calibrators
(see :mod:`streamcal.checks.path`).

Examples
--------
>>> from streamcal import OnlineIsotonic
>>> from streamcal.checks import check_calibrator, yield_checks
>>> [check.__name__ for check in yield_checks(OnlineIsotonic())][:3]
['check_docstring_has_example', 'check_learn_one_returns_none', 'check_cold_start']
>>> check_calibrator(OnlineIsotonic(resolution=0.05))
"""

from __future__ import annotations

import typing

from streamcal.base import BinaryCalibrator
from streamcal.checks import calibrators as _cal
from streamcal.checks._common import has_bounded_memory
from streamcal.checks.calibrators import yield_stream
from streamcal.checks.keyed import check_keyed_calibrator, yield_keyed_checks
from streamcal.checks.metrics import check_metric, yield_metric_checks
from streamcal.checks.monitors import check_monitor, yield_monitor_checks
from streamcal.checks.multiclass import (
    check_multiclass_calibrator,
    yield_multiclass_checks,
)
from streamcal.checks.path import check_path_calibrator, yield_path_checks

__all__ = [
    "check_calibrator",
    "check_keyed_calibrator",
    "check_metric",
    "check_monitor",
    "check_multiclass_calibrator",
    "check_path_calibrator",
    "yield_checks",
    "yield_keyed_checks",
    "yield_metric_checks",
    "yield_monitor_checks",
    "yield_multiclass_checks",
    "yield_path_checks",
    "yield_stream",
]


def yield_checks(calibrator: BinaryCalibrator) -> typing.Iterator[typing.Callable]:
    """Yield the checks that apply to ``calibrator`` (a fresh instance).

    Each check is a function taking the calibrator and raising AssertionError on failure.
    """
    yield _cal.check_docstring_has_example
    yield _cal.check_learn_one_returns_none
    yield _cal.check_cold_start
    yield _cal.check_outputs_finite_in_unit_interval
    yield _cal.check_input_forms_agree
    yield _cal.check_predict_many_matches_predict_one
    yield _cal.check_learn_many_matches_learn_one
    yield _cal.check_predict_learn_many_matches_loop
    yield _cal.check_predict_reveal_many_matches_loop
    yield _cal.check_clone_is_independent
    yield _cal.check_pickle_roundtrip
    yield _cal.check_dict_roundtrip
    yield _cal.check_corrupted_snapshot_rejected
    yield _cal.check_bad_input_leaves_state_unchanged
    yield _cal.check_huge_weights
    if calibrator._monotone:
        yield _cal.check_monotone
    if has_bounded_memory(calibrator):
        yield _cal.check_bounded_memory


def check_calibrator(calibrator: BinaryCalibrator) -> None:
    """Run every applicable check on ``calibrator``; raise on the first failure."""
    for check in yield_checks(calibrator):
        check(calibrator)
