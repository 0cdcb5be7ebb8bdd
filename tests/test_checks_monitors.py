"""Every calibration monitor, with each of its ``_unit_test_params()``, against every
shared check in :mod:`streamcal.checks.monitors`; and the checks must be able to fail:
each broken monitor below has one deliberate bug that the matching check catches."""

import pytest

import streamcal.monitor
from streamcal.checks import monitors as C
from streamcal.checks._common import concrete_classes, yield_cases
from streamcal.monitor import (
    CalibrationMonitor,
    KeyedCalibrationMonitor,
    MulticlassCalibrationMonitor,
)
from streamcal.monitor.base import BaseMonitor

# the keyed monitor takes (key, forecast, label): its checks are in test_monitor_keyed.py
MONITORS = concrete_classes(streamcal.monitor, BaseMonitor, exclude=(KeyedCalibrationMonitor,))


@pytest.mark.parametrize(
    "monitor, check",
    [
        pytest.param(*case[1:], id=case[0])
        for case in yield_cases(MONITORS, C.yield_monitor_checks)
    ],
)
def test_check(monitor, check):
    check(monitor)


def test_every_monitor_is_checked():
    assert {k.__name__ for k in MONITORS} == {
        "CalibrationMonitor",
        "MulticlassCalibrationMonitor",
    }


# ---------------------------------------------------------------------- broken monitors


class _RestartsBeforeValidating:
    """Resets (the pending restart) before validating the input."""

    def update(self, forecast, label):
        if self._drift_detected:
            self._restart()
        super().update(forecast, label)


class ValidatesLate(_RestartsBeforeValidating, CalibrationMonitor):
    pass


class CountsBadEvents(CalibrationMonitor):
    """Counts the event before validating it: a bad event stays counted."""

    def update(self, score, label):
        self._n_events += 1
        super().update(score, label)
        self._n_events -= 1


class NeverResets(CalibrationMonitor):
    def _restart(self):
        self._drift_detected = False
        if not hasattr(self, "_recal"):
            super()._restart()


class FlagStays(CalibrationMonitor):
    """Forgets to lower the flag after the event that follows an alarm."""

    def _restart(self):
        flag = getattr(self, "_drift_detected", False)
        super()._restart()
        self._drift_detected = flag and self._n_events % 2 == 0


class ForgetsWealth(CalibrationMonitor):
    def _get_state(self):
        state = super()._get_state()
        if "log_wealth" in state:
            state["log_wealth"] = [0.0] * len(state["log_wealth"])
        return state


class ForgetsCounters(CalibrationMonitor):
    def _set_state(self, state):
        super()._set_state(state)
        self._n_alarms = 0


class SharedRecalibrator(CalibrationMonitor):
    """Clones share the recalibrator (a mutable default in disguise)."""

    _shared = None

    def _new_recalibrator(self):
        if SharedRecalibrator._shared is None:
            SharedRecalibrator._shared = super()._new_recalibrator()
        return SharedRecalibrator._shared


class AlarmsEarly(CalibrationMonitor):
    """Alarms at half the threshold."""

    def _reset(self):
        super()._reset()
        self._log_threshold -= 0.7


class AcceptsAnyState(CalibrationMonitor):
    @classmethod
    def from_dict(cls, d):
        try:
            return super().from_dict(d)
        except Exception:  # noqa: BLE001 - the deliberate bug
            return cls()


class GrowingMemory(CalibrationMonitor):
    def _advance(self, p, y):
        self.__dict__.setdefault("_log", []).append(p)
        return super()._advance(p, y)


class TopLabelValidatesLate(_RestartsBeforeValidating, MulticlassCalibrationMonitor):
    pass


BROKEN = [
    (ValidatesLate(), C.check_bad_input_leaves_state_unchanged),
    (CountsBadEvents(), C.check_bad_input_leaves_state_unchanged),
    (NeverResets(), C.check_alarm_semantics),
    (FlagStays(), C.check_alarm_semantics),
    (ForgetsWealth(), C.check_dict_roundtrip),
    (ForgetsCounters(), C.check_dict_roundtrip),
    (SharedRecalibrator(), C.check_clone_is_independent),
    (AlarmsEarly(), C.check_alarm_semantics),
    (AcceptsAnyState(), C.check_malformed_snapshot_rejected),
    (GrowingMemory(), C.check_bounded_memory),
    (TopLabelValidatesLate(), C.check_bad_input_leaves_state_unchanged),
]


@pytest.mark.parametrize(
    "broken, check", BROKEN, ids=[type(b).__name__ for b, _ in BROKEN]
)
def test_checks_catch_bugs(broken, check):
    with pytest.raises(AssertionError):
        check(broken)
