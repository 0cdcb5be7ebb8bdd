"""Datasets: generated rain-forecast sequences with known true probabilities.

:func:`rain_sequence` simulates seasonal wet/dry weather as a Markov chain and records
the true probability of rain on each day given the past; :func:`forecast` issues
forecasts of it that are calibrated, over- or under-confident, biased, drifting, or
naive (climatology, persistence); :func:`miscalibrated_rain_forecasts` is the
ready-made stream used by ``streamcal demo``; :class:`AdversarialNature` plays the same
weather against a forecaster, reacting to each forecast.

:func:`nyc_hourly_weather`, :func:`nyc_hourly_rain` and :func:`seattle_daily_weather` load
real observations shipped with the package (see :mod:`streamcal.datasets.weather` for
their sources and licences). :func:`niamey_precipitation` loads the probability-of-precipitation
forecasts at Niamey, 2016, of the CORP paper (see :mod:`streamcal.datasets.niamey`).
:func:`rain_forecast_log_path` gives the bundled rain-forecast log that ``streamcal
replay`` replays by default (see :mod:`streamcal.datasets.logs`).
:func:`covtype_predictions` loads a logistic regression's predictions on 2, 3 and 4
classes of UCI Covertype (Berta, Bach and Jordan, 2024; see :mod:`streamcal.datasets.covtype`).
"""

from streamcal.datasets.covtype import COVTYPE_N_CLASSES, covtype_predictions
from streamcal.datasets.logs import RAIN_FORECAST_LOG_COLUMNS, rain_forecast_log_path
from streamcal.datasets.niamey import NIAMEY_FORECASTS, niamey_precipitation
from streamcal.datasets.rain import (
    FORECAST_KINDS,
    AdversarialNature,
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
    "COVTYPE_N_CLASSES",
    "FORECAST_KINDS",
    "NIAMEY_FORECASTS",
    "NYC_ORIGINS",
    "RAIN_FORECAST_LOG_COLUMNS",
    "AdversarialNature",
    "RainSequence",
    "covtype_predictions",
    "forecast",
    "miscalibrated_rain_forecasts",
    "niamey_precipitation",
    "nyc_hourly_rain",
    "nyc_hourly_weather",
    "rain_forecast_log_path",
    "rain_sequence",
    "seattle_daily_weather",
]
