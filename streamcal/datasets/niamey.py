"""Probability-of-precipitation forecasts at Niamey, Niger, summer 2016.

``data/niamey_precip_2016.csv``, shipped unmodified, is a CSV export of the data set
``precip_Niamey_2016`` of the R package reliabilitydiag (Dimitriadis, Gneiting
and Jordan), from Vogel, Knippertz, Gneiting, Fink, Klar and Schlueter (2021),
"Statistical forecasts for the occurrence of precipitation outperform global models over
northern tropical Africa", Geophysical Research Letters 48, e2020GL091022,
doi:10.1029/2020GL091022. It contains modified historic products of the European Centre
for Medium-Range Weather Forecasts (ECMWF), licensed CC BY 4.0.

It holds 92 days, 2016-07-01 to 2016-09-30, of 24-hour-ahead forecasts of the
probability of precipitation from four methods and the observed occurrence. It is the
running example of Dimitriadis, Gneiting and Jordan (2021), "Stable reliability diagrams
for probabilistic classifiers", PNAS 118(8), e2016191118, whose CORP decomposition of the
Brier score (see :class:`streamcal.metrics.CORP`) it reproduces.
"""

from __future__ import annotations

import numpy as np

from streamcal.datasets._csv import read_columns

__all__ = ["NIAMEY_FORECASTS", "niamey_precipitation"]

#: The four forecast columns of :func:`niamey_precipitation`, in file order.
NIAMEY_FORECASTS = ("Logistic", "EMOS", "ENS", "EPC")

_FILE = "niamey_precip_2016.csv"


def niamey_precipitation() -> dict[str, np.ndarray]:
    """Daily probability-of-precipitation forecasts and outcomes at Niamey, July to
    September 2016 (92 days).

    Returns
    -------
    dict
        Column name to numpy array, one entry per day in date order, columns as in the
        file:

        - ``date`` (``datetime64[D]``), the day forecast;
        - ``Logistic``: logistic regression on statistical predictors;
        - ``EMOS``: ensemble model output statistics (post-processed ECMWF ensemble);
        - ``ENS``: the raw ECMWF ensemble (the fraction of members forecasting
          precipitation: multiples of 1/52, with many ties);
        - ``EPC``: extended probabilistic climatology;
        - ``obs`` (int64): 1 if precipitation occurred, else 0.

        The four forecasts are float64 probabilities in [0, 1].

    Examples
    --------
    >>> from streamcal.datasets import niamey_precipitation
    >>> data = niamey_precipitation()
    >>> list(data)
    ['date', 'Logistic', 'EMOS', 'ENS', 'EPC', 'obs']
    >>> len(data["obs"]), int(data["obs"].sum()), str(data["date"][0])
    (92, 53, '2016-07-01')

    """
    return read_columns(_FILE, int_columns=("obs",), time_column="date")
