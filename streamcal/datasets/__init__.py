"""Datasets: generated rain-forecast sequences with known true probabilities.

:func:`rain_sequence` simulates seasonal wet/dry weather as a Markov chain and records
the true probability of rain on each day given the past; :func:`forecast` issues
forecasts of it that are calibrated, over- or under-confident, biased, drifting, or
naive (climatology, persistence); :func:`miscalibrated_rain_forecasts` is the
ready-made stream used by ``streamcal demo``.

:func:`nyc_hourly_weather`, :func:`nyc_hourly_rain` and :func:`seattle_daily_weather` load
real observations shipped with the package (see :mod:`streamcal.datasets.weather` for
their sources and licences).
"""

from streamcal.datasets.rain import (
    FORECAST_KINDS,
    RainSequence,
    forecast,
    miscalibrated_rain_forecasts,
    rain_sequence,
)
from streamcal.datasets.weather import (
    NYC_ORIGINS,
    nyc_hourly_rain,
    nyc_hourly_weather,
    seattle_daily_weather,
)

__all__ = [
    "FORECAST_KINDS",
    "NYC_ORIGINS",
    "RainSequence",
    "forecast",
    "miscalibrated_rain_forecasts",
    "nyc_hourly_rain",
    "nyc_hourly_weather",
    "rain_sequence",
    "seattle_daily_weather",
]
