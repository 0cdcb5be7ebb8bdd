"""Calibrators: thin river-style estimator shells over the algorithm cores in
:mod:`streamcal.core`.

The names below are imported on first use (PEP 562), so that using one calibrator
imports only its own module and cores.
"""

from streamcal._lazy import lazy_attributes

# public name -> the module defining it, imported on first access
_LAZY = {
    "EpsilonCalibratedForecaster": "streamcal.calibrators.foster",
    "HedgingCalibeater": "streamcal.calibrators.calibeating",
    "MultiCalibeater": "streamcal.calibrators.multi_calibeating",
    "TrackingCalibeater": "streamcal.calibrators.calibeating",
    "FIR": "streamcal.calibrators.fir",
    "NAFIR": "streamcal.calibrators.fir",
    "OneVsRestIsotonic": "streamcal.calibrators.fir",
    "HistogramBinning": "streamcal.calibrators.histogram",
    "PathCalibrator": "streamcal.calibrators.path",
    "IRP": "streamcal.calibrators.irp",
    "MulticlassIRP": "streamcal.calibrators.irp",
    "OnlineIsotonic": "streamcal.calibrators.isotonic",
    "VennAbers": "streamcal.calibrators.isotonic",
    "DirichletCalibration": "streamcal.calibrators.matrix_scaling",
    "MatrixScaling": "streamcal.calibrators.matrix_scaling",
    "VectorScaling": "streamcal.calibrators.matrix_scaling",
    "ClassWise": "streamcal.calibrators.multiclass",
    "TemperatureScaling": "streamcal.calibrators.multiclass",
    "TopLabel": "streamcal.calibrators.multiclass",
    "OnlineBeta": "streamcal.calibrators.scaling",
    "OnlinePlatt": "streamcal.calibrators.scaling",
    "SCIR": "streamcal.calibrators.scir",
}

__all__ = sorted(_LAZY)


__getattr__, __dir__ = lazy_attributes(globals(), _LAZY)
