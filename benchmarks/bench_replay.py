"""Throughput and memory of ``streamcal.replay`` on a CSV log on disk. Run by hand
(never by CI or pytest):

    python benchmarks/bench_replay.py               # 10^6 events, ~3 minutes
    python benchmarks/bench_replay.py --quick       # 10^5 events, memory at 10^4 / 10^5
    python benchmarks/bench_replay.py --json out.json

Targets (issue 5):

1. **Throughput**: a log of 10^6 events replayed through
   ``OnlineIsotonic(resolution=1e-4)`` with three metrics (Brier, LogLoss, ECE) at
   >= 100,000 events/s, i.e. <= 10 µs per event *including* reading and parsing the CSV
   file. Measured as the wall time of the whole ``replay`` call (the file is read from
   the page cache: it is read once before timing). For reference, in alternation with
   it: the same work as a hand-written loop (``csv.reader``, ``float``, one dict lookup
   for the label, ``predict_one``, three ``update``, ``learn_one``), so that the ratio
   replay / hand loop shows the cost of the replay machinery itself on a shared,
   noisy machine; and the default ``include_raw=True`` (the raw scores scored too).
2. **Memory flat in the length of the log**: the peak memory of a replay of 10^5 and of
   10^6 events, each in a fresh subprocess: the peak Python allocation during the call
   (``tracemalloc``; slows the run) and the process's peak resident set size
   (``ru_maxrss``, in a separate run without tracemalloc). Flat means: the 10^6 figure is
   within a few hundred KB of the 10^5 one (the series grow by one value per metric
   every ``every`` events, and the calibrator's grid by at most 10^4 cells).

The log: scores ~ Beta(2, 2) written with ``repr`` (17 significant digits, 10^6
distinct values), labels ~ Bernoulli(s^2 / (s^2 + (1 - s)^2)) (an under-confident
model), as in ``bench_online_isotonic.py``; one column of event numbers as ``time``.
Files are generated once into ``--dir`` (default ``/tmp/streamcal_bench_replay``).
"""

from __future__ import annotations

import argparse
import csv
import gc
import json
import os
import random
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
TARGET_EVENTS_PER_S = 100_000


def make_log(path: str, n: int, seed: int = 0) -> str:
    """Write (once) a CSV log of ``n`` events to ``path``."""
    if os.path.exists(path):
        return path
    rng = random.Random(seed)
    tmp = path + ".part"
    with open(tmp, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["time", "score", "label"])
        for i in range(n):
            s = rng.betavariate(2.0, 2.0)
            q = s * s / (s * s + (1.0 - s) ** 2)
            w.writerow([i, repr(s), 1 if rng.random() < q else 0])
    os.replace(tmp, path)
    return path


def run_replay(path: str, include_raw: bool):
    from streamcal import OnlineIsotonic, replay

    return replay(
        path,
        {"isotonic": OnlineIsotonic(resolution=1e-4)},
        ("brier", "log_loss", "ece"),
        include_raw=include_raw,
        every=1000,
    )


def run_hand_loop(path: str):
    from streamcal import OnlineIsotonic
    from streamcal.metrics import ECE, Brier, LogLoss

    cal = OnlineIsotonic(resolution=1e-4)
    ups = [m.update for m in (Brier(), LogLoss(), ECE())]
    predict, learn = cal.predict_one, cal.learn_one
    labels = {"0": 0, "1": 1}
    with open(path, newline="") as f:
        reader = csv.reader(f)
        header = next(reader)
        si, li = header.index("score"), header.index("label")
        for row in reader:
            s = float(row[si])
            y = labels[row[li]]
            p = predict(s)
            for up in ups:
                up(y, p)
            learn(s, y)
    return cal


def timed(fn, *args) -> float:
    gc.collect()
    start = time.perf_counter()
    fn(*args)
    return time.perf_counter() - start


def throughput(path: str, n: int, repeats: int, log) -> dict:
    with open(path, "rb") as f:  # into the page cache
        while f.read(1 << 20):
            pass
    runs = {"replay": [], "hand loop": [], "replay, include_raw=True": []}
    for r in range(repeats):
        order = list(runs)
        order = order[r % 3 :] + order[: r % 3]  # rotate, so load bursts hit all alike
        for name in order:
            if name == "replay":
                t = timed(run_replay, path, False)
            elif name == "hand loop":
                t = timed(run_hand_loop, path)
            else:
                t = timed(run_replay, path, True)
            runs[name].append(t)
            log(f"  repeat {r + 1}: {name:<26} {t:7.2f} s  {n / t:>9,.0f} events/s")
    out = {}
    for name, ts in runs.items():
        med = statistics.median(ts)
        out[name] = {
            "seconds": ts,
            "median_s": med,
            "events_per_s": n / med,
            "best_events_per_s": n / min(ts),
            "us_per_event": med / n * 1e6,
        }
    ratios = [a / b for a, b in zip(runs["replay"], runs["hand loop"])]
    out["ratio replay / hand loop"] = {
        "median": statistics.median(ratios),
        "min": min(ratios),
        "max": max(ratios),
    }
    return out


_MEMORY_CHILD = """
import json, resource, sys, tracemalloc
sys.path.insert(0, {root!r})
sys.path.insert(0, {here!r})
from bench_replay import run_replay
import streamcal, streamcal.replay  # imports are not part of the figure
path, mode = sys.argv[1], sys.argv[2]
if mode == "tracemalloc":
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    result = run_replay(path, False)
    peak = tracemalloc.get_traced_memory()[1] - base
    tracemalloc.stop()
    print(json.dumps({{"tracemalloc_peak_bytes": peak, "n_events": result.n_events}}))
else:
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    result = run_replay(path, False)
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({{"maxrss_kb": after, "maxrss_before_kb": before,
                      "n_events": result.n_events}}))
"""


def memory(paths: dict, log) -> dict:
    child = _MEMORY_CHILD.format(root=ROOT, here=HERE)
    out = {}
    for n, path in paths.items():
        row = {}
        for mode in ("maxrss", "tracemalloc"):
            proc = subprocess.run(
                [sys.executable, "-c", child, path, mode],
                capture_output=True,
                text=True,
                check=True,
            )
            row.update(json.loads(proc.stdout.strip().splitlines()[-1]))
        out[n] = row
        log(
            f"  {n:>9,} events: tracemalloc peak {row['tracemalloc_peak_bytes'] / 1e6:6.2f} MB, "
            f"max RSS {row['maxrss_kb'] / 1024:6.1f} MB "
            f"(after imports {row['maxrss_before_kb'] / 1024:6.1f} MB)"
        )
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--n", type=int, default=None, help="events timed (default 10^6; --quick 10^5)"
    )
    parser.add_argument(
        "--sizes", default=None, help="log lengths of the memory runs (default 1e5,1e6)"
    )
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--dir", default="/tmp/streamcal_bench_replay")
    parser.add_argument(
        "--json", default=None, help="also write every figure to this file"
    )
    parser.add_argument("--only", default="throughput,memory")
    args = parser.parse_args(argv)
    n = args.n or (100_000 if args.quick else 1_000_000)
    sizes = [
        int(float(x))
        for x in (args.sizes or ("1e4,1e5" if args.quick else "1e5,1e6")).split(",")
    ]
    os.makedirs(args.dir, exist_ok=True)

    def log(text):
        print(text, flush=True)

    log(f"python {sys.version.split()[0]}, load average {os.getloadavg()[0]:.2f}")
    results = {"n": n, "sizes": sizes}
    if "throughput" in args.only:
        path = make_log(os.path.join(args.dir, f"events_{n}.csv"), n)
        log(
            f"throughput: {n:,} events from {path} ({os.path.getsize(path) / 1e6:.1f} MB)"
        )
        results["throughput"] = throughput(path, n, args.repeats, log)
    if "memory" in args.only:
        paths = {
            s: make_log(os.path.join(args.dir, f"events_{s}.csv"), s) for s in sizes
        }
        log("memory (each in a fresh subprocess):")
        results["memory"] = memory(paths, log)
    log(f"load average {os.getloadavg()[0]:.2f}")

    log("\nsummary")
    if "throughput" in results:
        t = results["throughput"]
        rate = t["replay"]["events_per_s"]
        verdict = "PASS" if rate >= TARGET_EVENTS_PER_S else "FAIL"
        log(
            f"  replay, OnlineIsotonic(resolution=1e-4) + Brier, LogLoss, ECE: "
            f"{rate:,.0f} events/s median (best {t['replay']['best_events_per_s']:,.0f}), "
            f"{t['replay']['us_per_event']:.2f} us/event; target >= "
            f"{TARGET_EVENTS_PER_S:,}: {verdict}"
        )
        log(
            f"  hand-written loop: {t['hand loop']['events_per_s']:,.0f} events/s; "
            f"ratio replay / hand loop {t['ratio replay / hand loop']['median']:.3f} "
            f"[{t['ratio replay / hand loop']['min']:.3f}, {t['ratio replay / hand loop']['max']:.3f}]"
        )
        log(
            f"  replay with include_raw=True: "
            f"{t['replay, include_raw=True']['events_per_s']:,.0f} events/s"
        )
    if "memory" in results:
        m = results["memory"]
        small, large = m[sizes[0]], m[sizes[-1]]
        dt = (large["tracemalloc_peak_bytes"] - small["tracemalloc_peak_bytes"]) / 1e6
        dr = (large["maxrss_kb"] - small["maxrss_kb"]) / 1024
        log(
            f"  memory growth from {sizes[0]:,} to {sizes[-1]:,} events: "
            f"tracemalloc peak {dt:+.2f} MB, max RSS {dr:+.1f} MB"
        )
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1, default=str)
    return 0


if __name__ == "__main__":
    sys.exit(main())
