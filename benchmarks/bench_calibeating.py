"""Per-event cost of the calibeaters and of Foster's forecaster, as ratios against river's
LogisticRegression (``predict_proba_one`` + ``learn_one`` on a one-feature dict) timed in
the same run, interleaved (see ``_timing.py``). Run by hand (never by CI or pytest):

    python benchmarks/bench_calibeating.py             # 200,000 events
    python benchmarks/bench_calibeating.py --quick     # 40,000 events
    python benchmarks/bench_calibeating.py --json out.json

Two ways of feeding each calibrator are timed:

- ``loop``: ``predict_one`` then ``learn_one`` on each event (Python floats and ints);
- ``batch``: ``predict_learn_many`` on each segment (the Python lists as given), which
  returns the same predictions as the loop in one compiled pass.

The multi-calibeater is fed the tuple ``(s, s ** 2)`` of two experts' forecasts.

Targets (issue 11, the loop): TrackingCalibeater() at most 0.2x; HedgingCalibeater and
EpsilonCalibratedForecaster at most 0.5x. The other rows are for information.
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
    run_calibrator,
    start_run,
    verdict,
    write_results,
)

import streamcal

# (label, factory, target of the loop or None)
CASES = [
    ("TrackingCalibeater()", lambda: streamcal.TrackingCalibeater(), 0.2),
    (
        "TrackingCalibeater(base=OnlinePlatt())",
        lambda: streamcal.TrackingCalibeater(base=streamcal.OnlinePlatt()),
        None,
    ),
    ("HedgingCalibeater(seed=0)", lambda: streamcal.HedgingCalibeater(seed=0), 0.5),
    (
        "HedgingCalibeater(base=OnlinePlatt(), seed=0)",
        lambda: streamcal.HedgingCalibeater(base=streamcal.OnlinePlatt(), seed=0),
        None,
    ),
    (
        "EpsilonCalibratedForecaster(seed=0)",
        lambda: streamcal.EpsilonCalibratedForecaster(seed=0),
        0.5,
    ),
    ("MultiCalibeater(2)", lambda: streamcal.MultiCalibeater(2), None),
    (
        "MultiCalibeater(2, method='meta')",
        lambda: streamcal.MultiCalibeater(2, method="meta"),
        None,
    ),
]


def make_stream(n: int, seed: int):
    """Scores ~ Beta(2, 2), labels ~ Bernoulli(s^2 / (s^2 + (1-s)^2)) (under-confident),
    as in ``bench_binary_calibrators.py``."""
    rng = np.random.default_rng(seed)
    s = rng.beta(2.0, 2.0, size=n)
    p = s * s / (s * s + (1.0 - s) * (1.0 - s))
    return s.tolist(), (rng.random(n) < p).astype(int).tolist()


def run_batch(cal, scores: list, labels: list) -> float:
    """Seconds taken by ``predict_learn_many`` on the segment (lists as given)."""
    t0 = perf_counter()
    cal.predict_learn_many(scores, labels)
    return perf_counter() - t0


def _tuples(run):
    """``run`` fed the experts' tuples ``(s, s ** 2)`` instead of the scores (the tuples
    are built outside the timed region)."""

    def wrapped(cal, scores, labels):
        return run(cal, [(s, s * s) for s in scores], labels)

    return wrapped


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_run_arguments(parser)
    args, n, commit, (scores, labels) = start_run(
        parser, argv, streamcal.__version__, make_stream
    )
    print(
        f"{'calibrator':46s} {'mode':5s} {'ratio (median [min, max])':>26s} "
        f"{'us/event':>9s} {'river':>7s}  target"
    )
    results = []
    for label, factory, target in CASES:
        for mode, run in (("loop", run_calibrator), ("batch", run_batch)):
            if label.startswith("MultiCalibeater"):
                run = _tuples(run)
            r = race_river(run, factory(), scores, labels, args.segment, args.gc)
            med = r["ratio"]["median"]
            goal = target if mode == "loop" else None
            print(
                f"{label:46s} {mode:5s} {med:8.3f}x [{r['ratio']['min']:.3f}, "
                f"{r['ratio']['max']:.3f}]   {r['us_per_event']:9.3f} "
                f"{r['river_us_per_event']:7.2f}  {verdict(med, goal)}"
            )
            results.append({"calibrator": label, "mode": mode, "target": goal, **r})
    if args.json:
        write_results(args.json, commit, n, args.segment, results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
