"""OnlineIsotonic on adversarial streams, its prequential batch and its memory (issue 11).

Run by hand from the repository root (not a test)::

    python benchmarks/bench_isotonic_streams.py            # 1e6 events per stream, ~10 min
    python benchmarks/bench_isotonic_streams.py --quick    # 1e5 events, ~1 min

Every per-event figure is a ratio of time to river's LogisticRegression
(``predict_proba_one`` + ``learn_one`` on a one-feature dict) over the same events,
interleaved segment by segment (benchmarks/_timing.py), so it survives a noisy machine.
Streams:

- ``random``: Beta(2, 2) scores (distinct floats), labels Bernoulli(sigmoid(2 logit s));
- ``ascending``: scores i/n in order, labels 0, 1, 0, 1, ... (one block holds everything);
- ``descending``: the same, scores decreasing;
- ``all-zero``: random scores, every label 0;
- ``independent``: random scores, labels Bernoulli(0.5) whatever the score;
- ``rare``: random scores, 1% positives.

Then the modes (``resolution=1e-4``, ``half_life=1000``, ``window_size=10_000``) on the
random stream, ``predict_learn_many`` in events per second (CPU time of one call on the
whole stream), and the memory per distinct score (tracemalloc, and the pickled state).

``--only grid`` runs the grid section alone: ``resolution=1e-4`` (the grid store of
``streamcal/core/_grid_pav.pyx``) on every stream, per event against river LR and
relative to the random stream, ``predict_learn_many`` on every stream, and the process
memory of the calibrator after the stream (tracemalloc)::

    python benchmarks/bench_isotonic_streams.py --only grid --n 1000000
"""

from __future__ import annotations

import argparse
import pickle
import sys
import time
import tracemalloc
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _timing import race_river, run_calibrator, spread  # noqa: E402

from streamcal import OnlineIsotonic  # noqa: E402


def streams(n: int, seed: int = 0) -> dict:
    rng = np.random.default_rng(seed)
    s = rng.beta(2.0, 2.0, n)
    f = s**2 / (s**2 + (1 - s) ** 2)
    alternating = np.arange(n) % 2
    ramp = (np.arange(n) + 0.5) / n
    return {
        "random": (s, (rng.random(n) < f).astype(int)),
        "ascending": (ramp, alternating),
        "descending": (ramp[::-1].copy(), alternating),
        "all-zero": (s, np.zeros(n, dtype=int)),
        "independent": (s, (rng.random(n) < 0.5).astype(int)),
        "rare": (s, (rng.random(n) < 0.01).astype(int)),
    }


def per_event(params, s, y, segment, gc_on):
    r = race_river(run_calibrator, OnlineIsotonic(**params), s.tolist(), y.tolist(), segment, gc_on)
    return r["ratio"]["median"], r["us_per_event"], r["river_us_per_event"]


def batch_rate(params, s, y, repeats):
    rates = []
    for _ in range(repeats):
        cal = OnlineIsotonic(**params)
        t0 = time.process_time()
        cal.predict_learn_many(s, y)
        rates.append(len(s) / max(time.process_time() - t0, 1e-9))
    return spread(rates)["median"]


def memory_per_score(n: int, seed: int = 1):
    rng = np.random.default_rng(seed)
    s = rng.random(n).tolist()
    y = (rng.random(n) < 0.5).astype(int).tolist()
    tracemalloc.start()
    cal = OnlineIsotonic()
    for a, b in zip(s, y):
        cal.learn_one(a, b)
    current, _ = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return current / n, len(pickle.dumps(cal)) / n


def grid_section(data, row, args):
    """``resolution=1e-4`` on every stream (issue 11's grid targets)."""
    params = {"resolution": 1e-4}
    base = None
    for name, (s, y) in data.items():
        ratio, us, us_lr = per_event(params, s, y, args.segment, args.gc)
        base = ratio if name == "random" else base
        goal = "<= 0.3x river LR" if name == "random" else f"<= 2x random ({ratio / base:.2f}x)"
        row(f"resolution=1e-4, {name} stream ({us:.2f} us/event, LR {us_lr:.2f})", f"{ratio:.3f}x", goal)
    rates = {}
    for name, (s, y) in data.items():
        rates[name] = batch_rate(params, s, y, args.repeats)
    for name, rate in rates.items():
        row(f"predict_learn_many resolution=1e-4, {name}", f"{rate:,.0f}/s",
            ">= 5,000,000/s" if name == "random" else f"cost <= 2x random ({rates['random'] / rate:.2f}x)")
    s, y = data["random"]

    def build():
        cal = OnlineIsotonic(**params)
        cal.learn_many(s[:16], y[:16])
        for a, b in zip(s[16:].tolist(), y[16:].tolist()):
            cal.learn_one(a, b)
        return cal

    tracemalloc.start()
    cal = build()
    current, _ = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    row("resolution=1e-4: process memory of the calibrator (tracemalloc)", f"{current / 1e3:.0f} kB",
        f"{cal._store.n_cells} cells")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="1e5 events per stream")
    p.add_argument("--n", type=int, help="events per stream (default 1e6; quick 1e5)")
    p.add_argument("--segment", type=int, default=2000, help="events per interleaved segment")
    p.add_argument("--repeats", type=int, default=3, help="repeats of the batch timings")
    p.add_argument("--gc", action="store_true", help="keep the garbage collector on while timing")
    p.add_argument("--only", choices=("all", "grid"), default="all", help="run one section")
    args = p.parse_args(argv)
    n = args.n or (100_000 if args.quick else 1_000_000)
    data = streams(n)
    rows = []

    def row(name, value, goal):
        rows.append((name, value, goal))
        print(f"{name:<58} {value:>12} {goal}", flush=True)

    print(f"OnlineIsotonic, {n:,} events per stream (ratio = time / river LR time, median of segments)")
    if args.only == "grid":
        grid_section(data, row, args)
        return
    base = None
    for name, (s, y) in data.items():
        ratio, us, us_lr = per_event({}, s, y, args.segment, args.gc)
        base = ratio if name == "random" else base
        goal = "<= 0.5x river LR" if name == "random" else f"<= 2x random ({ratio / base:.2f}x)"
        row(f"exact, {name} stream ({us:.2f} us/event, LR {us_lr:.2f})", f"{ratio:.3f}x", goal)
    s, y = data["random"]
    for params, goal in (({"resolution": 1e-4}, "<= 0.3x"), ({"half_life": 1000.0}, f"<= exact ({base:.3f}x)"),
                         ({"window_size": 10_000}, "")):
        ratio, us, _ = per_event(params, s, y, args.segment, args.gc)
        row(f"{params} ({us:.2f} us/event)", f"{ratio:.3f}x", goal)
    for params, goal in (({"resolution": 1e-4}, ">= 5,000,000/s"), ({}, ">= 2,000,000/s")):
        for name in ("random", "ascending", "rare"):
            rate = batch_rate(params, *data[name], args.repeats)
            row(f"predict_learn_many {params}, {name}", f"{rate:,.0f}/s", goal)
    bytes_mem, bytes_state = memory_per_score(min(n, 200_000))
    row("process memory per distinct score (tracemalloc)", f"{bytes_mem:.1f} B", "<= 111 B")
    row("pickled state per distinct score", f"{bytes_state:.1f} B", "<= 34 B")


if __name__ == "__main__":
    main()
