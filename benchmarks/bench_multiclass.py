"""Multiclass calibrators refitted on a sliding window (issue 6): batch fit time against
the window size and the number of classes, and the amortised per-event cost of each
windowed calibrator, as ratios against river's LogisticRegression timed in the same run.
Run by hand (never by CI or pytest):

    python benchmarks/bench_multiclass.py             # full sizes, a few minutes
    python benchmarks/bench_multiclass.py --quick     # smaller sizes
    python benchmarks/bench_multiclass.py --only fit  # one part: fit or stream
    python benchmarks/bench_multiclass.py --json out.json

**Fit time** (part ``fit``). Each batch algorithm of ``FITS`` (a name and a function
``fit(P, labels, w)`` on arrays) is timed on windows of ``n`` events over ``K`` classes
(the median of ``--repeats`` runs): against ``n`` at ``K = 5`` and against ``K`` at
``n = 2000``. The peer, timed in alternation with it on the same window, is scikit-learn's
one-dimensional ``IsotonicRegression`` on the ``n (K - 1)`` flattened points
``(cumulative top-r probability, outcome)`` (the same points without the rank order).
Target (issue 6): SCIR fits 12,500 events with ``K = 5`` in at most 1 s.

**Amortised per-event cost** (part ``stream``). Each calibrator of ``WINDOWED`` (a name
and a factory ``make(refit_every)``, window of 2,000 events) does ``predict_one`` then
``learn_one`` on every event of a stream over 5 classes, refits included, at
``refit_every`` = 100 and 1,000. Its peer, a fresh river ``LogisticRegression`` per
race, does ``predict_proba_one`` then ``learn_one`` on the one-feature dict of the top
probability (label: the top class is right). They go through the stream in
alternation, ``--segment`` events at a time, in rotating order
(:func:`_timing.interleaved`); the figure is the median over segments of the ratio of
their times.

The stream: true class probabilities ``q ~ Dirichlet(0.8)`` over ``K`` classes, the
label drawn from ``q``, the forecast ``q ** 2.5`` renormalised (over-confident).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _timing import (
    add_run_arguments,
    gc_paused,
    interleaved,
    perf_counter,
    spread,
    start_run,
    write_results,
)

import streamcal
from streamcal.core.fir import fit_fir, fit_nafir, fit_ovr
from streamcal.core.scir import fit_scir, sorted_cumulative_points

#: batch fits timed in part "fit": (name, fit(P, labels, w)), P an (n, K) array
FITS = [
    ("SCIR", fit_scir),
    ("NAFIR", fit_nafir),
    ("FIR", fit_fir),
    ("OvR-isotonic", fit_ovr),
]

#: windowed calibrators raced in part "stream": (name, make(refit_every))
WINDOWED = [
    ("SCIR", lambda every: streamcal.SCIR(window_size=2000, refit_every=every)),
    ("NAFIR", lambda every: streamcal.NAFIR(window_size=2000, refit_every=every)),
    ("FIR", lambda every: streamcal.FIR(window_size=2000, refit_every=every)),
    (
        "OneVsRestIsotonic",
        lambda every: streamcal.OneVsRestIsotonic(window_size=2000, refit_every=every),
    ),
    ("MulticlassIRP", lambda every: streamcal.MulticlassIRP(window_size=2000, refit_every=every)),
    ("TemperatureScaling", lambda every: streamcal.TemperatureScaling(window_size=2000, refit_every=every)),
]

#: fit-time targets in seconds: (name, n, K) -> target
FIT_TARGETS = {("SCIR", 12_500, 5): 1.0}

REFIT_EVERY = (100, 1000)


def make_arrays(n: int, K: int, seed: int = 0):
    """``(P, labels)``: over-confident forecasts and labels drawn from the truth."""
    rng = np.random.default_rng(seed)
    truth = rng.dirichlet(np.full(K, 0.8), size=n)
    u = rng.random((n, 1))
    labels = np.minimum((u > np.cumsum(truth, axis=1)).sum(axis=1), K - 1)
    P = truth**2.5
    P /= P.sum(axis=1, keepdims=True)
    return P, labels


def make_stream(n: int, seed: int = 0, K: int = 5):
    """The events of part "stream", prepared for both runners: ``(items, labels)``
    with ``items[i] = (scores dict, top probability)`` and ``labels[i] = (label, top
    class is right)``."""
    P, labels = make_arrays(n, K, seed)
    names = [f"c{k}" for k in range(K)]
    items = []
    targets = []
    for row, y in zip(P.tolist(), labels.tolist()):
        top = max(range(K), key=row.__getitem__)
        items.append((dict(zip(names, row)), row[top]))
        targets.append((names[y], int(top == y)))
    return items, targets


# ------------------------------------------------------------------------ part "fit"


def _peer_fit(P, labels, w):
    from sklearn.isotonic import IsotonicRegression

    q, y, ww = sorted_cumulative_points(P, labels, w)
    IsotonicRegression(out_of_bounds="clip").fit(
        q.ravel(), y.ravel(), sample_weight=ww.ravel()
    )


def _fit_verdict(seconds: float, target: float | None) -> str:
    if target is None:
        return ""
    return f"<= {target} s " + ("PASS" if seconds <= target else "FAIL")


def time_fit(fit, n: int, K: int, repeats: int) -> dict:
    """Median seconds of ``fit`` and of the peer on the same window, alternating."""
    P, labels = make_arrays(n, K, seed=n + K)
    w = np.ones(n)
    ours, peer = [], []
    with gc_paused():
        for i in range(repeats):
            for which in (0, 1) if i % 2 == 0 else (1, 0):
                t0 = perf_counter()
                (fit if which == 0 else _peer_fit)(P, labels, w)
                (ours if which == 0 else peer).append(perf_counter() - t0)
    return {
        "seconds": spread(ours),
        "peer_seconds": spread(peer),
        "ratio": statistics.median(a / b for a, b in zip(ours, peer)),
    }


def part_fit(args) -> list:
    sizes = [500, 2000, 5000] if args.quick else [500, 2000, 5000, 12_500, 25_000]
    sizes = sorted(set(sizes) | {12_500})
    classes = [2, 3, 5, 10] if args.quick else [2, 3, 5, 10, 20, 50]
    grid = [(n, 5) for n in sizes] + [(2000, K) for K in classes if K != 5]
    print(
        "\nFit time of the batch algorithms (median of repeats; peer: sklearn 1-d isotonic)"
    )
    print(
        f"{'algorithm':10s} {'n':>7s} {'K':>4s} {'seconds':>9s} {'peer s':>9s} {'ratio':>8s}  target"
    )
    results = []
    for name, fit in FITS:
        for n, K in grid:
            r = time_fit(fit, n, K, args.repeats)
            target = FIT_TARGETS.get((name, n, K))
            sec = r["seconds"]["median"]
            print(
                f"{name:10s} {n:7d} {K:4d} {sec:9.4f} {r['peer_seconds']['median']:9.4f} "
                f"{r['ratio']:7.1f}x  {_fit_verdict(sec, target)}"
            )
            results.append(
                {
                    "part": "fit",
                    "algorithm": name,
                    "n": n,
                    "K": K,
                    "target_s": target,
                    **r,
                }
            )
    return results


# --------------------------------------------------------------------- part "stream"


def run_calibrator(cal, items: list, targets: list) -> float:
    """Seconds of ``predict_one`` then ``learn_one`` on each event."""
    predict = cal.predict_one
    learn = cal.learn_one
    t0 = perf_counter()
    for (s, _), (y, _) in zip(items, targets):
        predict(s)
        learn(s, y)
    return perf_counter() - t0


def run_river(model, items: list, targets: list) -> float:
    """Seconds of river's ``predict_proba_one`` then ``learn_one`` on the one-feature
    dict of the top probability (building the dict is timed)."""
    predict = model.predict_proba_one
    learn = model.learn_one
    t0 = perf_counter()
    for (_, top), (_, hit) in zip(items, targets):
        x = {"s": top}
        predict(x)
        learn(x, hit)
    return perf_counter() - t0


def part_stream(args, items, targets) -> list:
    from river import linear_model

    print(
        f"\nAmortised per-event cost (predict_one + learn_one, refits included), {len(items)} events, K = 5"
    )
    print(
        f"{'calibrator':28s} {'ratio (median [min, max])':>28s} {'us/event':>9s} {'river':>7s}"
    )
    results = []
    for name, make in WINDOWED:
        for every in REFIT_EVERY:
            runs = [
                (run_calibrator, make(every)),
                (run_river, linear_model.LogisticRegression()),
            ]
            with gc_paused(not args.gc):
                _, (t_cal, t_lr) = interleaved(runs, items, targets, args.segment)
            ratio = spread(a / b for a, b in zip(t_cal, t_lr))
            us = 1e6 * sum(t_cal) / len(items)
            us_lr = 1e6 * sum(t_lr) / len(items)
            label = f"{name}(refit_every={every})"
            print(
                f"{label:28s} {ratio['median']:8.2f}x [{ratio['min']:.2f}, {ratio['max']:.2f}]{'':9s} {us:9.2f} {us_lr:7.2f}"
            )
            results.append(
                {
                    "part": "stream",
                    "calibrator": name,
                    "refit_every": every,
                    "ratio": ratio,
                    "us_per_event": us,
                    "river_us_per_event": us_lr,
                }
            )
    return results


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_run_arguments(
        parser,
        (
            ("--repeats",),
            {"type": int, "default": None, "help": "fit timings per size (5; quick 3)"},
        ),
        (("--only",), {"default": "fit,stream", "help": "parts to run: fit, stream"}),
    )
    argv = sys.argv[1:] if argv is None else argv
    # the stream is made by start_run: 100,000 events (quick 20,000) unless --n
    if "--n" not in argv:
        argv = [*argv, "--n", "20000" if "--quick" in argv else "100000"]
    args, n, commit, (items, targets) = start_run(
        parser, argv, streamcal.__version__, make_stream
    )
    args.repeats = args.repeats or (3 if args.quick else 5)
    parts = set(args.only.split(","))
    results = []
    if "fit" in parts:
        results += part_fit(args)
    if "stream" in parts:
        results += part_stream(args, items, targets)
    if args.json:
        write_results(args.json, commit, n, args.segment, results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
