"""Priors on block and bin means: how strong, centred where, and does the default command
then beat the raw model?

Question: isotonic calibration and histogram binning say 0 or 1 where a block or bin
has seen only one label (``OnlineIsotonic`` forecasts exactly 0 or 1 in 3,362 of the
8,685 hours of the bundled log, and its log loss is worse than the raw model's). A prior
on each block's or bin's mean (:mod:`streamcal.core.prior`: one pseudo-event of weight
``a`` and label ``m``) keeps forecasts off 0 and 1. Which strength ``a``, which centre
``m`` (1/2, the running base rate, the query's score), and does the default
``streamcal replay`` set then have a calibrator that beats the raw forecaster on Brier
score, log loss and ECE on every log?

Protocol:

- logs: the bundled log (``streamcal replay`` with no LOG: Newark 2013, hourly, the
  label known one hour later, revealed by its label time) and the hourly rain logs of
  Newark (EWR), JFK and LaGuardia (LGA) built as in ``real_rain.py`` (its features and
  its online river logistic regression; the label known before the next hour);
- candidates, each prequential on the logged score: ``OnlineIsotonic(prior_strength=a)``
  and ``HistogramBinning(prior_strength=a)`` (10 equal-width bins, prior centred on the
  bin's midpoint) and ``IRP(prior_strength=a)`` (its defaults: the last 2,000 events,
  refitted every 200; prior centred on 1/2, in the fit) for ``a`` in 0, 0.5, 1, 2, 4,
  8; ``VennAbers()``; and, for the
  centre of the isotonic prior, the same pseudo-event read-out
  (``IsotonicBlockStore.prior_value``) with ``m`` = the running base rate (itself
  under the prior: ``(S + a / 2) / (W + a)``) and ``m`` = the query's score;
- then the default ``streamcal replay`` calibrator set
  (``streamcal.registry.DEFAULT_CALIBRATORS``), run by ``streamcal.replay`` on each log;
- reported: Brier score, log loss (nats) and ECE (10 equal-width bins) over each
  whole log, and how many forecasts were exactly 0 or 1. Deterministic.

Run (needs the ``simulations`` extra: river)::

    python simulations/priors.py            # about a minute
    python simulations/priors.py --quick    # a smoke run: first 600 rows of each log

It writes ``priors.md`` (the tables, also printed) into ``--out`` (default
``simulations/results``).
"""

from __future__ import annotations

import bisect
import os
import sys
import time

import numpy as np
import pandas as pd

import streamcal
from streamcal import IRP, HistogramBinning, OnlineIsotonic, VennAbers, registry
from streamcal.core.pav import IsotonicBlockStore
from streamcal.datasets import rain_forecast_log_path
from streamcal.metrics import brier_score, expected_calibration_error, log_loss

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)  # the shared helpers, also when this file is loaded by path
import _common  # noqa: E402

NAME = "priors"
LOGS = ("bundled", "EWR", "JFK", "LGA")
STRENGTHS = (0, 0.5, 1, 2, 4, 8)
METRICS = ("brier", "log_loss", "ece")


def load_logs(limit: int | None):
    """name -> (scores, labels, events): ``events`` the log to replay (the bundled log's
    rows, with its ``time`` and ``label_time`` columns), or None when each label is known
    before the next event (the airport logs)."""
    real_rain = _common.sibling("real_rain")  # the airport logs are built exactly as there

    d = pd.read_csv(rain_forecast_log_path())
    if limit is not None:
        d = d.iloc[:limit]
    logs = {"bundled": (d["score"].to_numpy(float), d["label"].to_numpy(float), d)}
    for origin in LOGS[1:]:
        scores, labels = real_rain.model_scores(real_rain.nyc_events(origin, limit))
        logs[origin] = (scores, labels.astype(float), None)
    return logs


class _CentredIsotonic:
    """The isotonic read-out with the pseudo-event centred on the running base rate or
    on the query's score (the alternatives to 1/2), on the public block store."""

    def __init__(self, a: float, centre: str):
        self.a, self.centre = a, centre
        self.store, self.keys, self.W, self.S = IsotonicBlockStore(), [], 0.0, 0.0

    def learn_one(self, s, y):
        self.store.add(s, 1.0, y)
        self.W += 1.0
        self.S += y
        i = bisect.bisect_left(self.keys, s)
        if i == len(self.keys) or self.keys[i] != s:
            self.keys.insert(i, s)

    def predict_one(self, s):
        if not self.keys:
            return s
        if self.centre == "base rate":
            m = (self.S + self.a / 2) / (self.W + self.a)
        else:
            m = s
        return self.store.prior_value(s, self.a, m)


def prequential(calibrators, scores, labels, events):
    """Forecasts of every calibrator (None: the raw scores) on a log, all in one run of
    ``streamcal.replay`` (the log is read once): the bundled log with its labels revealed
    at their label time, the others with each label known before the next event."""
    if events is None:
        return _common.prequential(calibrators, scores, labels)
    kw = {"time": "time", "label_time": "label_time"}
    return _common.prequential(calibrators, events, None, **kw)


def candidates():
    c = {"raw": None}
    for a in STRENGTHS:
        c[f"isotonic a={a}"] = lambda a=a: OnlineIsotonic(prior_strength=a)
    for a in STRENGTHS[1:]:
        for centre in ("base rate", "score"):
            c[f"isotonic a={a}, m={centre}"] = lambda a=a, centre=centre: _CentredIsotonic(a, centre)
    for a in STRENGTHS:
        c[f"histogram a={a}"] = lambda a=a: HistogramBinning(prior_strength=a)
    for a in STRENGTHS:
        c[f"irp a={a}"] = lambda a=a: IRP(prior_strength=a)
    c["venn_abers"] = VennAbers
    return c


def scores_of(y, p):
    return {
        "brier": brier_score(y, p),
        "log_loss": log_loss(y, p),
        "ece": expected_calibration_error(y, p),
        "extreme": int(np.sum((p <= 0.0) | (p >= 1.0))),
    }


def main(argv=None) -> dict:
    args = _common.parse_args(argv, __doc__, "smoke run: first 600 rows")
    start = time.perf_counter()
    logs = load_logs(600 if args.quick else None)

    results = {}
    for name, (s, y, events) in logs.items():
        cals = {c: None if make is None else make() for c, make in candidates().items()}
        for cand, p in prequential(cals, s, y, events).items():
            results[name, cand] = scores_of(y, p)
    # the default command's set, through the replay engine
    default = {}
    for name, (s, y, events) in logs.items():
        if events is not None:
            kw = {"time": "time", "label_time": "label_time"}
        else:
            kw = {}
            events = pd.DataFrame({"score": s, "label": y.astype(int)})
        cals = {c: registry.make_calibrator(c) for c in registry.DEFAULT_CALIBRATORS}
        default[name] = streamcal.replay(events, cals, metrics=METRICS, **kw).summary

    lines = [
        f"# Priors on block and bin means (`simulations/{NAME}.py`)",
        "",
        ", ".join(f"{n}: {len(logs[n][0]):,} hours, rain {logs[n][1].mean():.3f}" for n in LOGS)
        + ".",
        "",
        "Brier score, log loss and ECE (10 equal-width bins) of each candidate over each whole "
        "log, and the number of forecasts of exactly 0 or 1 (`0/1`); `m` is the prior's "
        "centre (1/2 for `isotonic a=...` and `irp a=...`, the bin midpoint for `histogram a=...`); best of "
        "each column in bold:",
        "",
        "| candidate | "
        + " | ".join(f"{n} {m}" for n in LOGS for m in ("Brier", "log loss", "ECE", "0/1"))
        + " |",
        "| --- | " + " | ".join(["---:"] * (4 * len(LOGS))) + " |",
    ]
    names = list(candidates())
    best = {(n, m): min(results[n, c][m] for c in names) for n in LOGS for m in METRICS}
    for c in names:
        cells = []
        for n in LOGS:
            r = results[n, c]
            for m in METRICS:
                v = f"{r[m]:.4f}"
                cells.append(f"**{v}**" if r[m] == best[n, m] else v)
            cells.append(str(r["extreme"]))
        lines.append(f"| {c} | " + " | ".join(cells) + " |")
    lines += [
        "",
        "The default `streamcal replay` set (`"
        + " ".join(registry.DEFAULT_CALIBRATORS)
        + "`) through `streamcal.replay`; a calibrator better than `raw` on all three "
        "metrics is marked with a check:",
        "",
        "| calibrator | " + " | ".join(f"{n} {m}" for n in LOGS for m in ("Brier", "log loss", "ECE")) + " |",
        "| --- | " + " | ".join(["---:"] * (3 * len(LOGS))) + " |",
    ]
    beats_everywhere = {}
    for c in ("raw",) + tuple(registry.DEFAULT_CALIBRATORS):
        cells = []
        ok_all = c != "raw"
        for n in LOGS:
            r, raw = default[n][c], default[n]["raw"]
            ok = c != "raw" and all(r[m] < raw[m] for m in METRICS)
            ok_all = ok_all and ok
            cells += [f"{r[m]:.4f}" + (" ✓" if ok and m == "ece" else "") for m in METRICS]
        beats_everywhere[c] = ok_all
        lines.append(f"| `{c}` | " + " | ".join(cells) + " |")
    winners = [c for c, ok in beats_everywhere.items() if ok]
    lines += [
        "",
        "Better than the raw model on all three metrics on every log: "
        + (", ".join(f"`{c}`" for c in winners) if winners else "none")
        + ".",
        "",
        f"Run time {time.perf_counter() - start:.0f} s.",
    ]
    _common.write_table("\n".join(lines) + "\n", args.out, NAME)
    return {"results": results, "default": default, "winners": winners}


if __name__ == "__main__":
    main()
