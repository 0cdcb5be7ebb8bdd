"""Calibration metrics.

Streaming metrics, river-compatible (``update`` / ``revert`` / ``get``; usable in
``river.utils.Rolling`` when revertible), each saving and restoring like a calibrator
(see :mod:`streamcal.metrics.base`): :class:`Brier`, :class:`LogLoss`.

Batch functions on arrays of binary labels and predicted probabilities:
:func:`brier_score`, :func:`log_loss`, :func:`expected_calibration_error` and
:func:`calibration_refinement` (the Foster-Hart decomposition of the Brier score).
"""

from streamcal.metrics._functional import (
    BrierDecomposition,
    brier_score,
    calibration_refinement,
    expected_calibration_error,
    log_loss,
)
from streamcal.metrics._scoring import Brier, LogLoss
from streamcal.metrics.base import BinaryCalibrationMetric, StreamingMetric

__all__ = [
    "BinaryCalibrationMetric",
    "Brier",
    "BrierDecomposition",
    "LogLoss",
    "StreamingMetric",
    "brier_score",
    "calibration_refinement",
    "expected_calibration_error",
    "log_loss",
]
