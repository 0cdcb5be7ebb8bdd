"""How low can a keyed calibrator's per-event cost go? The keyed OnlinePlatt against
lower bounds that do only part of the keying (benchmarks/_keyed_floor.pyx, compiled at
run time by pyximport), each timed against the unkeyed OnlinePlatt in the same run, on
bench_keyed.py's stream (str keys, a new object each event, drawn uniformly from
``--keys``; predict_one then learn_one). Run by hand:

    python benchmarks/bench_keyed_floor.py               # 1 and 10,000 keys, 200,000 events
    python benchmarks/bench_keyed_floor.py --n 50000
    perf record -F 2000 -g python benchmarks/bench_keyed_floor.py --drive 4 --keys 10000 --n 500000
    perf report --no-children     # --drive: no timing, the keyed OnlinePlatt's loop only

Every figure is the median over segments of the time ratio to the unkeyed calibrator
(CPU time, interleaved segments, garbage collector paused).
"""

from __future__ import annotations

import argparse
import collections
import os
import sys
import time

import numpy as np
import pyximport

_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, _HERE)
sys.path.append(os.path.dirname(_HERE))  # the repository: where Cython finds the .pxd files
pyximport.install(language_level=3, setup_args={"include_dirs": [np.get_include()]})

from _keyed_floor import Floor
from _timing import gc_paused, git_commit, interleaved, spread
from bench_keyed import _run_keyed, _run_plain  # the keyed and unkeyed loops, one home

from streamcal import KeyedCalibrator, OnlinePlatt

_clock = time.process_time


def _run_lookup(d, events, _):
    """The Python loop and one dict lookup per event, nothing else."""
    t0 = _clock()
    for k, s, y in events:
        d[k]
    return _clock() - t0


FLOORS = [
    (0, "call: the extra argument only"),
    (2, "lookup: one dict lookup per event"),
    (3, "lookup + a per-key table row"),
    (4, "hash + row: no dict, no LRU"),
    (5, "lookup + row + OrderedDict LRU move"),
    (6, "lookup + row + LRU in int arrays"),
]


def run(n_keys: int, n: int, segment: int, seed: int = 0) -> list:
    rng = np.random.default_rng(seed)
    keys = [f"k{i}" for i in rng.integers(0, n_keys, n).tolist()]
    scores = np.round(rng.beta(2, 2, n), 2).tolist()
    labels = (rng.random(n) < np.asarray(scores) ** 2).astype(int).tolist()
    events = list(zip(keys, scores, labels))
    keyed = KeyedCalibrator(OnlinePlatt(), max_keys=n_keys)
    plain = OnlinePlatt()
    rows = {}
    for i in range(n_keys):
        keyed.learn_one(f"k{i}", 0.5, i % 2)
        plain.learn_one(0.5, i % 2)
        rows[f"k{i}"] = i
    floors = [Floor(collections.OrderedDict(rows) if m == 5 else rows, OnlinePlatt(), m) for m, _ in FLOORS]
    runs = [(_run_plain, plain), (_run_keyed, keyed), *[(_run_keyed, f) for f in floors], (_run_lookup, rows)]
    names = ["unkeyed OnlinePlatt", "KeyedCalibrator(OnlinePlatt())", *[name for _, name in FLOORS],
             "Python loop + d[key] alone"]
    with gc_paused(True):
        _, times = interleaved(runs, events, [None] * n, segment)
    out = []
    for name, t in zip(names, times):
        r = spread(a / b for a, b in zip(t, times[0]))
        out.append((name, 1e6 * sum(t) / n, r))
    return out


def drive(n_keys: int, n: int, rounds: int, seed: int = 0) -> None:
    """The keyed OnlinePlatt's loop of :func:`run`, untimed, for a profiler."""
    rng = np.random.default_rng(seed)
    keys = [f"k{i}" for i in rng.integers(0, n_keys, n).tolist()]
    scores = np.round(rng.beta(2, 2, n), 2).tolist()
    labels = (rng.random(n) < np.asarray(scores) ** 2).astype(int).tolist()
    keyed = KeyedCalibrator(OnlinePlatt(), max_keys=n_keys)
    for i in range(n_keys):
        keyed.learn_one(f"k{i}", 0.5, i % 2)
    events = list(zip(keys, scores, labels))
    for _ in range(rounds):
        _run_keyed(keyed, events, None)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=200_000)
    parser.add_argument("--keys", default="1,10000")
    parser.add_argument("--segment", type=int, default=4000)
    parser.add_argument("--drive", type=int, default=0, help="only run the keyed loop this many times (for perf)")
    args = parser.parse_args(argv)
    if args.drive:
        drive(int(args.keys.split(",")[-1]), args.n, args.drive)
        return
    print(f"@ {git_commit()}, {args.n} events, CPU time, ratio to the unkeyed OnlinePlatt")
    for n_keys in map(int, args.keys.split(",")):
        print(f"--- {n_keys} keys")
        for name, us, r in run(n_keys, args.n, args.segment):
            print(f"{name:<40} {us:6.3f} us/event  {r['median']:5.2f}x  [{r['min']:.2f}, {r['max']:.2f}]")


if __name__ == "__main__":
    main()
