"""Calibration monitors: watch a stream of forecasts and outcomes and raise an alarm when
the forecasts stop being calibrated, in the style of river's drift detectors
(``update(...)``, then read ``drift_detected``).

- :class:`CalibrationMonitor`: binary scores. By default an anytime-valid sequential
  test (a test martingale betting with an online isotonic recalibration of the scores):
  on a calibrated stream it raises a false alarm with probability at most ``alpha``,
  however long the stream. Also river's ADWIN or Page-Hinkley detectors on calibration
  residuals, a fast heuristic without that guarantee.
- :class:`MulticlassCalibrationMonitor`: dicts of class probabilities, through the
  top-label view (confidence against correctness) or the class-wise view (one binary
  monitor per class).
- :class:`KeyedCalibrationMonitor`: one monitor per key (segment), whose alarms name
  the key; the guarantee holds per key and, by a union bound, for all keys together.
- :mod:`streamcal.monitor.base`: the interface (:class:`~streamcal.monitor.base.BaseMonitor`).

Examples
--------
>>> from streamcal.monitor import CalibrationMonitor
>>> monitor = CalibrationMonitor(alpha=0.05)
>>> for t in range(100):                # a score of 0.1 for events that always happen
...     monitor.update(0.1, 1)
...     if monitor.drift_detected:
...         print(f"alarm after {t + 1} events, e-value {monitor.e_value:.1f}")
...         break
alarm after 13 events, e-value 32.8
"""

from streamcal.monitor._calibration import (
    CalibrationMonitor,
    MulticlassCalibrationMonitor,
)
from streamcal.monitor._keyed import KeyedCalibrationMonitor
from streamcal.monitor.base import BaseMonitor

__all__ = [
    "BaseMonitor",
    "CalibrationMonitor",
    "KeyedCalibrationMonitor",
    "MulticlassCalibrationMonitor",
]
