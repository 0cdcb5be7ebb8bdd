"""Calibrators: thin river-style estimator shells over the algorithm cores in
:mod:`streamcal.core`."""

from streamcal.calibrators.histogram import HistogramBinning
from streamcal.calibrators.isotonic import OnlineIsotonic

__all__ = ["HistogramBinning", "OnlineIsotonic"]
