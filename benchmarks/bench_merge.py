"""Cost of ``merge`` against the size of the state, as ratios to two peers timed in the
same run. Run by hand (never by CI or pytest):

    python benchmarks/bench_merge.py                 # sizes 1e3, 1e4, 1e5; ~2 minutes
    python benchmarks/bench_merge.py --quick         # sizes 1e3, 1e4
    python benchmarks/bench_merge.py --sizes 1000,100000 --json out.json

For each mergeable class and each size ``m``, two objects ``a`` and ``b`` each learn
``m`` events with distinct scores (six-decimal floats, so about ``m`` distinct cells per
object, ``2 m`` merged; the binned classes hold at most ``n_bins`` cells whatever
``m``). The size of a state is the count of numbers in its snapshot (column ``size``).
Then, in alternation (the order rotating, repeated ``--repeats`` times):

- ``merge``: ``a.merge(b)``;
- ``snapshot``: ``type(a).from_dict(a.to_dict())``, an O(state) round trip through the
  JSON-safe snapshot: the natural peer of an O(state) operation;
- ``relearn``: a copy of ``a`` (made outside the timing) learns ``b``'s ``m`` events
  with ``learn_one``: what a merge replaces.

Reported per class and size: the median merge time, its time per number of the merged state (flat
across sizes for an O(state) merge, growing like ``log m`` for the sorting ones), and the
median ratios merge / snapshot and merge / relearn. The exit status is 0 whatever the
figures (a measurement, not a test).
"""

from __future__ import annotations

import argparse
import copy
import itertools
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _timing import gc_paused, git_commit, spread, write_results  # noqa: E402

import streamcal  # noqa: E402
from streamcal import HistogramBinning, OnlineIsotonic, TrackingCalibeater, VennAbers  # noqa: E402
from streamcal.metrics import (  # noqa: E402
    CORP,
    ECE,
    ROCAUC,
    TECE,
    Brier,
    CalibrationRefinement,
    ClasswiseECE,
)

# (label, factory, input kind)
CASES = [
    ("OnlineIsotonic()", OnlineIsotonic, "calibrator"),
    ("OnlineIsotonic(resolution=1e-4)", lambda: OnlineIsotonic(resolution=1e-4), "calibrator"),
    ("VennAbers()", VennAbers, "calibrator"),
    ("HistogramBinning(n_bins=100)", lambda: HistogramBinning(n_bins=100), "calibrator"),
    ("TrackingCalibeater(n_bins=100)", lambda: TrackingCalibeater(n_bins=100), "calibrator"),
    ("Brier()", Brier, "metric"),
    ("ECE(strategy='quantile')", lambda: ECE(strategy="quantile"), "metric"),
    ("ROCAUC()", ROCAUC, "metric"),
    ("CalibrationRefinement()", CalibrationRefinement, "metric"),
    ("CORP()", CORP, "metric"),
    ("ClasswiseECE()", ClasswiseECE, "multiclass"),
    ("TECE()", TECE, "multiclass"),
]


def _events(kind: str, m: int, seed: int):
    rng = np.random.default_rng(seed)
    s = np.round(rng.random(m), 6)
    y = (rng.random(m) < s).astype(int)
    if kind == "multiclass":
        classes = [f"c{j}" for j in range(5)]
        p = rng.dirichlet(np.ones(5), m).round(6)
        p[:, 0] = 1.0 - p[:, 1:].sum(axis=1)
        bad = p[:, 0] < 0
        p[bad] = 0.2
        return [
            (dict(zip(classes, row)), classes[int(c)])
            for row, c in zip(p.tolist(), rng.integers(0, 5, m))
        ]
    return list(zip(s.tolist(), y.tolist()))


def _feed(obj, kind: str, events) -> None:
    if kind == "calibrator":
        for s, y in events:
            obj.learn_one(s, y)
    else:
        for x, y in events:
            obj.update(y, x)


def _size(obj) -> int:
    """The size of the state: how many numbers its snapshot holds."""

    def count(v):
        if isinstance(v, (list, tuple)):
            return sum(count(x) for x in v)
        if isinstance(v, dict):
            return sum(count(x) for x in v.values())
        return 1

    return count(obj.to_dict()["state"])


def _measure(factory, kind, m, repeats):
    a, b = factory(), factory()
    ea, eb = _events(kind, m, 1), _events(kind, m, 2)
    _feed(a, kind, ea)
    _feed(b, kind, eb)
    merged = a.merge(b)
    cells = _size(merged)
    copies = [copy.deepcopy(a) for _ in range(repeats)]
    timings = {"merge": [], "snapshot": [], "relearn": []}

    def run_merge():
        t = time.perf_counter()
        a.merge(b)
        return time.perf_counter() - t

    def run_snapshot():
        t = time.perf_counter()
        type(a).from_dict(a.to_dict())
        return time.perf_counter() - t

    def run_relearn():
        target = copies.pop()
        t = time.perf_counter()
        _feed(target, kind, eb)
        return time.perf_counter() - t

    runners = [("merge", run_merge), ("snapshot", run_snapshot), ("relearn", run_relearn)]
    with gc_paused():
        for r in range(repeats):
            order = runners[r % 3 :] + runners[: r % 3]
            for name, run in order:
                timings[name].append(run())
    ratio_snapshot = [x / y for x, y in zip(timings["merge"], timings["snapshot"])]
    ratio_relearn = [x / y for x, y in zip(timings["merge"], timings["relearn"])]
    t = statistics.median(timings["merge"])
    return {
        "m": m,
        "size": cells,
        "merge_s": spread(timings["merge"]),
        "merge_ns_per_number": 1e9 * t / cells,
        "merge_over_snapshot": spread(ratio_snapshot),
        "merge_over_relearn": spread(ratio_relearn),
    }


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="sizes 1e3 and 1e4")
    parser.add_argument("--sizes", default=None, help="comma-separated event counts per part")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--only", default=None, help="substring of the case labels to run")
    parser.add_argument("--json", default=None)
    args = parser.parse_args(argv)
    sizes = (
        [int(float(x)) for x in args.sizes.split(",")]
        if args.sizes
        else ([1_000, 10_000] if args.quick else [1_000, 10_000, 100_000])
    )
    commit = git_commit()
    print(f"streamcal {streamcal.__version__} @ {commit}; sizes {sizes}; {args.repeats} repeats")
    header = f"{'class':34} {'m':>7} {'size':>7} {'merge ms':>9} {'ns/num':>8} {'/snapshot':>10} {'/relearn':>9}"
    print(header)
    print("-" * len(header))
    results = []
    for (label, factory, kind), m in itertools.product(CASES, sizes):
        if args.only and args.only not in label:
            continue
        r = _measure(factory, kind, m, args.repeats)
        r["case"] = label
        results.append(r)
        print(
            f"{label:34} {m:>7} {r['size']:>7} {1e3 * r['merge_s']['median']:>9.3f} "
            f"{r['merge_ns_per_number']:>8.0f} {r['merge_over_snapshot']['median']:>9.2f}x "
            f"{r['merge_over_relearn']['median']:>8.3f}x",
            flush=True,
        )
    if args.json:
        write_results(args.json, commit, max(sizes), 0, results)


if __name__ == "__main__":
    main()
