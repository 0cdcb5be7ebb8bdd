"""Per-segment calibration: one calibrator per airport against one global calibrator.

Question: a log pools the forecasts of several segments whose miscalibration may
differ. Does one calibrator per segment (``streamcal.KeyedCalibrator``, keyed by the
segment) calibrate better than one global calibrator learnt on the whole log, or does
splitting the data cost more than it removes? Measured on the hourly rain of the three
New York airports (Newark, JFK, LaGuardia, 2013), the airport as the key.

Protocol:

- data: the events of ``real_rain.py`` (``real_rain.nyc_events(origin)``: the previous
  hour's observations as features, rain = ``precip > 0``) at EWR, JFK and LGA, pooled
  into one log in time order (hours of equal time in the order EWR, JFK, LGA), the
  airport as the key;
- the score, in two scenarios: **own model**, each airport's own river forecaster as in
  ``real_rain.py`` (``real_rain.model_scores``, learnt on that airport's hours only), so
  each segment's score has its own stochastic-gradient miscalibration; **shared
  model**, one forecaster of the same kind learnt online on the pooled log (it does not
  see the airport), the usual deployment of one model over segments, whose
  miscalibration then differs by airport only as far as the airports' weather differs;
- calibrators, prequential on the score (each event predicted from the labels before
  it, then learnt): the raw score; a global calibrator; ``KeyedCalibrator`` of the same
  calibrator keyed by airport; and the same with ``fallback=True``; for four of the
  default command's candidates: ``OnlineIsotonic(prior_strength=1)``, ``VennAbers()``,
  ``HistogramBinning()`` and ``OnlinePlatt()``. The global calibrators run through
  ``streamcal.replay`` (``_common.prequential``); the keyed ones through a plain loop
  of ``predict_one(key, score)`` then ``learn_one(key, score, label)``, since
  ``replay`` has no key column;
- reported: Brier score, log loss (nats) and ECE (10 equal-width bins, all from
  ``streamcal.metrics``) over the pooled log and per airport; per airport, the rain
  rate, the mean raw score and the raw score's ECE. Everything is deterministic.

Run (needs the ``simulations`` extra: ``pip install -e ".[simulations]"``)::

    python simulations/segments.py            # about 10 s
    python simulations/segments.py --quick    # a smoke run: first 400 hours per airport

It writes ``segments.md`` (the tables, also printed) into ``--out`` (default
``simulations/results``).
"""

from __future__ import annotations

import os
import sys
import time

import numpy as np
from river import linear_model, preprocessing

from streamcal import (
    HistogramBinning,
    KeyedCalibrator,
    OnlineIsotonic,
    OnlinePlatt,
    VennAbers,
)
from streamcal.datasets import nyc_hourly_weather
from streamcal.metrics import brier_score, expected_calibration_error, log_loss

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)  # the shared helpers, also when this file is loaded by path
import _common  # noqa: E402

real_rain = _common.sibling("real_rain")

NAME = "segments"

AIRPORTS = ("EWR", "JFK", "LGA")
CALIBRATORS = {
    "isotonic": lambda: OnlineIsotonic(prior_strength=1.0),
    "venn_abers": lambda: VennAbers(),
    "histogram": lambda: HistogramBinning(),
    "platt": lambda: OnlinePlatt(),
}
SCENARIOS = ("own model", "shared model")
METRICS = {"Brier": brier_score, "log loss": log_loss, "ECE": expected_calibration_error}


def pooled_log(limit: int | None = None):
    """The three airports' events in one log, in time order (ties in the order of
    ``AIRPORTS``): a list of ``(hour, airport, features, rain)``."""
    rows = []
    for rank, origin in enumerate(AIRPORTS):
        events = real_rain.nyc_events(origin, limit)
        hours = nyc_hourly_weather(origin)["time_hour"].astype(np.int64)[: len(events)]
        rows += [
            (int(h), rank, origin, x, y) for h, (x, y) in zip(hours.tolist(), events)
        ]
    rows.sort(key=lambda r: (r[0], r[1]))
    return [(h, origin, x, y) for h, _, origin, x, y in rows]


def scores(log, scenario: str):
    """The score of each event of ``log`` in ``scenario`` and the labels, as arrays."""
    if scenario == "shared model":
        return real_rain.model_scores([(x, y) for _, _, x, y in log])
    s = np.empty(len(log))
    for origin in AIRPORTS:
        idx = [i for i, r in enumerate(log) if r[1] == origin]
        s[idx] = real_rain.model_scores([(log[i][2], log[i][3]) for i in idx])[0]
    return s, np.array([y for _, _, _, y in log])


def keyed_forecasts(keyed: KeyedCalibrator, keys, scores, labels) -> np.ndarray:
    """Prequential forecasts of ``keyed``: each event predicted, then learnt."""
    out = np.empty(len(scores))
    for i, (k, s, y) in enumerate(zip(keys, scores.tolist(), labels.tolist())):
        out[i] = keyed.predict_one(k, s)
        keyed.learn_one(k, s, y)
    return out


def run(log, scenario: str):
    """The keys, labels and forecasts (name -> array) of every method in ``scenario``."""
    s, y = scores(log, scenario)
    keys = [origin for _, origin, _, _ in log]
    cals = {"raw": None}
    cals.update({f"{name} global": make() for name, make in CALIBRATORS.items()})
    forecasts = _common.prequential(cals, s, y)
    for name, make in CALIBRATORS.items():
        for fallback in (False, True):
            label = f"{name} keyed" + (" + fallback" if fallback else "")
            forecasts[label] = keyed_forecasts(
                KeyedCalibrator(make(), fallback=fallback), keys, s, y
            )
    return np.array(keys), y, forecasts


def main(argv=None) -> dict:
    args = _common.parse_args(argv, __doc__, "smoke run: the first 400 hours of each airport")
    limit = 400 if args.quick else None
    start = time.perf_counter()

    log = pooled_log(limit)
    segments = ("all",) + AIRPORTS
    results, differ = {}, {}
    lines = [
        f"# Per-segment calibration: one calibrator per airport against one global "
        f"calibrator (`simulations/{NAME}.py`)",
        "",
    ]
    summary = [
        "The segments and the raw score's miscalibration (its mean against the rain "
        "rate, and its ECE):",
        "",
        "| scenario | airport | hours | rain rate | mean raw score | raw ECE |",
        "| --- | --- | ---: | ---: | ---: | ---: |",
    ]
    tables = []
    for scenario in SCENARIOS:
        keys, y, forecasts = run(log, scenario)
        masks = {"all": np.ones(len(y), bool)}
        masks.update({a: keys == a for a in AIRPORTS})
        for a in AIRPORTS:
            m = masks[a]
            summary.append(
                f"| {scenario} | {a} | {int(m.sum()):,} | {y[m].mean():.4f} | "
                f"{forecasts['raw'][m].mean():.4f} | "
                f"{expected_calibration_error(y[m], forecasts['raw'][m]):.4f} |"
            )
        for name, f in forecasts.items():
            for seg in segments:
                m = masks[seg]
                for metric, fn in METRICS.items():
                    results[scenario, name, seg, metric] = fn(y[m], f[m])
        for name in CALIBRATORS:
            differ[scenario, name] = int(
                np.sum(forecasts[f"{name} keyed"] != forecasts[f"{name} keyed + fallback"])
            )
        header = "| forecast | " + " | ".join(
            f"{seg} {metric}" for metric in METRICS for seg in segments
        )
        rows = [
            f"**{scenario}** (best of each column in bold):",
            "",
            header + " |",
            "| --- | " + " | ".join(["---:"] * (len(METRICS) * len(segments))) + " |",
        ]
        best = {
            (seg, metric): min(
                results[scenario, n, seg, metric]
                for n in forecasts
                if not n.endswith("fallback")
            )
            for seg in segments
            for metric in METRICS
        }
        for name in forecasts:
            if name.endswith("fallback"):
                continue  # it changes the first forecast of a key only (below)
            cells = []
            for metric in METRICS:
                for seg in segments:
                    v = results[scenario, name, seg, metric]
                    text = f"{v:.4f}"
                    cells.append(f"**{text}**" if v == best[seg, metric] else text)
            rows.append(f"| {name} | " + " | ".join(cells) + " |")
        tables += rows + [""]

    lines += summary + [
        "",
        "Brier score, log loss and ECE (10 equal-width bins) of the prequential "
        "forecasts, over the pooled log (all) and per airport:",
        "",
    ]
    lines += tables
    lines.append(
        "`KeyedCalibrator(..., fallback=True)` (not in the tables) changes the keyed "
        f"forecast of a key's first hour only, where the shared calibrator has already "
        f"seen the other airports' hours; forecasts it changed, of {len(log):,}: "
        + "; ".join(
            f"{scenario}: "
            + ", ".join(f"{name} {differ[scenario, name]}" for name in CALIBRATORS)
            for scenario in SCENARIOS
        )
        + "."
    )
    _common.write_table("\n".join(lines) + "\n", args.out, NAME)
    print(f"wrote {NAME}.md in {args.out} ({time.perf_counter() - start:.1f} s)")
    return results


if __name__ == "__main__":
    main()
