"""Per-event cost of updating streaming metrics, as ratios against river's
LogisticRegression (``predict_proba_one`` + ``learn_one`` on a one-feature dict) timed in
the same run. Run by hand (never by CI or pytest):

    python benchmarks/bench_metrics.py              # 200,000 events, ~1 minute
    python benchmarks/bench_metrics.py --quick      # 40,000 events
    python benchmarks/bench_metrics.py --json out.json
    python benchmarks/bench_metrics.py --many 1000000   # and update_many's events/s

The target (issue 4): updating five metrics together costs at most as much as the river
model, i.e. a ratio <= 1x. The five are the ones a calibration dashboard would keep on
every event: Brier, LogLoss, ECE (10 equal-width bins), Sharpness (10 bins) and
CalibrationRefinement(resolution=1e-3) (the Foster-Hart decomposition on a 1e-3 grid,
bounded memory). Each metric alone, and the other metrics (equal-mass ECE, the Murphy
decomposition, ROC AUC, Foster-Hart on raw forecasts, the windowed and decayed ECE), are
listed for information.

The metrics and the river model are fed the same stream in alternation, ``segment``
events at a time, in rotating order (benchmarks/_timing.py), so that bursts of load on a
shared machine hit both alike; the figure is the median over segments of the ratio
metrics time / river time on the same segment, with its min and max. Forecasts are
Python floats with six decimals (about 10^6 distinct values), labels Python ints, as a
calibrator's ``predict_one`` would hand them over.

With ``--many N`` (N > 0), ``update_many`` is then timed on N events given as float64
arrays (as a replay engine holds them; validation of the whole batch included), each
metric on its own fresh copy, best of three runs: events per second, nanoseconds per
event and the ratio of that per-event cost to river's per-event cost measured in the
first race of the run.
"""

from __future__ import annotations

import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _timing import (
    add_run_arguments,
    perf_counter,
    race_river,
    start_run,
    verdict,
    write_results,
)

import streamcal
from streamcal import metrics

FIVE = [
    ("Brier", {}),
    ("LogLoss", {}),
    ("ECE", {}),
    ("Sharpness", {}),
    ("CalibrationRefinement", {"resolution": 1e-3}),
]

# (label, [(class name, params), ...], target ratio or None)
CASES = [
    ("five together: " + ", ".join(name for name, _ in FIVE), FIVE, 1.0),
    *[
        (
            f"{name}({', '.join(f'{k}={v!r}' for k, v in params.items())})",
            [(name, params)],
            None,
        )
        for name, params in FIVE
    ],
    ("ECE(strategy='quantile')", [("ECE", {"strategy": "quantile"})], None),
    ("ECE(window_size=1000)", [("ECE", {"window_size": 1000})], None),
    ("ECE(half_life=1000.0)", [("ECE", {"half_life": 1000.0})], None),
    ("CalibrationRefinement()", [("CalibrationRefinement", {})], None),
    ("MurphyDecomposition()", [("MurphyDecomposition", {})], None),
    ("ROCAUC()", [("ROCAUC", {})], None),
]


def make_stream(n: int, seed: int):
    """Forecasts ~ Beta(2, 2) rounded to 6 decimals, labels ~ Bernoulli(f(p)) with f(p) =
    p^2 / (p^2 + (1-p)^2) (an under-confident forecaster)."""
    rng = np.random.default_rng(seed)
    p = np.round(rng.beta(2.0, 2.0, size=n), 6)
    q = p * p / (p * p + (1.0 - p) * (1.0 - p))
    return p.tolist(), (rng.random(n) < q).astype(int).tolist()


def run_metrics(ms: list, probs: list, labels: list) -> float:
    """Seconds taken by ``update(y, p)`` of every metric in ``ms`` on each event.

    Up to five metrics are called through locally bound methods, unrolled, so that the
    loop costs the same as a caller's would."""
    updates = [m.update for m in ms] + [None] * (5 - len(ms))
    a, b, c, d, e = updates
    t0 = perf_counter()
    if len(ms) == 1:
        for p, y in zip(probs, labels):
            a(y, p)
    elif len(ms) == 5:
        for p, y in zip(probs, labels):
            a(y, p)
            b(y, p)
            c(y, p)
            d(y, p)
            e(y, p)
    else:  # pragma: no cover - not used by CASES
        for p, y in zip(probs, labels):
            for u in updates[: len(ms)]:
                u(y, p)
    return perf_counter() - t0


def race(specs, probs, labels, segment, gc_on):
    ms = [getattr(metrics, name)(**params) for name, params in specs]
    result = race_river(run_metrics, ms, probs, labels, segment, gc_on)
    return {**result, "values": {type(m).__name__: m.get() for m in ms}}


def time_update_many(specs, n: int, seed: int = 1) -> list:
    """``[(label, seconds), ...]``: ``update_many`` on ``n`` events (best of three)."""
    probs, labels = make_stream(n, seed)
    p = np.asarray(probs, dtype=np.float64)
    y = np.asarray(labels, dtype=np.float64)
    out = []
    for label, name, params in specs:
        best = float("inf")
        for _ in range(3):
            m = getattr(metrics, name)(**params)
            t0 = perf_counter()
            m.update_many(y, p)
            best = min(best, perf_counter() - t0)
        out.append((label, best))
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    only = (
        ("--only",),
        {"default": None, "help": "time only the cases whose label contains this text"},
    )
    many = (
        ("--many",),
        {"type": int, "default": 0, "help": "also time update_many on this many events"},
    )
    add_run_arguments(parser, only, many)
    args, n, commit, (probs, labels) = start_run(
        parser, argv, streamcal.__version__, make_stream
    )
    print(
        f"{'metrics':60s} {'ratio (median [min, max])':>26s} {'us/event':>9s} {'river':>7s}  target"
    )
    results = []
    for label, specs, target in [
        c for c in CASES if args.only is None or args.only in c[0]
    ]:
        r = race(specs, probs, labels, args.segment, args.gc)
        med = r["ratio"]["median"]
        print(
            f"{label:60s} {med:8.2f}x [{r['ratio']['min']:.2f}, {r['ratio']['max']:.2f}]"
            f"{'':4s} {r['us_per_event']:9.2f} {r['river_us_per_event']:7.2f}  "
            f"{verdict(med, target)}"
        )
        results.append({"metrics": label, "target": target, **r})
    if args.many > 0:
        river_us = results[0]["river_us_per_event"] if results else float("nan")
        singles = [(label, *specs[0]) for label, specs, _ in CASES if len(specs) == 1]
        print(f"\nupdate_many on {args.many} events (float64 arrays), best of 3")
        print(f"{'metric':60s} {'events/s':>12s} {'ns/event':>9s} {'vs river':>9s}")
        for label, seconds in time_update_many(singles, args.many):
            ns = 1e9 * seconds / args.many
            print(
                f"{label:60s} {args.many / seconds:12,.0f} {ns:9.1f} {ns / (1e3 * river_us):8.3f}x"
            )
            results.append(
                {"metrics": label, "update_many_events_per_s": args.many / seconds}
            )
    if args.json:
        write_results(args.json, commit, n, args.segment, results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
