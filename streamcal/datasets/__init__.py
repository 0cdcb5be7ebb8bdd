"""Datasets: generated rain-forecast sequences with known true probabilities.

:func:`rain_sequence` simulates seasonal wet/dry weather as a Markov chain and records
the true probability of rain on each day given the past; :func:`forecast` issues
forecasts of it that are calibrated, over- or under-confident, biased, drifting, or
naive (climatology, persistence); :func:`miscalibrated_rain_forecasts` is the
ready-made stream used by ``streamcal demo``.
"""

from streamcal.datasets.rain import (
    FORECAST_KINDS,
    RainSequence,
    forecast,
    miscalibrated_rain_forecasts,
    rain_sequence,
)

__all__ = [
    "FORECAST_KINDS",
    "RainSequence",
    "forecast",
    "miscalibrated_rain_forecasts",
    "rain_sequence",
]
