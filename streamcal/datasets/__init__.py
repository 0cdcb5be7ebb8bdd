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
:func:`hierarchical_stream` generates a news-topic hierarchical classification stream
with known true path probabilities, for path calibration (see
:mod:`streamcal.datasets.hierarchy`).

The names below are imported on first use (PEP 562): the path of the bundled log, say,
does not import the generators' scipy.
"""

from streamcal._lazy import lazy_attributes

# public name -> the module defining it, imported on first access
_LAZY = {
    "COVTYPE_N_CLASSES": "streamcal.datasets.covtype",
    "covtype_predictions": "streamcal.datasets.covtype",
    "NEWS_TAXONOMY": "streamcal.datasets.hierarchy",
    "HierarchicalStream": "streamcal.datasets.hierarchy",
    "hierarchical_stream": "streamcal.datasets.hierarchy",
    "RAIN_FORECAST_LOG_COLUMNS": "streamcal.datasets.logs",
    "rain_forecast_log_path": "streamcal.datasets.logs",
    "NIAMEY_FORECASTS": "streamcal.datasets.niamey",
    "niamey_precipitation": "streamcal.datasets.niamey",
    "FORECAST_KINDS": "streamcal.datasets.rain",
    "AdversarialNature": "streamcal.datasets.rain",
    "RainSequence": "streamcal.datasets.rain",
    "forecast": "streamcal.datasets.rain",
    "miscalibrated_rain_forecasts": "streamcal.datasets.rain",
    "rain_sequence": "streamcal.datasets.rain",
    "NYC_ORIGINS": "streamcal.datasets.weather",
    "nyc_hourly_rain": "streamcal.datasets.weather",
    "nyc_hourly_weather": "streamcal.datasets.weather",
    "seattle_daily_weather": "streamcal.datasets.weather",
}

__all__ = [
    "COVTYPE_N_CLASSES",
    "FORECAST_KINDS",
    "NEWS_TAXONOMY",
    "NIAMEY_FORECASTS",
    "NYC_ORIGINS",
    "RAIN_FORECAST_LOG_COLUMNS",
    "AdversarialNature",
    "HierarchicalStream",
    "RainSequence",
    "covtype_predictions",
    "forecast",
    "hierarchical_stream",
    "miscalibrated_rain_forecasts",
    "niamey_precipitation",
    "nyc_hourly_rain",
    "nyc_hourly_weather",
    "rain_forecast_log_path",
    "rain_sequence",
    "seattle_daily_weather",
]


__getattr__, __dir__ = lazy_attributes(globals(), _LAZY)
