"""Calibrators: thin river-style estimator shells over the algorithm cores in
:mod:`streamcal.core`."""

from streamcal.calibrators.calibeating import (
    EpsilonCalibratedForecaster,
    HedgingCalibeater,
    MultiCalibeater,
    TrackingCalibeater,
)
from streamcal.calibrators.fir import FIR, NAFIR, OneVsRestIsotonic
from streamcal.calibrators.histogram import HistogramBinning
from streamcal.calibrators.irp import IRP, MulticlassIRP
from streamcal.calibrators.isotonic import OnlineIsotonic
from streamcal.calibrators.multiclass import ClassWise, TemperatureScaling, TopLabel
from streamcal.calibrators.scaling import OnlineBeta, OnlinePlatt
from streamcal.calibrators.scir import SCIR

__all__ = [
    "FIR",
    "IRP",
    "NAFIR",
    "SCIR",
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
    "TemperatureScaling",
    "TopLabel",
    "TrackingCalibeater",
]
