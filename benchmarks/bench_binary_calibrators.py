"""Per-event cost of the binary calibrators of issue 3, as ratios against river's
LogisticRegression (``predict_proba_one`` + ``learn_one`` on a one-feature dict) timed in
the same run. Run by hand (never by CI or pytest):

    python benchmarks/bench_binary_calibrators.py             # 200,000 events, ~2 minutes
    python benchmarks/bench_binary_calibrators.py --quick     # 40,000 events
    python benchmarks/bench_binary_calibrators.py --json out.json

Each calibrator and its peer (a fresh river model for each) are fed the same stream in
alternation, ``segment`` events at a time, in rotating order, so that bursts of load on a
shared machine hit both alike; the figure is the median over segments of the ratio
calibrator time / river time on the same segment, with its min and max.

Targets (issue 3): HistogramBinning and TrackingCalibeater at most 0.5x, OnlinePlatt and
OnlineBeta at most 1x. The other calibrators are listed for information.
"""

from __future__ import annotations

import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _timing import (
    add_run_arguments,
    race_river,
    run_calibrator,
    start_run,
    verdict,
    write_results,
)

import streamcal

# (label, class name, params, target ratio or None)
CASES = [
    ("HistogramBinning()", "HistogramBinning", {}, 0.5),
    (
        "HistogramBinning(strategy='quantile')",
        "HistogramBinning",
        {"strategy": "quantile"},
        0.5,
    ),
    (
        "HistogramBinning(window_size=1000)",
        "HistogramBinning",
        {"window_size": 1000},
        None,
    ),
    ("TrackingCalibeater()", "TrackingCalibeater", {}, 0.5),
    ("OnlinePlatt()", "OnlinePlatt", {}, 1.0),
    ("OnlineBeta('abm')", "OnlineBeta", {"parameters": "abm"}, 1.0),
    ("OnlineBeta('ab')", "OnlineBeta", {"parameters": "ab"}, 1.0),
    ("OnlineBeta('am')", "OnlineBeta", {"parameters": "am"}, 1.0),
    ("HedgingCalibeater(seed=0)", "HedgingCalibeater", {"seed": 0}, None),
    (
        "EpsilonCalibratedForecaster(seed=0)",
        "EpsilonCalibratedForecaster",
        {"seed": 0},
        None,
    ),
    (
        "TrackingCalibeater(base=OnlinePlatt())",
        "TrackingCalibeater",
        {"base": ("OnlinePlatt", {})},
        None,
    ),
    ("OnlineIsotonic(resolution=1e-3)", "OnlineIsotonic", {"resolution": 1e-3}, None),
    ("IRP(window_size=2000, refit_every=100)", "IRP", {"window_size": 2000, "refit_every": 100}, None),
    ("IRP(window_size=2000, refit_every=1000)", "IRP", {"window_size": 2000, "refit_every": 1000}, None),
]


def make_stream(n: int, seed: int):
    """Scores ~ Beta(2, 2), labels ~ Bernoulli(s^2 / (s^2 + (1-s)^2)) (under-confident)."""
    rng = np.random.default_rng(seed)
    s = rng.beta(2.0, 2.0, size=n)
    p = s * s / (s * s + (1.0 - s) * (1.0 - s))
    return s.tolist(), (rng.random(n) < p).astype(int).tolist()


def build(class_name, params):
    params = {
        k: getattr(streamcal, v[0])(**v[1]) if isinstance(v, tuple) else v
        for k, v in params.items()
    }
    return getattr(streamcal, class_name)(**params)


def race(class_name, params, scores, labels, segment, gc_on):
    cal = build(class_name, params)
    return race_river(run_calibrator, cal, scores, labels, segment, gc_on)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_run_arguments(parser)
    args, n, commit, (scores, labels) = start_run(
        parser, argv, streamcal.__version__, make_stream
    )
    print(
        f"{'calibrator':42s} {'ratio (median [min, max])':>28s} {'us/event':>9s} {'river':>7s}  target"
    )
    results = []
    for label, class_name, params, target in CASES:
        if not hasattr(streamcal, class_name) or any(
            isinstance(v, tuple) and not hasattr(streamcal, v[0])
            for v in params.values()
        ):
            print(f"{label:42s} (not available)")
            continue
        r = race(class_name, params, scores, labels, args.segment, args.gc)
        med = r["ratio"]["median"]
        print(
            f"{label:42s} {med:8.2f}x [{r['ratio']['min']:.2f}, {r['ratio']['max']:.2f}]"
            f"{'':9s} {r['us_per_event']:9.2f} {r['river_us_per_event']:7.2f}  {verdict(med, target)}"
        )
        results.append({"calibrator": label, "target": target, **r})
    if args.json:
        write_results(args.json, commit, n, args.segment, results)
    return (
        0
        if all(
            r["target"] is None or r["ratio"]["median"] <= r["target"] for r in results
        )
        else 1
    )


if __name__ == "__main__":
    sys.exit(main())
