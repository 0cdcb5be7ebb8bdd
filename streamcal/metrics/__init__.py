"""Calibration metrics.

Batch functions on arrays of binary labels and predicted probabilities:
:func:`brier_score`, :func:`log_loss` and :func:`expected_calibration_error`.
"""

from streamcal.metrics._functional import brier_score, expected_calibration_error, log_loss

__all__ = ["brier_score", "expected_calibration_error", "log_loss"]
