"""Calibration metrics.

Batch functions on arrays of binary labels and predicted probabilities:
:func:`brier_score`, :func:`log_loss`, :func:`expected_calibration_error` and
:func:`calibration_refinement` (the Foster-Hart decomposition of the Brier score).
"""

from streamcal.metrics._functional import (
    brier_score,
    calibration_refinement,
    expected_calibration_error,
    log_loss,
)

__all__ = [
    "brier_score",
    "calibration_refinement",
    "expected_calibration_error",
    "log_loss",
]
