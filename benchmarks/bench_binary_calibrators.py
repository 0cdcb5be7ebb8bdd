"""Per-event cost of the binary calibrators, as ratios against river's
LogisticRegression (``predict_proba_one`` + ``learn_one`` on a one-feature dict) timed in
the same run, and the batch ``predict_many`` of the logistic calibrators against numpy
evaluating the same map. Run by hand (never by CI or pytest):

    python benchmarks/bench_binary_calibrators.py             # 200,000 events, ~2 minutes
    python benchmarks/bench_binary_calibrators.py --quick     # 40,000 events
    python benchmarks/bench_binary_calibrators.py --json out.json

Each calibrator and its peer (a fresh river model for each) are fed the same stream in
alternation, ``segment`` events at a time, in rotating order, so that bursts of load on a
shared machine hit both alike; the figure is the median over segments of the ratio
calibrator time / river time on the same segment, with its min and max.

Targets (issue 11, compiled per-event paths): HistogramBinning, TrackingCalibeater,
OnlinePlatt and OnlineBeta at most 0.2x, HedgingCalibeater and
EpsilonCalibratedForecaster at most 0.5x (issue 3 had 0.5x and 1x; the quantile strategy
keeps issue 3's 0.5x). The other calibrators are listed for information. ``--cpu`` times
with the process's CPU time instead of the wall clock (for a shared, loaded machine).

Batch prediction (issue 11): ``predict_many`` of a fitted OnlinePlatt / OnlineBeta on
1,000,000 scores (``--quick``: 200,000) against numpy computing the same map (clip,
logarithms, linear predictor, ``1 / (1 + exp(-z))``) on the same array, the two timed in
alternation ``--repeats`` times; the figure is the median of the ratios, target at most
3x. ``predict_learn_many`` (one compiled prequential pass) is reported next to it, in
microseconds per event and as a ratio to the ``predict_one`` + ``learn_one`` loop.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _timing import (
    add_run_arguments,
    race_river,
    run_calibrator,
    spread,
    start_run,
    verdict,
    write_results,
)

import streamcal

# (label, class name, params, target ratio or None)
CASES = [
    ("HistogramBinning()", "HistogramBinning", {}, 0.2),
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
    ("TrackingCalibeater()", "TrackingCalibeater", {}, 0.2),
    ("OnlinePlatt()", "OnlinePlatt", {}, 0.2),
    ("OnlinePlatt(half_life=1000)", "OnlinePlatt", {"half_life": 1000.0}, 0.2),
    ("OnlineBeta('abm')", "OnlineBeta", {"parameters": "abm"}, 0.2),
    ("OnlineBeta('am')", "OnlineBeta", {"parameters": "am"}, 0.2),
    ("OnlineBeta('ab')", "OnlineBeta", {"parameters": "ab"}, 0.2),
    ("HedgingCalibeater(seed=0)", "HedgingCalibeater", {"seed": 0}, 0.5),
    (
        "EpsilonCalibratedForecaster(seed=0)",
        "EpsilonCalibratedForecaster",
        {"seed": 0},
        0.5,
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


# (label, class name, params): the maps whose predict_many is raced against numpy
BATCH_CASES = [
    ("OnlinePlatt()", "OnlinePlatt", {}),
    ("OnlineBeta('abm')", "OnlineBeta", {"parameters": "abm"}),
    ("OnlineBeta('am')", "OnlineBeta", {"parameters": "am"}),
    ("OnlineBeta('ab')", "OnlineBeta", {"parameters": "ab"}),
]
BATCH_TARGET = 3.0


def numpy_map(cal):
    """The fitted map of an OnlinePlatt / OnlineBeta as numpy code on an array (the peer
    of ``predict_many``): clip, features, linear predictor, sigmoid."""
    eps = streamcal.calibrators.scaling.EPS
    if isinstance(cal, streamcal.OnlinePlatt) or cal.parameters == "am":
        a, c = (cal.a, cal.b) if isinstance(cal, streamcal.OnlinePlatt) else (cal.a, cal.c)

        def f(s):
            s = np.clip(s, eps, 1.0 - eps)
            return 1.0 / (1.0 + np.exp(-(a * np.log(s / (1.0 - s)) + c)))

    elif cal.parameters == "abm":
        a, b, c = cal.a, cal.b, cal.c

        def f(s):
            s = np.clip(s, eps, 1.0 - eps)
            return 1.0 / (1.0 + np.exp(-(a * np.log(s) - b * np.log1p(-s) + c)))

    else:
        a, b = cal.a, cal.b

        def f(s):
            s = np.clip(s, eps, 1.0 - eps)
            return 1.0 / (1.0 + np.exp(-(a * np.log(s + s) - b * np.log(2.0 - (s + s)))))

    return f


def timed(f, *args):
    t0 = time.perf_counter()
    f(*args)
    return time.perf_counter() - t0


def batch_race(class_name, params, scores, labels, n_batch, repeats):
    """``predict_many`` against numpy (median ratio over ``repeats`` alternated runs),
    and ``predict_learn_many`` against the per-event loop on the stream."""
    cal = build(class_name, params)
    cal.learn_many(scores[:20_000], labels[:20_000])
    f = numpy_map(cal)
    grid = np.random.default_rng(1).random(n_batch)
    want = f(grid)
    got = cal.predict_many(grid)
    max_rel = float(np.max(np.abs(got - want) / np.maximum(want, 1e-300)))
    ratios, t_ours, t_np = [], [], []
    for k in range(repeats):
        pair = [(cal.predict_many, t_ours), (f, t_np)]
        for g, acc in pair if k % 2 == 0 else pair[::-1]:
            acc.append(timed(g, grid))
        ratios.append(t_ours[-1] / t_np[-1])
    s_arr, y_arr = np.asarray(scores), np.asarray(labels)
    loop_t, batch_t = [], []
    for k in range(max(3, repeats // 2)):
        a, b = build(class_name, params), build(class_name, params)
        pair = [
            (lambda c=a: run_calibrator(c, scores, labels), loop_t),
            (lambda c=b: c.predict_learn_many(s_arr, y_arr), batch_t),
        ]
        for g, acc in pair if k % 2 == 0 else pair[::-1]:
            acc.append(timed(g))
    n = len(scores)
    return {
        "predict_many_vs_numpy": spread(ratios),
        "predict_many_ms": 1e3 * statistics.median(t_ours),
        "numpy_ms": 1e3 * statistics.median(t_np),
        "max_relative_difference_to_numpy": max_rel,
        "predict_learn_many_us_per_event": 1e6 * statistics.median(batch_t) / n,
        "loop_us_per_event": 1e6 * statistics.median(loop_t) / n,
    }


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_run_arguments(
        parser,
        (("--repeats",), {"type": int, "default": 11, "help": "batch timing repeats"}),
        (("--skip-batch",), {"action": "store_true", "help": "per-event races only"}),
    )
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
    if not args.skip_batch:
        n_batch = 200_000 if args.quick else 1_000_000
        print(
            f"\n{'predict_many on ' + format(n_batch, ',') + ' scores':42s} "
            f"{'vs numpy (median [min, max])':>28s} {'ms':>7s} {'numpy':>7s}  target"
        )
        for label, class_name, params in BATCH_CASES:
            if not hasattr(streamcal, class_name):
                continue
            r = batch_race(class_name, params, scores, labels, n_batch, args.repeats)
            med = r["predict_many_vs_numpy"]["median"]
            print(
                f"{label:42s} {med:8.2f}x [{r['predict_many_vs_numpy']['min']:.2f}, "
                f"{r['predict_many_vs_numpy']['max']:.2f}]{'':9s} "
                f"{r['predict_many_ms']:7.2f} {r['numpy_ms']:7.2f}  "
                f"{verdict(med, BATCH_TARGET)}"
            )
            print(
                f"{'':4s}predict_learn_many {r['predict_learn_many_us_per_event']:.3f} us/event, "
                f"loop {r['loop_us_per_event']:.3f} us/event "
                f"(x{r['predict_learn_many_us_per_event'] / r['loop_us_per_event']:.2f}); "
                f"max relative difference to numpy {r['max_relative_difference_to_numpy']:.1e}"
            )
            results.append(
                {"calibrator": f"{label}.predict_many", "target": BATCH_TARGET,
                 "ratio": r["predict_many_vs_numpy"], **r}
            )
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
