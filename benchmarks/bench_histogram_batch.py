"""Batch paths of :class:`streamcal.HistogramBinning` (issue 11), as ratios against numpy
timed in the same run. Run by hand (never by CI or pytest):

    python benchmarks/bench_histogram_batch.py            # 1,000,000 events, ~1 minute
    python benchmarks/bench_histogram_batch.py --quick    # 200,000 events
    python benchmarks/bench_histogram_batch.py --json out.json

For each configuration, on the same stream (scores U(0, 1), Bernoulli labels, unit
weights):

- ``learn_many``: a fresh calibrator learns the whole stream in one call; the peer is
  ``np.bincount`` on the same bins (the bin index of every event, computed once outside
  the timed region, as the calibrator's edges place them), counting events and summing
  labels: the two sums a histogram needs. Target (issue 11): at most 3x, default
  calibrator.
- ``predict_learn_many``: the prequential pass (predict then learn each event), in
  events per second, and as a ratio against the same ``np.bincount`` peer.

The two are timed in alternation, ``--repeats`` times, and every figure is the median
of the paired ratios with its min and max (the machines are shared and noisy).
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _timing import gc_paused, git_commit, spread, write_results  # noqa: E402

import streamcal  # noqa: E402
from streamcal import HistogramBinning  # noqa: E402

perf_counter = time.perf_counter

# (label, params, target ratio of learn_many to np.bincount, or None)
CASES = [
    ("HistogramBinning()", {}, 3.0),
    ("HistogramBinning(n_bins=100)", {"n_bins": 100}, None),
    ("HistogramBinning(strategy='quantile')", {"strategy": "quantile"}, None),
    ("HistogramBinning(window_size=1000)", {"window_size": 1000}, None),
    ("HistogramBinning(prior_strength=2.0)", {"prior_strength": 2.0}, None),
]


def make_stream(n: int, seed: int):
    rng = np.random.default_rng(seed)
    s = rng.random(n)
    y = (rng.random(n) < s * s).astype(np.float64)
    return s, y


def time_call(f) -> float:
    t0 = perf_counter()
    f()
    return perf_counter() - t0


def bincount_peer(k: np.ndarray, y: np.ndarray, n_bins: int):
    """Events and label sums per bin, the histogram's two sums, in numpy."""

    def run():
        np.bincount(k, minlength=n_bins)
        np.bincount(k, weights=y, minlength=n_bins)

    return run


def bench_case(params, s, y, repeats: int) -> dict:
    probe = HistogramBinning(**params)
    probe.learn_many(s, y)
    # the bins of the final edges (uniform: the only edges; quantile: the last epoch's)
    k = np.searchsorted(np.asarray(probe.edges[1:-1]), s, side="right")
    peer = bincount_peer(k, y, probe.n_bins)
    ratios_lm, ratios_plm, t_lm, t_plm, t_np = [], [], [], [], []
    with gc_paused():
        for r in range(repeats):
            order = [0, 1, 2] if r % 2 == 0 else [2, 1, 0]
            times = {}
            for j in order:
                if j == 0:
                    cal = HistogramBinning(**params)
                    times[0] = time_call(lambda: cal.learn_many(s, y))
                elif j == 1:
                    cal2 = HistogramBinning(**params)
                    times[1] = time_call(lambda: cal2.predict_learn_many(s, y))
                else:
                    times[2] = time_call(peer)
            t_lm.append(times[0])
            t_plm.append(times[1])
            t_np.append(times[2])
            ratios_lm.append(times[0] / times[2])
            ratios_plm.append(times[1] / times[2])
    n = len(s)
    return {
        "learn_many_vs_bincount": spread(ratios_lm),
        "predict_learn_many_vs_bincount": spread(ratios_plm),
        "learn_many_ns_per_event": 1e9 * min(t_lm) / n,
        "predict_learn_many_events_per_s": n / min(t_plm),
        "bincount_ns_per_event": 1e9 * min(t_np) / n,
    }


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="200,000 events, 3 repeats")
    parser.add_argument("--n", type=int, default=None)
    parser.add_argument("--repeats", type=int, default=None)
    parser.add_argument("--json", default=None)
    args = parser.parse_args(argv)
    n = args.n or (200_000 if args.quick else 1_000_000)
    repeats = args.repeats or (3 if args.quick else 7)
    s, y = make_stream(n, seed=0)
    commit = git_commit()
    print(
        f"streamcal {streamcal.__version__} at {commit or '?'}: HistogramBinning batch "
        f"paths on {n:,} events, {repeats} paired repeats (median [min, max])"
    )
    results = []
    for label, params, target in CASES:
        r = bench_case(params, s, y, repeats)
        lm, plm = r["learn_many_vs_bincount"], r["predict_learn_many_vs_bincount"]
        verdict = "" if target is None else (
            f"  <= {target}x " + ("PASS" if lm["median"] <= target else "FAIL")
        )
        print(
            f"{label:40s} learn_many {lm['median']:5.2f}x bincount "
            f"[{lm['min']:.2f}, {lm['max']:.2f}] ({r['learn_many_ns_per_event']:.1f} ns/event)"
            f"{verdict}\n{'':40s} predict_learn_many "
            f"{r['predict_learn_many_events_per_s'] / 1e6:6.1f} M events/s, "
            f"{plm['median']:5.2f}x bincount [{plm['min']:.2f}, {plm['max']:.2f}]; "
            f"bincount {r['bincount_ns_per_event']:.1f} ns/event"
        )
        results.append({"case": label, "target": target, **r})
    if args.json:
        write_results(args.json, commit, n, repeats, results)


if __name__ == "__main__":
    main()
