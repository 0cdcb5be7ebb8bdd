"""Two builds of streamcal, OnlineIsotonic timed alternately in fresh processes.

Run by hand from the repository root (not a test)::

    mkdir -p /tmp/sc_old && git archive <commit> | tar -x -C /tmp/sc_old
    (cd /tmp/sc_old && python setup.py build_ext --inplace)
    python benchmarks/bench_isotonic_compare.py /tmp/sc_old --n 1000000 --rounds 2
    python benchmarks/bench_isotonic_compare.py /tmp/sc_old --n 200000 --loop

Each round runs the old build (``PYTHONPATH`` set to its directory) and this checkout in
turn, the order alternating, each in a fresh process on the same stream (uniform
scores, labels Bernoulli(score), seed 0), CPU time. Default: one
``predict_learn_many`` of the whole stream, exact (``--resolution``: that grid;
``--half-life``: with that forgetting), with the store's operation counters; the median
events/s of each build at the end.
``--loop``: the ``predict_one`` + ``learn_one`` loop in the exact, ``window_size=10_000``
and ``half_life=1000`` modes, with river's LogisticRegression timed in the same process.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
from pathlib import Path

CHILD = r"""
import sys, time, gc
import numpy as np
from streamcal import OnlineIsotonic
n, loop, res, hl = int(sys.argv[1]), sys.argv[2] == "1", float(sys.argv[3]), float(sys.argv[4])
rng = np.random.default_rng(0)
s = rng.random(n)
y = (rng.random(n) < s).astype(int)
gc.disable()
if not loop:
    c = OnlineIsotonic(resolution=res) if res else OnlineIsotonic(half_life=hl or None)
    t = time.process_time()
    c.predict_learn_many(s, y)
    t = time.process_time() - t
    st = c._stream.grid_store if res and c._stream.grid_store is not None else c._store
    print(f"predict_learn_many {n / t:,.0f}/s  hull steps/event {st._op_hull / n:.1f}  "
          f"nodes/event {st._op_nodes / n:.1f}  fallbacks {getattr(st, '_op_fallback', '-')}")
    sys.exit()
from river import linear_model
S, Y = s.tolist(), y.tolist()
m = linear_model.LogisticRegression()
k = min(n, 50_000)
t = time.process_time()
for a, b in zip(S[:k], Y[:k]):
    x = {"s": a}
    m.predict_proba_one(x)
    m.learn_one(x, b)
lr = (time.process_time() - t) / k * 1e6
out = [f"river LR {lr:.2f} us"]
for kw in ({}, {"window_size": 10_000}, {"half_life": 1000.0}):
    c = OnlineIsotonic(**kw)
    t = time.process_time()
    for a, b in zip(S, Y):
        c.predict_one(a)
        c.learn_one(a, b)
    us = (time.process_time() - t) / n * 1e6
    out.append(f"{kw or 'exact'} {us:.2f} us ({us / lr:.2f}x LR)")
print(" | ".join(out))
"""


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("old", help="directory holding the old build's streamcal package")
    p.add_argument("--n", type=int, default=1_000_000)
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--loop", action="store_true")
    p.add_argument("--resolution", type=float, default=0.0,
                   help="OnlineIsotonic(resolution=...) instead of exact (not with --loop)")
    p.add_argument("--half-life", type=float, default=0.0,
                   help="OnlineIsotonic(half_life=...) instead of exact (not with --loop)")
    args = p.parse_args(argv)
    here = Path(__file__).resolve().parent.parent
    rates = {"old": [], "new": []}
    for r in range(args.rounds):
        for name in ("old", "new") if r % 2 == 0 else ("new", "old"):
            env = dict(os.environ)
            cwd = here
            if name == "old":
                env["PYTHONPATH"] = str(Path(args.old).resolve())
                cwd = Path(args.old).resolve()
            res = subprocess.run([sys.executable, "-c", CHILD, str(args.n), "1" if args.loop else "0",
                                  str(args.resolution), str(args.half_life)],
                                 capture_output=True, text=True, env=env, cwd=cwd)
            print(f"{name}: {res.stdout.strip() or res.stderr.strip()[-500:]}", flush=True)
            if res.stdout.startswith("predict_learn_many"):
                rates[name].append(float(res.stdout.split()[1].rstrip("/s").replace(",", "")))
    if rates["old"] and rates["new"]:
        med = {k: statistics.median(v) for k, v in rates.items()}
        print(f"median events/s: old {med['old']:,.0f}  new {med['new']:,.0f}  "
              f"new/old {med['new'] / med['old']:.2f}x")


if __name__ == "__main__":
    main()
