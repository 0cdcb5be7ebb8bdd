"""streamcal: streaming calibration of classifier and forecaster scores.

A calibrator learns from one ``(score, label)`` pair at a time, river-style
(``learn_one`` / ``predict_one``), and turns new scores into calibrated probabilities.

Subpackages
-----------
- :mod:`streamcal.base`: the calibrator interfaces.
- :mod:`streamcal.calibrators`: the calibrators (also re-exported here).
- :mod:`streamcal.core`: pure algorithm cores (PAV block store, bins, online Newton
  steps, Foster's game, ...).
- :mod:`streamcal.checks`: the shared check suite every calibrator runs through.
- :mod:`streamcal.datasets`: generated rain-forecast sequences.
- :mod:`streamcal.metrics`: streaming calibration metrics and batch functions.
- :mod:`streamcal.monitor`: calibration drift monitors.
- :mod:`streamcal.plot`: reliability diagrams (matplotlib, optional).
"""

from streamcal.base import BinaryCalibrator
from streamcal.calibrators import (
    FIR,
    IRP,
    NAFIR,
    SCIR,
    ClassWise,
    EpsilonCalibratedForecaster,
    HedgingCalibeater,
    HistogramBinning,
    MultiCalibeater,
    MulticlassIRP,
    OneVsRestIsotonic,
    OnlineBeta,
    OnlineIsotonic,
    OnlinePlatt,
    TemperatureScaling,
    TopLabel,
    TrackingCalibeater,
)
from streamcal.replay import ReplayError, ReplayResult, replay

__version__ = "0.1.0"

__all__ = [
    "FIR",
    "IRP",
    "NAFIR",
    "SCIR",
    "BinaryCalibrator",
    "ClassWise",
    "EpsilonCalibratedForecaster",
    "HedgingCalibeater",
    "HistogramBinning",
    "MultiCalibeater",
    "MulticlassIRP",
    "OneVsRestIsotonic",
    "OnlineBeta",
    "OnlineIsotonic",
    "OnlinePlatt",
    "ReplayError",
    "ReplayResult",
    "TemperatureScaling",
    "TopLabel",
    "TrackingCalibeater",
    "__version__",
    "replay",
]
