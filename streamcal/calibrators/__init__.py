"""Calibrators: thin river-style estimator shells over the algorithm cores in
:mod:`streamcal.core`."""

from streamcal.calibrators.calibeating import (
    EpsilonCalibratedForecaster,
    HedgingCalibeater,
    MultiCalibeater,
    TrackingCalibeater,
)
from streamcal.calibrators.histogram import HistogramBinning
from streamcal.calibrators.isotonic import OnlineIsotonic
from streamcal.calibrators.scaling import OnlineBeta, OnlinePlatt

__all__ = [
    "EpsilonCalibratedForecaster",
    "HedgingCalibeater",
    "HistogramBinning",
    "MultiCalibeater",
    "OnlineBeta",
    "OnlineIsotonic",
    "OnlinePlatt",
    "TrackingCalibeater",
]
