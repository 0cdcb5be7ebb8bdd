"""Calibration metrics.

Streaming metrics, river-compatible (``update`` / ``revert`` / ``get``; usable in
``river.utils.Rolling`` when revertible), each saving and restoring like a calibrator
(see :mod:`streamcal.metrics.base`): :class:`Brier`, :class:`LogLoss`,
:class:`ECE`, :class:`Sharpness`, :class:`ROCAUC`, :class:`CalibrationRefinement`
(Foster-Hart), :class:`MurphyDecomposition` and :class:`CORP` (isotonic
recalibration: MCB, DSC, UNC); for multiclass
forecasts (dicts of class probabilities), :class:`MulticlassBrier`,
:class:`CrossEntropy`, :class:`ConfidenceECE`, :class:`TopLabelECE`,
:class:`ClasswiseECE` and :class:`TECE`; for path forecasts over a class taxonomy,
:class:`PathECE`.

Batch functions on arrays of binary labels and predicted probabilities:
:func:`brier_score`, :func:`log_loss`, :func:`expected_calibration_error` and
:func:`calibration_refinement` (the Foster-Hart decomposition of the Brier score);
:func:`update_many_each` adds one batch to several streaming metrics, its inputs
checked once.

Reliability analysis (:mod:`streamcal.metrics.reliability`, what
:mod:`streamcal.plot` draws): :func:`binned_reliability`, :func:`corp_reliability`,
:func:`consistency_band`, :func:`consistency_band_from_bins` and
:func:`multiclass_views`.
"""

from streamcal.metrics._binned import (
    ECE,
    MurphyDecomposition,
    ReliabilityBin,
    Sharpness,
)
from streamcal.metrics._corp import CORP
from streamcal.metrics._functional import (
    BrierDecomposition,
    brier_score,
    calibration_refinement,
    expected_calibration_error,
    log_loss,
)
from streamcal.metrics._multiclass import (
    ClasswiseECE,
    ConfidenceECE,
    MulticlassCalibrationMetric,
    TopLabelECE,
)
from streamcal.metrics._path import PathECE
from streamcal.metrics._ranking import ROCAUC
from streamcal.metrics._refinement import CalibrationRefinement
from streamcal.metrics._scoring import (
    Brier,
    CrossEntropy,
    LogLoss,
    MulticlassBrier,
)
from streamcal.metrics._tece import TECE
from streamcal.metrics.base import BinaryCalibrationMetric, StreamingMetric, update_many_each
from streamcal.metrics.reliability import (
    ConsistencyBand,
    binned_reliability,
    consistency_band,
    consistency_band_from_bins,
    corp_reliability,
    multiclass_views,
)

__all__ = [
    "CORP",
    "ECE",
    "ROCAUC",
    "TECE",
    "BinaryCalibrationMetric",
    "Brier",
    "BrierDecomposition",
    "CalibrationRefinement",
    "ClasswiseECE",
    "ConfidenceECE",
    "ConsistencyBand",
    "CrossEntropy",
    "LogLoss",
    "MulticlassBrier",
    "MulticlassCalibrationMetric",
    "MurphyDecomposition",
    "PathECE",
    "ReliabilityBin",
    "Sharpness",
    "StreamingMetric",
    "TopLabelECE",
    "binned_reliability",
    "brier_score",
    "calibration_refinement",
    "consistency_band",
    "consistency_band_from_bins",
    "corp_reliability",
    "expected_calibration_error",
    "log_loss",
    "multiclass_views",
    "update_many_each",
]
